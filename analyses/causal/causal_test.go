package causal

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// syms: 0x1000.. is /src/p.c:10 (the line sped up), 0x2000.. line 20,
// 0x3000.. line 30 (the progress routine "done"), 0x9000.. a library
// without lines. Everything but the library is in /bin/p.
type syms struct{}

func (syms) Routine(pc uint64) (trace.Routine, bool) {
	if pc >= 0x9000 {
		return trace.Routine{Entry: 0x9000, Name: "lib", Object: "/lib/libc.so"}, true
	}
	return trace.Routine{Entry: pc &^ 0xfff, Name: fmt.Sprintf("f%x", pc>>12), Object: "/bin/p"}, true
}

func (syms) Line(pc uint64) (string, int, bool) {
	if pc >= 0x9000 {
		return "", 0, false
	}
	return "/src/p.c", int(pc>>12) * 10, true
}

type delay struct {
	tid uint32
	ns  int64
}

type fakeClock struct{ got []delay }

func (c *fakeClock) Delay(tid uint32, ns int64) { c.got = append(c.got, delay{tid, ns}) }

func newProf(t *testing.T, cfg Config, tr *tracetest.Trace, clk *fakeClock) *Profiler {
	t.Helper()
	p, err := New(cfg, Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) },
		RoutineName: func(id uint32) string { return map[uint32]string{7: "done"}[id] },
		Clock:       clk, Program: "/bin/p"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// feed delivers the events appended since the last call as one batch and
// returns the delays it requested.
func feed(p *Profiler, tr *tracetest.Trace, from *int, clk *fakeClock) []delay {
	clk.got = nil
	p.Events(tr.Events[*from:])
	*from = len(tr.Events)
	return clk.got
}

func endToEnd(s int) Config {
	return Config{FixedLine: "p.c:10", FixedSpeedup: s, EndToEnd: true}
}

// TestDelayRules checks the exact pauses of Coz's rules (§4.4): the other
// threads pay s × the cost; a thread executing the line itself counts its
// share (minimizing delays); a blocked thread woken by another skips what
// was inserted while it slept; one woken by a timeout pays it; remainders
// below 1 ns stay owed.
func TestDelayRules(t *testing.T) {
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, endToEnd(50), tr, clk)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther) // line 10: 10 ns, others owe 5
	if got, want := feed(p, tr, &from, clk), []delay{{2, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("after T1 ran the line: delays %v, want %v", got, want)
	}
	tr.Block(2, 0x1000, 0, 4, 30, trace.EndOther) // T2 runs it for 4 ns: its share 2 > 0 owed, T1 owes 2
	if got, want := feed(p, tr, &from, clk), []delay{{1, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("after T2 ran the line: delays %v, want %v", got, want)
	}
	tr.Block(2, 0x2000, 0, 6, 20, trace.EndOther) // another line: nothing
	if got := feed(p, tr, &from, clk); len(got) != 0 {
		t.Errorf("another line: delays %v", got)
	}
	// T2 blocks, T1 runs the line, then wakes T2: T2 is credited.
	tr.Other(trace.KindBlockOn, 2, 0x500, 0)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther)
	tr.Other(trace.KindWake, 2, 0x500, 1)
	if got := feed(p, tr, &from, clk); len(got) != 0 {
		t.Errorf("woken by the thread that ran the line: delays %v, want none", got)
	}
	// T2 blocks (sleep), T1 runs the line twice, T2 wakes by timeout: pays 10.
	tr.Other(trace.KindBlockOn, 2, 0, 0)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther)
	if got := feed(p, tr, &from, clk); len(got) != 0 {
		t.Errorf("blocked thread delayed: %v", got)
	}
	tr.Other(trace.KindWake, 2, 0, 0)
	if got, want := feed(p, tr, &from, clk), []delay{{2, 10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("woken by a timeout: delays %v, want %v", got, want)
	}
	// A thread created by T1 inherits T1's count: owes nothing.
	tr.Other(trace.KindThreadStart, 3, 0, 1)
	tr.Block(3, 0x2000, 0, 1, 20, trace.EndOther)
	if got := feed(p, tr, &from, clk); len(got) != 0 {
		t.Errorf("new thread delayed: %v", got)
	}
	p.Finish()
	x := p.Experiments()
	if len(x) != 1 {
		t.Fatalf("%d experiments, want 1 (end to end)", len(x))
	}
	// Inserted: 5 + 0 (T2's 2 raised the count by 2) + 5 + 10 = 22 ns in all.
	// Executions are entries into the line: T1 enters it once (its later
	// blocks of line 10 follow blocks of line 10), T2 once.
	if x[0].Delay != 22 || x[0].Duration != x[0].Elapsed-22 || x[0].Selected != 2 {
		t.Errorf("experiment %+v: want delay 22, duration = elapsed - 22, 2 executions", x[0])
	}
}

