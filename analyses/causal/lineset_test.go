package causal

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// setRun runs a two-thread trace end to end at 50 % of fixed: T1 runs
// line 10 (10 ns), line 20 (6 ns) and line 30 (4 ns), then T2 line 20
// (8 ns), a batch each; it returns the pauses of each batch and the
// experiment.
func setRun(t *testing.T, fixed string) ([][]delay, Experiment) {
	t.Helper()
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, Config{FixedLine: fixed, FixedSpeedup: 50, EndToEnd: true}, tr, clk)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther).Block(1, 0x2000, 0, 6, 20, trace.EndOther).Block(1, 0x3000, 0, 4, 20, trace.EndOther)
	var got [][]delay
	got = append(got, feed(p, tr, &from, clk))
	tr.Block(2, 0x2000, 0, 8, 20, trace.EndOther)
	got = append(got, feed(p, tr, &from, clk))
	p.Finish()
	x := p.Experiments()
	if len(x) != 1 {
		t.Fatalf("%s: %d experiments, want 1", fixed, len(x))
	}
	return got, x[0]
}

// TestFixedLineSet: a set's experiment pauses the other threads for every
// execution of any of its lines, as one line's does for its own: exact
// pauses, delay and effective duration, which neither line alone gives
// (the run lasts 20 ns).
func TestFixedLineSet(t *testing.T) {
	cases := []struct {
		fixed        string
		delays       [][]delay
		delay, dur   int64
		execs, selNs int64
	}{
		// T1's 10 ns of line 10 owe T2 5; T2's 8 ns of line 20 raise
		// nothing.
		{"p.c:10", [][]delay{{{2, 5}}, nil}, 5, 15, 1, 10},
		// T1's 6 ns owe T2 3; T2's 8 ns (its 4 over the 3 paid) owe T1 4.
		{"p.c:20", [][]delay{{{2, 3}}, {{1, 4}}}, 7, 13, 2, 14},
		// Both: T2 owes 5 + 3, then its 4 over the 8 paid owe T1 4.
		{"p.c:10+p.c:20", [][]delay{{{2, 8}}, {{1, 4}}}, 12, 8, 3, 24},
		{" p.c:20 + p.c:10 ", [][]delay{{{2, 8}}, {{1, 4}}}, 12, 8, 3, 24},
	}
	for _, c := range cases {
		got, x := setRun(t, c.fixed)
		if !reflect.DeepEqual(got, c.delays) {
			t.Errorf("%s: pauses %v, want %v", c.fixed, got, c.delays)
		}
		if x.Delay != c.delay || x.Duration != c.dur || x.Elapsed != 20 || x.Selected != c.execs || x.SelectedNs != c.selNs {
			t.Errorf("%s: experiment %+v: want delay %d, duration %d, elapsed 20, %d executions, %d ns", c.fixed, x, c.delay, c.dur, c.execs, c.selNs)
		}
	}
	if _, x := setRun(t, "p.c:20+p.c:10"); x.Line != "p.c:20+p.c:10" {
		t.Errorf("selected %q, want the set's lines by base name, in the order given", x.Line)
	}
}

// TestFixedLineSetOverlap: two threads running the set's lines at the same
// time pause each other by the larger count only (Coz's "minimizing
// delays", §4.4): the set's experiment inserts 5 ns where each line's
// alone inserts 5, so the lines' predictions do not add with threads.
func TestFixedLineSetOverlap(t *testing.T) {
	for _, c := range []struct {
		fixed string
		want  []delay
	}{{"p.c:10", []delay{{2, 5}}}, {"p.c:20", []delay{{1, 5}}}, {"p.c:10+p.c:20", nil}} {
		tr := tracetest.New(syms{})
		clk := &fakeClock{}
		p := newProf(t, Config{FixedLine: c.fixed, FixedSpeedup: 50, EndToEnd: true}, tr, clk)
		from := 0
		tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
		tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther).Block(2, 0x2000, 0, 10, 20, trace.EndOther)
		got := feed(p, tr, &from, clk)
		p.Finish()
		x := p.Experiments()
		if !reflect.DeepEqual(got, c.want) || len(x) != 1 || x[0].Delay != 5 || x[0].Duration != 5 {
			t.Errorf("%s: pauses %v, experiments %+v: want pauses %v, delay 5, duration 5", c.fixed, got, x, c.want)
		}
	}
}

