package calls

import (
	"slices"

	"emuprof/trace"
)

// Listener is told about the routine activations that call tracking
// derives. Calls and returns of one thread nest properly; frames of the
// dynamic linker's lazy-binding resolver (and of everything it calls) are
// never reported, nor are those of linker stubs (PLT entries): a call
// through the PLT reads as a call of its target.
type Listener interface {
	// Call reports that thread tid entered routine (entered at entry), in
	// calling context ctx of the tracker's CCT.
	Call(tid uint32, routine RoutineID, entry uint64, ctx NodeID)
	// Return reports that the topmost reported activation of tid ended.
	Return(tid uint32, routine RoutineID, ctx NodeID)
}

// frame is one shadow stack entry.
type frame struct {
	routine RoutineID
	ret     uint64 // expected return address (0 for a thread's root frame)
	sp      uint64 // stack pointer at routine entry (after the call pushed ret)
	ctx     NodeID // calling context (of the nearest reported frame, for hidden ones)
	hidden  bool   // a transparent frame (linker stub, resolver) or a descendant of a resolver: not reported
	// barrier marks where a signal interrupted the thread: the frame of
	// the handler goes above it, rt_sigreturn pops down to it and it, it
	// is never reported and returns do not cross it.
	barrier bool
	// A barrier keeps how the interrupted block ended (see Sigreturn).
	intEnd           trace.End
	intNext, intAddr uint64
}

// stack is the shadow stack of one thread. Tracker.unchanged compares
// every field but tid: a field added here goes there too.
type stack struct {
	tid      uint32
	frames   []frame
	hidden   int       // number of hidden frames on the stack
	prevEnd  trace.End // terminator of the thread's previous block
	prevNext uint64    // address following the previous block (its fall-through/return address)
	prevAddr uint64    // address of the previous block
	// resumed: rt_sigreturn gave back an interrupted call (see Sigreturn)
	// and the thread's next block is not yet seen.
	resumed  bool
	prevKind trace.RoutineKind // kind of the previous block's routine
	lastSP   uint64            // stack pointer at the previous block
	// signalled: a signal handler ran on the thread (SignalEntry); the
	// stage marks none of its blocks since (Stage.run).
	signalled bool
}

// Tracker maintains a shadow stack per thread from Block events.
//
// Rules, for a block B of thread t whose previous block was P:
//   - t has no frame: B starts the thread's root frame (routine of B).
//   - P ended with ret: pop to the frame whose return address is B's address
//     if there is one; otherwise frames are unwound by stack pointer below.
//   - at every block, frames (but the root) whose entry stack pointer is
//     below B's stack pointer are unwound (longjmp, exceptions), but not
//     vfork's by its own code 8 bytes above (PopsReturn).
//   - P ended with call (and B is not the fall-through, i.e. not a
//     "call next; pop" idiom): B is the callee entry; push a frame with
//     return address P.Addr+P.Len and stack pointer B.Aux.
//   - P ended with a jump (or conditional jump) and B is the entry of a
//     routine other than the current frame's: tail call; the top frame is
//     replaced (return, then call) keeping its return address and its entry
//     stack pointer. Keeping the stack pointer matters at PLT0, which jumps
//     to the resolver with two more words pushed: the resolver's frame must
//     not look deeper than the caller's, or the stack-pointer rule would
//     drop it when the resolver jumps on to the bound function, and the
//     tail-call rule would then replace the caller itself.
//   - P was PLT0 (a LazyBindingStub) and ended with a jump: B's routine is
//     the lazy-binding resolver, whatever its name (stripped ld.so).
//
// Frames of transparent routines (trace.RoutineKind) are kept on the
// shadow stack but never reported; everything a resolver calls is hidden
// too. A linker stub's callees are not hidden: it only ever jumps on.
//
// What a block is (its routine, whether it is the routine's entry) is
// worked out once per block id, from the BlockInfo the emulator recorded
// when it translated the block: no address is hashed.
type Tracker struct {
	routines   *Routines
	cct        *CCT
	infos      []blockInfo // by block id
	unknown    blockInfo   // code outside every object, or a block without id
	hasUnknown bool        // unknown.routine was interned (on first need: ids stay dense in order of sight)
	threads    map[uint32]*stack
	cur        *stack
	listener   Listener
	signals    int // SignalEntry calls so far: while 0, no thread is signalled
}

