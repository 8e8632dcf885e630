package parallel

import (
	"fmt"
	"math"
	"path"

	"emuprof/analyses/calls"
	"emuprof/analyses/platform"
	"emuprof/trace"
)

// Config says how to attribute.
type Config struct {
	// CPUs is the number of virtual cores n; NsPerInsn the cost of an
	// instruction; Quantum the scheduler's quantum in instructions (it
	// bounds how far the timeline sweep lags behind the stream).
	CPUs      int
	NsPerInsn int64
	Quantum   uint64
	// MaxInsnNs is the most an instruction costs under a time model
	// (platform.SchedConfig): a slice lasts up to 2 × Quantum × MaxInsnNs.
	// 0: NsPerInsn.
	MaxInsnNs int64
	// IdleBase is "cores" (TM09: idle cores, n − n_w) or "threads"
	// (HPCToolkit's code: threads that are blocked or spinning).
	IdleBase string
	// Spin is "idle" (spin-waiting is idleness) or "overhead" (it is work
	// in the runtime, counted as overhead).
	Spin string
	// IdleThreshold and OverheadThreshold are Table 1's "high" bounds
	// (ratio of the context's effort; equal counts as high); 0 means the
	// default.
	IdleThreshold, OverheadThreshold float64
	// Hot is the number of contexts the summary classifies.
	Hot int
	// SweepAtEnd keeps every interval until Finish (testing: it must give
	// the same profile as the incremental sweep).
	SweepAtEnd bool
	// App names the outputs; Command is the profiled command line.
	App, Command string
}

// Defaults for Config's zero fields.
const (
	DefaultIdleThreshold     = 0.10
	DefaultOverheadThreshold = 0.10
	DefaultHot               = 12
)

func (c Config) check() (Config, error) {
	s := platform.SchedConfig{CPUs: c.CPUs, Quantum: c.Quantum, NsPerInsn: c.NsPerInsn, MaxInsnNs: c.MaxInsnNs}.Defaults()
	c.CPUs, c.Quantum, c.NsPerInsn, c.MaxInsnNs = s.CPUs, s.Quantum, s.NsPerInsn, s.MaxInsnNs
	switch c.IdleBase {
	case "":
		c.IdleBase = "cores"
	case "cores", "threads":
	default:
		return c, fmt.Errorf("--idle-base must be cores or threads, not %q", c.IdleBase)
	}
	switch c.Spin {
	case "":
		c.Spin = "idle"
	case "idle", "overhead":
	default:
		return c, fmt.Errorf("--spin must be idle or overhead, not %q", c.Spin)
	}
	if c.IdleThreshold == 0 {
		c.IdleThreshold = DefaultIdleThreshold
	}
	if c.OverheadThreshold == 0 {
		c.OverheadThreshold = DefaultOverheadThreshold
	}
	if c.IdleThreshold < 0 || c.IdleThreshold > 1 || c.OverheadThreshold < 0 || c.OverheadThreshold > 1 {
		return c, fmt.Errorf("thresholds must lie in [0, 1]")
	}
	if c.Hot <= 0 {
		c.Hot = DefaultHot
	}
	if c.App == "" {
		c.App = "prog"
	}
	return c, nil
}

// Analysis is the parallel analysis of one run. The fields a Block event
// touches come first, to share a few cache lines.
type Analysis struct {
	last      *thread // thread of the latest lookup (nil once it exits)
	cur       *thread // thread of the latest Block event
	nsPerInsn int64   // cfg.NsPerInsn
	threads   bool    // idle base: threads
	spinIdle  bool

	// Timeline (see the package comment).
	swept    int64 // idleness is integrated over [0, swept)
	pickLB   int64 // lower bound of the latest pick's clock
	lagNs    int64 // longest slice in ns (2 × quantum × MaxInsnNs + the largest block)
	maxBlock int64 // Size of the largest Block event seen
	sweepNs  int64 // (2 × quantum + the largest block) × NsPerInsn: sweepPending's step × sweepDiv
	maxInsns int64 // instructions of the largest block seen
	win      runWindow
	now      int64 // latest time seen (the makespan so far)
	late     int64 // running time that arrived behind the watermark

	blocks   []blockClass   // by block id
	calls    []callMemo     // by node of the call stage's CCT (callContext)
	cct      *calls.CCT     // the call stage's
	routines []routineClass // by routine id

	tree  ctxTree
	keys  keyTable
	lines lineTable

	cfg Config
	env *platform.Env

	byTid map[uint32]*thread
	all   []*thread // every thread, in order of appearance
	limit *thread   // the runnable thread that held the watermark back at the last try (sweepPending)

	unattr int64 // idleness while nobody works
	evs    []edge
	segs   []segment

	locks      map[uint64]*lock
	lockOrder  []*lock // in order of first sight
	dirty      []*lock // with releases to process
	waitTotals [numWaitClasses]int64
	unreleased int64

	// Periodic runs taken (testing: none may be
	// missed, periodicRun).
	periodic, periodicMissed int

	rep repeatState // Repeat events (repeat.go)

	partial string
	res     *Result
}

