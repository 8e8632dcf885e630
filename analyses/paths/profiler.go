package paths

import (
	"strconv"
	"strings"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

// Options are what a Profiler needs from the run.
type Options struct {
	// Symbols names guest code (routine ranges, lines, call targets).
	Symbols trace.Symbols
	// Block returns the block table entry of a Block event's id.
	Block func(id uint32) *trace.BlockInfo
	// Routines is the call-tracking stage's routine table (Call events'
	// ids index it).
	Routines func() *calls.Routines
	// Code returns the code of a routine's object at guest addresses; nil
	// means the object files on disk (ELFCode). An error or a nil Code
	// leaves the routine with the CFG the run executes.
	Code func(r trace.Routine) (Code, error)
	// SPFrames delimits activations by the stack pointer of Block events
	// instead of Call/Return events (see spFrames): for copies that see
	// only the blocks of the routines they profile, without the call
	// stage.
	SPFrames bool
	// CCT and LastSP, both given (with Routines, not SPFrames), make the
	// profiler take the call stage's calls and returns marked on Block
	// events (trace.Encoding.CallMarks, CallMarks): CCT names a mark's
	// routine, and LastSP gives the stack pointer of a thread's last
	// Block event, which a mark replaced in the event, at a signal's
	// entry (calls.Tracker.LastSP; the stage marks no block of the
	// thread after that).
	CCT    func() *calls.CCT
	LastSP func(tid uint32) (uint64, bool)
}

// CallMarks reports whether the profiler takes calls and returns marked
// on Block events (Options.CCT and LastSP).
func (p *Profiler) CallMarks() bool {
	return p.opt.CCT != nil && p.opt.LastSP != nil && p.opt.Routines != nil && !p.opt.SPFrames
}

// Profiler is Ball-Larus path profiling over the event stream (SBL: every
// routine numbered with Ball-Larus, every path counted). Each thread keeps
// a stack of frames, one per activation, each with its path register
// (spec §1.4): Call events push a frame, Return events pop it, Block
// events move the register along the CFG of the frame's routine.
type Profiler struct {
	opt      Options
	elf      *ELFCode
	routines map[rkey]*routine
	list     []*routine
	cache    []cacheEntry
	threads  map[uint32]*thread
	cur      *thread
	// For tests: allBig makes every routine big (paths as trie nodes),
	// noRerank turns rebuildWith's rerank off; reranks counts them.
	allBig, noRerank bool
	reranks          int
	// noMemo (tests) turns stepInto's memo off.
	noMemo bool
	// Hits is the hit count ([P3] §4): executions of edges with a
	// non-zero label, dummy edges included.
	Hits uint64
	// Completions and Truncations count path executions that reached
	// EXIT and in-progress paths cut short.
	Completions, Truncations uint64
	partial                  string
	finished                 bool
	// P3 asks for P3's partitioned profile (see P3Config).
	P3 P3Config
	// Copy makes the profiler one copy of a P3 plan run as its own
	// emulation (copies.go): it writes a shard, not a profile.
	Copy *CopyRun
	// callSites: per routine entry, the distinct call sites (return
	// addresses) seen: P3's caller_count.
	callSites map[uint64]map[uint64]bool
	// Memory (memory.go): what the routines' builds hold, the truncated
	// paths' records, the routines whose counts are in maps.
	built, truncBytes uint64
	growing           []*routine
	// noRet caches NoReturn per routine id of Call events (1: returns,
	// 2: never returns, 0: not known yet): a name lookup per call was a
	// string hash per call.
	noRet []uint8
}

type rkey struct {
	entry  uint64
	object string
}

// cacheEntry maps an emulator block (by id) onto the static blocks of its
// routine's current CFG.
type cacheEntry struct {
	rt      *routine
	version int
	verts   []int32 // static blocks the emulator block covers, in order
	n       uint32  // the emulator block's length (BlockInfo.Len)
	// The last step into verts[0] came from static block from (-1: none
	// yet) along the edge with label val and flags back and nz, copied
	// from the run-time table (stepInto). The fields are laid out so that
	// an entry is 64 bytes, one cache line.
	from     int32
	val      uint64
	leader   bool // the emulator block starts at a static block's start
	back, nz bool
}

type thread struct {
	tid    uint32
	frames []frame
	// SPFrames: the thread runs the lazy-binding resolver, entered from
	// PLT0 at stack pointer hiddenSP.
	hidden, unhide, resolverKnown bool
	hiddenSP                      uint64
	resolver                      rkey
	// lastSP is the stack pointer of the thread's last Block event
	// (spKnown: there was one): where a signal's barrier goes. spMarked:
	// that event was marked with calls (its Aux is no stack pointer), so
	// the stage knows it (Options.LastSP).
	lastSP            uint64
	spKnown, spMarked bool
}

// frame is one activation: the routine whose CFG it walks, the block it is
// in (-1: no path in progress) and the path register.
type frame struct {
	rt       *routine
	cur      int32
	r        uint64    // Ball-Larus partial sum, or the trie node for big routines
	lastEnd  uint64    // end address of the last emulator block run in the frame
	retAddr  uint64    // set while the frame has called out: where it should resume
	sp       uint64    // SPFrames: the stack pointer at the activation's first block; a barrier's: see signal
	lastTerm trace.End // SPFrames: the terminator of the frame's last block
	// barrier marks where a signal handler interrupted the thread (see
	// signal): no routine, never a path; what the handler runs goes
	// above it, rt_sigreturn pops down to it and it.
	barrier bool
}

// New returns a profiler.
func New(opt Options) *Profiler {
	p := &Profiler{opt: opt, routines: map[rkey]*routine{}, threads: map[uint32]*thread{}}
	if opt.Code == nil {
		p.elf = NewELFCode(opt.Symbols)
	}
	return p
}

// MarkPartial records that the run did not finish.
func (p *Profiler) MarkPartial(reason string) { p.partial = reason }

// Events implements trace.Analysis.
func (p *Profiler) Events(batch []trace.Event) {
	for i := range batch {
		ev := &batch[i]
		switch ev.Kind {
		case trace.KindBlock:
			if t := p.thread(ev.Tid); ev.Flags&trace.FlagCalls != 0 {
				t.spMarked = true
				p.callMarks(ev)
			} else {
				t.lastSP, t.spKnown, t.spMarked = ev.Aux, true, false
			}
			if p.opt.SPFrames && !p.spFrames(ev) {
				continue
			}
			if ev.Flags&trace.FlagHidden == 0 {
				p.block(ev)
			}
		case trace.KindCall:
			p.call(ev)
		case trace.KindReturn:
			p.ret(ev)
		case trace.KindSyscall, trace.KindThreadStart:
			if p.Copy != nil {
				p.Copy.observe(ev)
			}
			if ev.Kind == trace.KindSyscall {
				switch ev.Addr {
				case trace.SyscallSignalEntry:
					p.signal(ev)
				case trace.SyscallSigreturn:
					p.sigreturn(ev)
				}
			}
		case trace.KindThreadExit:
			if p.Copy != nil {
				p.Copy.observe(ev)
			}
			if t := p.threads[ev.Tid]; t != nil {
				for len(t.frames) > 0 {
					p.pop(t)
				}
				delete(p.threads, ev.Tid)
				if p.cur == t {
					p.cur = nil
				}
			}
		}
	}
}

// Finish implements trace.Analysis: paths still in progress are
// truncated (the stage normally returned every frame already).
func (p *Profiler) Finish() {
	if p.finished {
		return
	}
	p.finished = true
	for _, t := range p.sortedThreads() {
		for len(t.frames) > 0 {
			p.pop(t)
		}
	}
}

func (p *Profiler) sortedThreads() []*thread {
	var ts []*thread
	for _, t := range p.threads {
		ts = append(ts, t)
	}
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].tid < ts[j-1].tid; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts
}

