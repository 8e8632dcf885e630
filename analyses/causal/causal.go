// Package causal is causal profiling (Coz, SOSP'15) in virtual time: while
// an experiment selects a source line L with a virtual speedup s, every
// execution of L by a thread pauses every other thread for s times the
// execution's cost, through the platform's Clock, so the program runs as if
// L were s faster once the inserted pauses are subtracted (§3, Figure 3).
// Progress points count useful work; the change of their rate across
// experiments predicts what optimizing each line would gain.
//
// Under emuprof every executed block is seen and time is virtual, so the
// virtual speedup is exact: no sampling (Coz §4.4 needs equation (2) to
// make sampled delays equivalent to per-execution delays; here each
// execution is delayed), no timer slack, no noise.
//
// Attribution. Each instruction is attributed to its own source line: a
// block on one line is charged to it whole, and a block whose instructions
// come from several lines (BlockInfo.Lines) charges each line its own
// instructions, as emuprof run --speedup speeds up each instruction of the
// line and no other. A block outside the
// scope (library code, hidden stubs) is attributed to the in-scope line that
// called into it, as Coz attributes out-of-scope samples to the last
// in-scope callsite of the call chain (§4.1, "Sample Attribution"); the
// call-tracking stage's Call and Return events keep that per thread.
//
// Experiments (Coz §4.2-4.3) begin and end at visits of the first progress
// point. Coz's experiments last at least 100 ms, with a 10 ms cool-off
// after each (§4.3, §5.1), so what the previous experiment left (a queue
// filled at 0 %, drained at once at 100 %) is a small part of each; ours
// last a few visits (and, with several threads, 10 × two quanta of
// effective virtual time: see minLength), and it would be most of one. So
// the warm-up is adaptive (Config.Settle): an experiment is measured once two successive
// windows of MinVisits visits have the same rate of the first point and the
// same mean in flight of every latency point, within Settle %, in virtual
// time with the inserted delays taken out, at every alignment of the
// windows (see measured); the visits before are its warm-up. This is the
// truncation of an initial transient of simulation output analysis
// (compare successive windows until the output is stationary), made exact
// by virtual time: no host noise enters the test.
//
// Validation (validate.go). A prediction is checked by speeding the line up
// for real: emuprof run --speedup FILE:LINE=PCT makes the emulator charge
// each of the line's instructions (100−PCT) % of its virtual cost, and
// --validate N reruns the program whole that way for the top N lines at
// 5/25/50/100 %, measuring the first progress point's period with the
// observing mode of this package (Config.Observe). The actual speedup is
// per instruction (the line's own instructions, not the library code it
// calls), so lines that call out of scope compare best with --no-callees.
package causal

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"emuprof/defaults"
	"emuprof/loader"
	"emuprof/trace"
)

// scale is the unit of the delay counts: ns × 100, so that a speedup in
// percent times a cost in ns is exact; pauses are requested in whole ns and
// the remainder stays owed.
const scale = 100

// Config is what the command line sets.
type Config struct {
	Progress []string // throughput points: SYMBOL, FILE:LINE or 0xADDRESS
	Latency  []string // latency points: "BEGIN,END"
	// Scope selects the lines experiments may speed up: a glob matched
	// against the source file's path and its base name; empty means every
	// line of the main executable (Coz's default, §3.1).
	Scope string
	// FixedLine (FILE:LINE) and FixedSpeedup (percent, -1 = chosen per
	// experiment) pin experiments, like coz run --fixed-line/--fixed-speedup.
	FixedLine    string
	FixedSpeedup int
	// EndToEnd runs one experiment over the whole run (coz --end-to-end);
	// its effective duration is the run's virtual duration minus the
	// inserted delay.
	EndToEnd bool
	// MinVisits is the number of visits of every progress point an
	// experiment needs (Coz's ExperimentTargetDelta, §4.3); MinNs its
	// minimal effective virtual length (delays taken out; see minLength).
	MinVisits int
	MinNs     int64
	// Warmup is the number of visits of the first progress point an
	// experiment runs at its speedup before it is measured: the state
	// the previous experiment left (a queue filled or drained at
	// another speed) settles first.
	Warmup int
	// Settle, in percent, makes the warm-up adaptive: an experiment is
	// measured once two successive windows of MinVisits visits of the
	// first progress point have rates (per effective ns) that agree
	// within Settle % at MinVisits successive visits, so that what the
	// previous experiment left (a queue filled at another speed) has
	// drained first; 0 turns the check off (an experiment ends after
	// MinVisits measured visits).
	Settle int
	// NoCallees charges a line with its own instructions only, not the
	// out-of-scope code it calls.
	NoCallees bool
	Seed      uint64
	// Observe only counts the progress points (with the times of their
	// first and last visits): no experiment, no delay. It measures a run
	// under an actual speedup (emuprof run --speedup, --validate).
	Observe bool
	// Validate is the number of lines whose predictions --validate checks
	// by actual speedups (see Validate).
	Validate int
	// Context attributes a line within the calling context of its
	// routine: one "line" per caller, FILE:LINE <- CALLER (Coz issue 78:
	// the same line may matter only when called from one caller).
	Context bool
	// RunEnd makes the run's end the progress point (one visit, at the
	// virtual duration): without a progress point the exact mode
	// profiles the program end to end.
	RunEnd bool
}

// Delayer is the platform's Clock.
type Delayer interface{ Delay(tid uint32, ns int64) }

// Options connect a Profiler to its run.
type Options struct {
	Block       func(id uint32) *trace.BlockInfo
	RoutineName func(id uint32) string // Call events' routine ids
	Clock       Delayer
	NsPerInsn   int64
	// Quantum is the scheduler's quantum in instructions: a thread runs
	// up to twice that before another one, so threads' virtual clocks
	// are that far apart in the order the events come (see minLength).
	Quantum uint64
	Program string // main executable: the default scope
	// Objects gives the object files (loader.OpenFrom: the run's symbol
	// table, which parses each once); nil: they are read here.
	Objects loader.Opener
	// Timed: a time model priced the run, a Block event's Size is its
	// cost in ns (platform.SchedConfig.Timed), shared among the lines of a
	// block in proportion to their instructions.
	Timed bool
}

