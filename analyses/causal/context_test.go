package causal

import (
	"math"
	"strings"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// TestContext: line 10 runs in routine work (id 6), called from hot (id 5,
// 40 instructions a call) and from cold (id 8, 20): with Context it is two
// lines, "p.c:10 <- hot" and "p.c:10 <- cold", and speeding up the first
// speeds one thread's iteration (40 + 20 + 10 ns) up by its share, 40/70,
// times s, exactly; without Context the line is one, share 60/70.
func TestContext(t *testing.T) {
	tr := tracetest.New(syms{})
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	call := func(id uint32) {
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindCall, Tid: 1, Block: id, Time: tr.Events[len(tr.Events)-1].Time})
	}
	ret := func(id uint32) {
		tr.Events = append(tr.Events, trace.Event{Kind: trace.KindReturn, Tid: 1, Block: id, Time: tr.Events[len(tr.Events)-1].Time})
	}
	for i := 0; i < 3000; i++ {
		for _, c := range []struct {
			caller uint32
			insns  uint32
		}{{5, 40}, {8, 20}} {
			call(c.caller)
			call(6)
			tr.Block(1, 0x1000, 0, c.insns, 30, trace.EndRet)
			ret(6)
			ret(c.caller)
		}
		call(7)
		tr.Block(1, 0x3000, 0, 10, 30, trace.EndRet)
		ret(7)
	}
	names := map[uint32]string{5: "hot", 6: "work", 7: "done", 8: "cold"}
	run := func(cfg Config) *Profile {
		p, err := New(cfg, Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) },
			RoutineName: func(id uint32) string { return names[id] }, Clock: &fakeClock{}, Program: "/bin/p"})
		if err != nil {
			t.Fatal(err)
		}
		p.Events(tr.Events)
		p.Finish()
		return p.Build()
	}
	for _, c := range []struct {
		cfg   Config
		line  string
		share float64
	}{
		{Config{Progress: []string{"done"}, Context: true, FixedLine: "p.c:10 <- hot", FixedSpeedup: -1}, "/src/p.c:10 <- hot", 40.0 / 70},
		{Config{Progress: []string{"done"}, Context: true, FixedLine: "p.c:10 <- cold", FixedSpeedup: -1}, "/src/p.c:10 <- cold", 20.0 / 70},
		{Config{Progress: []string{"done"}, FixedLine: "p.c:10", FixedSpeedup: -1}, "/src/p.c:10", 60.0 / 70},
	} {
		prof := run(c.cfg)
		if len(prof.Lines) != 1 || prof.Lines[0].Line != c.line {
			var got []string
			for _, l := range prof.Lines {
				got = append(got, l.Line)
			}
			t.Fatalf("lines %q, want only %q", got, c.line)
		}
		n := 0
		for _, cp := range prof.Lines[0].Curve {
			if cp.Program[0] == nil {
				continue
			}
			n++
			if want := c.share * float64(cp.Speedup) / 100; math.Abs(*cp.Program[0]-want) > 1e-9 {
				t.Errorf("%s at %d %%: %.6f, want %.6f", c.line, cp.Speedup, *cp.Program[0], want)
			}
		}
		if n != 21 {
			t.Errorf("%s: %d speedups", c.line, n)
		}
	}
	// Without a fixed line, both contexts are experimented on.
	prof := run(Config{Progress: []string{"done"}, Context: true, FixedSpeedup: -1, Seed: 2})
	var got []string
	for _, l := range prof.Lines {
		got = append(got, l.Line)
	}
	if s := strings.Join(got, ","); !strings.Contains(s, "/src/p.c:10 <- hot") || !strings.Contains(s, "/src/p.c:10 <- cold") {
		t.Errorf("lines %q", got)
	}
}