// New returns an analysis of the run env describes.
func New(cfg Config, env *platform.Env) (*Analysis, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	a := &Analysis{cfg: cfg, env: env, threads: cfg.IdleBase == "threads", spinIdle: cfg.Spin == "idle",
		nsPerInsn: cfg.NsPerInsn, byTid: map[uint32]*thread{}, locks: map[uint64]*lock{}, cct: env.CCT()}
	a.tree.init()
	a.lines.init()
	a.keys.init()
	a.lagNs = int64(2*cfg.Quantum) * cfg.MaxInsnNs
	a.sweepNs = int64(2*cfg.Quantum) * cfg.NsPerInsn
	a.win.span = int64(2 * cfg.Quantum)
	return a, nil
}

// Needs: blocks, calls, scheduler events. A block's line comes with it
// when the engine folds runs (it cuts them by line); otherwise it is looked
// up here, once per block, on the analyses' goroutine. Runs of
// blocks of one line come as one event (Encoding.Fold): their time goes to
// one key either way. Spin detection counts the runtime blocks that repeat
// one of the thread's last four (spinWatched), which the engine flags
// (Encoding.Repeats); an ordinary run of runtime blocks holds none that
// repeats. Every block may also come in a periodic run (Encoding.FoldCycles),
// whose blocks the analysis knows (periodicRun). It reads no stack
// pointer, so it takes the calls and returns before a block marked on it
// (Encoding.CallMarks): fewer events, handed on in place.
func (a *Analysis) Needs() trace.Needs {
	return trace.Needs{
		Wants:    trace.Wants{Blocks: true, Calls: true, Threads: true},
		Encoding: trace.Encoding{Fold: foldable, FoldCycles: foldCycles, FoldMemory: true, Repeats: spinWatched, CallMarks: true, RepeatEvents: true},
	}
}

// foldCycles takes every block in periodic runs: the analysis knows each
// of their blocks (periodicRun).
func foldCycles(*trace.BlockInfo) bool { return true }

// foldable takes every block in ordinary runs: runtime code's come only in
// runs of blocks that repeat none of the thread's last four (Encoding.Repeats),
// whose spin count is 0.
func foldable(*trace.BlockInfo) bool { return true }

// spinWatched says which blocks spin detection watches for cycles: the
// runtime's, but for its spin loops known by name (they spin whatever
// cycle their blocks make). Other code resets the count.
func spinWatched(b *trace.BlockInfo) bool {
	return isRuntimeRoutine(b.Routine.Name, b.Routine.Object) && !spinNames[b.Routine.Name]
}

// thread is what the analysis knows of one guest thread.
type thread struct {
	tid   uint32
	order int
	state threadState
	// known is the thread's clock as far as the stream told (its clock
	// exactly, unless another analysis delayed it).
	known int64
	// runStart is the clock before the first block of the current run of
	// blocks; segStart the time of the first block since the last gap.
	runStart, segStart int64
	fresh              bool // woken or started since its last block

	stack     []int32 // logical contexts; stack[0] is the creation context
	phys      []calls.RoutineID
	lastBlock uint32

	cyc int // how many runtime blocks in a row repeated one of the four before (Event.Repeat)
	// hist are the last blocks the thread ran, most recent first, 0 for
	// a block inside an ordinary run (its event names only its last): a
	// periodic run repeats the last p (Event.Period).
	hist [histLen]uint32

	pieces []piece // pending intervals for the sweep, by time
	head   int
	// pats are the patterns of the periodic pieces in pieces, in the
	// same order; those before patHead belong to swept pieces.
	pats    []pattern
	patHead int

	wait waitRec

	start, end                    int64
	work, overhead, spin, blocked int64
	idle                          []int64 // as stats.idle, for the thread's share of idleness
}

type threadState uint8

const (
	runnable threadState = iota
	blocked
	exited
)

func (t *thread) top() int32 { return t.stack[len(t.stack)-1] }

// histLen is how many of its last blocks a thread's hist keeps: the
// longest period of a periodic run (trace.Event.Period).
const histLen = 4

// plainBlock shifts hist element by element, written out for four (this
// index is a compile error for any other histLen).
var _ = [1]struct{}{}[histLen-4]