// TestRemainders: 5 % of 3 ns is 0.15 ns; pauses are whole ns, the rest
// stays owed: 7 executions owe 1.05 ns, so one 1 ns pause.
func TestRemainders(t *testing.T) {
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, endToEnd(5), tr, clk)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	var all []delay
	for i := 0; i < 13; i++ {
		tr.Block(1, 0x1000, 0, 3, 30, trace.EndOther)
		all = append(all, feed(p, tr, &from, clk)...)
	}
	if want := []delay{{2, 1}}; !reflect.DeepEqual(all, want) { // 13 × 0.15 = 1.95
		t.Errorf("delays %v, want %v", all, want)
	}
}

// TestCallees: library code called from the line is charged to it (Coz
// §4.1, sample attribution), unless NoCallees.
func TestCallees(t *testing.T) {
	for _, noCallees := range []bool{false, true} {
		tr := tracetest.New(syms{})
		clk := &fakeClock{}
		cfg := endToEnd(100)
		cfg.NoCallees = noCallees
		p := newProf(t, cfg, tr, clk)
		from := 0
		tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
		tr.Block(1, 0x1000, 0, 2, 30, trace.EndCall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 3})
		tr.Block(1, 0x9000, 0, 8, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 3})
		tr.Block(1, 0x2000, 0, 5, 20, trace.EndOther)
		got := feed(p, tr, &from, clk)
		want := []delay{{2, 10}}
		if noCallees {
			want = []delay{{2, 2}}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("NoCallees=%v: delays %v, want %v", noCallees, got, want)
		}
	}
}

// loop builds a single-threaded program of n steps: line 10 (40 ns), line
// 20 (10 ns), then a call of "done" (line 30, 10 ns), the progress point.
func loop(tr *tracetest.Trace, n int) {
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	for i := 0; i < n; i++ {
		tr.Block(1, 0x1000, 0, 40, 30, trace.EndOther)
		tr.Block(1, 0x2000, 0, 10, 30, trace.EndCall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 7, Time: tr.Events[len(tr.Events)-1].Time + 10})
		tr.Block(1, 0x3000, 0, 10, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 7})
	}
}

