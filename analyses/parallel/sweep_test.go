package parallel

import (
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("8, 1,2,4")
	if err != nil || len(got) != 4 || got[0] != 1 || got[3] != 8 {
		t.Errorf("ParseCPUList = %v, %v", got, err)
	}
	for _, bad := range []string{"", "4", "0,2", "1,x", "2,2"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted", bad)
		}
	}
}

// The same program on 1, 2 and 4 cores: H1's serial phase (10) then a
// parallel phase of 4 × 10 bounds the speedup (Amdahl): 50, 30, 20.
func TestSweep(t *testing.T) {
	var runs []SweepRun
	for _, n := range []int{1, 2, 4} {
		s := newScript().start(1, 0, 0, "main")
		for w := uint32(2); w <= 4; w++ {
			s.start(w, 1, 0, "worker").blockOn(w, futex, lockL)
		}
		s.call(1, "x").work(1, 10)
		for w := uint32(2); w <= 4; w++ {
			s.wake(w, 1, 10, futex, lockL)
		}
		// The CPU model: 4 threads of 10 on n cores.
		s.ret(1).in(1, "y", 10).exit(1)
		for w := uint32(2); w <= 4; w++ {
			at := 10 + int64((w-1)/uint32(n))*10
			s.tr.SetClock(w, at)
			s.in(w, "y", 10).exit(w)
		}
		runs = append(runs, SweepRun{CPUs: n, Result: s.run(t, cores(n), 0)})
	}
	rows, stop := Sweep(runs)
	want := []int64{50, 30, 20}
	for i, r := range rows {
		if r.Makespan != want[i] {
			t.Errorf("%d cores: makespan %d, want %d", r.CPUs, r.Makespan, want[i])
		}
	}
	if rows[2].Speedup != 2.5 || stop != 0 {
		t.Errorf("speedup %v, stop %d", rows[2].Speedup, stop)
	}
	if rows[2].TopIdle != "main>x" {
		t.Errorf("most idleness in %q", rows[2].TopIdle)
	}
	var b strings.Builder
	if err := WriteSweep(&b, runs); err != nil || !strings.Contains(b.String(), "grows up to 4 cores") {
		t.Errorf("%v\n%s", err, b.String())
	}
}