// piece is an interval of a thread's timeline not yet swept. Most are one
// key's (24 bytes: addPiece appends one per event or so); a piece of a
// periodic run whose blocks are of more than one key has key −1 − i, its
// pattern being the thread's pats[i].
type piece struct {
	start, end int64
	key        int32
	work       bool // working (else: idle, counted only with idle base threads)
}

// periodic reports whether p is a periodic piece, and its pattern's index.
func (p *piece) periodic() (int, bool) { return int(-1 - p.key), p.key < 0 }

// pattern is what a periodic piece repeats: from origin on, its run's
// blocks repeat the pattern of period blocks of keys pk and lengths pd
// (ns).
type pattern struct {
	period uint8
	origin int64
	pk     [histLen]int32
	pd     [histLen]int64
	long   *longPattern // instead, a Repeat event's (repeat.go)
}

// share returns how much of [p.origin, x) a periodic piece spends in its
// pattern's block i: whole patterns, then what of block i the rest covers.
func (p *pattern) share(i int, x int64) int64 {
	var total, before int64
	for j := range int(p.period) {
		if j < i {
			before += p.pd[j]
		}
		total += p.pd[j]
	}
	q, r := (x-p.origin)/total, (x-p.origin)%total
	return q*p.pd[i] + min(max(r-before, 0), p.pd[i])
}

// blockClass is what the analysis needs of a block, worked out once.
type blockClass struct {
	known    bool
	runtime  bool  // the block's routine is runtime code
	spin     bool  // the routine is a spin loop through and through
	line     int32 // leaf: the block's line (or routine)
	insns    int64 // instructions
	callSite int32 // the line of its last instruction, -2 until needed
	// key+1 is the key of the block in context keyNode, the last it was
	// seen in (0: none yet): most blocks run in one context. nodeRuntime
	// is keyNode's runtime flag.
	keyNode, key int32
	nodeRuntime  bool
}

// key returns the key of block id, whose class is bc, in context node.
func (a *Analysis) key(bc *blockClass, node int32, id uint32) int32 {
	if bc.key != 0 && bc.keyNode == node {
		return bc.key - 1
	}
	k := a.keys.get(node, bc.line, id)
	bc.keyNode, bc.key, bc.nodeRuntime = node, k+1, a.tree.nodes[node].runtime
	return k
}

// routineClass is what the analysis needs of a routine.
type routineClass struct {
	known   bool
	runtime bool
	user    bool // user code: a runtime that calls it calls back (thread start routine, outlined body)
}

func (a *Analysis) blockClass(id uint32) *blockClass {
	if int(id) < len(a.blocks) && a.blocks[id].known {
		return &a.blocks[id]
	}
	return a.newBlockClass(id)
}

// newBlockClass is blockClass's slow path: the first sight of block id.
func (a *Analysis) newBlockClass(id uint32) *blockClass {
	if int(id) >= len(a.blocks) {
		a.blocks = append(a.blocks, make([]blockClass, int(id)+1-len(a.blocks)+len(a.blocks)/2)...)
	}
	bc := &a.blocks[id]
	if !bc.known {
		bc.known = true
		bc.callSite = -2
		b := a.env.Block(id)
		if b == nil {
			bc.line = a.lines.intern(lineInfo{fn: "unknown"}, nil)
			return bc
		}
		r := b.Routine
		bc.insns = int64(b.Insns)
		bc.runtime = isRuntimeRoutine(r.Name, r.Object)
		bc.spin = bc.runtime && spinNames[r.Name]
		name := r.Name
		if name == "" {
			name = "unknown"
		}
		li := lineInfo{fn: name, obj: r.Object, file: b.File, line: b.Line}
		if li.line == 0 && a.env.Symbols != nil {
			li.file, li.line, _ = a.env.Symbols.Line(b.Addr)
		}
		bc.line = a.lines.intern(li, func() uint64 { return a.lineAddr(li, b.Addr) })
	}
	return bc
}

// lineAddr returns where line li, on which pc lies, starts in its
// function, from the line tables: the same whichever blocks of the line
// the run reports (folded runs of blocks hide some); 0 without line
// information.
func (a *Analysis) lineAddr(li lineInfo, pc uint64) uint64 {
	mp, ok := a.env.Symbols.(trace.Mapper)
	if !ok || li.line == 0 {
		return 0
	}
	return mp.LineStart(pc)
}

