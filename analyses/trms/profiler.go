// Package trms implements input-sensitive profiling: the read memory size
// (RMS) of every routine activation (Coppa, Demetrescu, Finocchi, PLDI'12,
// latest-access algorithm of Fig. 6) and the threaded read memory size
// (TRMS) that also counts input induced by other threads and by the kernel
// (Coppa, Demetrescu, Finocchi, Marotta, "Multithreaded Input-Sensitive
// Profiling", Figs. 11-13), both in one pass over the event stream, with
// per-thread and per-calling-context tuples, aprof's report format, JSON,
// and a text summary with fitted growth curves.
//
// Use:
//
//	p, err := trms.New(trms.Config{App: exe, Command: cmdline}, syms)
//	// run the guest with p as an trace.Analysis (p.Needs() says which
//	// hooks), then:
//	p.Finish()
//	paths, err := p.WriteDir(dir) // .aprof reports and JSON
//	err = p.Summary(os.Stdout, 20)
package trms

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

var _ trace.Analysis = (*Profiler)(nil)

// core is the engine of one timestamp width.
type core interface {
	Call(tid uint32, r calls.RoutineID)
	Return(tid uint32)
	events(batch []trace.Event)
	addCost(tid uint32, n uint64)
	setCCT(c *calls.CCT)
	finish()
	status() status
}

// status describes the engine's health and resource use.
type status struct {
	renumberings int
	shadowBytes  uint64
	err          error
}

// Profiler computes RMS and TRMS profiles. It is an trace.Analysis fed
// with the stream of the call-tracking stage (calls.Stage): Call, Return,
// Block, Read, Write, KernelRead, KernelWrite, Switch and ThreadExit
// events; its lower-level methods (Call, Return, Read, ...) drive the same
// engine with the papers' abstract traces.
type Profiler struct {
	cfg      Config
	routines *calls.Routines
	col      *collector
	core     core
	one      [1]trace.Event
	cct      *calls.CCT // TakeCallMarks
	finished bool
	partial  string
}

// New returns a profiler whose routine ids index routines, the table of the
// call-tracking stage that feeds it (nil when only the lower-level methods
// are used: DefineRoutine then fills a table of its own).
func New(cfg Config, routines *calls.Routines) (*Profiler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.App == "" {
		cfg.App = "unknown"
	}
	if cfg.Command == "" {
		cfg.Command = cfg.App
	}
	if routines == nil {
		routines = calls.NewRoutines()
	}
	p := &Profiler{cfg: cfg, routines: routines, col: newCollector(cfg.CCT)}
	if cfg.CounterBits <= 32 {
		p.core = newEngine[uint32](&p.cfg, p.col)
	} else {
		p.core = newEngine[uint64](&p.cfg, p.col)
	}
	return p, nil
}

// Needs reports the events the profiler consumes.
func (p *Profiler) Needs() trace.Needs {
	return trace.Needs{
		Wants:    trace.Wants{Blocks: true, Memory: true, KernelMem: true, Threads: true, Calls: true},
		Encoding: trace.Encoding{Fold: foldAll, FoldMemory: true, MergeMemory: true, CallMarks: p.cct != nil},
	}
}

// TakeCallMarks makes the profiler take the call stage's calls and returns
// marked on Block events (trace.Encoding.CallMarks); cct is the stage's
// calling context tree, which names a marked call's routine.
func (p *Profiler) TakeCallMarks(cct *calls.CCT) {
	p.cct = cct
	p.core.setCCT(cct)
}

// Events handles one batch of the event stream.
func (p *Profiler) Events(batch []trace.Event) {
	if !p.finished {
		p.core.events(batch)
	}
}

// Finish completes every pending activation (their tuples are collected
// with the cost and input seen so far). It is idempotent.
func (p *Profiler) Finish() {
	if p.finished {
		return
	}
	p.core.finish()
	p.finished = true
}

// MarkPartial records that the run failed or was interrupted; reports say
// so.
func (p *Profiler) MarkPartial(reason string) {
	if reason == "" {
		reason = "interrupted"
	}
	p.partial = reason
}

