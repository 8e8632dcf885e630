package emu

import (
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
)

// TestSpeedupSaved: a sped-up instruction costs PCT % less virtual time
// (Stop.Saved, and the times of the Block events after it), while the
// instruction counts and the quantum stay those of the program.
func TestSpeedupSaved(t *testing.T) {
	// loopCode: mov (1), then 1000 × (add, dec, jnz), then syscall.
	addInsn := uint64(codeAddr + 5) // add [0x20000], ecx: sped up
	for _, pct := range []int{0, 1, 25, 100} {
		var evs []trace.Event
		e := newEngine(t, Options{Blocks: true, NsPerInsn: 3, Speedup: func(a uint64) int {
			if a == addInsn {
				return pct
			}
			return 0
		}}, loopCode)
		e.SetSink(func(b []trace.Event) { evs = append(evs, b...) })
		s := e.Run(codeAddr, 0)
		e.Drain()
		if s.Reason != cpu.StopSyscall || s.Insns != 1+3000+1 {
			t.Fatalf("%d%%: stop %+v", pct, s)
		}
		if want := uint64(1000 * pct); s.Saved != want {
			t.Errorf("%d%%: saved %d hundredths, want %d", pct, s.Saved, want)
		}
		// The last block (the syscall) starts after the mov and 1000
		// iterations, whose adds cost (100−pct) % of 3 ns each.
		var last trace.Event
		for _, ev := range evs {
			if ev.Kind == trace.KindBlock {
				last = ev
			}
		}
		want := int64(3*(1+2*1000)) + int64(1000*3*(100-pct))/100
		if last.Time != want {
			t.Errorf("%d%%: last block at %d ns, want %d", pct, last.Time, want)
		}
	}
}

// TestSpeedupBudget: the quantum counts instructions, not virtual time.
func TestSpeedupBudget(t *testing.T) {
	e := newEngine(t, Options{Speedup: func(uint64) int { return 100 }}, loopCode)
	s := e.Run(codeAddr, 100)
	if s.Reason != cpu.StopQuantum || s.Insns > 100 || s.Insns < 97 {
		t.Fatalf("stop %+v, want a quantum of about 100 instructions", s)
	}
	if s.Saved != 100*s.Insns {
		t.Errorf("saved %d, want %d (every instruction free)", s.Saved, 100*s.Insns)
	}
}