// callSite returns the line of block id's last instruction: where a call
// that ends the block is.
func (a *Analysis) callSite(id uint32) int32 {
	if id == 0 {
		return -1
	}
	bc := a.blockClass(id)
	if bc.callSite == -2 {
		bc.callSite = -1
		if b := a.env.Block(id); b != nil && b.Len > 0 {
			name := b.Routine.Name
			if name == "" {
				name = "unknown"
			}
			li := lineInfo{fn: name, obj: b.Routine.Object}
			if a.env.Symbols != nil {
				if f, l, ok := a.env.Symbols.Line(b.Addr + uint64(b.Len) - 1); ok {
					li.file, li.line = f, l
				}
			}
			// No address: the block a folded run reports is not always
			// the one that makes the call.
			bc.callSite = a.lines.intern(li, nil)
		}
	}
	return bc.callSite
}

func (a *Analysis) routineClass(r calls.RoutineID, entry uint64) routineClass {
	if int(r) >= len(a.routines) {
		a.routines = append(a.routines, make([]routineClass, int(r)+1-len(a.routines)+len(a.routines)/2)...)
	}
	rc := &a.routines[r]
	if !rc.known {
		rc.known = true
		rt := a.env.Routines().Get(r)
		rc.runtime = isRuntimeRoutine(rt.Name, rt.Object)
		if !rc.runtime {
			lines := false
			if a.env.Symbols != nil && entry != 0 {
				_, _, lines = a.env.Symbols.Line(entry)
			}
			// Without lines: code outside the C library, unless the
			// program's own (a static build holds the C library too)
			// named like a C library internal.
			prog := path.Base(rt.Object) == path.Base(a.env.Program)
			// musl's thread trampolines are static functions named
			// start and start_c11.
			rc.user = lines || !isHelperObject(rt.Object, a.env.Program) &&
				(!prog || len(rt.Name) > 0 && rt.Name[0] != '_' && rt.Name != "start" && rt.Name != "start_c11")
		}
	}
	return *rc
}

func (a *Analysis) thread(tid uint32, at int64) *thread {
	if t := a.last; t != nil && t.tid == tid { // a.last has not exited
		return t
	}
	return a.lookup(tid, at)
}

// lookup is thread's slow path, kept out of line so that thread, called
// for every event, is inlined.
//
//go:noinline
func (a *Analysis) lookup(tid uint32, at int64) *thread {
	if t := a.byTid[tid]; t != nil && t.state != exited {
		a.last = t
		return t
	}
	t := &thread{tid: tid, order: len(a.all), known: at, runStart: at, segStart: at, start: at, end: at, fresh: true,
		stack: []int32{0}}
	a.byTid[tid] = t
	a.all = append(a.all, t)
	a.last = t
	return t
}

// Events handles one batch of the stream.
func (a *Analysis) Events(batch []trace.Event) {
	a.events(batch)
	if !a.cfg.SweepAtEnd {
		a.sweepPending()
	}
}

// events handles a piece of the stream.
func (a *Analysis) events(evs []trace.Event) {
	for i := 0; i < len(evs); i++ {
		ev := &evs[i]
		switch ev.Kind {
		case trace.KindBlock:
			a.block(ev)
		case trace.KindCall:
			a.enter(a.thread(ev.Tid, ev.Time), calls.RoutineID(ev.Block), ev.Aux, ev.Addr)
		case trace.KindReturn:
			a.leave(a.thread(ev.Tid, ev.Time), 1)
		case trace.KindThreadStart:
			a.threadStart(ev)
		case trace.KindThreadExit:
			a.threadExit(ev)
		case trace.KindBlockOn:
			a.blockOn(ev)
		case trace.KindWake:
			a.wake(ev)
		case trace.KindRepeat:
			i = a.repeat(evs, i)
			continue
		}
		if ev.Time > a.now {
			a.now = ev.Time
		}
	}
}

// enter pushes, on t's stacks, the activation of routine r entered at
// entry in calling context node of the call stage (a Call event, or the
// call a Block event is marked with).
func (a *Analysis) enter(t *thread, r calls.RoutineID, node, entry uint64) {
	ctx := t.top()
	if len(t.stack) > 1 || !a.tree.nodes[ctx].runtime {
		ctx = a.callContext(ctx, r, node, entry, t.lastBlock)
	}
	// else: the root frame of a thread created from the runtime is the
	// runtime's own start-up code (clone's child path), collapsed into
	// the creation context.
	t.stack = append(t.stack, ctx)
	t.phys = append(t.phys, r)
}

// leave pops n activations off t's stacks (Return events, or the returns a
// Block event is marked with); never the creation context.
func (a *Analysis) leave(t *thread, n int) {
	t.stack = t.stack[:len(t.stack)-min(n, len(t.stack)-1)]
	t.phys = t.phys[:len(t.phys)-min(n, len(t.phys))]
}