// TestSingleThreaded: with one thread the program speedup of a line is its
// share times s, exactly: line 10 is 40 of every 60 ns.
func TestSingleThreaded(t *testing.T) {
	tr := tracetest.New(syms{})
	loop(tr, 2000)
	clk := &fakeClock{}
	p := newProf(t, Config{Progress: []string{"done"}, FixedSpeedup: -1, Seed: 3}, tr, clk)
	// The clock is not applied by hand here (one thread: nobody to pause).
	p.Events(tr.Events)
	p.Finish()
	prof := p.Build()
	found := false
	for _, l := range prof.Lines {
		share := map[string]float64{"/src/p.c:10": 40.0 / 60, "/src/p.c:20": 10.0 / 60, "/src/p.c:30": 10.0 / 60}[l.Line]
		for _, c := range l.Curve {
			if c.Program[0] == nil {
				t.Errorf("%s at %d%%: no prediction", l.Line, c.Speedup)
				continue
			}
			want := share * float64(c.Speedup) / 100
			if math.Abs(*c.Program[0]-want) > 1e-9 {
				t.Errorf("%s at %d%%: program speedup %.6f, want %.6f", l.Line, c.Speedup, *c.Program[0], want)
			}
			if l.Line == "/src/p.c:10" && c.Speedup == 100 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no 100%% experiment of line 10 in %d experiments", len(prof.Experiments))
	}
	var b bytes.Buffer
	prof.Summary(&b, 0)
	if !strings.Contains(b.String(), "worth optimizing") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestExperimentsDeterministic: same trace and seed, same profile; another
// seed, another sequence.
func TestExperimentsDeterministic(t *testing.T) {
	out := func(seed uint64) string {
		tr := tracetest.New(syms{})
		loop(tr, 500)
		clk := &fakeClock{}
		p := newProf(t, Config{Progress: []string{"done"}, FixedSpeedup: -1, Seed: seed}, tr, clk)
		p.Events(tr.Events)
		p.Finish()
		var b bytes.Buffer
		if err := CozProfile(&b, p.Experiments(), p.Runtime(), false); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b, c := out(1), out(1), out(2)
	if a != b {
		t.Error("two runs with the same seed differ")
	}
	if a == c {
		t.Error("seeds 1 and 2 gave the same experiments")
	}
	recs, err := ParseCozProfile(strings.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	exps := 0
	for _, r := range recs {
		if r.Type == "experiment" {
			exps++
		}
		if r.Type == "throughput-point" && r.Fields["delta"] != "5" {
			t.Errorf("delta %s, want 5", r.Fields["delta"])
		}
	}
	if exps != 99 { // 500 visits: one starts the first, each of the rest needs 5
		t.Errorf("%d experiments, want 99", exps)
	}
}

// TestLatencyAndLinePoints: a latency pair by line, arrivals and
// departures counted per entry into the line (not per block of it).
func TestLatencyAndLinePoints(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	for i := 0; i < 30; i++ {
		tr.Block(1, 0x2000, 0, 3, 8, trace.EndCond)  // line 20: begin
		tr.Block(1, 0x2008, 0, 3, 8, trace.EndOther) // still line 20: no new arrival
		tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther)
		tr.Block(1, 0x3000, 0, 2, 30, trace.EndOther) // line 30: end
	}
	clk := &fakeClock{}
	p := newProf(t, Config{Latency: []string{"p.c:20,p.c:30"}, FixedSpeedup: -1}, tr, clk)
	p.Events(tr.Events)
	p.Finish()
	x := p.Experiments()
	if len(x) != 5 {
		t.Fatalf("%d experiments, want 5", len(x))
	}
	for _, e := range x {
		d := e.Points[0]
		if !d.Latency || d.Arrivals != 5 || d.Departures != 5 || d.Difference != 1 {
			t.Errorf("latency point %+v, want 5 arrivals, 5 departures, 1 in flight", d)
		}
	}
}

func TestCozFormats(t *testing.T) {
	exps := []Experiment{{Line: "/src/a\tb.c:3", Speedup: 35, Duration: 1234, Selected: 9,
		Points: []PointDelta{{Name: "x\"y\n", Arrivals: 7}, {Name: "b,e", Latency: true, Arrivals: 6, Departures: 5, Difference: 2}}}}
	var j, l bytes.Buffer
	CozProfile(&j, exps, 99, false)
	CozProfile(&l, exps, 99, true)
	wantJ := `{"type":"startup","time":0}
{"type":"experiment","selected":"/src/a\tb.c:3","speedup":0.35,"duration":1234,"selected_samples":9}
{"type":"throughput-point","name":"x\"y\n","delta":7}
{"type":"latency-point","name":"b,e","arrivals":6,"departures":5,"difference":2}
{"type":"runtime","time":99}
`
	wantL := "startup\ttime=0\nexperiment\tselected=/src/a\\x09b.c:3\tspeedup=0.35\tduration=1234\tselected-samples=9\n" +
		"throughput-point\tname=x\"y\\x0a\tdelta=7\nlatency-point\tname=b,e\tarrivals=6\tdepartures=5\tdifference=2\nruntime\ttime=99\n"
	if j.String() != wantJ {
		t.Errorf("JSON lines:\n%s\nwant\n%s", j.String(), wantJ)
	}
	if l.String() != wantL {
		t.Errorf("legacy:\n%q\nwant\n%q", l.String(), wantL)
	}
	for _, s := range []string{j.String(), l.String()} {
		if _, err := ParseCozProfile(strings.NewReader(s)); err != nil {
			t.Errorf("strict reader rejects our output: %v", err)
		}
	}
	bad := []string{
		`{"type":"throughput-point","name":"a","delta":1}` + "\n",                                                                                // no startup
		`{"type":"startup","time":0}` + "\n" + `{"type":"throughput-point","name":"a","delta":1}` + "\n",                                         // point before experiment
		`{"type":"startup","time":0}` + "\n" + `{"type":"experiment","selected":"a.c:1","speedup":0.5,"duration":1,"selected_samples":0}` + "\n", // speedup not 2 decimals, no runtime
		`{"type":"startup","time":0}` + "\n" + `{"type":"runtime","time":-1}` + "\n",
		`{"type":"startup","time":0,"x":1}` + "\n" + `{"type":"runtime","time":1}` + "\n",
		"startup\ttime=0\n" + `{"type":"runtime","time":1}` + "\n",
	}
	for _, s := range bad {
		if _, err := ParseCozProfile(strings.NewReader(s)); err == nil {
			t.Errorf("strict reader accepts %q", s)
		}
	}
}

// TestPhaseCorrection: a program in two phases, line 10 running only in the
// first (iterations of 60 ns: line 10 40 ns, line 20 10 ns, the progress
// routine 10 ns), line 40 only in the second (iterations of 50 ns: line 40
// 40 ns, the routine 10 ns), N iterations each. Experiments select only
// recently executed lines, so line 10's experiments measure phase A, where
// its speedup s shortens the period by 40s/60; over the program it saves
// 40s·N of (60+50)·N, ΔP = 40s/110 (Coz §4.6, equation (6): the factor
// t_A/T = 60/110). Line 40: phase A speedup 40s/50, factor 50/110.
func TestPhaseCorrection(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	iter := func(addr uint64, insns uint32, other bool) {
		tr.Block(1, addr, 0, insns, 30, trace.EndOther)
		if other {
			tr.Block(1, 0x2000, 0, 10, 30, trace.EndCall)
		}
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 7, Time: tr.Events[len(tr.Events)-1].Time + 10})
		tr.Block(1, 0x3000, 0, 10, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 7})
	}
	const n = 3000
	for i := 0; i < n; i++ {
		iter(0x1000, 40, true)
	}
	for i := 0; i < n; i++ {
		iter(0x4000, 40, false)
	}
	clk := &fakeClock{}
	p := newProf(t, Config{Progress: []string{"done"}, FixedSpeedup: -1, Seed: 5}, tr, clk)
	p.Events(tr.Events)
	p.Finish()
	prof := p.Build()
	for _, c := range []struct {
		line          string
		phaseA, whole float64 // per unit of s
	}{{"/src/p.c:10", 40.0 / 60, 40.0 / 110}, {"/src/p.c:40", 40.0 / 50, 40.0 / 110}} {
		var lr *LineResult
		for i := range prof.Lines {
			if prof.Lines[i].Line == c.line {
				lr = &prof.Lines[i]
			}
		}
		if lr == nil {
			t.Fatalf("no line %s", c.line)
		}
		t.Logf("%s: phase fraction %.4f", c.line, lr.Phase)
		checked := 0
		for _, cp := range lr.Curve {
			if cp.Speedup == 0 || cp.Program[0] == nil {
				continue
			}
			s := float64(cp.Speedup) / 100
			if d := math.Abs(*cp.PhaseA[0] - c.phaseA*s); d > 1e-9 {
				t.Errorf("%s at %d%%: phase A speedup %.6f, want %.6f", c.line, cp.Speedup, *cp.PhaseA[0], c.phaseA*s)
			}
			// The factor is estimated from the 0 % experiments' share of
			// each phase, as Coz estimates it from samples: within 2 %.
			if d := math.Abs(*cp.Program[0] - c.whole*s); d > 0.02*c.whole*s {
				t.Errorf("%s at %d%%: program speedup %.6f, want %.6f", c.line, cp.Speedup, *cp.Program[0], c.whole*s)
			}
			checked++
		}
		if checked < 15 {
			t.Errorf("%s: %d speedups checked", c.line, checked)
		}
	}
}