func (p *Profiler) thread(tid uint32) *thread {
	if p.cur != nil && p.cur.tid == tid {
		return p.cur
	}
	t := p.threads[tid]
	if t == nil {
		t = &thread{tid: tid}
		p.threads[tid] = t
	}
	p.cur = t
	return t
}

// callMarks handles the returns and the call marked on Block event ev
// (trace.FlagCalls) as the Return and Call events they stand for.
func (p *Profiler) callMarks(ev *trace.Event) {
	returns, call := ev.CallMarks()
	for range returns {
		p.ret(ev)
	}
	if call != 0 {
		p.callOf(ev.Tid, p.opt.CCT().Node(calls.NodeID(call-1)).Routine, ev.Addr)
	}
}

func (p *Profiler) call(ev *trace.Event) { p.callOf(ev.Tid, calls.RoutineID(ev.Block), ev.Addr) }

// callOf handles thread tid's call of routine id, entered at entry.
func (p *Profiler) callOf(tid uint32, id calls.RoutineID, entry uint64) {
	t := p.thread(tid)
	if n := len(t.frames); n > 0 {
		f := &t.frames[n-1]
		if f.rt != nil && f.cur >= 0 {
			f.retAddr = f.lastEnd
			if p.P3.K > 0 {
				s := p.callSites[entry]
				if s == nil {
					if p.callSites == nil {
						p.callSites = map[uint64]map[uint64]bool{}
					}
					s = map[uint64]bool{}
					p.callSites[entry] = s
				}
				s[f.lastEnd] = true
			}
			if p.opt.Routines != nil && int(id) < p.opt.Routines().Len() && p.noReturnID(id) {
				p.noReturnCall(f, p.opt.Routines().Get(id).Name)
			}
		}
	}
	t.frames = append(t.frames, frame{cur: -1})
}