// callMarks applies the returns and the call Block event ev is marked with
// (trace.FlagCalls) to t's stacks, as the Return and Call events before
// it would. A call that callContext remembers (from t's context and last
// block) is pushed here: the node's routine is the memo's.
func (a *Analysis) callMarks(t *thread, ev *trace.Event) {
	returns, call := ev.CallMarks()
	if returns > 0 {
		a.leave(t, int(returns))
	}
	if call == 0 {
		return
	}
	node := call - 1
	if n := len(t.stack); n > 1 && int(node) < len(a.calls) {
		if m := &a.calls[node]; m.ctx != 0 && m.parent == t.stack[n-1] && m.last == t.lastBlock {
			t.stack = append(t.stack, m.ctx-1)
			t.phys = append(t.phys, m.routine)
			return
		}
	}
	a.enter(t, a.cct.Node(calls.NodeID(node)).Routine, uint64(node), ev.Addr)
}

func (a *Analysis) block(ev *trace.Event) {
	t := a.thread(ev.Tid, ev.Time)
	if ev.Flags&trace.FlagCalls != 0 {
		a.callMarks(t, ev)
	}
	// A thread's clock never goes back. The engine restarts a slice's
	// time stamps after it completes an instruction itself (rdtsc, fprem,
	// a missing instruction) within the slice; the blocks continue where
	// the thread's clock is.
	at, known := ev.Time, t.known
	if at < known && t.state != exited {
		at = known
	}
	if t.state == blocked { // cannot happen: a thread runs only after its wake
		a.endWait(t, ev.Time, 0, 0)
	}
	size := int64(ev.Size)
	d := size * a.nsPerInsn
	if size > a.maxBlock {
		a.maxBlock = size
		a.lagNs = 2*int64(a.cfg.Quantum)*a.cfg.MaxInsnNs + a.maxBlock*a.nsPerInsn
		a.sweepNs = (2*int64(a.cfg.Quantum) + a.maxBlock) * a.nsPerInsn
	}
	// A new run: the latest pick's clock is at least the thread's clock
	// before this block.
	if t != a.cur || at != known || t.fresh {
		t.runStart = min(known, at)
		t.segStart = at
		t.fresh = false
		a.cur = t
		a.win.reset(at)
	}
	end := at + d
	id := ev.Block
	bc := a.blockClass(id)
	if bc.insns > a.maxInsns {
		a.maxInsns = bc.insns
		a.win.span = 2*int64(a.cfg.Quantum) + bc.insns
		a.win.reset(at)
	}
	// At least this many instructions: a run's other blocks are not
	// known, none takes more than MaxInsnNs per instruction.
	n := bc.insns
	if ev.Folded > 0 {
		n = max(n, d/a.cfg.MaxInsnNs)
	}
	a.win.add(n, end)
	node := t.stack[len(t.stack)-1]
	if ev.Period() > 0 && ev.Folded > 0 {
		if a.periodicRun(t, ev, at, node) {
			a.periodic++
		} else {
			a.periodicMissed++ // cannot happen: the engine keeps the period
			a.plainBlock(t, ev, bc, node, at, end)
		}
	} else {
		a.plainBlock(t, ev, bc, node, at, end)
	}
	t.lastBlock = id
	a.ran(t, max(known, end))
}

// ran sets t's clock to known, the end of the blocks it ran.
func (a *Analysis) ran(t *thread, known int64) {
	t.known = known
	t.end = known
	if known > a.now {
		a.now = known
	}
	// The latest pick was at most one slice before the end of this run,
	// once the run is longer than a slice since its last gap.
	lb := t.runStart
	if known-t.segStart > a.lagNs {
		lb = max(lb, known-a.lagNs)
	}
	if t == a.cur {
		lb = max(lb, a.win.bound())
	}
	if lb > a.pickLB {
		a.pickLB = lb
	}
}

// runWindow counts the instructions of the current run (a.cur's blocks
// since its segStart), at least, and keeps checkpoints of its time at
// every span/8 of them: the latest pick was at most span instructions
// (a slice: 2 × Quantum, stopping after a block) before the run's latest
// instruction, so at or after a checkpoint span instructions back. Under
// a time model this bound follows the slices' real cost; lagNs's is
// 137 ms under zen4.
type runWindow struct {
	insns   int64 // instructions since the run began, at least
	span    int64 // 2 × Quantum + the largest block's instructions
	next    int64 // insns at which the next checkpoint is due
	n, cand int   // checkpoints recorded; the oldest not yet used
	ins, at [winLen]int64
}

// winLen is how many checkpoints a runWindow keeps: twice its span.
const winLen = 16

// reset starts a run at time at.
func (w *runWindow) reset(at int64) {
	w.insns, w.n, w.cand = 0, 0, 0
	w.record(at)
}

