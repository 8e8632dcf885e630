package calls

import "emuprof/trace"

// Stage is the shared call-tracking stage of the analysis platform: it
// reads the raw event stream once and gives every analysis the stream
// where
//   - a Call event is inserted where an activation begins (before the Block
//     event of its first block) and a Return event where one ends;
//   - Block, Read, Write and KernelRead events of hidden code (linker stubs,
//     the lazy-binding resolver and what it calls) carry FlagHidden;
//   - ThreadExit events are preceded by the Returns of the thread's pending
//     activations, and Finish returns those of every thread still alive.
//
// So every analysis gets the same routine ids and calling contexts, and none
// tracks calls again. When every analysis takes them so
// (trace.Encoding.CallMarks, SetCallMarks), the Calls and Returns right
// before a Block event are not inserted but marked on it (FlagCalls,
// Event.CallMarks): call tracking derives at most one call per block, after
// its returns (Tracker.block), and the batch is then handed on in place.
// Flags and marks are set in place: a batch goes through once. The stream
// is handed on as runs of the raw batch with the inserted events between
// them; runs shorter than copyMax are copied, with the inserted events
// around them, into one piece (put).
type Stage struct {
	tracker *Tracker
	out     []trace.Event // short pieces of the stream and inserted events not yet handed on (put)
	time    int64         // time of the event being processed (Returns happen then)
	// While Process runs: its batch, the events of it not yet handed on
	// (batch[start:cur]: the current event is batch[cur]), and its emit.
	batch      []trace.Event
	start, cur int
	emit       func([]trace.Event)
	// The thread of the last Block event and whether it ran hidden code:
	// memory events nearly always follow their thread's block.
	lastTid    uint32
	lastHidden bool
	// marks: Block events carry their calls and returns (SetCallMarks).
	// While the tracker handles a Block event, marking is set and
	// returns and call (the context + 1) collect its marks.
	marks, marking bool
	returns, call  uint32
	// inserts counts the events inserted (insert); rep is the Repeat
	// event whose period is being handled (repeat).
	inserts int
	rep     repeatCheck
}

// repeatCheck is what the stage keeps of a Repeat event while it handles
// its period (Stage.repeat): whether the period changes the stage's state
// decides whether the event is handed on.
type repeatCheck struct {
	on          bool
	header, end int // batch indexes of the Repeat event and of its period's last event
	ev          trace.Event
	raw         []trace.Event // the period's events as they came
	inserts     int
	stack       stackSnapshot
	lastHidden  bool
	scratch     []trace.Event
}

// SetCallMarks says whether the calls and returns before a Block event are
// marked on it (trace.Encoding.CallMarks) instead of inserted as events.
func (s *Stage) SetCallMarks(on bool) { s.marks = on }

// NewStage returns an empty stage.
func NewStage() *Stage {
	s := &Stage{lastTid: ^uint32(0)}
	s.tracker = NewTracker(s)
	return s
}

// Tracker returns the stage's tracker (its routines and CCT).
func (s *Stage) Tracker() *Tracker { return s.tracker }

// Routines returns the routine table that Call and Return events' ids
// (Event.Block) index.
func (s *Stage) Routines() *Routines { return s.tracker.routines }

// Process runs one raw batch through call tracking and hands the resulting
// stream to emit, in order, in one or more pieces; blocks resolves block
// ids. It sets flags (and call marks) in batch itself. The pieces are
// only valid during the emit call.
func (s *Stage) Process(batch []trace.Event, blocks trace.BlockView, emit func([]trace.Event)) {
	s.batch, s.start, s.emit = batch, 0, emit
	s.run(batch, blocks)
	if s.start < len(batch) {
		s.put(batch[s.start:])
	}
	s.flush()
	s.batch, s.start, s.cur, s.emit = nil, 0, 0, nil
}