func (p *Profiler) ret(ev *trace.Event) {
	t := p.thread(ev.Tid)
	if n := len(t.frames); n > 0 && !t.frames[n-1].barrier {
		p.pop(t)
	}
}

// signal handles the start of a signal handler on thread ev.Tid (a
// SyscallSignalEntry event, before the handler's first block): the
// handler interrupts the activation that runs, which keeps its path
// register and goes on with its path after rt_sigreturn, as if nothing
// had happened (spec §1.4: one register per activation; the handler is an
// activation of its own, like a call the interrupted code did not make).
// A barrier frame goes on the thread's stack: the handler's frames, and
// the restorer's (sa_restorer, which runs when the handler returns and
// calls rt_sigreturn), go above it; rt_sigreturn pops them and the
// barrier (sigreturn). A handler left by siglongjmp pops the barrier when
// a block runs above it on the stack: its stack pointer is just below the
// thread's last block's, or, on the alternate stack, unknown (only
// rt_sigreturn pops it). The rule is the same with the call stage (SBL,
// the planning run) and without (a copy, SPFrames), so that a copy cuts
// the interrupted routine's paths exactly where SBL does: nowhere.
func (p *Profiler) signal(ev *trace.Event) {
	t := p.thread(ev.Tid)
	sp := ^uint64(0)
	if ev.Size&trace.SignalOnAltStack == 0 {
		if t.spMarked {
			if last, ok := p.opt.LastSP(ev.Tid); ok {
				sp = last - 8
			}
		} else if t.spKnown {
			sp = t.lastSP - 8
		}
	}
	// The interrupted activation resumes where it was interrupted after
	// rt_sigreturn, which gives its return address back; anywhere else
	// (siglongjmp) is a landing that truncates its path, as after a call
	// (enter). A barrier keeps the address it replaced in retAddr, and
	// the activation's last terminator in lastTerm (see sigreturn).
	saved, term := uint64(0), trace.EndOther
	if n := len(t.frames); n > 0 {
		f := &t.frames[n-1]
		term = f.lastTerm
		if f.rt != nil && f.cur >= 0 {
			saved = f.retAddr
			if f.retAddr == 0 {
				f.retAddr = f.lastEnd
			}
		}
	}
	t.frames = append(t.frames, frame{cur: -1, sp: sp, barrier: true, retAddr: saved, lastTerm: term})
}

// sigreturn handles rt_sigreturn on thread ev.Tid: the innermost signal
// handler's frames (the restorer's at least) and its barrier go, and the
// interrupted activation goes on.
func (p *Profiler) sigreturn(ev *trace.Event) {
	t := p.thread(ev.Tid)
	for i := len(t.frames) - 1; i >= 0; i-- {
		if b := t.frames[i]; b.barrier {
			for len(t.frames) > i {
				p.pop(t)
			}
			if i > 0 {
				// As the call stage (calls.Tracker.Sigreturn): a call
				// the signal came after is still pending; any other
				// terminator of the interrupted block is forgotten
				// (the block may have faulted before its ret, and an
				// activation that did return is unwound by stack
				// pointer).
				f := &t.frames[i-1]
				f.retAddr = b.retAddr
				if b.lastTerm != trace.EndCall {
					f.lastTerm = trace.EndSyscall
				}
			}
			// The thread goes on at the stack pointer it was
			// interrupted at, not the restorer's: a signal pending
			// at rt_sigreturn (its mask restored) starts its handler
			// before the next block, and its barrier goes where this
			// one was.
			t.lastSP, t.spKnown, t.spMarked = b.sp+8, b.sp != ^uint64(0), false
			return
		}
	}
}

