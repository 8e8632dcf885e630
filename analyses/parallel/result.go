package parallel

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"emuprof/analyses/report"
	"emuprof/trace"
)

// Metrics of a context, a line or the program, in virtual ns (spec §2.1).
type Metrics struct {
	Work     int64 `json:"work"`     // W: time in blocks (overhead included)
	Idleness int64 `json:"idleness"` // I: share of idle cores (or threads) while working
	Overhead int64 `json:"overhead"` // O ⊆ W: work in parallel-runtime code
	Spin     int64 `json:"spin"`     // spin-waiting (idle with --spin idle, else inside W and O)
	Wait     int64 `json:"wait"`     // blocked (any wait), at the waiter's context
	Lockwait int64 `json:"lockwait"` // directed blame of lock waits, at the releaser's context
	Blame    int64 `json:"blame"`    // directed blame of every futex wait, at the releaser's context
}

// Effort is work plus idleness (TM09 §2.1's "total effort").
func (m Metrics) Effort() int64 { return m.Work + m.Idleness }

func (m *Metrics) add(o Metrics) {
	m.Work += o.Work
	m.Idleness += o.Idleness
	m.Overhead += o.Overhead
	m.Spin += o.Spin
	m.Wait += o.Wait
	m.Lockwait += o.Lockwait
	m.Blame += o.Blame
}

// Context is one node of the logical calling context tree.
type Context struct {
	ID      int32  `json:"id"`
	Parent  int32  `json:"parent"`
	Routine string `json:"routine"`
	Object  string `json:"object,omitempty"`
	Runtime bool   `json:"runtime,omitempty"`
	// Site is file:line of the call in the parent's routine, if known.
	Site  string  `json:"site,omitempty"`
	Self  Metrics `json:"self"`  // exclusive
	Total Metrics `json:"total"` // inclusive (spec invariant 5)

	siteFn, siteObj, siteFile string
	siteLine                  int
}

// LineStat is one (context, line): a pprof sample.
type LineStat struct {
	Context int32   `json:"context"`
	Func    string  `json:"func"`
	Object  string  `json:"object,omitempty"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
	M       Metrics `json:"metrics"`

	addr uint64 // the line's lowest address in its function (pprof location)
}

// LockStat is the waiting on one futex address.
type LockStat struct {
	Addr        string `json:"addr"`
	Class       string `json:"class"`
	Waits       int    `json:"waits"`
	Releases    int    `json:"releases"`
	WaitNs      int64  `json:"wait_ns"`
	BlameNs     int64  `json:"blame_ns"`
	Unreleased  int64  `json:"unreleased_ns"`
	TopReleaser string `json:"top_releaser,omitempty"`
}

// ThreadStat is one thread's time.
type ThreadStat struct {
	Tid      uint32 `json:"tid"`
	Created  string `json:"created_in"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Work     int64  `json:"work"`
	Overhead int64  `json:"overhead"`
	Spin     int64  `json:"spin"`
	Blocked  int64  `json:"blocked"`
	Queued   int64  `json:"queued"` // runnable without a core, or between events
	Idleness int64  `json:"idleness"`
}

// Verdict is Table 1's classification of a region (TM09 §2.3, spec §2.1).
type Verdict struct {
	IdleRatio     float64 `json:"idle_ratio"`     // I / (W + I)
	OverheadRatio float64 `json:"overhead_ratio"` // O / (W + I)
	Text          string  `json:"verdict"`
}

// HotContext is a context the summary classifies.
type HotContext struct {
	Context int32   `json:"context"`
	Path    string  `json:"path"`
	Verdict Verdict `json:"verdict"`
}

// Result is the analysis's outcome.
type Result struct {
	Command    string  `json:"command,omitempty"`
	Partial    string  `json:"partial,omitempty"`
	Cores      int     `json:"cores"`
	IdleBase   string  `json:"idle_base"`
	Spin       string  `json:"spin"`
	Makespan   int64   `json:"makespan"`
	Capacity   int64   `json:"capacity"` // n × makespan (cores) or Σ thread time counted (threads)
	Total      Metrics `json:"total"`
	Useful     int64   `json:"useful"`              // W − O
	Unattr     int64   `json:"unattributed"`        // idleness while no thread works
	Unrel      int64   `json:"unreleased"`          // blame of waits no release ended
	Late       int64   `json:"late"`                // work that arrived behind the sweep (0 expected)
	Efficiency float64 `json:"parallel_efficiency"` // ΣU / (n × makespan)
	Thresholds struct {
		Idle     float64 `json:"idle"`
		Overhead float64 `json:"overhead"`
	} `json:"thresholds"`
	Program     Verdict          `json:"program"`
	Hot         []HotContext     `json:"hot"`
	WaitByClass map[string]int64 `json:"wait_by_class"`
	Contexts    []Context        `json:"contexts"`
	Lines       []LineStat       `json:"lines"`
	Locks       []LockStat       `json:"locks"`
	Threads     []ThreadStat     `json:"threads"`

	// mappings: per object path, where it lay in the guest (pprof).
	mappings map[string]trace.Mapping
	program  string // the executable's path (pprof's first mapping)

	// jsonFile is the JSON file Write wrote r to, when r reads back from
	// it as it is (report.html's section is then drawn from r).
	jsonFile string
}