// run processes the events of s.batch (batch), setting their flags and
// marks in place.
func (s *Stage) run(batch []trace.Event, blocks trace.BlockView) {
	for i := range batch {
		ev := &batch[i]
		s.time, s.cur = ev.Time, i
		switch ev.Kind {
		case trace.KindBlock:
			// A block seen before needs no lookup in the block table:
			// the tracker's blockInfo has it (as in Tracker.Block, the
			// run's first address, ev.Addr, decides whether it enters
			// its routine).
			var h bool
			tr := s.tracker
			// A thread a signal handler ran on gets no marks: path
			// profiling reads its blocks' stack pointers from then on
			// (a signal's barrier, paths.Profiler.signal).
			s.marking = s.marks && (tr.signals == 0 || !tr.signalled(ev.Tid))
			if id := ev.Block; id != 0 && int(id) < len(tr.infos) && tr.infos[id].known {
				bi := &tr.infos[id]
				h = tr.block(ev, bi, bi.named && bi.rentry == ev.Addr)
			} else {
				h = tr.Block(ev, blocks.Get(ev.Block))
			}
			s.lastTid, s.lastHidden = ev.Tid, h
			if h {
				ev.Flags |= trace.FlagHidden
			}
			if s.marking {
				s.marking = false
				if s.returns|s.call != 0 {
					ev.Aux = uint64(s.returns)<<32 | uint64(s.call)
					ev.Flags |= trace.FlagCalls
					s.returns, s.call = 0, 0
				}
			}
		case trace.KindRead, trace.KindWrite, trace.KindKernelRead:
			if ev.Tid == s.lastTid && s.lastHidden || ev.Tid != s.lastTid && s.tracker.InResolver(ev.Tid) {
				ev.Flags |= trace.FlagHidden
			}
		case trace.KindSyscall:
			switch ev.Addr {
			case trace.SyscallSignalEntry:
				s.tracker.SignalEntry(ev.Tid, ev.Aux, ev.Size&trace.SignalOnAltStack != 0)
				if s.marks {
					// Handed on now, while Tracker.LastSP is the
					// stack pointer of the thread's last block,
					// which a mark may have replaced in its event.
					s.cur = i + 1
					if s.cur > s.start {
						s.putRun()
					}
					s.flush()
				}
			case trace.SyscallSigreturn:
				s.tracker.Sigreturn(ev.Tid)
			}
		case trace.KindThreadExit:
			s.tracker.ThreadExit(ev.Tid)
			if ev.Tid == s.lastTid {
				s.lastTid = ^uint32(0)
			}
		case trace.KindRepeat:
			s.repeat(i)
		}
		if s.rep.on && i == s.rep.end {
			s.repeatEnd(blocks)
		}
	}
}

// repeat begins handling the Repeat event batch[h] (Encoding.RepeatEvents):
// its period, the events after it, is processed as usual; then
// repeatEnd hands the event on if the period left the stage's state as
// it found it (so that every repetition would come out as the period
// did), and otherwise writes the repetitions out. Until then the event
// is held back.
func (s *Stage) repeat(h int) {
	r := &s.rep
	ev := s.batch[h]
	n := int(ev.Size)
	if h+n >= len(s.batch) {
		panic("calls: a Repeat event's period is not in its batch") // the engine writes them together
	}
	if s.cur > s.start {
		s.putRun()
	}
	s.start = h + 1
	if n == 0 || ev.Aux == 0 {
		return // nothing repeats
	}
	r.on, r.header, r.end, r.ev = true, h, h+n, ev
	r.raw = append(r.raw[:0], s.batch[h+1:h+1+n]...)
	r.inserts = s.inserts
	r.lastHidden = s.lastHidden && s.lastTid == ev.Tid
	s.tracker.snapshot(ev.Tid, &r.stack)
}

// repeatEnd ends the handling of a Repeat event after its period's last
// event (repeat).
func (s *Stage) repeatEnd(blocks trace.BlockView) {
	r := &s.rep
	r.on = false
	if r.inserts == s.inserts && s.start == r.header+1 && s.lastTid == r.ev.Tid && s.lastHidden == r.lastHidden &&
		s.tracker.unchanged(r.ev.Tid, &r.stack) {
		s.start = r.header // the event goes on, before its period
		s.time += int64(r.ev.Aux) * int64(r.ev.Addr)
		return
	}
	// Write the repetitions out, each through call tracking.
	s.cur = r.end + 1
	if s.cur > s.start {
		s.putRun()
	}
	batch, start, cur := s.batch, s.start, s.cur
	for j := int64(1); j <= int64(r.ev.Aux); j++ {
		r.scratch = append(r.scratch[:0], r.raw...)
		for i := range r.scratch {
			r.scratch[i].Time += j * int64(r.ev.Addr)
		}
		s.batch, s.start = r.scratch, 0
		s.run(r.scratch, blocks)
		s.put(r.scratch[s.start:]) // copied: shorter than copyMax
	}
	s.batch, s.start, s.cur = batch, start, cur
}