func (w *runWindow) record(at int64) {
	i := w.n % winLen
	w.ins[i], w.at[i] = w.insns, at
	w.n++
	w.next = w.insns + max(w.span/(winLen/2), 1)
}

// add counts n instructions of the run, which then reaches time end.
func (w *runWindow) add(n, end int64) {
	w.insns += n
	if w.insns >= w.next {
		w.record(end)
	}
}

// bound returns the time of the latest checkpoint at least span
// instructions back not returned before (math.MinInt64: none).
func (w *runWindow) bound() int64 {
	lb := int64(math.MinInt64)
	w.cand = max(w.cand, w.n-winLen)
	for ; w.cand < w.n; w.cand++ {
		i := w.cand % winLen
		if w.insns-w.ins[i] < w.span {
			break
		}
		lb = w.at[i]
	}
	return lb
}

// plainBlock charges [at, end) of block event ev (a block or an ordinary
// run of them, bc the class of its last block) to t in context node: charge,
// account and addPiece with their common case inlined.
func (a *Analysis) plainBlock(t *thread, ev *trace.Event, bc *blockClass, node int32, at, end int64) {
	// Spin detection: a cycle of at most four blocks of runtime code,
	// which the engine flags block by block (Encoding.Repeats); other code,
	// and a spin loop known by name, end it. A run of runtime blocks
	// repeats none (but its first may).
	id := ev.Block
	if bc.runtime && !bc.spin && ev.Repeat() && ev.Folded == 0 {
		t.cyc++
	} else {
		t.cyc = 0
	}
	k := a.key(bc, node, id)
	spinning := bc.runtime && (bc.spin || t.cyc >= spinCycle)
	runtime := bc.runtime || bc.nodeRuntime
	switch d := end - at; {
	case d <= 0:
	case spinning || at < a.swept || a.threads:
		a.charge(t, at, end, k, spinning, runtime)
	default: // charge: working time, after the watermark
		st := &a.keys.stats[k]
		st.work += d
		t.work += d
		if runtime {
			st.overhead += d
			t.overhead += d
		}
		if a.rep.rec {
			a.recordAccount(k, d, false, runtime)
		}
		// addPiece
		if n := len(t.pieces); n > t.head {
			if p := &t.pieces[n-1]; p.end == at && p.key == k && p.work {
				p.end = end
				break
			}
		}
		p := t.newPiece()
		p.start, p.end, p.key, p.work = at, end, k, true
	}
	// The thread's last blocks: the run's, of which the event names the
	// last, the others unknown (0), element by element: a copy of the
	// array read back narrower stores, and copy and clear of a variable
	// length are calls of memmove and memclr.
	switch n := int(ev.Folded) + 1; {
	case n == 1:
		t.hist[3] = t.hist[2]
		t.hist[2] = t.hist[1]
		t.hist[1] = t.hist[0]
	case n == 2:
		t.hist[3] = t.hist[1]
		t.hist[2] = t.hist[0]
		t.hist[1] = 0
	case n == 3:
		t.hist[3] = t.hist[0]
		t.hist[2] = 0
		t.hist[1] = 0
	default:
		t.hist[3] = 0
		t.hist[2] = 0
		t.hist[1] = 0
	}
	t.hist[0] = id
}

// charge attributes [start, end) of t's time, spent in key k, spinning or
// not, to k and t, and adds it to t's timeline. runtime says whether it is
// runtime code (a runtime routine's block or a collapsed runtime chain).
func (a *Analysis) charge(t *thread, start, end int64, k int32, spinning, runtime bool) {
	if end <= start {
		return
	}
	working := a.account(t, k, end-start, spinning, runtime)
	if working || a.threads {
		a.addPiece(t, start, end, k, working)
	}
}

// account adds d ns of t's time in key k, spinning or not, to the metrics
// of k and t, and reports whether it is working time.
func (a *Analysis) account(t *thread, k int32, d int64, spinning, runtime bool) (working bool) {
	if d <= 0 {
		return !(spinning && a.spinIdle)
	}
	st := &a.keys.stats[k]
	if a.rep.rec {
		a.recordAccount(k, d, spinning, runtime)
	}
	switch {
	case spinning && a.spinIdle:
		st.spin += d
		t.spin += d
		return false
	default:
		st.work += d
		t.work += d
		if spinning || runtime {
			st.overhead += d
			t.overhead += d
		}
		if spinning {
			st.spin += d
			t.spin += d
		}
	}
	return true
}