// Err reports an unrecoverable profiling error (a counter too narrow to
// renumber the pending activations); results are then partial.
func (p *Profiler) Err() error { return p.core.status().err }

// Renumberings is the number of counter overflows handled (Fig. 13).
func (p *Profiler) Renumberings() int { return p.core.status().renumberings }

// ShadowBytes is the memory used by the live shadow memories.
func (p *Profiler) ShadowBytes() uint64 { return p.core.status().shadowBytes }

// MemoryBytes is ShadowBytes (trace.MemoryUser): the shadow memories
// cost about 2 bytes per guest byte touched, the analysis's memory that
// grows with the guest's.
func (p *Profiler) MemoryBytes() uint64 { return p.ShadowBytes() }

// Routines is the routine table (ids used by Call and in results).
func (p *Profiler) Routines() *calls.Routines { return p.routines }

// DefineRoutine returns the id of a named routine with no address, for
// driving the profiler with abstract traces.
func (p *Profiler) DefineRoutine(name string) calls.RoutineID {
	return p.routines.Synthetic(name, p.cfg.App)
}

// Call enters routine r in thread tid (procedure call of Fig. 11).
func (p *Profiler) Call(tid uint32, r calls.RoutineID) {
	if !p.finished {
		p.core.Call(tid, r)
	}
}

// Return completes the topmost activation of thread tid.
func (p *Profiler) Return(tid uint32) {
	if !p.finished {
		p.core.Return(tid)
	}
}

func (p *Profiler) event(kind trace.Kind, tid uint32, addr uint64, size uint32) {
	p.one[0] = trace.Event{Kind: kind, Tid: tid, Addr: addr, Size: size}
	p.Events(p.one[:])
}

// Read is a load of size bytes at addr by thread tid.
func (p *Profiler) Read(tid uint32, addr uint64, size uint32) {
	p.event(trace.KindRead, tid, addr, size)
}

// Write is a store of size bytes at addr by thread tid.
func (p *Profiler) Write(tid uint32, addr uint64, size uint32) {
	p.event(trace.KindWrite, tid, addr, size)
}

// KernelRead is a load by the kernel on behalf of thread tid (write(2)...).
func (p *Profiler) KernelRead(tid uint32, addr uint64, size uint32) {
	p.event(trace.KindKernelRead, tid, addr, size)
}

// KernelWrite is a store of external data by the kernel (read(2)...).
func (p *Profiler) KernelWrite(addr uint64, size uint32) {
	p.event(trace.KindKernelWrite, 0, addr, size)
}

// Switch makes tid the running thread (procedure switchThread of Fig. 11).
func (p *Profiler) Switch(tid uint32) { p.event(trace.KindSwitch, tid, 0, 0) }

// ThreadExit completes the pending activations of tid.
func (p *Profiler) ThreadExit(tid uint32) { p.event(trace.KindThreadExit, tid, 0, 0) }

// Cost adds n units of cost to thread tid.
func (p *Profiler) Cost(tid uint32, n uint64) {
	if !p.finished {
		p.core.addCost(tid, n)
	}
}

// Reports finishes profiling if needed and returns the aprof reports: for
// each thread (increasing tid) its RMS report then its TRMS ("drms")
// report; with Config.SingleReport, one RMS and one TRMS report for all
// threads.
func (p *Profiler) Reports() ([]*Report, error) {
	p.Finish()
	var rms, drms []*Report
	for _, s := range p.col.sortedThreads() {
		rms = append(rms, p.threadReport(s, InputRMS))
		drms = append(drms, p.threadReport(s, InputDRMS))
	}
	if !p.cfg.SingleReport {
		out := make([]*Report, 0, 2*len(rms))
		for i := range rms {
			out = append(out, rms[i], drms[i])
		}
		return out, nil
	}
	if len(rms) == 0 {
		return []*Report{p.emptyReport(InputRMS), p.emptyReport(InputDRMS)}, nil
	}
	mr, err := Merge(rms...)
	if err != nil {
		return nil, fmt.Errorf("trms: single report: %w", err)
	}
	md, err := Merge(drms...)
	if err != nil {
		return nil, fmt.Errorf("trms: single report: %w", err)
	}
	return []*Report{mr, md}, nil
}