// blockInfo is what call tracking needs to know about a block.
type blockInfo struct {
	routine RoutineID
	entry   bool // the block starts its routine
	known   bool // computed (infos[id] is valid)
	// named: the block belongs to a named routine, entered at rentry
	// (a run starting there enters it).
	named bool
	// kind is the routine's kind, kept equal to the routine table's
	// (markResolver): read at every block, it saves two dependent loads.
	kind   trace.RoutineKind
	next   uint64 // the address after the block (its fall-through/return address)
	rentry uint64
	// ctx+1 is the CCT node of the routine called from context parent,
	// the last a push of this block made (0: none yet): an entry block is
	// nearly always called from one context.
	parent, ctx NodeID
}

// NewTracker returns a tracker that reports to l (which may be nil).
func NewTracker(l Listener) *Tracker {
	t := &Tracker{
		routines: NewRoutines(),
		cct:      NewCCT(),
		threads:  make(map[uint32]*stack),
		listener: l,
	}
	return t
}

// CCT returns the calling context tree of every reported activation (one
// tree for all threads; roots are the threads' first routines).
func (t *Tracker) CCT() *CCT { return t.cct }

// SetListener replaces the listener.
func (t *Tracker) SetListener(l Listener) { t.listener = l }

// Routines returns the tracker's routine table.
func (t *Tracker) Routines() *Routines { return t.routines }

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

// InResolver reports whether thread tid is running hidden code: the dynamic
// linker's lazy-binding resolver or a linker stub (a hidden frame is on its
// stack).
func (t *Tracker) InResolver(tid uint32) bool {
	s := t.stackOf(tid, false)
	return s != nil && s.hidden > 0
}

// LastSP returns the stack pointer of thread tid's last Block event, as
// the event came (before the stage marked calls on it), if the thread has
// a stack.
func (t *Tracker) LastSP(tid uint32) (uint64, bool) {
	if s := t.stackOf(tid, false); s != nil {
		return s.lastSP, true
	}
	return 0, false
}

// signalled reports whether a signal handler ran on thread tid.
func (t *Tracker) signalled(tid uint32) bool {
	s := t.stackOf(tid, false)
	return s != nil && s.signalled
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
		s = &stack{tid: tid, prevEnd: trace.EndOther}
		t.threads[tid] = s
	}
	t.cur = s
	return s
}

// stackSnapshot is a copy of one thread's shadow stack (snapshot).
type stackSnapshot struct {
	ok     bool
	st     stack
	frames []frame
}

// snapshot copies thread tid's shadow stack into snap.
func (t *Tracker) snapshot(tid uint32, snap *stackSnapshot) {
	s := t.stackOf(tid, false)
	snap.ok = s != nil
	if s != nil {
		snap.st = *s
		snap.st.frames = nil
		snap.frames = append(snap.frames[:0], s.frames...)
	}
}

// unchanged reports whether thread tid's shadow stack is as snap holds it:
// the same blocks then make the same calls and returns.
func (t *Tracker) unchanged(tid uint32, snap *stackSnapshot) bool {
	s := t.stackOf(tid, false)
	if s == nil || !snap.ok {
		return false
	}
	o := &snap.st
	return s.hidden == o.hidden && s.prevEnd == o.prevEnd && s.prevNext == o.prevNext && s.prevAddr == o.prevAddr &&
		s.resumed == o.resumed && s.prevKind == o.prevKind && s.lastSP == o.lastSP && s.signalled == o.signalled &&
		slices.Equal(s.frames, snap.frames)
}

// info returns what the tracker knows of block b (event ev's block),
// working it out on first sight of the id.
func (t *Tracker) info(ev *trace.Event, b *trace.BlockInfo) *blockInfo {
	id := ev.Block
	if b == nil || id == 0 {
		t.unknownRoutine()
		t.unknown.next = ev.Addr
		return &t.unknown
	}
	if int(id) >= len(t.infos) {
		t.infos = append(t.infos, make([]blockInfo, int(id)+1-len(t.infos)+len(t.infos)/2)...)
	}
	bi := &t.infos[id]
	if !bi.known {
		*bi = blockInfo{known: true, next: b.Addr + uint64(b.Len)}
		if b.Routine.Name != "" {
			bi.routine = t.routines.Intern(b.Routine)
			bi.entry = b.Routine.Entry == b.Addr
			bi.named, bi.rentry = true, b.Routine.Entry
		} else {
			bi.routine = t.unknownRoutine()
		}
		bi.kind = t.routines.kinds[bi.routine]
	}
	return bi
}

