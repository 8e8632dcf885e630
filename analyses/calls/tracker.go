package calls

import (
	"slices"

	"emuprof/analyses"
)

// Listener is told about the routine activations that call tracking
// derives. Calls and returns of one thread nest properly; frames of the
// dynamic linker's lazy-binding resolver (and of everything it calls) are
// never reported.
type Listener interface {
	// Call reports that thread tid entered routine (entered at entry).
	Call(tid uint32, routine RoutineID, entry uint64)
	// Return reports that the topmost reported activation of tid ended.
	Return(tid uint32, routine RoutineID)
}

var _ analyses.Analysis = (*Tracker)(nil)

// frame is one shadow stack entry.
type frame struct {
	routine RoutineID
	ret     uint64 // expected return address (0 for a thread's root frame)
	sp      uint64 // stack pointer at routine entry (after the call pushed ret)
	hidden  bool   // a resolver frame or a descendant of one: not reported
}

// stack is the shadow stack of one thread.
type stack struct {
	tid      uint32
	frames   []frame
	hidden   int          // number of hidden frames on the stack
	prevEnd  analyses.End // terminator of the thread's previous block
	prevNext uint64       // address following the previous block (its fall-through/return address)
}

// Tracker maintains a shadow stack per thread from Block events.
//
// Rules, for a block B of thread t whose previous block was P:
//   - t has no frame: B starts the thread's root frame (routine of B).
//   - P ended with ret: pop to the frame whose return address is B's address
//     if there is one; otherwise frames are unwound by stack pointer below.
//   - at every block, frames (but the root) whose entry stack pointer is
//     below B's stack pointer are unwound (longjmp, exceptions).
//   - P ended with call (and B is not the fall-through, i.e. not a
//     "call next; pop" idiom): B is the callee entry; push a frame with
//     return address P.Addr+P.Len and stack pointer B.Aux.
//   - P ended with a jump (or conditional jump) and B is the entry of a
//     routine other than the current frame's: tail call; the top frame is
//     replaced (return, then call) keeping its return address.
//
// Symbols are looked up once per distinct block address.
type Tracker struct {
	syms     analyses.Symbols
	objects  ObjectNamer // syms, if it names objects
	routines *Routines
	blocks   *blockTable
	zero     blockInfo // info for address 0 (never stored in blocks)
	zeroOK   bool
	threads  map[uint32]*stack
	cur      *stack
	listener Listener
}

// NewTracker returns a tracker that names code with syms (which may be nil:
// every address is then "unknown") and reports to l (which may be nil).
func NewTracker(syms analyses.Symbols, l Listener) *Tracker {
	t := &Tracker{
		syms:     syms,
		routines: NewRoutines(),
		blocks:   newBlockTable(),
		threads:  make(map[uint32]*stack),
		listener: l,
	}
	if on, ok := syms.(ObjectNamer); ok {
		t.objects = on
	}
	return t
}

// SetListener replaces the listener.
func (t *Tracker) SetListener(l Listener) { t.listener = l }

// Routines returns the tracker's routine table.
func (t *Tracker) Routines() *Routines { return t.routines }

// Events handles a batch: Block and ThreadExit events (Tracker is usable on
// its own as an analyses.Analysis).
func (t *Tracker) Events(batch []analyses.Event) {
	for i := range batch {
		ev := &batch[i]
		switch ev.Kind {
		case analyses.KindBlock:
			t.Block(ev)
		case analyses.KindThreadExit:
			t.ThreadExit(ev.Tid)
		}
	}
}

// Finish unwinds every thread's stack (reporting the returns), threads in
// increasing tid order.
func (t *Tracker) Finish() {
	tids := make([]uint32, 0, len(t.threads))
	for tid := range t.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		t.ThreadExit(tid)
	}
}

// ThreadExit unwinds the stack of thread tid and forgets the thread.
func (t *Tracker) ThreadExit(tid uint32) {
	s, ok := t.threads[tid]
	if !ok {
		return
	}
	for len(s.frames) > 0 {
		t.pop(s)
	}
	delete(t.threads, tid)
	if t.cur == s {
		t.cur = nil
	}
}

// InResolver reports whether thread tid is running inside the dynamic
// linker's lazy-binding resolver (a hidden frame is on its stack).
func (t *Tracker) InResolver(tid uint32) bool {
	s := t.stackOf(tid, false)
	return s != nil && s.hidden > 0
}