func (p *Profiler) emptyReport(input string) *Report {
	return &Report{
		Version:    ReportVersion,
		Input:      input,
		Metric:     p.cfg.metricName(),
		ExeMTime:   p.cfg.ExeMTime,
		Resolution: p.cfg.Resolution,
		App:        lineField(cmp.Or(p.cfg.Program, p.cfg.App)),
		Command:    lineField(p.cfg.Command),
		Partial:    lineField(p.partialReason()),
	}
}

func (p *Profiler) partialReason() string {
	if p.partial != "" {
		return p.partial
	}
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// threadReport builds the report of one thread for one input metric.
func (p *Profiler) threadReport(s *threadStats, input string) *Report {
	r := p.emptyReport(input)
	r.TotalCost = s.cost
	r.Threads = []uint32{s.tid}

	// Routines that appear in the thread, renumbered densely in id order.
	used := make(map[uint32]bool)
	for k := range s.rms {
		used[k.id] = true
	}
	if s.cct != nil {
		for i := range s.cct.Len() {
			used[uint32(s.cct.Node(calls.NodeID(i)).Routine)] = true
		}
	}
	ids := make([]uint32, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	local := make(map[uint32]uint32, len(ids))
	rt := p.routines
	for i, id := range ids {
		local[id] = uint32(i)
		info := rt.Get(calls.RoutineID(id))
		rec := routineRecord(uint32(i), info.Name, info.Object)
		rec.Name, rec.Object, rec.Mangled = sanitize(rec.Name), sanitize(rec.Object), sanitize(rec.Mangled)
		r.Routines = append(r.Routines, rec)
	}

	tuples, ctuples := s.rms, s.crms
	if input == InputDRMS {
		tuples, ctuples = s.trms, s.ctrms
	}
	if s.cct == nil {
		r.Points = reportPoints(tuples, local, input)
	} else {
		for i := range s.cct.Len() {
			n := s.cct.Node(calls.NodeID(i))
			r.Contexts = append(r.Contexts, Context{ID: uint32(i), Routine: local[uint32(n.Routine)], Parent: int64(n.Parent)})
		}
		r.CPoints = reportPoints(ctuples, nil, input)
	}
	return r
}

// reportPoints converts tuples to report points, renaming ids through
// rename (if not nil) and dropping what the RMS report format lacks.
func reportPoints(m map[tupleKey]*Tuple, rename map[uint32]uint32, input string) []Point {
	out := make([]Point, 0, len(m))
	for k, t := range m {
		pt := Point{ID: k.id, Tuple: *t}
		if rename != nil {
			pt.ID = rename[k.id]
		}
		if input == InputRMS {
			pt.RMSSum, pt.RMSSumSq = 0, U128{}
			pt.ExtSum, pt.ThrSum, pt.ExtSelf, pt.ThrSelf = 0, 0, 0, 0
		}
		out = append(out, pt)
	}
	sortPoints(out)
	return out
}

// fileBase is the prefix of output file names: the executable's base name,
// restricted to portable characters.
func (p *Profiler) fileBase() string {
	base := filepath.Base(p.cfg.App)
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, base)
	if clean == "" || clean == "." || clean == ".." {
		clean = "prog"
	}
	return clean
}

// ReportFileName is the file name of a report: <app>_<tid>_<k>_<metric>.aprof,
// with the pid (or "all" without one) for the single report of a process.
func (p *Profiler) ReportFileName(r *Report) string {
	who := "all"
	switch {
	case len(r.Threads) == 1 && !p.cfg.SingleReport:
		who = fmt.Sprint(r.Threads[0])
	case p.cfg.SingleReport && p.cfg.Pid > 0:
		who = fmt.Sprint(p.cfg.Pid)
	}
	return fmt.Sprintf("%s_%s_%d_%s.aprof", p.fileBase(), who, r.Resolution, r.Input)
}

// foldAll takes every block in runs: an activation's cost is a sum over
// its blocks (Event.Folded counts them), and its input does not depend on
// where its memory accesses fall between them.
func foldAll(*trace.BlockInfo) bool { return true }