type lineKey struct {
	file   string
	line   int
	caller string // the routine that called the line's routine (--context)
}

// ctxKey is a line in the context of a caller routine (by id).
type ctxKey struct {
	line   int32
	caller uint32
}

type lineInfo struct {
	key         lineKey
	cost        int64 // ns attributed over the run
	experiments int
	deck        []int // speedups still to run, drawn from the end
	// The line's cost during 0 % experiments (any line selected), for
	// the phase correction (Coz §4.6): base counts completed experiments,
	// pend the one numbered epoch (committed once it completes).
	base, pend int64
	epoch      int
	recent     int // == Profiler.recentGen: executed since the last experiment began
}

type hit struct {
	point int
	end   bool // a latency point's END
	line  bool // entry semantics (file:line)
	span  int  // the span of BlockInfo.Lines it is on (line points)
}

type blockData struct {
	done  bool
	scope int32 // in-scope line id, or 0
	any   int32 // id of the file:line of the block's last instruction, in scope or not (0: none)
	hits  []hit
	// spans: a block on several lines (BlockInfo.Lines), each charged
	// its own instructions; nil for a block on one line.
	spans []span
}

// span is a run of a block's instructions on one line.
type span struct {
	scope, any int32
	insns      uint32
}

type thread struct {
	tid   uint32
	local int64 // delay count (Coz §4.4), ×scale
	// blockEnd is when, in virtual time (ns × scale), the thread's last
	// wait really began: where it blocked plus the delay it owed then
	// and every increase of the global count made, in virtual time,
	// before that (by threads the emulator ran later); wokeAt is when it
	// was woken by another thread (0: by a timeout or the outside world).
	blockEnd, wokeAt int64
	blocked, exited  bool
	cur              int32 // line the thread's current code is attributed to
	stack            []int32
	routines         []uint32 // routine ids of the call stack (--context)
	prevAny          int32
	anyStack         []int32 // prevAny at each call of the call stack
	// prevLine is the line the thread's previous Block event was charged
	// to: an execution of a line is an entry into it (Selected).
	prevLine int32
}

type experiment struct {
	seq     int // 1, 2 ... in order of start
	line    int32
	speedup int
	// The selected line's executions in the experiment, in virtual
	// time: win and winN sum the cost and entries of those known to lie
	// in it (from base.t to the last visit of the first point, lastT);
	// runs holds the others, which the emulator may have run ahead of
	// or behind the visits (see selRun).
	win, winN int64
	lastT     int64
	runs      []selRun
	bucket    int64 // runs' merge width, ns (0: exact)
	warm      int   // visits of the first point still to run before measuring
	// base is the state where the measurement begins; n counts the
	// visits of the first point since the warm-up ended (marks kept in
	// Profiler.ring, for Settle).
	base mark
	n    int
	// agree counts the successive visits at which the last two windows
	// agreed (Settle); settled: base is where the measurement begins.
	agree   int
	settled bool
	idle    int // visits since measured (maxIdle)
}

// mark is the state of the counters at a visit of the first progress point
// (or an experiment's start): where a measurement may begin or end.
type mark struct {
	t, global int64
	// per point: arrivals, departures, in-flight integral, and its part
	// inside inserted delays (point.removed)
	arr, dep, area, rem []int64
}

// maxWindows bounds an experiment whose rate does not settle (Settle): after
// maxWindows windows of MinVisits visits it is measured over its last half.
const maxWindows = 8

// maxIdle bounds, in windows of MinVisits visits, how long a measured
// experiment waits for its line to run.
const maxIdle = 16

// Profiler runs experiments over one event stream.
type Profiler struct {
	cfg     Config
	opt     Options
	points  []point
	fixed   spec
	hasFix  bool
	fixedID int32
	// fixedCaller is the caller of --fixed-line FILE:LINE <- CALLER.
	fixedCaller string
	ctxIDs      map[ctxKey]int32

	lines    []lineInfo // [0] unused
	lineIDs  map[lineKey]int32
	anyIDs   map[lineKey]int32
	blocks   []blockData
	routHits map[uint32][]hit
	// recent lists the lines executed since the last experiment began
	// (lineInfo.recent == recentGen marks them: no map write per block).
	recent    []int32
	recentGen int
	last      *thread // the thread of the previous event
	threads   map[uint32]*thread
	order     []*thread
	rng       *rand.Rand

	global  int64 // global delay count, ×scale
	delayed int64 // ns of pauses requested
	now     int64 // latest virtual time seen
	first   bool
	exp     *experiment
	// ring holds the marks of the last 4·MinVisits+1 visits of the first
	// point in the current experiment (Settle: two windows, or the last
	// maxWindows/2 windows of one that never settles), reused across
	// experiments.
	ring     []mark
	seq      int // experiments started
	dropped  int // experiments whose line did not run while measured
	lastDone int // seq of the last completed experiment
	done     []Experiment
	partial  string
	mainExe  string
	// wholeRuns: every experiment is a whole run (--exact), so no phase
	// correction applies.
	wholeRuns bool
	// Coz macro sites' addresses are link-time: a position-independent
	// executable's load bias comes from its first routine seen.
	cozPIE       bool
	cozSyms      map[string]uint64
	cozBias      uint64
	cozBiasKnown bool
	// nDone and nLines count the experiments done and the lines they
	// covered, for the status line (Progress, another goroutine).
	nDone, nLines atomic.Int64
}