// TestSplitBlock: a block whose instructions come from two lines
// (BlockInfo.Lines) charges each line its own instructions: with line 10
// sped up by 100 %, a block of 4 instructions of line 10 then 6 of line
// 20 makes the other thread owe 4 ns, not 10; a block starting on line 20
// with 5 instructions of line 10 at its end, 5 more; a line progress point
// on the second span of a block counts an entry there.
func TestSplitBlock(t *testing.T) {
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p, err := New(Config{FixedLine: "p.c:10", FixedSpeedup: 100, EndToEnd: true, Progress: []string{"p.c:20"}},
		Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) }, Clock: clk, Program: "/bin/p"})
	if err != nil {
		t.Fatal(err)
	}
	split := func(addr uint64, spans ...trace.LineSpan) {
		var n uint32
		for _, s := range spans {
			n += s.Insns
		}
		id := tr.BlockID(addr, 4*n, n, trace.EndOther)
		tr.Blocks.View().Get(id).Lines = spans
	}
	split(0x1000, trace.LineSpan{File: "/src/p.c", Line: 10, Insns: 4}, trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 6})
	split(0x2000, trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 3}, trace.LineSpan{File: "/src/p.c", Line: 10, Insns: 5})
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.Block(1, 0x1000, 0, 10, 40, trace.EndOther)
	if got, want := feed(p, tr, &from, clk), []delay{{2, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines 10 then 20: delays %v, want %v", got, want)
	}
	tr.Block(1, 0x2000, 0, 8, 32, trace.EndOther)
	if got, want := feed(p, tr, &from, clk), []delay{{2, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines 20 then 10: delays %v, want %v", got, want)
	}
	p.Finish()
	x := p.Experiments()
	if len(x) != 1 {
		t.Fatalf("%d experiments, want 1", len(x))
	}
	// Line 10: 4 + 5 ns in two entries; the progress point (line 20) was
	// entered twice: inside the first block and at the start of the second
	// (the first ended on line 20, so that is no new entry: once).
	if x[0].SelectedNs != 9 || x[0].Selected != 2 || x[0].Delay != 9 {
		t.Errorf("experiment %+v: want 9 ns of line 10 in 2 executions, 9 ns of delay", x[0])
	}
	if got := p.points[0].arrivals; got != 1 {
		t.Errorf("line 20 entered %d times, want 1", got)
	}
}

// TestBlockInVirtualTime: delays are placed in virtual time, not in the
// order the emulator ran the threads (Coz §4.4 pays them as they arise).
// T2 runs 5 ns and blocks at 5 ns; the emulator then runs T1, which
// executes the selected line (100 %) from 0 to 10 ns and wakes T2 at 10.
// T2 was running from 0 to 5 while T1 ran the line, so it owes 10 ns from
// 0, and would have blocked at 15: woken at 10, it owes 5 (the rule in
// wall-clock order credited it everything: 0). A thread already woken at
// 30 that was blocked, in virtual time, when T1 runs the line at 20, owes
// nothing for it.
func TestBlockInVirtualTime(t *testing.T) {
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, endToEnd(100), tr, clk)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.Block(2, 0x2000, 0, 5, 20, trace.EndOther)
	tr.Other(trace.KindBlockOn, 2, 0x500, 0)
	tr.Block(1, 0x1000, 0, 10, 40, trace.EndOther)
	tr.SetClock(2, 10).Other(trace.KindWake, 2, 0x500, 1)
	if got, want := feed(p, tr, &from, clk), []delay{{2, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("woken before it would have blocked: delays %v, want %v", got, want)
	}
	// T2 blocks at 15 (after its 5 ns pause), is woken at 30; then the
	// emulator runs T1's line from 20: T2 was blocked then.
	tr.SetClock(2, 15).Other(trace.KindBlockOn, 2, 0x500, 0)
	tr.SetClock(2, 30).Other(trace.KindWake, 2, 0x500, 1)
	tr.SetClock(1, 20).Block(1, 0x1000, 0, 5, 40, trace.EndOther)
	if got := feed(p, tr, &from, clk); len(got) != 0 {
		t.Errorf("line run while the thread was blocked: delays %v, want none", got)
	}
}

// visits appends, per element of work, one visit of the progress routine
// "done" after work instructions of line 10 (and 20 of lines 20 and 30):
// the period between visits is work + 20 ns.
func visits(tr *tracetest.Trace, work ...uint32) {
	for _, w := range work {
		if w > 0 {
			tr.Block(1, 0x1000, 0, w, w, trace.EndOther)
		}
		tr.Block(1, 0x2000, 0, 10, 30, trace.EndCall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 7, Time: tr.Events[len(tr.Events)-1].Time + 10})
		tr.Block(1, 0x3000, 0, 10, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 7})
	}
}