// periodicRun attributes a periodic run (Event.Period), which starts at
// time at in context node, exactly as its blocks one by one, and reports
// whether it could: the run repeats the last p blocks the thread ran (its
// hist), all of one routine, and its i-th block (from 0) is the one of
// them at i mod p. Each block is charged to its own line. Spin detection
// (as in block): in runtime code that is not a spin loop known by name,
// the p blocks are the thread's last p runtime blocks, so every block of
// the run repeats one of the four before it (the engine's flag would say
// so): the i-th raises the cycle count to cyc + i + 1 and spins once that
// reaches spinCycle. Other code resets the count, and a named spin loop
// always spins.
func (a *Analysis) periodicRun(t *thread, ev *trace.Event, at int64, node int32) bool {
	const h = histLen
	p, n := ev.Period(), int(ev.Folded)+1
	if p > h {
		return false
	}
	var (
		ids   [h]uint32
		keys  [h]int32
		sizes [h]int64
		total int64
	)
	for i := range p {
		id := t.hist[p-1-i]
		if id == 0 {
			return false
		}
		bc := a.blockClass(id)
		ids[i], keys[i], sizes[i] = id, a.key(bc, node, id), bc.insns*a.cfg.NsPerInsn
		total += sizes[i]
	}
	// span is the time of the run's first j blocks.
	span := func(j int) int64 {
		ns := int64(j/p) * total
		for i := range j % p {
			ns += sizes[i]
		}
		return ns
	}
	// The run's time and last block must be the period's.
	d := span(n)
	if ids[(n-1)%p] != ev.Block || d != int64(ev.Size)*a.cfg.NsPerInsn {
		return false
	}
	bc := a.blockClass(ids[0]) // the routine's: every block's
	runtime := bc.runtime || a.tree.nodes[node].runtime
	// m blocks work, the rest spin.
	m := n
	switch {
	case bc.runtime && bc.spin:
		m = 0
		fallthrough
	case !bc.runtime:
		t.cyc = 0
	default:
		m = min(max(spinCycle-1-t.cyc, 0), n)
		t.cyc += n
	}
	oneKey := true
	for i := 1; i < p; i++ {
		oneKey = oneKey && keys[i] == keys[0]
	}
	if !oneKey {
		a.chargePattern(t, at, d, n, m, p, &keys, &sizes, bc.runtime, runtime)
	} else {
		w := span(m)
		a.charge(t, at, at+w, keys[0], false, runtime)
		a.charge(t, at+w, at+d, keys[0], bc.runtime, runtime)
	}
	// The thread's last blocks: the run's last ones.
	var last [h]uint32
	for k := range h {
		if k < n {
			last[k] = ids[(n-1-k)%p]
		} else {
			last[k] = t.hist[k-n]
		}
	}
	t.hist = last
	return true
}

// chargePattern charges a periodic run whose p blocks in a period (keys,
// lengths in ns) are of more than one key, from time at for d ns: n
// blocks, of which the first m work and the rest spin if spin (as charge
// does block by block). Each key is charged its blocks' time, and the
// timeline gets one periodic piece for the working blocks (and the
// spinning ones when spinning is work): the sweep splits it by key.
func (a *Analysis) chargePattern(t *thread, at, d int64, n, m, p int, keys *[histLen]int32, sizes *[histLen]int64, spin, runtime bool) {
	var w int64 // the first m blocks
	for i := range p {
		all := int64(n / p)
		if i < n%p {
			all++
		}
		wc := int64(m / p)
		if i < m%p {
			wc++
		}
		w += wc * sizes[i]
		a.account(t, keys[i], wc*sizes[i], false, runtime)
		a.account(t, keys[i], (all-wc)*sizes[i], spin, runtime)
	}
	pc := pattern{period: uint8(p), origin: at, pk: *keys, pd: *sizes}
	if !(spin && a.spinIdle) {
		a.addPattern(t, at, at+d, &pc) // spinning works too
		return
	}
	a.addPattern(t, at, at+w, &pc)
	if a.threads {
		a.addPiece(t, at+w, at+d, keys[0], false)
	}
}

// addPattern appends [start, end) of a periodic piece to t's pending
// timeline (as addPiece).
func (a *Analysis) addPattern(t *thread, start, end int64, pc *pattern) {
	if start < a.swept {
		a.late += min(end, a.swept) - start
		start = a.swept
	}
	if end <= start {
		return
	}
	t.pats = append(t.pats, *pc)
	p := t.newPiece()
	p.start, p.end, p.key, p.work = start, end, int32(-len(t.pats)), true
}

// newPiece appends a zero piece to t's pending timeline and returns it;
// its fields are set in place (see calls.Stage.insert: appending a
// composite literal copied it in moves that stall on the stores just
// made).
func (t *thread) newPiece() *piece {
	n := len(t.pieces)
	if n == cap(t.pieces) {
		t.growPieces()
	}
	t.pieces = t.pieces[:n+1]
	return &t.pieces[n]
}