// Pieces of the stream shorter than copyMax events are copied into
// Stage.out and handed on together, up to outMax events at a time: on
// lock-heavy code a call or return comes every few blocks, and handing
// on each short run of the batch and each inserted event by itself cost
// the analyses more (a call per piece, and per-piece work such as
// parallel's sweep check) than copying them.
const (
	copyMax = 64
	outMax  = 512
)

// put hands seg on: copied into s.out if it is short, else (after what
// s.out holds) in place.
func (s *Stage) put(seg []trace.Event) {
	if len(seg) >= copyMax {
		s.flush()
		s.emit(seg)
		return
	}
	s.out = append(s.out, seg...)
	if len(s.out) >= outMax {
		s.flush()
	}
}

// flush hands on what s.out holds (outside Process and Finish it waits).
func (s *Stage) flush() {
	if len(s.out) > 0 && s.emit != nil {
		s.emit(s.out)
		s.out = s.out[:0]
	}
}

// Finish ends every pending activation (threads in tid order) and hands the
// Return events, stamped with the time of the last event seen, to emit.
func (s *Stage) Finish(emit func([]trace.Event)) {
	s.emit = emit
	s.tracker.Finish()
	s.flush()
	s.emit = nil
}

// Call implements Listener: the Call event goes before the current event,
// or is marked on it (SetCallMarks). Short enough to be inlined in the
// tracker's push.
func (s *Stage) Call(tid uint32, r RoutineID, entry uint64, ctx NodeID) {
	if s.marking && s.call == 0 {
		s.call = uint32(ctx) + 1
		return
	}
	s.callEvent(tid, r, entry, ctx)
}

// callEvent inserts the Call event. Every field is set (insert does not
// clear the event).
func (s *Stage) callEvent(tid uint32, r RoutineID, entry uint64, ctx NodeID) {
	if s.marking {
		panic("calls: two calls before one block") // Tracker.block makes at most one, last
	}
	e := s.insert()
	e.Addr, e.Aux, e.Time, e.Size, e.Tid, e.Block = entry, uint64(ctx), s.time, 0, tid, uint32(r)
	e.Kind, e.End, e.Flags, e.Folded = trace.KindCall, 0, 0, 0
}

// Return implements Listener (as Call).
func (s *Stage) Return(tid uint32, r RoutineID, ctx NodeID) {
	if s.marking && s.call == 0 {
		s.returns++
		return
	}
	s.returnEvent(tid, r, ctx)
}

// returnEvent inserts the Return event.
func (s *Stage) returnEvent(tid uint32, r RoutineID, ctx NodeID) {
	if s.marking {
		panic("calls: a return after a call before one block") // Tracker.block makes its call last
	}
	e := s.insert()
	e.Addr, e.Aux, e.Time, e.Size, e.Tid, e.Block = 0, uint64(ctx), s.time, 0, tid, uint32(r)
	e.Kind, e.End, e.Flags, e.Folded = trace.KindReturn, 0, 0, 0
}

// insert appends an event to the stream before the current event (after
// the batch's events before it) and returns it, for the caller to set
// every field of in place: appending a composite literal built it on the
// stack and copied it in 16-byte moves that read back the narrower stores
// just made (a store-forwarding stall per move, the largest cost of a Call
// or Return).
func (s *Stage) insert() *trace.Event {
	s.inserts++
	if s.cur > s.start {
		s.putRun()
	}
	n := len(s.out)
	if n >= outMax || n == cap(s.out) {
		return s.insertSlow()
	}
	s.out = s.out[:n+1]
	return &s.out[n]
}

// putRun puts the batch's events before the current one, not yet handed
// on: a few on lock-heavy code, copied one by one (append's memmove call
// costs more for them).
func (s *Stage) putRun() {
	seg := s.batch[s.start:s.cur]
	s.start = s.cur
	if len(seg) > 4 {
		s.put(seg)
		return
	}
	n := len(s.out)
	if n+len(seg) > cap(s.out) || n+len(seg) > outMax {
		s.put(seg)
		return
	}
	out := s.out[:n+len(seg)]
	for i := range seg {
		out[n+i] = seg[i]
	}
	s.out = out
}

// insertSlow is insert's slow path: s.out is full or must grow.
func (s *Stage) insertSlow() *trace.Event {
	if len(s.out) >= outMax {
		s.flush()
	}
	s.out = append(s.out, trace.Event{})
	return &s.out[len(s.out)-1]
}