// Depth is the number of frames (hidden ones included) on tid's stack.
func (t *Tracker) Depth(tid uint32) int {
	if s := t.stackOf(tid, false); s != nil {
		return len(s.frames)
	}
	return 0
}

// Stack returns the routines on tid's stack, bottom first (hidden frames
// included); for tests and diagnostics.
func (t *Tracker) Stack(tid uint32) []RoutineID {
	s := t.stackOf(tid, false)
	if s == nil {
		return nil
	}
	out := make([]RoutineID, len(s.frames))
	for i, f := range s.frames {
		out[i] = f.routine
	}
	return out
}

func (t *Tracker) stackOf(tid uint32, create bool) *stack {
	if t.cur != nil && t.cur.tid == tid {
		return t.cur
	}
	s, ok := t.threads[tid]
	if !ok {
		if !create {
			return nil
		}
		s = &stack{tid: tid, prevEnd: analyses.EndOther}
		t.threads[tid] = s
	}
	t.cur = s
	return s
}

// info returns the cached block info for addr, computing it on first sight.
func (t *Tracker) info(addr uint64) blockInfo {
	if addr == 0 {
		if !t.zeroOK {
			t.zero, t.zeroOK = t.lookup(0), true
		}
		return t.zero
	}
	if bi, ok := t.blocks.get(addr); ok {
		return bi
	}
	bi := t.lookup(addr)
	t.blocks.put(addr, bi)
	return bi
}

// lookup asks Symbols about addr.
func (t *Tracker) lookup(addr uint64) blockInfo {
	if t.syms == nil {
		return blockInfo{routine: t.routines.Synthetic("unknown", "NONE")}
	}
	entry, name, ok := t.syms.Routine(addr)
	if !ok {
		return blockInfo{routine: t.routines.Synthetic("unknown", "NONE")}
	}
	if id, known := t.routines.byEntry[entry]; known {
		return blockInfo{routine: id, entry: entry == addr}
	}
	obj := ""
	if t.objects != nil {
		if o, ok := t.objects.Object(entry); ok {
			obj = o
		}
	}
	if obj == "" {
		obj = objectFromName(name)
	}
	id := t.routines.Intern(entry, name, obj)
	return blockInfo{routine: id, entry: entry == addr}
}

// Block processes one Block event and reports whether the thread now runs
// hidden code (the lazy-binding resolver or something it called), whose
// cost and memory accesses must be ignored.
func (t *Tracker) Block(ev *analyses.Event) (hidden bool) {
	s := t.stackOf(ev.Tid, true)
	bi := t.info(ev.Addr)
	sp := ev.Aux
	if len(s.frames) == 0 {
		t.push(s, bi.routine, ev.Addr, 0, sp)
	} else {
		if s.prevEnd == analyses.EndRet {
			t.returnTo(s, ev.Addr)
		}
		// Frames entered at a lower stack pointer than the current one
		// have been unwound (return, longjmp, exception); never the root.
		for len(s.frames) > 1 && s.frames[len(s.frames)-1].sp < sp {
			t.pop(s)
		}
		switch s.prevEnd {
		case analyses.EndCall:
			if ev.Addr != s.prevNext {
				t.push(s, bi.routine, ev.Addr, s.prevNext, sp)
			}
		case analyses.EndJump, analyses.EndCond:
			top := &s.frames[len(s.frames)-1]
			if bi.entry && bi.routine != top.routine {
				ret := top.ret
				t.pop(s)
				t.push(s, bi.routine, ev.Addr, ret, sp)
			}
		}
	}
	s.prevEnd = ev.End
	s.prevNext = ev.Addr + uint64(ev.Len)
	return s.hidden > 0
}

// returnTo pops to the frame whose return address is addr, if any.
func (t *Tracker) returnTo(s *stack, addr uint64) {
	for i := len(s.frames) - 1; i >= 1; i-- {
		if s.frames[i].ret == addr {
			for len(s.frames) > i {
				t.pop(s)
			}
			return
		}
	}
}

func (t *Tracker) push(s *stack, r RoutineID, entry, ret, sp uint64) {
	hidden := s.hidden > 0 || t.routines.list[r].Resolver
	s.frames = append(s.frames, frame{routine: r, ret: ret, sp: sp, hidden: hidden})
	if hidden {
		s.hidden++
		return
	}
	if t.listener != nil {
		t.listener.Call(s.tid, r, entry)
	}
}

func (t *Tracker) pop(s *stack) {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	if f.hidden {
		s.hidden--
		return
	}
	if t.listener != nil {
		t.listener.Return(s.tid, f.routine)
	}
}