// TestFixedLineSetErrors: a bad set is one clear line naming the flag.
func TestFixedLineSetErrors(t *testing.T) {
	for _, c := range []struct{ fixed, want string }{
		{"p.c:10+", `--fixed-line "p.c:10+": empty element (want FILE:LINE or FILE:LINE+FILE:LINE...)`},
		{"+p.c:10", `--fixed-line "+p.c:10": empty element (want FILE:LINE or FILE:LINE+FILE:LINE...)`},
		{"p.c:10++p.c:20", `--fixed-line "p.c:10++p.c:20": empty element (want FILE:LINE or FILE:LINE+FILE:LINE...)`},
		{"p.c:10+ +p.c:20", `--fixed-line "p.c:10+ +p.c:20": empty element (want FILE:LINE or FILE:LINE+FILE:LINE...)`},
		{"p.c:10+main", `--fixed-line "p.c:10+main": element "main": want FILE:LINE`},
		{"p.c:10+p.c:x", `--fixed-line "p.c:10+p.c:x": element "p.c:x": want FILE:LINE`},
		{"p.c:10+p.c:10", `--fixed-line "p.c:10+p.c:10": p.c:10 twice`},
		{"main", `--fixed-line "main": want FILE:LINE`},
	} {
		_, err := New(Config{FixedLine: c.fixed, FixedSpeedup: 50, EndToEnd: true}, Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("--fixed-line %q: error %v, want %s", c.fixed, err, c.want)
		}
	}
	_, err := New(Config{FixedLine: "p.c:10+p.c:20", Context: true, Progress: []string{"done"}}, Options{})
	if err == nil || err.Error() != `--fixed-line "p.c:10+p.c:20": a line set is not with --context` {
		t.Errorf("a set with --context: error %v", err)
	}
	// A "+" inside a path is not a separator: one element.
	if el, err := parseFixed("/usr/include/c++/12/vector:100+p.c:10", false); err != nil || len(el) != 2 || el[0].name != "/usr/include/c++/12/vector" {
		t.Errorf("a path with c++: %+v, %v", el, err)
	}
}

// TestFixedLineSetFiles: the set's name goes through profile.coz (strict
// parser), --exact's shard (parseLineName) and its baseline cost (the
// lines' costs summed).
func TestFixedLineSetFiles(t *testing.T) {
	_, x := setRun(t, "p.c:10+p.c:20")
	var b bytes.Buffer
	if err := CozProfile(&b, []Experiment{x}, 20, false); err != nil {
		t.Fatal(err)
	}
	if recs, err := ParseCozProfile(&b); err != nil || recs[1].Fields["selected"] != "p.c:10+p.c:20" {
		t.Errorf("profile.coz: %v, %v", recs, err)
	}
	bad := `{"type":"startup","time":0}` + "\n" + `{"type":"experiment","selected":"p.c:10+","speedup":0.50,"duration":8,"selected_samples":3}` + "\n" + `{"type":"runtime","time":20}` + "\n"
	if _, err := ParseCozProfile(strings.NewReader(bad)); err == nil {
		t.Errorf("profile.coz with a bad set accepted")
	}
	if k, ok := parseLineName("p.c:10+p.c:20"); !ok || !k.set || k.file != "p.c:10+p.c:20" {
		t.Errorf("parseLineName: %+v %v", k, ok)
	}
	if k, ok := parseLineName("x.c:10+x.c:10"); !ok || !k.set { // two files' x.c, by base name
		t.Errorf("parseLineName of a set of two x.c: %+v %v", k, ok)
	}
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, Config{Observe: true, Progress: []string{"done"}}, tr, clk)
	from := 0
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther).Block(1, 0x2000, 0, 6, 20, trace.EndOther).Block(1, 0x3000, 0, 4, 20, trace.EndOther)
	feed(p, tr, &from, clk)
	if got, want := p.hottest(5, "p.c:10+p.c:20"), []LineCost{{"p.c:10+p.c:20", 16}}; !reflect.DeepEqual(got, want) {
		t.Errorf("hottest of the set: %v, want %v", got, want)
	}
}
