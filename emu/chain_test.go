package emu

import (
	"fmt"
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
)

// calleeAddr is where crossPageCode's callee is: another page than the
// caller's, so the call is chained by chain.c only.
const calleeAddr = 0x11000

// crossPageCode calls the callee at calleeAddr+off twice a round, from two
// sites (so that its return goes to two places), 1000 rounds (ecx counts
// down), and stops at a syscall; when patch is set, the caller stores 2
// into the callee's add immediate (at calleeAddr+off+7) when ecx is 500.
func crossPageCode(off int, patch bool) []byte {
	code := make([]byte, 0, 64)
	put := func(b ...byte) { code = append(code, b...) }
	rel := func(to int) {
		d := uint32(int32(to - (codeAddr + len(code) + 4)))
		put(byte(d), byte(d>>8), byte(d>>16), byte(d>>24))
	}
	put(0xb9, 0xe8, 0x03, 0, 0) // mov ecx, 1000
	loop := codeAddr + len(code)
	for range 2 {
		put(0xe8) // call callee
		rel(calleeAddr + off)
	}
	if patch {
		imm := calleeAddr + off + 7
		put(0x81, 0xf9, 0xf4, 0x01, 0, 0, 0x75, 0x08)                                      // cmp ecx, 500; jne +8
		put(0xc6, 0x04, 0x25, byte(imm), byte(imm>>8), byte(imm>>16), byte(imm>>24), 0x02) // mov byte [imm], 2
	}
	put(0xff, 0xc9, 0x0f, 0x85) // dec ecx; jnz loop
	rel(loop)
	put(0x0f, 0x05) // syscall
	return code
}

// callee adds add to [0x20000] and returns: 8 bytes of add, then ret.
func callee(add byte) []byte {
	return []byte{0x83, 0x04, 0x25, 0x00, 0x00, 0x02, 0x00, add, 0xc3}
}

// crossPageRun runs crossPageCode with the callee at calleeAddr+off (on
// pages writable too when patch is set) and returns the stop, the sum at
// 0x20000 and the chained sites translated.
func crossPageRun(t *testing.T, opts Options, off int, patch bool) (cpu.Stop, uint32, uint64) {
	t.Helper()
	e := newEngine(t, opts, crossPageCode(off, patch))
	prot := mm.ProtRead | mm.ProtExec
	if patch {
		prot |= mm.ProtWrite
		if err := e.ProtectPages(codeAddr, 0x1000, prot); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.MapPages(calleeAddr, 0x2000, prot); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(uint64(calleeAddr+off), callee(1)); err != nil {
		t.Fatal(err)
	}
	s := e.Run(codeAddr, 0)
	return s, loopSum(t, e), e.ChainedSites()
}

// A direct call to another page is chained on Unicorn 2.0.1 (chain.c),
// and the guest computes what it computes with Unicorn's lookup, in as
// many instructions and blocks: with inline counting, with the hook at
// every block and with Block events; a callee the caller rewrites through
// a store runs its new code; a callee whose block spans two pages (which
// cpu_exec does not link) still runs, by the lookup.
func TestCrossPageChaining(t *testing.T) {
	skipUnlessUnicorn201(t)
	for _, c := range []struct {
		name  string
		off   int
		patch bool
		want  uint32
	}{
		{"call", 0x100, false, 2000},
		{"store into the callee", 0x100, true, 2 * (501 + 2*499)},
		{"callee across two pages", 0xffa, false, 2000},
	} {
		for _, opts := range []Options{{}, {HookEveryBlock: true}, {Blocks: true, StackPointer: true}} {
			name := fmt.Sprintf("%s, %+v", c.name, opts)
			s, sum, sites := crossPageRun(t, opts, c.off, c.patch)
			off := opts
			off.NoChain = true
			s0, sum0, sites0 := crossPageRun(t, off, c.off, c.patch)
			if s.Reason != cpu.StopSyscall || sum != c.want || sum0 != c.want {
				t.Errorf("%s: stop %v, sums %d chained and %d not, want %d", name, s.Reason, sum, sum0, c.want)
			}
			if s != s0 {
				t.Errorf("%s: stop %+v chained, %+v not", name, s, s0)
			}
			if sites == 0 || sites0 != 0 {
				t.Errorf("%s: %d sites chained (want some), %d with NoChain", name, sites, sites0)
			}
		}
	}
}

// A chained jump into a page whose code is replaced (unmapped and mapped
// again with other code) runs the new code: forgetCode removes the old
// translation, which unlinks the jumps to it.
func TestCrossPageChainingAfterRemap(t *testing.T) {
	skipUnlessUnicorn201(t)
	e := newEngine(t, Options{}, crossPageCode(0x100, false))
	if err := e.MapPages(calleeAddr, 0x2000, mm.ProtRead|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(calleeAddr+0x100, callee(1)); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall || loopSum(t, e) != 2000 || e.ChainedSites() == 0 {
		t.Fatalf("first run: stop %+v, sum %d, %d sites chained", s, loopSum(t, e), e.ChainedSites())
	}
	if err := e.UnmapPages(calleeAddr, 0x1000); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(calleeAddr, 0x1000, mm.ProtRead|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(calleeAddr+0x100, callee(3)); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall || loopSum(t, e) != 8000 {
		t.Fatalf("after the callee's page was mapped again with new code: stop %+v, sum %d, want 2000 + 6000", s, loopSum(t, e))
	}
}