// New returns a profiler, or an error naming a bad configuration.
func New(cfg Config, opt Options) (*Profiler, error) {
	if cfg.MinVisits <= 0 {
		cfg.MinVisits = 5
	}
	if opt.NsPerInsn <= 0 {
		opt.NsPerInsn = defaults.NsPerInsn
	}
	p := &Profiler{cfg: cfg, opt: opt, lines: make([]lineInfo, 1), lineIDs: map[lineKey]int32{},
		anyIDs: map[lineKey]int32{}, ctxIDs: map[ctxKey]int32{}, routHits: map[uint32][]hit{}, recentGen: 1,
		threads: map[uint32]*thread{}, rng: rand.New(rand.NewPCG(cfg.Seed, 0x636f7a)), first: true}
	if opt.Program != "" {
		if abs, err := filepath.Abs(opt.Program); err == nil {
			p.mainExe = filepath.Clean(abs)
		}
	}
	for _, s := range cfg.Progress {
		sp, err := parseSpec(s)
		if err != nil {
			return nil, err
		}
		p.points = append(p.points, point{name: sp.text, begin: sp})
	}
	for _, s := range cfg.Latency {
		b, e, ok := cutComma(s)
		if !ok {
			return nil, errf("--latency %q: want BEGIN,END", s)
		}
		bs, err := parseSpec(b)
		if err != nil {
			return nil, err
		}
		es, err := parseSpec(e)
		if err != nil {
			return nil, err
		}
		p.points = append(p.points, point{name: bs.text + "," + es.text, latency: true, begin: bs, end: es})
	}
	if cfg.RunEnd {
		p.points = append(p.points, point{name: RunEndPoint, begin: spec{text: RunEndPoint, kind: pointEnd}})
	}
	if fl, caller, ok := strings.Cut(cfg.FixedLine, " <- "); ok && cfg.Context {
		cfg.FixedLine, p.fixedCaller = fl, caller
	}
	if opt.Program != "" {
		p.addCozPoints(opt.Objects, opt.Program) // COZ_PROGRESS & co., when the program uses them
	}
	if cfg.FixedLine != "" {
		sp, err := parseSpec(cfg.FixedLine)
		if err != nil || sp.kind != pointLine {
			return nil, errf("--fixed-line %q: want FILE:LINE", cfg.FixedLine)
		}
		p.fixed, p.hasFix = sp, true
	}
	if cfg.FixedSpeedup > 100 {
		return nil, errf("--fixed-speedup %d: at most 100", cfg.FixedSpeedup)
	}
	if cfg.EndToEnd && !p.hasFix {
		return nil, errf("--end-to-end needs --fixed-line")
	}
	if cfg.Observe && (cfg.EndToEnd || p.hasFix) {
		return nil, errf("observing progress points runs no experiment")
	}
	if !cfg.EndToEnd && len(p.points) == 0 {
		return nil, errf("no progress point: give --progress SPEC or --latency BEGIN,END (or --end-to-end with --fixed-line)")
	}
	return p, nil
}

// Needs: blocks with lines, calls (symbol progress points, attribution of
// callees), thread events (delay inheritance), and the clock. Runs of
// blocks of one line come as one event (Encoding.Fold), except blocks that
// hold a progress point: a line's cost is a sum over its blocks, and
// nothing else here depends on how its code is cut into blocks.
func (p *Profiler) Needs() trace.Needs {
	return trace.Needs{
		Wants:    trace.Wants{Blocks: true, Calls: true, Threads: true, Lines: true, TimeControl: !p.cfg.Observe},
		Encoding: trace.Encoding{Fold: p.foldable},
	}
}

// foldable says whether a block may come folded into a run of blocks of its
// line: it holds no progress point. It is asked on the engine's goroutine,
// at translation, so it reads only what New set.
func (p *Profiler) foldable(bi *trace.BlockInfo) bool {
	bias, ok := uint64(0), true
	if p.cozPIE {
		// The load bias, from this block itself when it is the main
		// executable's (sites are in no other object).
		ok = false
		if v, known := p.cozSyms[bi.Routine.Name]; known && bi.Routine.Entry >= v && p.isMain(bi) {
			bias, ok = bi.Routine.Entry-v, true
		} else if p.isMain(bi) {
			return false // cannot tell: do not fold
		}
	}
	return bi.Lines == nil && len(p.hitsFor(bi, bias, ok)) == 0
}

// MarkPartial records that the run did not finish.
func (p *Profiler) MarkPartial(reason string) { p.partial = reason }

func (p *Profiler) thread(tid uint32) *thread {
	if t := p.last; t != nil && t.tid == tid {
		return t
	}
	t := p.threads[tid]
	if t == nil {
		t = &thread{tid: tid, local: p.global}
		p.threads[tid] = t
		p.order = append(p.order, t)
	}
	p.last = t
	return t
}

// Events handles a batch, then requests the pauses every running thread
// owes. Threads are serialized and the guest applies the pauses before its
// next scheduling decision (Needs.TimeControl), so a thread has paid what it
// owes before its next slice: before it can wake another thread (Coz's
// rule, Table 1) and before it creates one.
func (p *Profiler) Events(batch []trace.Event) {
	if p.first {
		p.first = false
		if p.cfg.EndToEnd {
			p.seq++
			p.exp = &experiment{seq: p.seq, line: p.fixedID, speedup: max(p.cfg.FixedSpeedup, 0), base: p.newMark()}
		}
	}
	for i := range batch {
		ev := &batch[i]
		if ev.Time > p.now {
			p.now = ev.Time
		}
		switch ev.Kind {
		case trace.KindBlock:
			p.block(ev)
		case trace.KindCall:
			t := p.thread(ev.Tid)
			t.stack = append(t.stack, t.cur)
			t.anyStack = append(t.anyStack, t.prevAny)
			if p.cfg.Context {
				t.routines = append(t.routines, ev.Block)
			}
			for _, h := range p.routineHits(ev.Block) {
				p.visit(h, ev.Time)
			}
		case trace.KindReturn:
			t := p.thread(ev.Tid)
			if n := len(t.stack); n > 0 {
				t.cur = t.stack[n-1]
				t.stack = t.stack[:n-1]
			}
			if n := len(t.anyStack); n > 0 {
				// Back in the line of the call: the rest of its
				// execution, not a new entry (FILE:LINE points).
				t.prevAny = t.anyStack[n-1]
				t.anyStack = t.anyStack[:n-1]
			}
			if n := len(t.routines); n > 0 {
				t.routines = t.routines[:n-1]
			}
		case trace.KindThreadStart:
			t := p.thread(ev.Tid)
			t.exited, t.blocked = false, false
			if par, ok := p.threads[uint32(ev.Aux)]; ok && ev.Aux != 0 {
				t.local = par.local // inherits the parent's count (§4.4, Thread Creation)
			} else {
				t.local = p.global
			}
		case trace.KindThreadExit:
			p.thread(ev.Tid).exited = true
		case trace.KindBlockOn:
			t := p.thread(ev.Tid)
			t.blocked = true
			t.blockEnd = ev.Time*scale + max(p.global-t.local, 0)
		case trace.KindWake:
			t := p.thread(ev.Tid)
			t.wokeAt = 0
			if t.blocked && ev.Aux != 0 {
				// Woken by a thread that has paid its delays: skip those
				// inserted while blocked (§4.4, Table 2). Blocked means
				// in virtual time: from blockEnd, when the thread would
				// have blocked had it paid what it owed at once; it owes
				// whatever of that is still ahead of the wake-up.
				t.local = p.global - max(t.blockEnd-ev.Time*scale, 0)
				t.wokeAt = ev.Time * scale
			}
			// Woken by a timeout or the outside world: the thread pays
			// everything inserted meanwhile, as Coz does after blocking I/O.
			t.blocked = false
		}
	}
	p.pay()
}

