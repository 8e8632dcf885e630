package causal

import (
	"math"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// TestFinder: a routine one thread calls at a regular period over the run
// is chosen; one called at irregular intervals (40 and 20 ns, alternately)
// is listed, not chosen; library code without a line is no candidate.
func TestFinder(t *testing.T) {
	tr := tracetest.New(syms{})
	call := func(r uint32, addr uint64, insns uint32) {
		tr.Other(trace.KindCall, 1, 0, 0)
		tr.Events[len(tr.Events)-1].Block = r
		tr.Block(1, addr, 0, insns, 30, trace.EndRet)
		tr.Other(trace.KindReturn, 1, 0, 0)
		tr.Events[len(tr.Events)-1].Block = r
	}
	tr.Other(trace.KindThreadStart, 1, 0, 0)
	for i := 0; i < 100; i++ {
		tr.Block(1, 0x1000, 0, 10, 30, trace.EndCall)
		call(8, 0x2000, 40) // "step": 40 ns apart, then 20 to the next period
		call(8, 0x2000, 0)
		call(9, 0x9000, 5) // the library: no line
		call(7, 0x3000, 5) // "done", every 60 ns
	}
	names := map[uint32]string{7: "done", 8: "step", 9: "lib"}
	p := newProf(t, Config{Progress: []string{"done"}}, tr, &fakeClock{})
	f := newFinder(p, Options{Block: func(id uint32) *trace.BlockInfo { return tr.Blocks.View().Get(id) },
		RoutineName: func(id uint32) string { return names[id] }, NsPerInsn: 1, Program: "/bin/p"})
	f.events(tr.Events)
	c := f.candidates()
	if len(c) != 2 || c[0].Routine != "done" || !c[0].Chosen || c[1].Routine != "step" || c[1].Chosen {
		t.Fatalf("candidates %+v", c)
	}
	if c[0].Calls != 100 || c[0].PeriodNs != 60 || c[0].CV != 0 || c[0].Span < 0.98 {
		t.Errorf("done: %+v", c[0])
	}
	if c[1].Calls != 200 || c[1].PeriodNs < 29 || c[1].PeriodNs > 31 || math.Abs(c[1].CV-1.0/3) > 0.01 {
		t.Errorf("step: %+v", c[1])
	}
}