// unknownRoutine returns the routine of code that no object covers.
func (t *Tracker) unknownRoutine() RoutineID {
	if !t.hasUnknown {
		t.unknown.routine, t.hasUnknown = t.routines.Synthetic("unknown", "NONE"), true
		t.unknown.kind = t.routines.kinds[t.unknown.routine]
	}
	return t.unknown.routine
}

// Block processes one Block event, whose block (ev.Block) is b, and reports
// whether the thread now runs hidden code (a linker stub, the lazy-binding
// resolver or something it called), whose cost and memory accesses must be
// ignored.
func (t *Tracker) Block(ev *trace.Event, b *trace.BlockInfo) (hidden bool) {
	bi := t.info(ev, b)
	entry := bi.entry
	if b != nil && ev.Addr != b.Addr {
		// A run of blocks (trace.Encoding.Fold), of one routine: b is its
		// last block, ev.Addr its first, which decides whether it enters.
		entry = b.Routine.Name != "" && b.Routine.Entry == ev.Addr
	}
	return t.block(ev, bi, entry)
}

// block is Block for the event's blockInfo bi; entry says whether the
// event (its first block) enters its routine. It reports the returns
// first and at most one call, last (Stage's call marks rely on it).
func (t *Tracker) block(ev *trace.Event, bi *blockInfo, entry bool) (hidden bool) {
	s := t.stackOf(ev.Tid, true)
	sp := ev.Aux
	if len(s.frames) == 0 {
		t.push(s, bi, ev.Addr, 0, sp)
	} else {
		if s.prevEnd == trace.EndRet {
			t.returnTo(s, ev.Addr)
		}
		// Frames entered at a lower stack pointer than the current one
		// have been unwound (return, longjmp, exception); never the root.
		for len(s.frames) > 1 && s.frames[len(s.frames)-1].sp < sp {
			if top := s.frames[len(s.frames)-1]; top.routine == bi.routine && sp <= top.sp+8 && PopsReturn(t.routines.list[bi.routine].Name) {
				break // vfork's or sigsetjmp's own code, its return address popped
			}
			t.pop(s)
		}
		switch s.prevEnd {
		case trace.EndCall:
			// After rt_sigreturn, the interrupted call block again
			// (a fault in it, fixed by the handler) is no call.
			again := s.resumed && ev.Addr >= s.prevAddr && ev.Addr < s.prevNext
			if ev.Addr != s.prevNext && !again {
				t.push(s, bi, ev.Addr, s.prevNext, sp)
			}
		case trace.EndJump, trace.EndCond:
			top := &s.frames[len(s.frames)-1]
			// A linker stub only jumps on: its target replaces it even
			// when the target is not known as a routine entry.
			fromStub := s.prevEnd == trace.EndJump &&
				(s.prevKind == trace.LinkerStub || s.prevKind == trace.LazyBindingStub)
			if (entry || fromStub) && bi.routine != top.routine {
				if s.prevKind == trace.LazyBindingStub && s.prevEnd == trace.EndJump {
					t.markResolver(bi.routine)
				}
				ret, entrySP := top.ret, top.sp
				t.pop(s)
				t.push(s, bi, ev.Addr, ret, entrySP)
			}
		}
	}
	s.prevEnd = ev.End
	s.prevNext = bi.next
	s.prevAddr, s.resumed = ev.Addr, false
	s.prevKind = bi.kind
	s.lastSP = sp
	return s.hidden > 0
}

// PopsReturn reports whether the routine called name may pop its own
// return address off the stack before it returns (pushing it back):
// vfork, so that the child, which runs on the parent's stack until it
// execs or exits, cannot clobber it (glibc's and musl's x86-64 vfork), and
// musl's sigsetjmp, which keeps it in the jmp_buf across its call of
// setjmp. Its own blocks then run 8 bytes above its entry stack pointer,
// which must not read as the activation unwound (its last block ran in
// the caller's frame, and path profiling cut the caller's path there).
func PopsReturn(name string) bool {
	switch name {
	case "vfork", "__vfork", "__libc_vfork", "sigsetjmp", "__sigsetjmp":
		return true
	}
	return false
}