// pay requests the pauses that running threads owe.
func (p *Profiler) pay() {
	live := p.order[:0]
	for _, t := range p.order {
		if t.exited {
			delete(p.threads, t.tid)
			if p.last == t {
				p.last = nil
			}
			continue
		}
		live = append(live, t)
		if t.blocked {
			continue
		}
		if owed := (p.global - t.local) / scale; owed > 0 {
			p.opt.Clock.Delay(t.tid, owed)
			t.local += owed * scale
			p.delayed += owed
		}
	}
	clear(p.order[len(live):])
	p.order = live
}

func (p *Profiler) block(ev *trace.Event) {
	t := p.thread(ev.Tid)
	cost := int64(ev.Size) * p.opt.NsPerInsn
	if end := ev.Time + cost; end > p.now {
		p.now = end
	}
	bd := p.blockData(ev.Block)
	if bd.spans != nil {
		p.blockSpans(ev, t, bd)
		return
	}
	line := p.lineOf(t, bd.scope, ev.Flags)
	if line != 0 {
		p.charge(t, line, cost, ev.Time)
	}
	t.prevLine = line
	for _, h := range bd.hits {
		if h.line && t.prevAny == bd.any {
			continue // still inside the line: not a new entry
		}
		p.visit(h, ev.Time)
	}
	t.prevAny = bd.any
}

// blockSpans handles a block whose instructions come from several lines:
// each line is charged its own instructions, in order (the actual speedup
// of emuprof run --speedup is per instruction too).
func (p *Profiler) blockSpans(ev *trace.Event, t *thread, bd *blockData) {
	at := ev.Time
	var total, done int64 // instructions, under a time model
	if p.opt.Timed {
		for _, sp := range bd.spans {
			total += int64(sp.insns)
		}
	}
	for _, sp := range bd.spans {
		line := p.lineOf(t, sp.scope, ev.Flags)
		cost := int64(sp.insns) * p.opt.NsPerInsn
		if total > 0 {
			// The model's cost of the block, split by instructions
			// with no ns lost to rounding.
			size := int64(ev.Size)
			cost = size*(done+int64(sp.insns))/total - size*done/total
			done += int64(sp.insns)
		}
		if line != 0 {
			p.charge(t, line, cost, at)
		}
		t.prevLine = line
		at += cost
	}
	for _, h := range bd.hits {
		if h.line && h.span == 0 && t.prevAny == bd.spans[0].any {
			continue // still inside the line: not a new entry
		}
		p.visit(h, ev.Time)
	}
	t.prevAny = bd.any
}

// lineOf returns the line a thread's code is charged to: scope, the code's
// own line in scope (in its calling context with --context), which becomes
// the thread's current line; else, for code out of scope or hidden, the
// current line (Coz's last in-scope callsite), unless --no-callees.
func (p *Profiler) lineOf(t *thread, scope int32, flags trace.Flags) int32 {
	if scope != 0 && flags&trace.FlagHidden == 0 {
		line := scope
		if p.cfg.Context {
			line = p.inContext(line, t)
		}
		t.cur = line
		return line
	}
	if !p.cfg.NoCallees {
		return t.cur
	}
	return 0
}

// charge counts cost ns of line's code executed by t from virtual time at:
// the line's cost, the phase correction's, and, when line is the selected
// line, the delay the other threads owe.
func (p *Profiler) charge(t *thread, line int32, cost, at int64) {
	li := &p.lines[line]
	li.cost += cost
	if li.recent != p.recentGen {
		li.recent = p.recentGen
		p.recent = append(p.recent, line)
	}
	e := p.exp
	if e == nil {
		return
	}
	if e.speedup == 0 {
		if li.epoch != e.seq {
			li.base += li.pend // the experiment li.epoch completed
			li.pend, li.epoch = 0, e.seq
		}
		li.pend += cost
	}
	if e.line != line {
		return
	}
	p.selRun(e, at, cost, t.prevLine != line)
	if e.speedup > 0 {
		// The executing thread counts its own share; others owe the
		// difference (§4.4, "Minimizing Delays").
		t.local += cost * int64(e.speedup)
		if t.local > p.global {
			inc := t.local - p.global
			for i := range p.points {
				if pt := &p.points[i]; pt.latency {
					pt.removed += (pt.arrivals - pt.departures) * inc
				}
			}
			p.global = t.local
			p.inVirtualTime(t, at*scale, inc)
		}
	}
}

// inVirtualTime places an increase inc of the global count, made by t at
// virtual time at (ns × scale), in the other threads' virtual timelines:
// the emulator runs threads one after the other, a quantum or more at a
// time, so another thread may already have blocked, or been woken, at a
// later virtual time. Coz pays delays as they arise (§4.4), so a thread
// whose wait began, in virtual time, after at still owes the increase,
// and its wait begins that much later; a thread already woken that was
// blocked at at does not owe it.
func (p *Profiler) inVirtualTime(t *thread, at, inc int64) {
	for _, o := range p.order {
		switch {
		case o == t || o.exited:
		case o.blocked:
			if at < o.blockEnd {
				o.blockEnd += inc
			}
		case o.wokeAt > 0 && at >= o.blockEnd && at < o.wokeAt:
			o.local += inc
		}
	}
}