// TestSettle: the adaptive warm-up (Config.Settle). The first experiment
// begins at the first visit (11 ns); its periods are 21 ns four times (a
// queue the previous experiment left, served at once), then 60 ns. Without
// Settle it is measured over the next 5 visits (4 × 21 + 60 ns, a rate no
// steady state has); with Settle 1 % it runs until its last two windows of
// 5 visits have the same rate at 5 successive visits (the first such pair
// begins at the fifth visit) and is measured over the last pair, 10 visits
// at 60 ns from 335 ns; with --experiment-ns 1000, from the same visit, for
// 17 periods. Periods in a
// cycle of 4 (21, 21, 21, 201 ns: bursts) never agree at every alignment
// of windows of 5, though they do at some (one long period in each, 57 ns
// a visit instead of 66); the experiment is measured over the last half of
// its 8 windows, 5 whole cycles. Periods that never settle (every one
// longer than the last) end the experiment after 8 windows too.
func TestSettle(t *testing.T) {
	minNs := int64(0)
	run := func(settle int, work ...uint32) []Experiment {
		tr := tracetest.New(syms{})
		tr.Other(trace.KindThreadStart, 1, 0, 0)
		visits(tr, work...)
		p := newProf(t, Config{Progress: []string{"done"}, FixedLine: "p.c:10", FixedSpeedup: 0, Settle: settle, MinNs: minNs}, tr, &fakeClock{})
		p.Events(tr.Events)
		p.Finish()
		return p.Experiments()
	}
	queued := []uint32{1, 1, 1, 1, 1}
	for range 40 {
		queued = append(queued, 40)
	}
	if x := run(0, queued...); len(x) == 0 || x[0].Points[0].Arrivals != 5 || x[0].Duration != 4*21+60 {
		t.Errorf("without Settle: first experiment %+v, want 5 visits in 144 ns", x)
	}
	x := run(1, queued...)
	if len(x) == 0 || x[0].Points[0].Arrivals != 10 || x[0].Duration != 10*60 || x[0].Start != 11+4*21+4*60 {
		t.Fatalf("Settle 1 %%: first experiment %+v, want 10 visits in 600 ns from 335 ns", x)
	}
	for _, e := range x {
		if e.Duration != 60*e.Points[0].Arrivals {
			t.Errorf("Settle 1 %%: experiment %+v, not at the steady 60 ns", e)
		}
	}
	minNs = 1000
	if x := run(1, queued...); len(x) == 0 || x[0].Points[0].Arrivals != 17 || x[0].Duration != 17*60 || x[0].Start != 11+4*21+4*60 {
		t.Errorf("Settle 1 %%, 1,000 ns: first experiment %+v, want 17 visits in 1,020 ns from 335 ns", x)
	}
	minNs = 0
	bursts := []uint32{1, 1, 1}
	for range 30 {
		bursts = append(bursts, 1, 1, 1, 181)
	}
	if x := run(1, bursts...); len(x) == 0 || x[0].Points[0].Arrivals != 20 || x[0].Duration != 66*20 {
		t.Errorf("bursts: first experiment %+v, want 20 visits at 66 ns", x)
	}
	var growing []uint32
	for i := range 60 {
		growing = append(growing, uint32(1+10*i))
	}
	if x := run(1, growing...); len(x) == 0 || x[0].Points[0].Arrivals != maxWindows/2*5 {
		t.Errorf("never settled: first experiment %+v, want %d visits", x, maxWindows/2*5)
	}
}