// SignalEntry says that thread tid's next block is a signal handler's
// first (the kernel built a signal frame; there was no call), which will
// return to restorer (sa_restorer, which calls rt_sigreturn). The handler
// is reported as called by the interrupted routine. A barrier frame under
// it keeps the interrupted frames: at the stack pointer of the interrupted
// block, so that a siglongjmp past it unwinds it, or, when the handler
// runs on the alternate stack (whose addresses say nothing about the
// thread's stack), only rt_sigreturn ends it.
func (t *Tracker) SignalEntry(tid uint32, restorer uint64, onAltStack bool) {
	s := t.stackOf(tid, true)
	s.signalled = true
	t.signals++
	n := len(s.frames)
	if n == 0 {
		return
	}
	top := s.frames[n-1]
	sp := s.lastSP
	if onAltStack {
		sp = ^uint64(0)
	}
	s.frames = append(s.frames, frame{routine: top.routine, sp: sp, ctx: top.ctx, barrier: true,
		intEnd: s.prevEnd, intNext: s.prevNext, intAddr: s.prevAddr})
	s.prevEnd, s.prevNext = trace.EndCall, restorer
}

// Sigreturn ends thread tid's innermost signal handler (rt_sigreturn):
// its frames and the barrier go; the thread goes on where the signal
// interrupted it. A signal that came between a call and the callee's
// first block leaves that call pending: the callee's first block is still
// a call, unless the thread runs the call's own block again (a fault in
// it that the handler fixed).
func (t *Tracker) Sigreturn(tid uint32) {
	s := t.stackOf(tid, false)
	if s == nil {
		return
	}
	for i := len(s.frames) - 1; i >= 1; i-- {
		if b := s.frames[i]; b.barrier {
			for len(s.frames) > i {
				t.pop(s)
			}
			if b.intEnd == trace.EndCall {
				s.prevEnd, s.prevNext, s.prevAddr, s.resumed = trace.EndCall, b.intNext, b.intAddr, true
			}
			return
		}
	}
}

// markResolver marks routine r as the lazy-binding resolver, in the
// routine table and in the blocks of it the tracker knows.
func (t *Tracker) markResolver(r RoutineID) {
	if t.routines.kinds[r] == trace.LazyResolver {
		return
	}
	t.routines.markResolver(r)
	for i := range t.infos {
		if bi := &t.infos[i]; bi.known && bi.routine == r {
			bi.kind = trace.LazyResolver
		}
	}
	if t.hasUnknown && t.unknown.routine == r {
		t.unknown.kind = trace.LazyResolver
	}
}

// returnTo pops to the frame whose return address is addr, if any.
func (t *Tracker) returnTo(s *stack, addr uint64) {
	for i := len(s.frames) - 1; i >= 1 && !s.frames[i].barrier; i-- {
		if s.frames[i].ret == addr {
			for len(s.frames) > i {
				t.pop(s)
			}
			return
		}
	}
}

// push pushes a frame of bi's routine, entered at entry.
func (t *Tracker) push(s *stack, bi *blockInfo, entry, ret, sp uint64) {
	r := bi.routine
	hidden := s.hidden > 0 || bi.kind.Transparent()
	parent := NoNode
	if n := len(s.frames); n > 0 {
		parent = s.frames[n-1].ctx
	}
	ctx := parent
	if !hidden {
		if bi.ctx != 0 && bi.parent == parent {
			ctx = bi.ctx - 1
		} else {
			ctx = t.cct.Child(parent, r)
			bi.parent, bi.ctx = parent, ctx+1
		}
	}
	// Set in place: appending a composite literal copied it from the
	// stack in moves that read back narrower stores (Stage.insert).
	n := len(s.frames)
	if n == cap(s.frames) {
		s.frames = append(s.frames, frame{})
	} else {
		s.frames = s.frames[:n+1]
		s.frames[n] = frame{}
	}
	f := &s.frames[n]
	f.routine, f.ret, f.sp, f.ctx, f.hidden = r, ret, sp, ctx, hidden
	if hidden {
		s.hidden++
		return
	}
	if st, ok := t.listener.(*Stage); ok {
		st.Call(s.tid, r, entry, ctx) // a direct call
	} else if t.listener != nil {
		t.listener.Call(s.tid, r, entry, ctx)
	}
}

func (t *Tracker) pop(s *stack) {
	f := &s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	switch {
	case f.barrier:
	case f.hidden:
		s.hidden--
	case t.listener != nil:
		if st, ok := t.listener.(*Stage); ok {
			st.Return(s.tid, f.routine, f.ctx) // a direct call
		} else {
			t.listener.Return(s.tid, f.routine, f.ctx)
		}
	}
}