func (p *Profiler) blockData(id uint32) *blockData {
	for int(id) >= len(p.blocks) {
		p.blocks = append(p.blocks, make([]blockData, len(p.blocks)+256)...)
	}
	bd := &p.blocks[id]
	if bd.done {
		return bd
	}
	bd.done = true
	bi := p.opt.Block(id)
	if bi == nil {
		return bd
	}
	bd.scope, bd.any = p.lineIDsOf(bi, bi.File, bi.Line)
	for _, ls := range bi.Lines {
		sp := span{insns: ls.Insns}
		sp.scope, sp.any = p.lineIDsOf(bi, ls.File, ls.Line)
		bd.spans = append(bd.spans, sp)
		bd.any = sp.any // the last instruction's line
	}
	bias, ok := p.cozBiasFor(bi)
	bd.hits = p.hitsFor(bi, bias, ok)
	return bd
}

// lineIDsOf returns the ids of file:line of a block (bi): in scope (0 if
// not) and among every line (0 if none).
func (p *Profiler) lineIDsOf(bi *trace.BlockInfo, file string, line int) (scope, anyID int32) {
	if file == "" || line <= 0 {
		return 0, 0
	}
	k := lineKey{file: file, line: line}
	if anyID = p.anyIDs[k]; anyID == 0 {
		anyID = int32(len(p.anyIDs) + 1)
		p.anyIDs[k] = anyID
	}
	if p.inScope(bi, file) {
		scope = p.lineID(k)
	}
	return scope, anyID
}

// hitsFor returns the progress points a block holds; bias is the main
// executable's load bias for Coz macro sites (cozOK false: not known yet).
// It reads only the points' locations, which New set.
func (p *Profiler) hitsFor(bi *trace.BlockInfo, bias uint64, cozOK bool) []hit {
	var hits []hit
	for i := range p.points {
		pt := &p.points[i]
		for _, end := range []bool{false, true} {
			sp := pt.begin
			if end {
				if !pt.latency {
					continue
				}
				sp = pt.end
			}
			switch sp.kind {
			case pointAddr:
				if sp.addr >= bi.Addr && sp.addr < bi.Addr+uint64(bi.Len) {
					hits = append(hits, hit{point: i, end: end})
				}
			case pointLine:
				if bi.Lines == nil && bi.Line == sp.line && fileMatches(bi.File, sp.name) {
					hits = append(hits, hit{point: i, end: end, line: true})
				}
				for k, ls := range bi.Lines {
					if ls.Line == sp.line && fileMatches(ls.File, sp.name) {
						hits = append(hits, hit{point: i, end: end, line: true, span: k})
					}
				}
			case pointCoz:
				if cozOK {
					for _, a := range sp.addrs {
						if a+bias >= bi.Addr && a+bias < bi.Addr+uint64(bi.Len) {
							hits = append(hits, hit{point: i, end: end})
						}
					}
				}
			}
		}
	}
	return hits
}

// cozBiasFor returns the main executable's load bias, once a block of it
// tells it (a routine's runtime entry minus its symbol's value).
func (p *Profiler) cozBiasFor(bi *trace.BlockInfo) (uint64, bool) {
	switch {
	case !p.cozPIE:
		return 0, true
	case p.cozBiasKnown:
		return p.cozBias, true
	case !p.isMain(bi):
		return 0, false
	}
	if v, ok := p.cozSyms[bi.Routine.Name]; ok && bi.Routine.Entry >= v {
		p.cozBias, p.cozBiasKnown = bi.Routine.Entry-v, true
	}
	return p.cozBias, p.cozBiasKnown
}

// isMain says whether a block is the main executable's.
func (p *Profiler) isMain(bi *trace.BlockInfo) bool {
	obj := bi.Routine.Object
	if abs, err := filepath.Abs(obj); err == nil {
		obj = filepath.Clean(abs)
	}
	return obj == p.mainExe
}

// inScope says whether the line of a block's code in file is in scope.
func (p *Profiler) inScope(bi *trace.BlockInfo, file string) bool {
	if p.cfg.Scope != "" {
		ok1, _ := filepath.Match(p.cfg.Scope, file)
		ok2, _ := filepath.Match(p.cfg.Scope, filepath.Base(file))
		return ok1 || ok2
	}
	if p.mainExe == "" {
		return true
	}
	obj := bi.Routine.Object
	if abs, err := filepath.Abs(obj); err == nil {
		obj = filepath.Clean(abs)
	}
	return obj == p.mainExe
}

func (p *Profiler) lineID(k lineKey) int32 {
	if id, ok := p.lineIDs[k]; ok {
		return id
	}
	id := int32(len(p.lines))
	p.lines = append(p.lines, lineInfo{key: k})
	p.lineIDs[k] = id
	if p.hasFix && p.fixedID == 0 && k.line == p.fixed.line && fileMatches(k.file, p.fixed.name) &&
		(!p.cfg.Context || k.caller != "" && (p.fixedCaller == "" || k.caller == p.fixedCaller)) {
		p.fixedID = id
		if p.exp != nil && p.exp.line == 0 {
			p.exp.line = id
		}
	}
	return id
}

func (p *Profiler) routineHits(id uint32) []hit {
	if h, ok := p.routHits[id]; ok {
		return h
	}
	var hs []hit
	if p.opt.RoutineName != nil {
		name := p.opt.RoutineName(id)
		for i := range p.points {
			pt := &p.points[i]
			if pt.begin.kind == pointSymbol && pt.begin.name == name {
				hs = append(hs, hit{point: i})
			}
			if pt.latency && pt.end.kind == pointSymbol && pt.end.name == name {
				hs = append(hs, hit{point: i, end: true})
			}
		}
	}
	p.routHits[id] = hs
	return hs
}