// TestSettleInFlight: the adaptive warm-up also waits for the mean number
// in flight of a latency point (lines 40 to 50) to settle. Every period
// between visits of "done" is the same, but during the first 6 requests
// enter twice per period and leave once (a queue filling); then once each.
// The throughput alone would settle at once; the experiment is measured
// only where as many requests leave as enter.
func TestSettleInFlight(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	for i := range 60 {
		second := uint64(0x7000) // line 70: no request
		if i < 6 {
			second = 0x4000 // line 40 again: a second request enters
		}
		tr.Block(1, 0x4000, 0, 5, 5, trace.EndOther) // line 40: a request enters
		tr.Block(1, 0x6000, 0, 5, 5, trace.EndOther)
		tr.Block(1, second, 0, 5, 5, trace.EndOther)
		tr.Block(1, 0x5000, 0, 5, 5, trace.EndOther) // line 50: one leaves
		visits(tr, 1)
	}
	for _, settle := range []int{0, 1} {
		p := newProf(t, Config{Progress: []string{"done"}, Latency: []string{"p.c:40,p.c:50"}, FixedLine: "p.c:10", FixedSpeedup: 0, Settle: settle}, tr, &fakeClock{})
		p.Events(tr.Events)
		p.Finish()
		x := p.Experiments()
		if len(x) == 0 {
			t.Fatalf("settle %d: no experiment", settle)
		}
		lat := x[0].Points[1]
		if settled := lat.Arrivals == lat.Departures; settled != (settle > 0) {
			t.Errorf("settle %d: first experiment from %d ns: %d requests in, %d out", settle, x[0].Start, lat.Arrivals, lat.Departures)
		}
	}
}

// TestLinePointAcrossCall: a FILE:LINE point counts one visit per execution
// of the line, also when the line's code is split around a call (the
// block after the return is the same execution): 40 executions, 40 visits.
func TestLinePointAcrossCall(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	for i := 0; i < 40; i++ {
		tr.Block(1, 0x2000, 0, 3, 8, trace.EndCall) // line 20 calls the library
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 9, Time: tr.Events[len(tr.Events)-1].Time + 3})
		tr.Block(1, 0x9000, 0, 5, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 9, Time: tr.Events[len(tr.Events)-1].Time + 5})
		tr.Block(1, 0x2008, 0, 3, 8, trace.EndOther) // line 20 again, after the return
		tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther)
	}
	clk := &fakeClock{}
	p := newProf(t, Config{Progress: []string{"p.c:20"}, Observe: true}, tr, clk)
	p.Events(tr.Events)
	p.Finish()
	if o := p.Observation(); len(o) != 1 || o[0].Arrivals != 40 {
		t.Errorf("observed %+v, want 40 visits", o)
	}
}

// TestVerdictAndInterpolation: a verdict only for an effect beyond twice
// the spread of the line's own 0 % measurements, none without that spread;
// ~ values only between measured speedups at most 10 points apart.
func TestVerdictAndInterpolation(t *testing.T) {
	pt := func(s int, v float64) CurvePoint { return CurvePoint{Speedup: s, Program: []*float64{&v}} }
	curve := []CurvePoint{pt(0, 0), pt(5, 0.01), pt(20, 0.03), pt(30, 0.04), pt(100, 0.035)}
	for _, c := range []struct {
		noise float64
		want  string
	}{{0.001, "worth optimizing"}, {0.025, "within noise"}, {-1, "too few experiments"}} {
		if got := verdict(curve, c.noise); got != c.want {
			t.Errorf("+4 %% effect, noise %.3f: %q, want %q", c.noise, got, c.want)
		}
	}
	if got := verdict([]CurvePoint{pt(0, 0), pt(50, 0.001)}, -1); got != "no effect" {
		t.Errorf("no effect, no spread: %q", got)
	}
	l := LineResult{Curve: curve}
	if v, exact, ok := l.At(25); !ok || exact || math.Abs(v-0.035) > 1e-12 {
		t.Errorf("at 25 %% between 20 and 30: %v %v %v, want ~0.035", v, exact, ok)
	}
	if v, _, ok := l.At(50); ok {
		t.Errorf("at 50 %% between 30 and 100: %v, want no value", v)
	}
}