// resultTail ends the compact encoding of a Result whose last four
// fields, the large ones, are nil.
const resultTail = `,"contexts":null,"lines":null,"locks":null,"threads":null}`

// writeJSON writes r as report.WriteJSON does, with its contexts, lines,
// locks and threads encoded 16 at a time: json.Marshal of the whole would
// grow its buffer to the size of the encoding, twice over in fresh pages.
func (r *Result) writeJSON(w io.Writer) (replaced bool, err error) {
	j := report.NewJSONWriter(w)
	head := *r
	head.Contexts, head.Lines, head.Locks, head.Threads = nil, nil, nil, nil
	b, err := j.Compact(&head)
	if err != nil {
		return false, err
	}
	if !bytes.HasSuffix(b, []byte(resultTail)) { // not the last fields (TestResultJSONInChunks)
		j.Value(r)
		return j.Close()
	}
	j.Raw(b[:len(b)-len(resultTail)])
	j.Raw([]byte(`,"contexts":`))
	report.Array(j, r.Contexts, 16)
	j.Raw([]byte(`,"lines":`))
	report.Array(j, r.Lines, 16)
	j.Raw([]byte(`,"locks":`))
	report.Array(j, r.Locks, 16)
	j.Raw([]byte(`,"threads":`))
	report.Array(j, r.Threads, 16)
	j.Raw([]byte{'}'})
	return j.Close()
}

// Result returns the results (after Finish).
func (a *Analysis) Result() *Result { return a.res }

// Table 1 of TM09 (exact strings).
const (
	VerdictLowLow   = "effectively parallel; focus on serial performance"
	VerdictLowHigh  = "coarsen concurrency granularity"
	VerdictHighLow  = "refine concurrency granularity"
	VerdictHighHigh = "switch parallelization strategies"
)

// Classify applies Table 1 to a region with work w, idleness i and overhead
// o: a ratio equal to its threshold counts as high (spec §2.1, H11).
func Classify(w, i, o int64, idleTh, ovhTh float64) Verdict {
	v := Verdict{}
	if e := w + i; e > 0 {
		v.IdleRatio = float64(i) / float64(e)
		v.OverheadRatio = float64(o) / float64(e)
	}
	v.Text = Table1(v.IdleRatio >= idleTh, v.OverheadRatio >= ovhTh)
	return v
}

// Table1 returns the interpretation of high or low idleness and overhead.
func Table1(highIdle, highOverhead bool) string {
	switch {
	case !highIdle && !highOverhead:
		return VerdictLowLow
	case !highIdle:
		return VerdictLowHigh
	case !highOverhead:
		return VerdictHighLow
	}
	return VerdictHighHigh
}