// visit counts a progress point. Experiments begin and end at visits of the
// first point, so that every experiment measures whole periods between
// visits: its rate is exact, not off by a fraction of a period.
func (p *Profiler) visit(h hit, now int64) {
	pt := &p.points[h.point]
	if pt.latency {
		pt.area, pt.lastT = pt.areaAt(now), now
	}
	if h.end {
		pt.departures++
		pt.sumDep += now
		return
	}
	pt.arrivals++
	pt.sumArr += now
	if pt.arrivals == 1 {
		pt.first = now
	}
	pt.last = now
	if h.point != 0 || p.cfg.EndToEnd || p.cfg.Observe {
		return
	}
	if e := p.exp; e != nil {
		if e.warm > 0 {
			if e.warm--; e.warm == 0 {
				p.setMark(&e.base, e, now)
			}
			return
		}
		if !p.measured(e, now) {
			p.fold(e, now)
			return
		}
		p.fold(e, now)
		// An experiment lasts until its line has run in it, in virtual
		// time (a line of one phase may be selected just as the program
		// leaves it), for at most maxIdle visits; one whose line never
		// ran is dropped.
		if e.idle++; e.win == 0 && e.idle < maxIdle*p.cfg.MinVisits {
			return
		}
		p.end(now)
	}
	p.start(now)
}

// measured says, at a visit of the first point at virtual time now, whether
// the experiment has been measured long enough, and sets where its
// measurement begins. Without Settle: MinVisits visits of every point since
// the warm-up (Coz §4.3). With Settle, an adaptive warm-up: the experiment
// runs until its last two windows of w = MinVisits visits of the first
// point agree within Settle % (see settled) at w successive visits, that is
// at every alignment of the windows, and is measured from the first of its
// last two windows on (at least those 2w visits, MinNs, and MinVisits
// visits of every point: whole cycles when w is a multiple of the cycle);
// what came before (the queue another speed left) is warm-up. Every
// alignment: a stream whose periods repeat in a cycle that w is not a
// multiple of (the emulator runs a thread a quantum at a time, so a
// consumer may see four items come in a burst, then a long gap) has windows that agree at some alignments only, each
// measuring a share of bursts that is not the stream's. Rates are compared
// per effective ns (the inserted delays taken out, §3), in virtual time, so
// the decision is exact and deterministic. An experiment that does not
// settle within maxWindows windows is measured over its last half.
func (p *Profiler) measured(e *experiment, now int64) bool {
	w := p.cfg.MinVisits
	if p.cfg.Settle <= 0 {
		return p.effective(&e.base, now) >= p.minLength() && p.enough(&e.base)
	}
	e.n++
	r := len(p.ring)
	if r != maxWindows/2*w+1 {
		p.ring = make([]mark, maxWindows/2*w+1)
		for i := range p.ring {
			p.ring[i] = p.newMark()
		}
		r = len(p.ring)
	}
	if e.n == 1 {
		copyMark(&p.ring[0], &e.base) // the warm-up's end
	}
	b := &p.ring[e.n%r]
	p.setMark(b, e, now)
	if e.n < 2*w {
		return false
	}
	if !e.settled {
		if a, mid := &p.ring[(e.n-2*w)%r], &p.ring[(e.n-w)%r]; p.settled(a, mid, b) {
			e.agree++
		} else {
			e.agree = 0
		}
		switch {
		case e.agree >= w:
			// Agreed at w successive visits: from the last pair of
			// windows on.
			e.settled = true
			copyMark(&e.base, &p.ring[(e.n-2*w)%r])
		case e.n >= maxWindows*w:
			// Never settled: the last half.
			e.settled = true
			copyMark(&e.base, &p.ring[(e.n-maxWindows/2*w)%r])
		default:
			return false
		}
	}
	return p.effective(&e.base, now) >= p.minLength() && p.enough(&e.base)
}

// effective is the virtual time from m to now with the inserted delays
// taken out (§3), in ns.
func (p *Profiler) effective(m *mark, now int64) int64 {
	return now - m.t - (p.global-m.global)/scale
}

// skewFactor is how many times the threads' skew an experiment lasts at
// least (minLength).
const skewFactor = 10

// minLength is an experiment's minimal effective length (delays taken
// out, so that a bottleneck sped up by 100 % still runs that long):
// Config.MinNs, and, while several threads live, skewFactor times the scheduler's skew (twice
// the quantum, in ns). The emulator runs one thread up to 2×quantum
// instructions before another, so at an experiment's two ends the other
// threads' work is up to that far ahead of or behind the visit that ends
// it; an experiment much shorter than a quantum (12 µs on Coz's
// producer_consumer, 4 % of one) measured one thread's burst, its
// selected line run by another thread outside it in virtual time.
func (p *Profiler) minLength() int64 {
	n := p.cfg.MinNs
	if len(p.order) > 1 {
		q := int64(p.opt.Quantum)
		if q <= 0 {
			q = 10000
		}
		n = max(n, skewFactor*2*q*p.opt.NsPerInsn)
	}
	return n
}

// selRun counts an execution of the selected line at virtual time at
// (cost ns; entry: an entry into the line). Once the experiment's start is
// fixed (baseFixed), one before it is not the experiment's and one between
// it and the last visit of the first point is (win); the rest wait in runs
// for the visits that place them (fold). Runs are merged into buckets of
// a doubling width when there are many, so their memory stays bounded.
func (p *Profiler) selRun(e *experiment, at, cost int64, entry bool) {
	n := int64(0)
	if entry {
		n = 1
	}
	if p.cfg.EndToEnd {
		e.win += cost
		e.winN += n
		return
	}
	if p.baseFixed(e) {
		switch {
		case at < e.base.t:
			return
		case at < e.lastT:
			e.win += cost
			e.winN += n
			return
		}
	}
	if k := len(e.runs); k > 0 && e.bucket > 0 {
		if r := &e.runs[k-1]; at >= r.at && at < r.at+e.bucket {
			r.cost += cost
			r.n += n
			return
		}
	}
	e.runs = append(e.runs, selRun{at: at, cost: cost, n: n})
	if len(e.runs) >= maxRuns {
		e.compact()
	}
}

// selRun is executions of the selected line from virtual time at on.
type selRun struct{ at, cost, n int64 }

// maxRuns bounds an experiment's runs (selRun).
const maxRuns = 1 << 12

