package causal

import (
	"reflect"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// twoThreads returns an end-to-end experiment on line 10 at speedup s
// whose trace starts threads 1 and 2 (a child of 1).
func twoThreads(t *testing.T, s int) (*tracetest.Trace, *fakeClock, *Profiler, int) {
	t.Helper()
	tr := tracetest.New(syms{})
	clk := &fakeClock{}
	p := newProf(t, endToEnd(s), tr, clk)
	tr.Other(trace.KindThreadStart, 1, 0, 0).Other(trace.KindThreadStart, 2, 0, 1)
	return tr, clk, p, 0
}

// TestRemaindersCarried: with a 10 % speedup, each 19 ns execution of the
// line owes the other thread 1.9 ns. Pauses are whole ns and the fraction
// stays owed, so the pauses after each execution are 1, 2, 2, 2, 2 (the
// running sums 1.9, 3.8, 5.7, 7.6, 9.5 rounded down): 9 ns in all, not one
// ns per execution.
func TestRemaindersCarried(t *testing.T) {
	tr, clk, p, from := twoThreads(t, 10)
	var got []delay
	for range 5 {
		tr.Block(1, 0x1000, 0, 19, 30, trace.EndOther)
		got = append(got, feed(p, tr, &from, clk)...)
	}
	if want := []delay{{2, 1}, {2, 2}, {2, 2}, {2, 2}, {2, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}

// TestNewThreadInheritsOwedDelay: Coz §4.4 (Thread Creation): a new thread
// starts with its parent's local delay count, so it owes what its parent
// owed when it was created. T1 runs the line (T2 owes 5 ns) and T2 creates
// T3 before it has paid: both pay 5 ns. A thread whose parent is unknown
// starts with the global count and owes nothing.
func TestNewThreadInheritsOwedDelay(t *testing.T) {
	tr, clk, p, from := twoThreads(t, 50)
	tr.Block(1, 0x1000, 0, 10, 30, trace.EndOther) // T2 owes 5
	tr.Other(trace.KindThreadStart, 3, 0, 2)       // created by T2
	tr.Other(trace.KindThreadStart, 4, 0, 0)       // no parent known
	got := map[uint32]int64{}
	for _, d := range feed(p, tr, &from, clk) {
		got[d.tid] += d.ns
	}
	if want := map[uint32]int64{2: 5, 3: 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("delays by thread %v, want %v", got, want)
	}
}
