package causal

// --progress auto: the progress point is found in the run itself. The first
// run observes every call of the program's own routines (those with a source
// line, in scope) with its virtual time and thread; a routine one thread
// calls at a regular virtual-time period over most of the run is a loop's
// unit of work, the kind of place Coz asks a progress point for. The
// candidates are printed with their evidence and the best one (the longest
// period: the outermost loop) is used for a second run, the causal profile
// proper. Without a convincing candidate the first run is the baseline of
// the end-to-end profile (the exact mode), as without any point, and the
// summary says so.

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"emuprof/analyses/platform"
	"emuprof/trace"
)

// AutoPoint is --progress's value that finds the point in the run.
const AutoPoint = "auto"

// Auto's thresholds: a candidate is called at least autoMinCalls times by
// one thread, its calls span at least autoSpan of the run, and the spread
// (coefficient of variation) of the intervals between them is at most
// autoMaxCV.
const (
	autoMinCalls = 20
	autoSpan     = 0.5
	autoMaxCV    = 0.25
	autoShown    = 5 // candidates printed
)

// Candidate is a routine found as a possible progress point, with its
// evidence.
type Candidate struct {
	Routine  string  `json:"routine"`
	Calls    int64   `json:"calls"`     // by the thread that calls it most
	Threads  int     `json:"threads"`   // threads that call it
	PeriodNs float64 `json:"period_ns"` // mean interval between that thread's calls
	CV       float64 `json:"cv"`        // the intervals' standard deviation / mean
	Span     float64 `json:"span"`      // share of the run from its first to last call
	Chosen   bool    `json:"chosen,omitempty"`
}

// convincing says whether c is regular and long-lived enough to be a
// progress point.
func (c *Candidate) convincing() bool {
	return c.Calls >= autoMinCalls && c.Span >= autoSpan && c.CV <= autoMaxCV
}