// compact merges runs into buckets of twice the width (the first 1 µs),
// each at its earliest time, so that at most maxRuns/2 remain.
func (e *experiment) compact() {
	for len(e.runs) >= maxRuns/2 {
		e.bucket = max(2*e.bucket, 1000)
		sort.SliceStable(e.runs, func(i, j int) bool { return e.runs[i].at < e.runs[j].at })
		out := e.runs[:0]
		for _, r := range e.runs {
			if k := len(out); k > 0 && r.at < out[k-1].at+e.bucket {
				out[k-1].cost += r.cost
				out[k-1].n += r.n
				continue
			}
			out = append(out, r)
		}
		e.runs = out
	}
}

// baseFixed says whether the experiment's measured start (base) is final:
// after the warm-up, and once settled (Settle).
func (p *Profiler) baseFixed(e *experiment) bool {
	return e.warm == 0 && (p.cfg.Settle <= 0 || e.settled || p.cfg.EndToEnd)
}

// fold places the waiting runs at a visit of the first point at virtual
// time now: once the start is fixed, those from it to now are the
// experiment's, those before are not; before, those before every start the
// experiment may still take (the oldest mark kept) are dropped.
func (p *Profiler) fold(e *experiment, now int64) {
	e.lastT = max(e.lastT, now)
	from := e.base.t
	if !p.baseFixed(e) {
		if e.warm > 0 {
			return
		}
		if r := len(p.ring); r > 0 && e.n >= r {
			from = p.ring[(e.n+1)%r].t
		}
	}
	out := e.runs[:0]
	for _, r := range e.runs {
		switch {
		case r.at < from:
		case p.baseFixed(e) && r.at < now:
			e.win += r.cost
			e.winN += r.n
		default:
			out = append(out, r)
		}
	}
	e.runs = out
}

// settled says whether the window a..mid and the window mid..b (as many
// visits of the first point each) agree within Settle %: the first point's
// rate (the effective durations, ns × scale, delays taken out, §3) and
// every latency point's mean number in flight (L of Little's law, §4.5: a
// queue still filling or draining changes it before the rate). Explicit
// float64 conversions round each product, so no fused multiply-add makes
// the answer differ between hosts.
func (p *Profiler) settled(a, mid, b *mark) bool {
	e1 := float64((mid.t-a.t)*scale - (mid.global - a.global))
	e2 := float64((b.t-mid.t)*scale - (b.global - mid.global))
	if !p.agree(e1, e2) {
		return false
	}
	for i := range p.points {
		if !p.points[i].latency {
			continue
		}
		// In-flight integrals (ns × scale) over effective durations,
		// compared as l1 = A1/e1 and l2 = A2/e2 cross-multiplied.
		a1 := float64((mid.area[i]-a.area[i])*scale - (mid.rem[i] - a.rem[i]))
		a2 := float64((b.area[i]-mid.area[i])*scale - (b.rem[i] - mid.rem[i]))
		if !p.agree(float64(a1*e2), float64(a2*e1)) {
			return false
		}
	}
	return true
}

// agree says whether x and y differ by at most Settle % of the larger.
func (p *Profiler) agree(x, y float64) bool {
	return float64(math.Abs(x-y)*100) <= float64(float64(p.cfg.Settle)*math.Max(math.Abs(x), math.Abs(y)))
}

// enough says whether every point was visited MinVisits times since m
// (Coz §4.3).
func (p *Profiler) enough(m *mark) bool {
	for i := range p.points {
		pt := &p.points[i]
		if pt.arrivals-m.arr[i] < int64(p.cfg.MinVisits) {
			return false
		}
		if pt.latency && pt.departures-m.dep[i] < int64(p.cfg.MinVisits) {
			return false
		}
	}
	return true
}

func (p *Profiler) newMark() mark {
	n := len(p.points)
	v := make([]int64, 4*n)
	return mark{arr: v[:n:n], dep: v[n : 2*n : 2*n], area: v[2*n : 3*n : 3*n], rem: v[3*n:]}
}

// setMark records the counters at virtual time now in m.
func (p *Profiler) setMark(m *mark, e *experiment, now int64) {
	m.t, m.global = now, p.global
	for i := range p.points {
		pt := &p.points[i]
		m.arr[i], m.dep[i], m.area[i], m.rem[i] = pt.arrivals, pt.departures, pt.areaAt(now), pt.removed
	}
}

func copyMark(dst, src *mark) {
	dst.t, dst.global = src.t, src.global
	copy(dst.arr, src.arr)
	copy(dst.dep, src.dep)
	copy(dst.area, src.area)
	copy(dst.rem, src.rem)
}

// start begins an experiment (Coz §4.2): the line is one that executed since
// the previous experiment began (a recently executed line, §4.6). Coz
// picks it by sampling, so lines get experiments in proportion to their
// share of the run's time; here the shares are exact (the virtual time
// charged to each line so far), and the line whose experiments lag its
// share most is chosen: the one with the largest cost / (experiments + 1),
// a deterministic proportional allocation (ties broken by the seeded
// generator). The speedup is drawn from the line's deck (see draw).
func (p *Profiler) start(now int64) {
	var line int32
	if p.hasFix {
		line = p.fixedID
	} else {
		cands := append([]int32(nil), p.recent...)
		if len(cands) == 0 {
			for l := 1; l < len(p.lines); l++ {
				cands = append(cands, int32(l))
			}
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i] < cands[j] })
		var best []int32
		for _, l := range cands {
			if len(best) == 0 {
				best = append(best, l)
				continue
			}
			// cost_l/(n_l+1) vs cost_b/(n_b+1), cross-multiplied exactly.
			a, b := &p.lines[l], &p.lines[best[0]]
			x, y := a.cost*int64(b.experiments+1), b.cost*int64(a.experiments+1)
			switch {
			case x > y:
				best = append(best[:0], l)
			case x == y:
				best = append(best, l)
			}
		}
		if len(best) > 0 {
			line = best[p.rng.IntN(len(best))]
		}
	}
	p.recent = p.recent[:0]
	p.recentGen++
	if line == 0 {
		p.exp = nil
		return
	}
	p.seq++
	e := &experiment{seq: p.seq, line: line, base: p.newMark()}
	e.speedup = p.draw(line)
	e.warm = p.cfg.Warmup
	p.setMark(&e.base, e, now)
	p.exp = e
}

