package emu

import (
	"testing"

	"emuprof/cpu"
)

// The translator records no block in the block hook's hooked_regions
// (regions.c), with inline counting, with the hook at every block and
// with Block events; with EMUPROF_HOOKED_REGIONS set, it records them as
// Unicorn alone does, which the count checks.
func TestHookedRegionsStayEmpty(t *testing.T) {
	skipUnlessUnicorn201(t)
	for _, keep := range []bool{false, true} {
		if keep {
			t.Setenv("EMUPROF_HOOKED_REGIONS", "1")
		}
		for i, opts := range []Options{{}, {HookEveryBlock: true}, {Blocks: true}} {
			name := []string{"inline", "hook", "blocks"}[i]
			e := newEngine(t, opts, loopCode)
			if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
				t.Fatalf("%s: stop %+v", name, s)
			}
			n := e.HookedRegions()
			if keep && n < 2 || !keep && n != 0 {
				t.Errorf("%s, EMUPROF_HOOKED_REGIONS %v: %d regions recorded", name, keep, n)
			}
			e.Close()
		}
	}
}

// Inline counting registers emu_count_slow with Unicorn once per engine
// and emits its later calls itself (inline.c).
func TestInlineSlowCallRegisteredOnce(t *testing.T) {
	skipUnlessUnicorn201(t)
	e := newEngine(t, Options{}, faultLoopCode)
	for pc, i := uint64(codeAddr), 0; i < 100; i++ {
		s := e.Run(pc, 3)
		pc = e.PC()
		if s.Reason != cpu.StopQuantum {
			break
		}
	}
	emitted, registered := e.SlowCalls()
	if emitted < 2 || emitted != e.InlineCounted() || registered != 1 {
		t.Fatalf("%d translations counted inline, %d slow calls emitted, %d through uc_add_inline_hook", e.InlineCounted(), emitted, registered)
	}
}