func (c *Candidate) String() string {
	return fmt.Sprintf("%s: %d calls by one thread (%d in all), every %s ±%.1f %%, over %.0f %% of the run",
		c.Routine, c.Calls, c.Threads, fmtNs(c.PeriodNs), 100*c.CV, 100*c.Span)
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// callStat is one thread's calls of one routine.
type callStat struct {
	n, first, last int64
	sum, sum2      float64 // intervals, ns and ns²
}

type callKey struct{ routine, tid uint32 }

// finder observes the calls of the first run.
type finder struct {
	opt     Options
	scope   *Profiler // inScope and isMain, with the run's scope
	stats   map[callKey]*callStat
	pending map[uint32]uint32 // thread -> routine called, until its first block
	ok      map[uint32]bool   // routine -> its entry has a line in scope
	names   map[uint32]string
	now     int64
}

func newFinder(scope *Profiler, opt Options) *finder {
	return &finder{opt: opt, scope: scope, stats: map[callKey]*callStat{}, pending: map[uint32]uint32{},
		ok: map[uint32]bool{}, names: map[uint32]string{}}
}

func (f *finder) events(batch []trace.Event) {
	for i := range batch {
		ev := &batch[i]
		f.now = max(f.now, ev.Time)
		switch ev.Kind {
		case trace.KindCall:
			f.pending[ev.Tid] = ev.Block
			if ok, seen := f.ok[ev.Block]; seen && ok {
				f.count(ev.Block, ev.Tid, ev.Time)
			}
		case trace.KindBlock:
			f.now = max(f.now, ev.Time+int64(ev.Size)*f.opt.NsPerInsn)
			r, ok := f.pending[ev.Tid]
			if !ok {
				continue
			}
			delete(f.pending, ev.Tid)
			if _, seen := f.ok[r]; seen {
				continue
			}
			bi := f.opt.Block(ev.Block)
			good := bi != nil && bi.File != "" && bi.Line > 0 && f.scope.inScope(bi, bi.File) && f.opt.RoutineName != nil
			f.ok[r] = good
			if good {
				f.names[r] = f.opt.RoutineName(r)
				f.count(r, ev.Tid, ev.Time)
			}
		}
	}
}

func (f *finder) count(r, tid uint32, at int64) {
	k := callKey{r, tid}
	s := f.stats[k]
	if s == nil {
		s = &callStat{first: at}
		f.stats[k] = s
	} else {
		d := float64(at - s.last)
		s.sum += d
		s.sum2 += float64(d * d)
	}
	s.n++
	s.last = at
}

// candidates returns the routines, best first: the convincing ones by
// longest period (the outermost loop's unit of work), then by smaller
// spread and name; then the others by number of calls.
func (f *finder) candidates() []Candidate {
	type best struct {
		s       *callStat
		tid     uint32
		threads int
	}
	by := map[uint32]*best{}
	for k, s := range f.stats {
		b := by[k.routine]
		if b == nil {
			b = &best{}
			by[k.routine] = b
		}
		b.threads++
		// The thread that calls it most (ties: the first, then the
		// lowest tid: never the map's order).
		if b.s == nil || s.n > b.s.n || s.n == b.s.n && (s.first < b.s.first || s.first == b.s.first && k.tid < b.tid) {
			b.s, b.tid = s, k.tid
		}
	}
	var out []Candidate
	for r, b := range by {
		s := b.s
		if s.n < 3 || f.names[r] == "" {
			continue
		}
		m := s.sum / float64(s.n-1)
		v := s.sum2/float64(s.n-1) - float64(m*m)
		c := Candidate{Routine: f.names[r], Calls: s.n, Threads: b.threads, PeriodNs: m, CV: math.Inf(1)}
		if m > 0 {
			c.CV = math.Sqrt(max(v, 0)) / m
		}
		if f.now > 0 {
			c.Span = float64(s.last-s.first) / float64(f.now)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if ca, cb := a.convincing(), b.convincing(); ca != cb {
			return ca
		} else if ca {
			// Equal periods within 1 %: the same loop.
			if math.Abs(a.PeriodNs-b.PeriodNs) > 0.01*math.Max(a.PeriodNs, b.PeriodNs) {
				return a.PeriodNs > b.PeriodNs
			}
			if a.CV != b.CV {
				return a.CV < b.CV
			}
			return a.Routine < b.Routine
		}
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Routine < b.Routine
	})
	if len(out) > 0 && out[0].convincing() {
		out[0].Chosen = true
	}
	return out
}

// autoInstance is causal --progress auto: the first run feeds the finder
// and the end-to-end baseline; the profile comes from a second run with the
// point chosen, or from the exact mode without one.
type autoInstance struct {
	*exactInstance // the baseline (line costs) and the fallback
	find           *finder
	cfg            Config
	env            *platform.Env
	legacy         bool
	top            int
	cands          []Candidate
	chosen         *instance // the second run's profile
	done           bool
	err            error
}

func (a *autoInstance) Needs() trace.Needs {
	n := a.exactInstance.Needs()
	n.Calls, n.Blocks = true, true
	return n
}

func (a *autoInstance) Events(batch []trace.Event) {
	a.find.events(batch)
	a.exactInstance.Events(batch)
}

// run chooses the point and makes the second run, once.
func (a *autoInstance) run() error {
	if a.done {
		return a.err
	}
	a.done = true
	a.cands = a.find.candidates()
	if len(a.cands) == 0 || !a.cands[0].Chosen || a.partial != "" {
		a.exactInstance.note = a.note()
		return nil // the exact mode's, when asked
	}
	if a.rerun == nil {
		a.err = errf("--progress auto: this command cannot run the program again")
		return a.err
	}
	cfg := a.cfg
	cfg.Progress, cfg.RunEnd = []string{a.cands[0].Routine}, false
	var inst *instance
	f := func(env *platform.Env) (platform.Instance, error) {
		p, err := New(cfg, envOptions(env))
		if err != nil {
			return nil, err
		}
		inst = &instance{Profiler: p, legacy: a.legacy, top: a.top, app: a.env.AppName(), coz: "profile.coz", args: a.env.Args}
		return observer{p}, nil
	}
	if _, err := a.rerun(nil, f); err != nil {
		a.err = fmt.Errorf("--progress auto: the run with %s: %w", cfg.Progress[0], err)
		return a.err
	}
	inst.SetRerun(a.rerun)
	a.chosen = inst
	inst.note = a.note()
	return nil
}

// note says what auto found, for the summary and the JSON.
func (a *autoInstance) note() string {
	var b strings.Builder
	if a.chosen != nil {
		fmt.Fprintf(&b, "--progress auto chose %s", a.cands[0].String())
	} else {
		b.WriteString("--progress auto found no convincing progress point (a routine of the program one thread calls at least 20 times, at a period regular within 25 %, over half the run or more): profiled end to end, one whole run per line and speedup")
	}
	if n := min(len(a.cands), autoShown); n > 0 {
		b.WriteString("; candidates:")
		for _, c := range a.cands[:n] {
			b.WriteString("\n  ")
			b.WriteString(c.String())
			if c.Chosen {
				b.WriteString(" (chosen)")
			}
		}
	}
	return b.String()
}

func (a *autoInstance) Write(dir string) ([]string, error) {
	if err := a.run(); err != nil {
		a.told = true
		return nil, err
	}
	if a.chosen == nil {
		return a.exactInstance.Write(dir)
	}
	return a.chosen.Write(dir)
}

func (a *autoInstance) Summary(w io.Writer) error {
	if err := a.run(); err != nil {
		if a.told {
			return nil // Write's error said it
		}
		return err
	}
	if a.chosen == nil {
		return a.exactInstance.Summary(w)
	}
	return a.chosen.Summary(w)
}

func (a *autoInstance) Section() (title, body string, err error) {
	if err := a.run(); err != nil {
		return "", "", err
	}
	if a.chosen == nil {
		return a.exactInstance.Section()
	}
	return a.chosen.Section()
}

func (a *autoInstance) Progress() (what string, done, total int) {
	if c := a.chosen; c != nil {
		return c.Progress()
	}
	return a.exactInstance.Progress()
}