// TestLineOutsideExperiment: a line that runs, in virtual time, only
// outside an experiment gets no effect from it, even when the emulator ran
// it between the experiment's visits (a thread run ahead of the others by a
// quantum): thread 2 runs line 40 at virtual times past every visit of
// thread 1's progress point, interleaved with thread 1's loop. Every
// experiment of line 40 is dropped, and those that count last at least ten
// times the scheduler's skew (twice the quantum), inserted delays taken out.
func TestLineOutsideExperiment(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.SetClock(2, 1<<40)
	for i := 0; i < 20000; i++ {
		tr.Block(1, 0x1000, 0, 40, 30, trace.EndOther)
		tr.Block(1, 0x2000, 0, 10, 30, trace.EndCall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 7, Time: tr.Events[len(tr.Events)-1].Time + 10})
		tr.Block(1, 0x3000, 0, 10, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 7})
		if i%7 == 0 {
			tr.Block(2, 0x4000, 0, 5, 30, trace.EndOther)
		}
	}
	clk := &fakeClock{}
	p, err := New(Config{Progress: []string{"done"}, FixedSpeedup: -1, Seed: 3, Settle: 1},
		Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) },
			RoutineName: func(id uint32) string { return map[uint32]string{7: "done"}[id] },
			Clock:       clk, Program: "/bin/p", Quantum: 100})
	if err != nil {
		t.Fatal(err)
	}
	p.Events(tr.Events)
	p.Finish()
	n := 0
	for _, x := range p.Experiments() {
		if x.Line == "/src/p.c:40" {
			t.Errorf("line 40 ran outside its experiment at %d ns, counted at %d %%: %d ns of it", x.Start, x.Speedup, x.SelectedNs)
		}
		if x.Duration < 10*2*100 {
			t.Errorf("experiment of %s at %d %%: %d ns effective, want 2000 at least", x.Line, x.Speedup, x.Duration)
		}
		n++
	}
	if n < 50 {
		t.Errorf("%d experiments", n)
	}
	// The status line says what the run did; the memory counted for
	// --memory-limit holds the experiments.
	covered := map[string]bool{}
	for _, x := range p.Experiments() {
		covered[x.Line] = true
	}
	what, done, _ := p.Progress()
	if want := fmt.Sprintf("causal: lines covered %d, experiments", len(covered)); what != want || done != n {
		t.Errorf("progress %q %d, want %q %d", what, done, want, n)
	}
	if m := p.MemoryBytes(); m < uint64(n)*uint64(unsafe.Sizeof(Experiment{})) {
		t.Errorf("memory %d bytes for %d experiments", m, n)
	}
}

// timedProf returns a profiler under a time model (Timed) with line 10 of
// p.c sped up by 100 % end to end.
func timedProf(t *testing.T) (*tracetest.Trace, *fakeClock, *Profiler) {
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p, err := New(Config{FixedLine: "p.c:10", FixedSpeedup: 100, EndToEnd: true},
		Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) }, Clock: clk, Program: "/bin/p", Timed: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr, clk, p
}

// TestSplitBlockTimed: under a time model a Block event's Size is its cost
// in ns, shared among the block's lines by their instructions: 20 ns for 4
// instructions of line 10 and 6 of line 20 charge line 10 8 ns; 16 ns for 3
// of line 20 then 5 of line 10 charge it 16 − 16×3/8 = 10 ns.
func TestSplitBlockTimed(t *testing.T) {
	tr, clk, p := timedProf(t)
	split := func(addr uint64, spans ...trace.LineSpan) {
		var n uint32
		for _, s := range spans {
			n += s.Insns
		}
		id := tr.BlockID(addr, 4*n, n, trace.EndOther)
		tr.Blocks.View().Get(id).Lines = spans
	}
	split(0x1000, trace.LineSpan{File: "/src/p.c", Line: 10, Insns: 4}, trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 6})
	split(0x2000, trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 3}, trace.LineSpan{File: "/src/p.c", Line: 10, Insns: 5})
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.Block(1, 0x1000, 0, 20, 40, trace.EndOther) // Size 20: ns
	if got, want := feed(p, tr, &from, clk), []delay{{2, 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines 10 then 20: delays %v, want %v", got, want)
	}
	tr.Block(1, 0x2000, 0, 16, 32, trace.EndOther)
	if got, want := feed(p, tr, &from, clk), []delay{{2, 10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines 20 then 10: delays %v, want %v", got, want)
	}
	// A block of 1 ns whose 17 instructions are 6 of line 20, 5 of line
	// 10, 6 of line 20: line 10's share, 5/17 ns, is carried from one
	// execution to the next (in 1/65536 ns), so 170 executions charge it
	// 50 ns less the truncation of 170 shares, under 1 ns (split anew at
	// each block, it would get 0 every time).
	split(0x3000, trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 6}, trace.LineSpan{File: "/src/p.c", Line: 10, Insns: 5, Off: 24},
		trace.LineSpan{File: "/src/p.c", Line: 20, Insns: 6, Off: 44})
	var sum int64
	for i := 0; i < 170; i++ {
		tr.Block(1, 0x3000, 0, 1, 68, trace.EndOther)
		for _, d := range feed(p, tr, &from, clk) {
			sum += d.ns
		}
	}
	if sum != 49 {
		t.Errorf("1 ns blocks: line 10 charged %d ns in 170, want 49 (50 less under 1 ns)", sum)
	}
}