// draw returns the next speedup of a line's deck: 0 %, then ten distinct
// speedups of 5 ... 100 %, so that a line's first eleven experiments give a
// curve, then the other ten interleaved with ten more 0 % (Coz's weight of
// one half for the baseline), shuffled by the seeded generator. With
// --fixed-line, the whole deck is shuffled (Coz's order).
func (p *Profiler) draw(line int32) int {
	if p.cfg.FixedSpeedup >= 0 {
		return p.cfg.FixedSpeedup
	}
	li := &p.lines[line]
	if len(li.deck) == 0 {
		var sp []int
		for s := 5; s <= 100; s += 5 {
			sp = append(sp, s)
		}
		if p.hasFix {
			// Every experiment is the line's: no hurry for a curve, and
			// a 0 % between speedups lets the state settle.
			for _, s := range sp {
				li.deck = append(li.deck, s, 0)
			}
			p.rng.Shuffle(len(li.deck), func(i, j int) { li.deck[i], li.deck[j] = li.deck[j], li.deck[i] })
		} else {
			p.rng.Shuffle(len(sp), func(i, j int) { sp[i], sp[j] = sp[j], sp[i] })
			// Drawn from the end: the last eleven entries come first.
			for _, s := range sp[10:] {
				li.deck = append(li.deck, s, 0)
			}
			li.deck = append(li.deck, sp[:10]...)
			li.deck = append(li.deck, 0)
		}
	}
	s := li.deck[len(li.deck)-1]
	li.deck = li.deck[:len(li.deck)-1]
	return s
}

// end closes the current experiment at virtual time now: its effective
// duration is its virtual duration minus the delay inserted meanwhile (§3,
// Figure 3; §4.3).
func (p *Profiler) end(now int64) {
	e := p.exp
	p.exp = nil
	if e.line == 0 {
		return
	}
	b := &e.base
	p.fold(e, now)
	units := (now-b.t)*scale - (p.global - b.global)
	x := Experiment{Line: p.lineName(e.line), Speedup: e.speedup, Start: b.t, Elapsed: now - b.t,
		Duration: (units + scale/2) / scale, Selected: e.winN, SelectedNs: e.win, units: units, key: p.lines[e.line].key}
	x.Delay = x.Elapsed - x.Duration
	if x.SelectedNs == 0 && !p.cfg.EndToEnd {
		// The line did not run while the experiment was measured (the
		// program left the phase where it runs): it tells nothing of
		// the line, and counted at its speedup it would show the other
		// lines' noise as the line's effect.
		p.dropped++
		return
	}
	for i := range p.points {
		pt := &p.points[i]
		d := PointDelta{Name: pt.name, Latency: pt.latency, Arrivals: pt.arrivals - b.arr[i]}
		if pt.latency {
			d.Departures = pt.departures - b.dep[i]
			d.Difference = pt.arrivals - pt.departures
			d.Area = pt.areaAt(now) - b.area[i] - (pt.removed-b.rem[i]+scale/2)/scale
		}
		x.Points = append(x.Points, d)
	}
	if p.lines[e.line].experiments++; p.lines[e.line].experiments == 1 {
		p.nLines.Add(1)
	}
	p.done = append(p.done, x)
	p.lastDone = e.seq
	p.nDone.Add(1)
}

// Progress says, for the live status line, how many experiments are done
// and how many lines they covered; it may be called from another goroutine.
func (p *Profiler) Progress() (what string, done, total int) {
	if p.cfg.Observe || p.cfg.EndToEnd {
		return "", 0, 0
	}
	return "causal: lines covered " + itoa(int(p.nLines.Load())) + ", experiments", int(p.nDone.Load()), 0
}

// MemoryBytes implements trace.MemoryUser: what the profiler holds, which
// grows with the experiments (one record each, bounded by the run's
// effective virtual time over minLength), the lines and the blocks.
func (p *Profiler) MemoryBytes() uint64 {
	n := uintptr(cap(p.done))*unsafe.Sizeof(Experiment{}) + uintptr(p.nDone.Load())*uintptr(len(p.points))*unsafe.Sizeof(PointDelta{}) +
		uintptr(cap(p.lines))*unsafe.Sizeof(lineInfo{}) + uintptr(cap(p.blocks))*unsafe.Sizeof(blockData{})
	if e := p.exp; e != nil {
		n += uintptr(cap(e.runs)) * unsafe.Sizeof(selRun{})
	}
	return uint64(n) + uint64(len(p.lineIDs)+len(p.anyIDs))*64
}

func (p *Profiler) lineName(id int32) string {
	k := p.lines[id].key
	if k.caller != "" {
		return k.file + ":" + itoa(k.line) + " <- " + k.caller
	}
	return k.file + ":" + itoa(k.line)
}

// inContext returns the id of line in the context of the caller of the
// thread's current routine (the routine below the top of its call stack).
func (p *Profiler) inContext(line int32, t *thread) int32 {
	var caller uint32
	if n := len(t.routines); n >= 2 {
		caller = t.routines[n-2]
	}
	ck := ctxKey{line, caller}
	if id, ok := p.ctxIDs[ck]; ok {
		return id
	}
	k := p.lines[line].key
	k.caller = "?"
	if n := len(t.routines); n >= 2 && p.opt.RoutineName != nil {
		if name := p.opt.RoutineName(caller); name != "" {
			k.caller = name
		}
	}
	id := p.lineID(k)
	p.ctxIDs[ck] = id
	return id
}

// Finish ends the run: an end-to-end experiment ends at the run's virtual
// duration; an in-run experiment still open had too few visits and is
// dropped, as Coz drops experiments below its target (§4.3).
func (p *Profiler) Finish() {
	for i := range p.points {
		if p.points[i].begin.kind == pointEnd {
			p.visit(hit{point: i}, p.now)
		}
	}
	if p.cfg.EndToEnd && p.exp != nil {
		p.end(p.now)
	}
	p.exp = nil
}

// Experiments returns the completed experiments, in order.
func (p *Profiler) Experiments() []Experiment { return p.done }

// Delayed is the total pause requested, in ns.
func (p *Profiler) Delayed() int64 { return p.delayed }

// Runtime is the latest virtual time seen: the run's virtual duration.
func (p *Profiler) Runtime() int64 { return p.now }