// growPieces doubles the room of t's pending timeline. append grows a
// slice this large by 1.25-1.5 times, so a thread whose timeline reached
// 7,168 pieces had allocated and touched 4 times as many (mutex_counter:
// 80,716 pieces, 1.9 MB, 470 page faults); doubling touches at most twice
// the largest.
func (t *thread) growPieces() {
	grown := make([]piece, len(t.pieces), max(2*cap(t.pieces), minPieces))
	copy(grown, t.pieces)
	t.pieces = grown
}

// minPieces is the room of a thread's first timeline.
const minPieces = 256

// addPiece appends [start, end) to t's pending timeline.
func (a *Analysis) addPiece(t *thread, start, end int64, k int32, work bool) {
	if start < a.swept {
		if work {
			a.late += min(end, a.swept) - start
		}
		start = a.swept
	}
	if end <= start {
		return
	}
	if n := len(t.pieces); n > t.head {
		p := &t.pieces[n-1]
		if p.end == start && p.key == k && p.work == work { // k ≥ 0: p is not periodic
			p.end = end
			return
		}
	}
	p := t.newPiece()
	p.start, p.end, p.key, p.work = start, end, k, work
}

func (a *Analysis) threadStart(ev *trace.Event) {
	prefix := int32(0)
	if p := a.byTid[uint32(ev.Aux)]; ev.Aux != 0 && p != nil && p.state != exited {
		prefix = p.top()
	}
	if old := a.byTid[ev.Tid]; old != nil && old.state != exited {
		// A start of a thread the stream already showed (events before
		// its start): keep it, with its creation context.
		if len(old.stack) == 1 {
			old.stack[0] = prefix
		}
		return
	}
	t := a.thread(ev.Tid, ev.Time)
	t.stack[0] = prefix
}

func (a *Analysis) threadExit(ev *trace.Event) {
	t := a.byTid[ev.Tid]
	if t == nil || t.state == exited {
		return
	}
	at := max(ev.Time, t.known)
	if t.state == blocked {
		// Killed while blocked (exit_group): the wait ends when the
		// process does, not at the thread's stale clock.
		at = max(at, a.now)
		a.endWait(t, at, 0, 0)
	}
	t.end = max(t.end, at)
	t.state = exited
	if a.cur == t {
		a.cur = nil
	}
	if a.last == t {
		a.last = nil
	}
}

// callContext returns the logical context of a call of routine r, entered
// at entry in node of the call stage's CCT, from context parent, after
// block last: extend's, remembered per node with the parent, block and
// routine it came with (a call is nearly always made from one context and
// one block).
func (a *Analysis) callContext(parent int32, r calls.RoutineID, node, entry uint64, last uint32) int32 {
	if node >= 1<<26 { // not a node id the stage would make
		return a.extend(parent, r, entry, a.callSite(last))
	}
	n := int(node)
	if n >= len(a.calls) {
		a.calls = append(a.calls, make([]callMemo, n+1-len(a.calls)+len(a.calls)/2)...)
	}
	m := &a.calls[n]
	if m.ctx != 0 && m.parent == parent && m.last == last && m.routine == r {
		return m.ctx - 1
	}
	ctx := a.extend(parent, r, entry, a.callSite(last))
	*m = callMemo{parent: parent, last: last, routine: r, ctx: ctx + 1}
	return ctx
}

// callMemo is callContext's memory of a call stage's CCT node.
type callMemo struct {
	parent  int32
	last    uint32
	routine calls.RoutineID
	ctx     int32 // the context + 1, 0: none
}

// extend returns the logical context for a call of routine r (entered at
// entry) from context parent at call site site.
func (a *Analysis) extend(parent int32, r calls.RoutineID, entry uint64, site int32) int32 {
	rc := a.routineClass(r, entry)
	if a.tree.nodes[parent].runtime {
		if !rc.user {
			return parent // inside the runtime: collapsed
		}
		site = -1 // called back from the runtime's internals
	}
	return a.tree.child(parent, r, site, rc.runtime)
}

// Finish integrates the rest of the timeline and computes the results.
func (a *Analysis) Finish() {
	end := a.now
	for _, t := range a.all {
		if t.state == blocked {
			a.endWait(t, end, 0, 0)
			t.end = max(t.end, end)
		}
	}
	a.sweep(end)
	a.blame(end, true)
	a.res = a.result()
}

// MarkPartial records that the run did not finish.
func (a *Analysis) MarkPartial(reason string) {
	a.partial = reason
	if a.res != nil {
		a.res.Partial = reason
	}
}
