package sched

import "testing"

// TestRanSaved: saved hundredths of an instruction come off the clock, the
// fraction of a ns carried to the next slice; instruction counts are
// unchanged; with nothing saved it is Ran.
func TestRanSaved(t *testing.T) {
	s := New(Config{CPUs: 1, NsPerInsn: 1})
	th := s.Spawn(1, nil)
	s.RanSaved(th, 100, 3, 0)
	if th.Clock != 100 || th.Insns != 100 || th.Blocks != 3 {
		t.Fatalf("no speedup: clock %d insns %d blocks %d", th.Clock, th.Insns, th.Blocks)
	}
	s.RanSaved(th, 10, 1, 950) // 10 insns, 9.5 of them saved: 0.5 ns
	if th.Clock != 100 || th.Insns != 110 {
		t.Fatalf("after 0.5 ns: clock %d insns %d", th.Clock, th.Insns)
	}
	s.RanSaved(th, 10, 1, 950) // another 0.5 ns: 1 ns in all
	if th.Clock != 101 || th.Insns != 120 || th.Blocks != 5 {
		t.Fatalf("after 1 ns: clock %d insns %d blocks %d", th.Clock, th.Insns, th.Blocks)
	}
}