func (a *Analysis) result() *Result {
	r := &Result{Command: a.cfg.Command, Partial: a.partial, Cores: a.cfg.CPUs, IdleBase: a.cfg.IdleBase,
		Spin: a.cfg.Spin, Makespan: a.now, Unattr: a.unattr, Unrel: a.unreleased, Late: a.late,
		WaitByClass: map[string]int64{}}
	r.Thresholds.Idle, r.Thresholds.Overhead = a.cfg.IdleThreshold, a.cfg.OverheadThreshold
	idle := a.roundIdleness()
	// Lines (pprof samples) and contexts.
	r.Contexts = make([]Context, len(a.tree.nodes))
	for id, n := range a.tree.nodes {
		c := Context{ID: int32(id), Parent: n.parent, Runtime: n.runtime, Routine: "(root)"}
		if id > 0 {
			rt := a.env.Routines().Get(n.routine)
			c.Routine, c.Object = rt.Name, rt.Object
			if n.site >= 0 {
				li := a.lines.list[n.site]
				c.siteFn, c.siteObj, c.siteFile, c.siteLine = li.fn, li.obj, li.file, li.line
				if li.line > 0 {
					c.Site = fmt.Sprintf("%s:%d", path.Base(li.file), li.line)
				}
			}
		}
		r.Contexts[id] = c
	}
	for k, kp := range a.keys.list {
		st := &a.keys.stats[k]
		m := Metrics{Work: st.work, Idleness: idle[k], Overhead: st.overhead, Spin: st.spin, Wait: st.wait,
			Lockwait: st.lockwait, Blame: st.blame}
		if m == (Metrics{}) {
			continue
		}
		li := a.lines.list[kp.line]
		r.Lines = append(r.Lines, LineStat{Context: kp.node, Func: li.fn, Object: li.obj, File: li.file, Line: li.line, M: m, addr: a.lines.addr[kp.line]})
		r.Contexts[kp.node].Self.add(m)
		r.Total.add(m)
	}
	r.mappings = a.mappings(r)
	r.program = a.env.Program
	for i := range r.Contexts {
		r.Contexts[i].Total = r.Contexts[i].Self
	}
	for i := len(r.Contexts) - 1; i > 0; i-- {
		r.Contexts[r.Contexts[i].Parent].Total.add(r.Contexts[i].Total)
	}
	r.Useful = r.Total.Work - r.Total.Overhead
	if a.threads {
		r.Capacity = r.Total.Work + r.Total.Idleness + r.Unattr
	} else {
		r.Capacity = int64(a.cfg.CPUs) * r.Makespan
	}
	if c := int64(a.cfg.CPUs) * r.Makespan; c > 0 {
		r.Efficiency = float64(r.Useful) / float64(c)
	}
	r.Program = Classify(r.Total.Work, r.Total.Idleness, r.Total.Overhead, a.cfg.IdleThreshold, a.cfg.OverheadThreshold)
	r.Hot = a.hot(r)
	for c, v := range a.waitTotals {
		if v != 0 {
			r.WaitByClass[WaitClass(c).String()] = v
		}
	}
	// Locks, by waiting time.
	for _, l := range a.lockOrder {
		ls := LockStat{Addr: fmt.Sprintf("%#x", l.addr), Class: l.class.String(), Waits: l.waits, Releases: l.nrel,
			WaitNs: l.waitNs, BlameNs: l.blameNs, Unreleased: l.unreleased}
		if l.topReleaser >= 0 {
			kp := a.keys.list[l.topReleaser]
			ls.TopReleaser = r.Path(kp.node)
			if li := a.lines.list[kp.line]; li.line > 0 {
				ls.TopReleaser += fmt.Sprintf(" (%s:%d)", path.Base(li.file), li.line)
			}
		}
		if ls.Waits > 0 || ls.BlameNs > 0 {
			r.Locks = append(r.Locks, ls)
		}
	}
	slices.SortFunc(r.Locks, func(x, y LockStat) int {
		return cmp.Or(cmp.Compare(y.WaitNs, x.WaitNs), cmp.Compare(x.Addr, y.Addr))
	})
	for _, t := range a.all {
		ts := ThreadStat{Tid: t.tid, Created: r.Path(t.stack[0]), Start: t.start, End: t.end, Work: t.work,
			Overhead: t.overhead, Spin: t.spin, Blocked: t.blocked}
		for k, v := range t.idle {
			if k > 0 {
				ts.Idleness += v / int64(k)
			}
		}
		running := t.work
		if a.spinIdle {
			running += t.spin
		}
		ts.Queued = max(0, t.end-t.start-running-t.blocked)
		r.Threads = append(r.Threads, ts)
	}
	return r
}

// roundIdleness turns each key's numerators Σ_k idle[k]/k into integer ns:
// within each k the total is exact (k working threads shared each
// n_idle·dt) and is distributed by largest remainder, ties to the older key.
func (a *Analysis) roundIdleness() []int64 {
	out := make([]int64, len(a.keys.stats))
	type rem struct {
		key int32
		r   int64
	}
	var rems []rem
	for k := 1; k <= a.cfg.CPUs; k++ {
		var sum, given int64
		rems = rems[:0]
		for key := range a.keys.stats {
			id := a.keys.stats[key].idle
			if id == nil || id[k] == 0 {
				continue
			}
			sum += id[k]
			q := id[k] / int64(k)
			out[key] += q
			given += q
			if r := id[k] % int64(k); r > 0 {
				rems = append(rems, rem{int32(key), r})
			}
		}
		extra := sum/int64(k) - given
		slices.SortStableFunc(rems, func(x, y rem) int { return cmp.Compare(y.r, x.r) })
		for i := 0; i < len(rems) && int64(i) < extra; i++ {
			out[rems[i].key]++
		}
	}
	return out
}

