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
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"

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
	// FixedLine may be a set, FILE:LINE+FILE:LINE...: its lines are sped
	// up together, one experiment (lineset.go).
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
	// A fixed line set (FILE:LINE+FILE:LINE...): its elements, the line
	// each has found (0: none yet), and the set's own entry in lines (the
	// selected "line"; fixedID once one of its lines has run).
	fixedSet []spec
	setLines []int32
	setID    int32
	ctxIDs   map[ctxKey]int32

	lines    []lineInfo // [0] unused
	lineIDs  map[lineKey]int32
	anyIDs   map[lineKey]int32
	blocks   []blockData
	routHits map[uint32][]hit
	// pend is a block of several lines under a time model, charged once
	// its memory accesses (the events after it) are known (pendMem: their
	// cost in ps by span, then the accesses of no known instruction).
	pend    *trace.Event
	pendMem []int64
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
		elems, err := parseFixed(cfg.FixedLine, cfg.Context)
		if err != nil {
			return nil, err
		}
		p.fixed, p.hasFix = elems[0], true
		if len(elems) > 1 {
			p.fixedSet, p.setLines = elems, make([]int32, len(elems))
			k := lineKey{file: setName(elems), set: true}
			p.setID = int32(len(p.lines))
			p.lines = append(p.lines, lineInfo{key: k})
			p.lineIDs[k] = p.setID
		}
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
// callees), thread events (delay inheritance), the clock, and under a time
// model system calls (their kernel work is their caller's line's). Runs of
// blocks of one line come as one event (Encoding.Fold), except blocks that
// hold a progress point: a line's cost is a sum over its blocks, and
// nothing else here depends on how its code is cut into blocks.
func (p *Profiler) Needs() trace.Needs {
	return trace.Needs{
		Wants:    trace.Wants{Blocks: true, Calls: true, Threads: true, Lines: true, TimeControl: !p.cfg.Observe, Syscalls: p.opt.Timed},
		Encoding: trace.Encoding{Fold: p.foldable},
	}
}

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
		if p.pend != nil {
			if ev.Kind == trace.KindRead || ev.Kind == trace.KindWrite {
				p.access(ev)
				continue
			}
			p.settle()
		}
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
		case trace.KindSyscall:
			p.kernel(ev)
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
	if p.pend != nil {
		p.settle() // the model priced the block's accesses of this batch only
	}
	p.pay()
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