// TestSplitBlockTimedAccesses: under a time model a block's memory
// accesses (their Aux the instruction, Block their cost in ps) are charged
// to their instructions' lines, the rest of its Size by instructions: a
// 110 ns block of 4 instructions of line 10 and 6 of line 20 whose line-20
// load misses (100 ns) charges line 10 4 ns (by instructions alone: 44),
// and 104 when the load is line 10's; an access of no instruction of the
// block is shared as the rest is. Accesses dearer than the block's Size
// (rounded down by the model) scale down to it.
func TestSplitBlockTimedAccesses(t *testing.T) {
	tr, clk, p := timedProf(t)
	id := tr.BlockID(0x1000, 40, 10, trace.EndOther)
	tr.Blocks.View().Get(id).Lines = []trace.LineSpan{{File: "/src/p.c", Line: 10, Insns: 4}, {File: "/src/p.c", Line: 20, Insns: 6, Off: 16}}
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	block := func(size uint32, accesses ...[2]uint64) []delay {
		tr.Block(1, 0x1000, 0, size, 40, trace.EndOther)
		for _, a := range accesses {
			tr.Mem(trace.KindRead, 1, 0x8000, 8)
			ev := &tr.Events[len(tr.Events)-1]
			ev.Aux, ev.Block = a[0], uint32(a[1])
		}
		return feed(p, tr, &from, clk)
	}
	for _, c := range []struct {
		name     string
		size     uint32
		accesses [][2]uint64
		want     []delay
	}{
		{"line 20's load misses", 110, [][2]uint64{{0x1014, 100000}, {0x1000, 0}}, []delay{{2, 4}}},
		{"line 10's load misses", 110, [][2]uint64{{0x1010 - 1, 100000}}, []delay{{2, 104}}},
		{"a load of no instruction of the block", 110, [][2]uint64{{0x2000, 100000}}, []delay{{2, 44}}},
		{"a load the engine did not place", 110, [][2]uint64{{0, 100000}}, []delay{{2, 44}}},
		{"accesses over the block's Size", 3, [][2]uint64{{0x1000, 2000}, {0x1018, 2000}}, []delay{{2, 1}}},
	} {
		if got := block(c.size, c.accesses...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: delays %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSyscallKernelTime: under a time model a system call's kernel work (a
// Syscall event's Block, ns) goes to the line that called the library's
// wrapper, as the wrapper's own code does; a signal's entry, a call of no
// priced work and a call from line 20 charge line 10 nothing. Fails if
// causal drops the kernel's work (batchwrite's line would look free).
func TestSyscallKernelTime(t *testing.T) {
	tr, clk, p := timedProf(t)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	call := func(line uint64, kernel uint32, nr uint64) []delay {
		tr.Block(1, line, 0, 2, 30, trace.EndCall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: 3})
		tr.Block(1, 0x9000, 0, 5, 30, trace.EndSyscall)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindSyscall, Tid: 1, Addr: nr, Block: kernel,
			Time: tr.Events[len(tr.Events)-1].Time + 5 + int64(kernel)})
		tr.Block(1, 0x9010, 0, 1, 30, trace.EndRet)
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: 3})
		return feed(p, tr, &from, clk)
	}
	if got, want := call(0x1000, 700, 1), []delay{{2, 708}}; !reflect.DeepEqual(got, want) {
		t.Errorf("write from line 10: delays %v, want %v (2 + 5 + 700 + 1 ns)", got, want)
	}
	if got, want := call(0x1000, 0, 1), []delay{{2, 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("no priced work: delays %v, want %v", got, want)
	}
	if got, want := call(0x1000, 300, trace.SyscallSignalEntry), []delay{{2, 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("signal entry: delays %v, want %v", got, want)
	}
	if got := call(0x2000, 700, 1); len(got) != 0 {
		t.Errorf("write from line 20: delays %v, want none", got)
	}
}