// overBarrier prepares thread t's stack for a block at stack pointer sp
// when its top frame is a signal's barrier: a block above the barrier on
// the stack pops it (the handler was left by siglongjmp); otherwise the
// block begins an activation of its own above the barrier (the handler
// itself when the call stage did not report it, the restorer).
func (p *Profiler) overBarrier(t *thread, sp uint64) {
	for n := len(t.frames); n > 0 && t.frames[n-1].barrier; n = len(t.frames) {
		if t.frames[n-1].sp < sp {
			p.pop(t)
			continue
		}
		t.frames = append(t.frames, frame{cur: -1, sp: sp})
		return
	}
}

// pop ends the top frame's path and removes the frame.
func (p *Profiler) pop(t *thread) {
	f := &t.frames[len(t.frames)-1]
	p.endPath(f)
	t.frames = t.frames[:len(t.frames)-1]
}

// endPath ends f's path in progress: through its block's EXIT edge when it
// has one (ret, tail jump, noreturn call...), truncated otherwise.
func (p *Profiler) endPath(f *frame) {
	if f.rt == nil || f.cur < 0 {
		return
	}
	if f.rt.vi[f.cur].hasExit {
		p.complete(f)
	} else {
		p.truncate(f)
	}
	f.cur = -1
}

// complete counts f's path, which leaves through cur's EXIT edge.
func (p *Profiler) complete(f *frame) {
	rt := f.rt
	v := &rt.vi[f.cur]
	key := f.r
	if !rt.big {
		key += v.exitVal
	}
	if rt.dense != nil {
		rt.dense[key]++
	} else {
		rt.counts[key]++
	}
	p.Completions++
	if v.exitNZ {
		p.Hits++
	}
}

// truncate records f's path prefix as cut short (spec §1.7).
func (p *Profiler) truncate(f *frame) {
	rt := f.rt
	seq, ok := rt.prefix(f.cur, f.r)
	p.Truncations++
	if !ok {
		rt.lost++
		return
	}
	addrs := make([]uint64, len(seq))
	var b strings.Builder
	for i, s := range seq {
		addrs[i] = rt.cfg.Blocks[s].Start
		b.WriteString(strconv.FormatUint(addrs[i], 16))
		b.WriteByte(',')
	}
	k := b.String()
	tr := rt.trunc[k]
	if tr == nil {
		tr = &truncRec{blocks: addrs}
		rt.trunc[k] = tr
		p.truncBytes += truncBaseBytes + uint64(len(k)) + 8*uint64(len(addrs))
		rt.truncKey = append(rt.truncKey, k)
	}
	tr.count++
}

// startAt starts a path of f at block w (which must be a head).
func (p *Profiler) startAt(f *frame, w int32) {
	rt := f.rt
	v := &rt.vi[w]
	if rt.big {
		f.r = uint64(rt.tr.next(-1, w))
	} else {
		f.r = v.headVal
	}
	if v.headNZ {
		p.Hits++
	}
	f.cur = w
}

// step moves f from its block to w along a CFG edge; false if there is no
// such edge (the caller adds it).
func (p *Profiler) step(f *frame, w int32) bool {
	i := f.rt.vi[f.cur].edgeTo(w)
	if i < 0 {
		return false
	}
	p.take(f, &f.rt.vi[f.cur].succ[i], w)
	return true
}

// stepInto is step into emulator block e's first static block w, which
// remembers the edge it took: a block is nearly always entered from the
// same block, and an interpreter's dispatch block has hundreds of
// successors (sqlite3's opcode switch) that step would scan at every
// opcode; the copy saves reading the table. The memo is e's, so a new
// CFG (version) forgets it.
func (p *Profiler) stepInto(f *frame, w int32, e *cacheEntry) bool {
	if e.from == f.cur {
		p.take(f, &rtEdge{to: w, back: e.back, val: e.val, nz: e.nz}, w)
		return true
	}
	i := f.rt.vi[f.cur].edgeTo(w)
	if i < 0 {
		return false
	}
	ed := &f.rt.vi[f.cur].succ[i]
	if !p.noMemo {
		e.from, e.back, e.val, e.nz = f.cur, ed.back, ed.val, ed.nz
	}
	p.take(f, ed, w)
	return true
}

// edgeTo returns the index in v.succ of the edge to w, or -1.
func (v *vinfo) edgeTo(w int32) int {
	for i := range v.succ {
		if v.succ[i].to == w {
			return i
		}
	}
	return -1
}