// mappings returns where each object of r's lines lay in
// the guest, as the symbols know it (nil if they cannot tell).
func (a *Analysis) mappings(r *Result) map[string]trace.Mapping {
	mp, ok := a.env.Symbols.(trace.Mapper)
	if !ok {
		return nil
	}
	out := map[string]trace.Mapping{}
	add := func(obj string, pc uint64) {
		if _, done := out[obj]; done || pc == 0 || obj == "" {
			return
		}
		if m, ok := mp.Mapping(pc); ok && m.File == obj {
			out[obj] = m
		}
	}
	for _, ls := range r.Lines {
		add(ls.Object, ls.addr)
	}
	return out
}

// serialConcurrency is the average number of threads working (while any
// works) up to which a program is serial in effect: its threads take
// turns, as xz -T2 on a small input does (1.0007).
const serialConcurrency = 1.01

// concurrency returns the average number of threads working while any
// works: work / (makespan − unattributed idleness / n), counting idleness
// in cores; 0 if that cannot be told.
func (r *Result) concurrency() float64 {
	n := int64(r.Cores)
	busy := n*r.Makespan - r.Unattr // n × the time some thread works
	if r.IdleBase != "cores" || n <= 0 || busy <= 0 {
		return 0
	}
	return float64(n*r.Total.Work) / float64(busy)
}

// Serial reports whether the threads did not work concurrently: one
// thread ran, or they took turns (concurrency at most serialConcurrency).
// Table 1's verdicts judge concurrency, and a serial program has none.
func (r *Result) Serial() bool {
	if len(r.Threads) <= 1 {
		return true
	}
	c := r.concurrency()
	return c > 0 && c <= serialConcurrency
}

// narrow reports, for a program that is not serial, whether fewer threads
// ran than there are virtual cores (xz -T2 on the default 8): the cores no
// thread could use are idle in every figure, so Table 1 judges the width the
// program asked for against cores it never asked for. It returns the
// threads that ran, the width to rerun with (--cpus) to judge it.
func (r *Result) narrow() (threads int, ok bool) {
	if r.Serial() || r.IdleBase != "cores" || len(r.Threads) >= r.Cores {
		return 0, false
	}
	return len(r.Threads), true
}

// narrowNote says what narrow means for the verdicts, or "".
func (r *Result) narrowNote() string {
	n, ok := r.narrow()
	if !ok {
		return ""
	}
	return fmt.Sprintf("only %d threads ran on %d virtual cores: at least %d cores had no thread to run, and their idleness is in these figures; to judge the program at the width it asked for, rerun with --cpus %d",
		n, r.Cores, r.Cores-n, n)
}

// serialWhy says why the program is serial (Serial).
func (r *Result) serialWhy() string {
	if len(r.Threads) <= 1 {
		return "one thread ran"
	}
	return fmt.Sprintf("%d threads ran, %.3f working on average while any worked", len(r.Threads), r.concurrency())
}

// Path names context id as "a>b>c" (routines from the outermost).
func (r *Result) Path(id int32) string {
	var parts []string
	for id > 0 {
		parts = append(parts, r.Contexts[id].Routine)
		id = r.Contexts[id].Parent
	}
	slices.Reverse(parts)
	if len(parts) == 0 {
		return "(root)"
	}
	return strings.Join(parts, ">")
}

// hot picks the contexts to classify: by inclusive effort, skipping a
// context whose effort one child carries almost entirely (a chain such as
// _start>__libc_start_main>main shows once, at its deepest node).
func (a *Analysis) hot(r *Result) []HotContext {
	carried := make([]bool, len(r.Contexts))
	for i := len(r.Contexts) - 1; i > 0; i-- {
		c, p := r.Contexts[i], r.Contexts[i].Parent
		if e := r.Contexts[p].Total.Effort(); e > 0 && float64(c.Total.Effort()) >= 0.99*float64(e) {
			carried[p] = true
		}
	}
	var ids []int32
	total := r.Total.Effort()
	for i := 1; i < len(r.Contexts); i++ {
		e := r.Contexts[i].Total.Effort()
		if !carried[i] && e > 0 && float64(e) >= 0.001*float64(total) {
			ids = append(ids, int32(i))
		}
	}
	slices.SortStableFunc(ids, func(x, y int32) int {
		return cmp.Compare(r.Contexts[y].Total.Effort(), r.Contexts[x].Total.Effort())
	})
	if len(ids) > a.cfg.Hot {
		ids = ids[:a.cfg.Hot]
	}
	var out []HotContext
	for _, id := range ids {
		t := r.Contexts[id].Total
		out = append(out, HotContext{Context: id, Path: r.Path(id),
			Verdict: Classify(t.Work, t.Idleness, t.Overhead, a.cfg.IdleThreshold, a.cfg.OverheadThreshold)})
	}
	return out
}