// take moves f from its block to w along edge e.
func (p *Profiler) take(f *frame, e *rtEdge, w int32) {
	rt := f.rt
	if e.back {
		// Back edge v->w: the path ends through the dummy v->EXIT,
		// the next starts through the dummy ENTRY->w (spec §1.4).
		p.complete(f)
		p.startAt(f, w)
		return
	}
	if rt.big {
		f.r = uint64(rt.tr.next(int32(f.r), w))
	} else {
		f.r += e.val
	}
	if e.nz {
		p.Hits++
	}
	f.cur = w
}

// routineOfBlock returns the state of the routine of block id (bi),
// remembered per block id.
func (p *Profiler) routineOfBlock(id uint32, bi *trace.BlockInfo) *routine {
	if int(id) < len(p.cache) {
		if rt := p.cache[id].rt; rt != nil {
			return rt
		}
	}
	return p.routineOf(bi)
}

// routineOf returns the state of the routine of block bi.
func (p *Profiler) routineOf(bi *trace.BlockInfo) *routine {
	k := rkey{bi.Routine.Entry, bi.Routine.Object}
	if rt := p.routines[k]; rt != nil {
		return rt
	}
	rt := &routine{seq: len(p.list), info: bi.Routine, trunc: map[string]*truncRec{}, allBig: p.allBig}
	rt.end = routineEnd(p.opt.Symbols, bi.Routine.Entry, bi.Addr+uint64(bi.Len))
	var code Code
	var oc *objCode
	if p.opt.Code != nil {
		code, _ = p.opt.Code(bi.Routine)
	} else if c, err := p.elf.Code(bi.Routine); err == nil {
		code, oc = c, c
	}
	if code != nil && len(code.Read(bi.Routine.Entry, 1)) == 0 {
		code = nil // the object on disk is not what runs there
	}
	rt.code = code
	if code == nil {
		rt.extents = map[uint64]tbExtent{}
	}
	syms := p.opt.Symbols
	rt.noReturn = func(target uint64) bool {
		if syms == nil {
			return false
		}
		r, ok := syms.Routine(target)
		if !ok || r.Entry != target {
			return false
		}
		if NoReturn(r.Name) {
			return true
		}
		if oc != nil && strings.HasPrefix(r.Name, "[.plt") {
			if name, ok := oc.pltTarget(target); ok {
				return NoReturn(name)
			}
		}
		return false
	}
	if p.Copy != nil {
		if tails, ok := p.Copy.plannedTails(k.entry, k.object); ok {
			rt.planned = true
			for _, t := range tails {
				rt.addTail(t)
			}
		}
	}
	rt.build()
	if rt.big {
		rt.tr = newTrie()
	}
	rt.resetCounts()
	p.accountBuild(rt)
	p.routines[k] = rt
	p.list = append(p.list, rt)
	return rt
}

// routineEnd finds where the routine entered at entry ends: the first
// address that Symbols attributes to another routine (at least past
// known, an address known to be inside).
func routineEnd(syms trace.Symbols, entry, known uint64) uint64 {
	if syms == nil {
		return known
	}
	same := func(pc uint64) bool {
		r, ok := syms.Routine(pc)
		return ok && r.Entry == entry
	}
	lo, step := entry, uint64(64)
	hi := entry + step
	for same(hi) {
		lo = hi
		step *= 2
		if step > 1<<32 {
			return hi
		}
		hi = entry + step
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if same(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// entry maps emulator block id (at addr, n bytes) onto rt's static blocks.
func (p *Profiler) entry(id uint32, rt *routine, addr uint64, n uint32) *cacheEntry {
	if int(id) >= len(p.cache) {
		p.cache = append(p.cache, make([]cacheEntry, int(id)+1-len(p.cache)+len(p.cache)/2)...)
	}
	e := &p.cache[id]
	if e.rt == rt && e.version == rt.version {
		return e
	}
	*e = cacheEntry{rt: rt, version: rt.version, from: -1, n: n}
	cfg := rt.cfg
	first, ok := cfg.Find(addr)
	if !ok {
		return e
	}
	e.leader = cfg.Blocks[first].Start == addr
	e.verts = append(e.verts, first)
	for i := first + 1; int(i) < len(cfg.Blocks) && cfg.Blocks[i].Start < addr+uint64(n); i++ {
		e.verts = append(e.verts, i)
	}
	return e
}

// block handles a Block event of a visible routine.
func (p *Profiler) block(ev *trace.Event) {
	var bi *trace.BlockInfo
	var rt *routine
	var n uint32 // the block's length
	if id := ev.Block; int(id) < len(p.cache) && p.cache[id].rt != nil && p.cache[id].rt.code != nil {
		// A block seen before, of a visible routine with code: the
		// cache has what the block table would give (block ids never
		// change), without reading the table's entry.
		rt, n = p.cache[id].rt, p.cache[id].n
	} else {
		if p.opt.Block != nil {
			bi = p.opt.Block(ev.Block)
		}
		if bi == nil || bi.Routine.Name == "" || bi.Routine.Kind.Transparent() {
			// Linker stubs (a PLT entry reached by a jump) and the
			// lazy-binding resolver are glue, not routines of the program:
			// the frame's path goes on in its routine.
			return
		}
		rt, n = p.routineOfBlock(ev.Block, bi), bi.Len
	}
	t := p.thread(ev.Tid)
	if n := len(t.frames); n > 0 && t.frames[n-1].barrier {
		p.overBarrier(t, ev.Aux)
	}
	if len(t.frames) == 0 {
		t.frames = append(t.frames, frame{cur: -1})
	}
	f := &t.frames[len(t.frames)-1]
	if f.rt != rt {
		// The activation runs another routine's code without a call (a
		// jump into it that is not a tail call, e.g. back from a .cold
		// part): the path ends here and one starts there.
		if f.rt != nil {
			p.endPath(f)
		}
		f.rt, f.cur, f.retAddr = rt, -1, 0
	}
	if rt.code == nil {
		if _, ok := rt.extents[ev.Addr]; !ok {
			rt.extents[ev.Addr] = tbExtent{bi.Len, bi.End}
			p.rebuild(rt, true)
		}
	}
	var e *cacheEntry
	for try := 0; ; try++ {
		e = p.entry(ev.Block, rt, ev.Addr, n)
		placed, learnt := p.enter(f, ev, e)
		if placed {
			break
		}
		if !learnt || try > 8 {
			// Never expected: the block cannot be placed in the CFG,
			// and what the run taught (a root or an edge already known)
			// does not place it either; rebuilding again would only
			// repeat the same DAG on every execution. The path in
			// progress ends here, cut short, and is counted as lost
			// rather than guessed.
			p.lose(f, rt, ev.Addr+uint64(n))
			return
		}
	}
	f.lastEnd = ev.Addr + uint64(n)
	f.retAddr = 0
	// Static blocks further inside the emulator block: fall-throughs.
	for k := 1; k < len(e.verts); k++ {
		if p.step(f, e.verts[k]) {
			continue
		}
		from := rt.cfg.Blocks[f.cur]
		if !rt.addEdge(from.End, rt.cfg.Blocks[e.verts[k]].Start) {
			p.lose(f, rt, ev.Addr+uint64(n)) // known and still not placed: as above
			return
		}
		p.rebuildWith(rt, func() { rt.linkBlocks(f.cur, e.verts[k]) })
		e = p.entry(ev.Block, rt, ev.Addr, n)
		k = indexOf(e.verts, f.cur) // retry the step from where f is
		if k < 0 {
			break
		}
	}
}

func indexOf(xs []int32, x int32) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// enter moves f into the first static block of emulator block e (at
// ev.Addr) and reports placed. Otherwise it reports whether it learnt
// something and changed the CFG (the caller maps the block again and
// retries) or found nothing new to learn (the block cannot be placed).
func (p *Profiler) enter(f *frame, ev *trace.Event, e *cacheEntry) (placed, learnt bool) {
	rt := f.rt
	if len(e.verts) == 0 {
		// Code the disassembly never reached.
		if !rt.addRoot(ev.Addr, f.cur >= 0 && f.retAddr == 0) {
			return false, false
		}
		p.rebuild(rt, true)
		return false, true
	}
	w := e.verts[0]
	if f.cur >= 0 && !e.leader && w == f.cur && f.lastEnd == ev.Addr {
		return true, false // the emulator cut a static block (page end, syscall...)
	}
	if f.cur >= 0 && w == f.cur {
		if n, ok := rt.isRepString(ev.Addr); ok && f.lastEnd == ev.Addr+n {
			return true, false // the next iteration of a rep string instruction
		}
	}
	if !e.leader {
		// A jump into the middle of a static block, or a path starting
		// there (from another routine, a landing site).
		if !rt.addRoot(ev.Addr, f.cur >= 0 && f.retAddr == 0) {
			return false, false
		}
		p.rebuild(rt, true)
		return false, true
	}
	if f.cur >= 0 && f.retAddr != 0 && ev.Addr != f.retAddr {
		// The frame resumes elsewhere than where its call returns: a
		// longjmp or exception landed here. The path in progress is
		// truncated and a new one starts at the landing site (spec §1.7).
		p.truncate(f)
		f.cur, f.retAddr = -1, 0
	}
	if f.cur < 0 {
		if !rt.vi[w].isHead {
			if !rt.addHead(ev.Addr) {
				return false, false
			}
			p.rebuild(rt, false)
			return false, true
		}
		p.startAt(f, w)
		return true, false
	}
	if p.stepInto(f, w, e) {
		return true, false
	}
	if !rt.addEdge(rt.cfg.Blocks[f.cur].End, ev.Addr) {
		return false, false
	}
	from := f.cur
	p.rebuildWith(rt, func() { rt.linkBlocks(from, w) })
	return false, true
}

// lose ends f's path in progress, cut short, at a block that cannot be
// placed in rt's CFG, and counts the execution as lost.
func (p *Profiler) lose(f *frame, rt *routine, end uint64) {
	if f.cur >= 0 {
		p.truncate(f)
	}
	f.cur, f.retAddr = -1, 0
	f.lastEnd = end
	rt.lost++
}

// spFrames keeps thread ev.Tid's frames from the stack pointer (Aux) of a
// Block event when no call stage runs (Options.SPFrames), the rules of the
// call stage (calls.Tracker) restated for a stream that has only the blocks
// of the routines a copy profiles: an activation whose entry stack pointer
// is below the block's has returned (or was unwound); an activation whose
// last block ended with ret has returned; a block begins an activation (a
// call) when the top frame's last block ended with a call and the block is
// not its return address but another routine's code or a routine's entry,
// or when it is a routine's entry below the top frame's entry stack
// pointer (called from code not profiled here). A jump to another routine's entry at the same
// stack pointer is a tail call, which block handles like the stage's
// return-then-call. It reports whether the block belongs to a profiled
// routine (false: hidden code, skipped).
func (p *Profiler) spFrames(ev *trace.Event) bool {
	var bi *trace.BlockInfo
	if p.opt.Block != nil {
		bi = p.opt.Block(ev.Block)
	}
	if bi == nil {
		return false
	}
	t := p.thread(ev.Tid)
	sp := ev.Aux
	if t.hidden {
		// PLT0 pushed the link map and jumped to the lazy-binding
		// resolver, which (with all it calls) is hidden, as the call
		// stage hides it, until it jumps on to the bound function with the
		// stack of the call through the PLT (above PLT0's stack pointer).
		// The copy sees every block of the dynamic linker, so the
		// resolver's own last block, an indirect jump, ends it too.
		if sp <= t.hiddenSP && !t.unhide {
			if !t.resolverKnown {
				t.resolver, t.resolverKnown = rkey{bi.Routine.Entry, bi.Routine.Object}, true
			}
			if bi.End == trace.EndJump && t.resolver == (rkey{bi.Routine.Entry, bi.Routine.Object}) {
				t.unhide = true
			}
			return false
		}
		t.hidden, t.unhide = false, false
	}
	if bi.Routine.Kind == trace.LazyBindingStub {
		t.hidden, t.hiddenSP, t.resolverKnown = true, sp, false
		return false
	}
	if bi.Routine.Name == "" || bi.Routine.Kind.Transparent() {
		return false
	}
	if p.Copy != nil && !p.Copy.profilesBlock(ev.Block, bi) {
		if isDynamicLinker(bi.Routine.Object) {
			return false // seen for the resolver only
		}
		// The entry of a function that never returns, seen only so that
		// the path of the block calling it ends there (as at a Call).
		if n := len(t.frames); n > 0 && t.frames[n-1].lastTerm == trace.EndCall && sp < t.frames[n-1].sp+8 {
			p.noReturnCall(&t.frames[n-1], bi.Routine.Name)
		}
		return false
	}
	for n := len(t.frames); n > 0; n = len(t.frames) {
		// Never the root by stack pointer (a thread's first block may lie
		// deep in its routine's frame), but any frame after a ret.
		top := &t.frames[n-1]
		if top.rt != nil && top.rt.info.Entry == bi.Routine.Entry && sp <= top.sp+8 && calls.PopsReturn(bi.Routine.Name) {
			break // vfork's own code (or sigsetjmp's), its return address popped, as with the call stage
		}
		if (n > 1 || top.barrier) && top.sp < sp || top.lastTerm == trace.EndRet && top.rt != nil {
			p.pop(t)
			continue
		}
		break
	}
	if n := len(t.frames); n > 0 && t.frames[n-1].barrier {
		// Code run by a signal handler (see signal).
		t.frames = append(t.frames, frame{cur: -1, sp: sp, lastTerm: bi.End})
		return true
	}
	entry := ev.Addr == bi.Routine.Entry
	call := false
	if n := len(t.frames); n == 0 {
		call = true
	} else {
		top := &t.frames[n-1]
		other := top.rt == nil || top.rt.info.Entry != bi.Routine.Entry || top.rt.info.Object != bi.Routine.Object
		// A call seen from the caller (its last block ended with a call,
		// and this is not its return address), or from code not
		// profiled here (a routine's entry, deeper in the stack).
		call = top.lastTerm == trace.EndCall && ev.Addr != top.lastEnd && (other || entry) ||
			entry && sp < top.sp
		// A landing after a tail jump: the jump's EXIT edge ended the
		// activation (the call stage pops it at the jump) and a longjmp
		// lands in the routine again at the same stack pointer (musl's
		// sigsetjmp tail-jumps to __sigsetjmp_tail, and siglongjmp lands
		// in it; a copy that does not profile its caller kept the old
		// activation and cut its path).
		left := top.cur >= 0 && top.lastTerm == trace.EndJump && top.rt.vi[top.cur].hasExit && calls.PopsReturn(bi.Routine.Name)
		if !call && (entry || left) && !other && top.cur >= 0 && !top.rt.hasEdgeTo(top.cur, ev.Addr) {
			// The routine's entry again, but not along its CFG: the
			// activation left (a tail jump to code not profiled here,
			// which returned) and the routine is called anew.
			p.pop(t)
			call = true
		}
	}
	if n := len(t.frames); call {
		if n > 0 {
			f := &t.frames[n-1]
			if f.rt != nil && f.cur >= 0 {
				f.retAddr = f.lastEnd
				p.noReturnCall(f, bi.Routine.Name)
			}
		}
		t.frames = append(t.frames, frame{cur: -1, sp: sp})
	} else if f := &t.frames[n-1]; f.lastTerm == trace.EndCall && f.rt != nil && f.cur >= 0 && ev.Addr != f.lastEnd {
		// The frame called out (to code not profiled here) and goes on
		// elsewhere than at its return address: the enter rule for a
		// longjmp landing applies, as after a Call event.
		f.retAddr = f.lastEnd
	}
	t.frames[len(t.frames)-1].lastTerm = bi.End
	return true
}

// hasEdgeTo reports whether static block b has a CFG successor at addr.
func (rt *routine) hasEdgeTo(b int32, addr uint64) bool {
	w, ok := rt.cfg.Leader(addr)
	if !ok {
		return false
	}
	for _, e := range rt.vi[b].succ {
		if e.to == w {
			return true
		}
	}
	return false
}

// noReturnID reports whether the routine of Call events' id never returns.
func (p *Profiler) noReturnID(id calls.RoutineID) bool {
	if int(id) >= len(p.noRet) {
		p.noRet = append(p.noRet, make([]uint8, int(id)+1-len(p.noRet))...)
	}
	if p.noRet[id] == 0 {
		p.noRet[id] = 1
		if NoReturn(p.opt.Routines().Get(id).Name) {
			p.noRet[id] = 2
		}
	}
	return p.noRet[id] == 2
}

// noReturnCall handles f's call of the routine called name: a call of a
// function that never returns ends the path (spec §1.1); when the
// disassembly did not know the callee (a call through the PLT), the
// calling block gets its EXIT edge now.
//
// A copy takes a planned routine's tails from the plan instead
// (PlanProc.Tails): from the stack pointer alone it cannot tell the
// frame's own call from one made by code it does not see (gzip's main
// calls a local function that calls exit, which main's frame would take
// for its own call: an EXIT edge the planning run never gave main, and
// the copy refused the plan), nor the reverse when the calling block
// pushed before its call (_start's call of __libc_start_main).
func (p *Profiler) noReturnCall(f *frame, name string) {
	if f.rt == nil || f.cur < 0 || !NoReturn(name) || f.rt.planned {
		return
	}
	if !f.rt.vi[f.cur].hasExit && f.rt.addTail(f.rt.cfg.Blocks[f.cur].End) {
		p.rebuild(f.rt, false)
	}
}
