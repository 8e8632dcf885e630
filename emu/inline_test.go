package emu

import (
	"testing"

	"emuprof/cpu"
)

// faultLoopCode is loopCode ending in a store to an unmapped page instead
// of a syscall: the fault's PC is found through last_block, which the
// inline code stores.
var faultLoopCode = []byte{
	0xb9, 0xe8, 0x03, 0, 0, // mov ecx, 1000
	0x01, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00, // add [0x20000], ecx
	0xff, 0xc9, // dec ecx
	0x75, 0xf5, // jnz -11
	0x89, 0x04, 0x25, 0x00, 0x00, 0x05, 0x00, // mov [0x50000], eax
	0x0f, 0x05, // syscall
}

type slice struct {
	stop cpu.Stop
	pc   uint64
}

// runSlices runs code in slices of budget instructions until a stop other
// than the quantum's, with inline counting on or off, and returns each
// slice's stop and the PC after it, and how many translations counted
// inline, and whether the last block is known by its slot.
func runSlices(t *testing.T, on bool, opts Options, code []byte, budget uint64) ([]slice, uint64, bool) {
	t.Helper()
	out, n, slotted, e := runCode(t, on, opts, code, budget)
	var b [4]byte
	_ = e.ReadMem(0x20000, b[:])
	if got := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16; got != 500500 {
		t.Errorf("inline %v, budget %d: sum %d, want 500500 (a block ran twice or not at all)", on, budget, got)
	}
	return out, n, slotted
}

// runCode is runSlices for any code, returning the engine too.
func runCode(t *testing.T, on bool, opts Options, code []byte, budget uint64) ([]slice, uint64, bool, *Engine) {
	t.Helper()
	opts.HookEveryBlock = !on
	e := newEngine(t, opts, code)
	var out []slice
	pc := uint64(codeAddr)
	for len(out) < 10000 {
		s := e.Run(pc, budget)
		pc = e.PC()
		out = append(out, slice{s, pc})
		if s.Reason != cpu.StopQuantum {
			break
		}
	}
	return out, e.InlineCounted(), e.LastBlockSlotted(), e
}

// longLoopCode runs 40,000,002 instructions in 20,000,001 blocks: more
// than the 2^24 - 1 instructions inline counting takes between two
// rebases (hooks.h), and more blocks than its 24 bits hold, so a slice of
// a larger budget is counted across rebases, whose blocks must not carry
// into the instructions.
var longLoopCode = []byte{
	0xb9, 0x00, 0x2d, 0x31, 0x01, // mov ecx, 20000000
	0xff, 0xc9, // dec ecx
	0x75, 0xfc, // jnz -4
	0x0f, 0x05, // syscall
}

// Slices longer than one rebase's room stop where the hook stops them,
// with the same counts, at budgets on both sides of the room.
func TestInlineCountingAcrossRebases(t *testing.T) {
	skipUnlessUnicorn201(t)
	for _, budget := range []uint64{0, 1<<24 - 2, 1<<24 - 1, 1 << 24, 1<<24 + 1, 3 << 23} {
		with, n, _, _ := runCode(t, true, Options{}, longLoopCode, budget)
		without, _, _, _ := runCode(t, false, Options{}, longLoopCode, budget)
		if n == 0 {
			t.Fatalf("budget %d: no translation counted inline", budget)
		}
		if len(with) != len(without) {
			t.Fatalf("budget %d: %d slices inline, %d with the hook", budget, len(with), len(without))
		}
		var insns, blocks uint64
		for i := range with {
			if with[i] != without[i] {
				t.Fatalf("budget %d, slice %d: inline %+v, hook %+v", budget, i, with[i], without[i])
			}
			insns += with[i].stop.Insns
			blocks += with[i].stop.Blocks
		}
		if insns != 40000002 || blocks != 20000001 {
			t.Fatalf("budget %d: %d instructions in %d blocks, want 40000002 in 20000001", budget, insns, blocks)
		}
	}
}

// With inline counting, every slice stops where the block hook alone
// stops it, after as many instructions and blocks, and a fault is found
// at the same PC; the engine reports translations counted inline.
func TestInlineCountingMatchesHook(t *testing.T) {
	skipUnlessUnicorn201(t)
	for ci, code := range [][]byte{loopCode, faultLoopCode} {
		want := []cpu.StopReason{cpu.StopSyscall, cpu.StopFault}[ci]
		for _, budget := range []uint64{1, 2, 3, 7, 100, 0} {
			with, n, slotted := runSlices(t, true, Options{}, code, budget)
			without, m, _ := runSlices(t, false, Options{}, code, budget)
			if n == 0 {
				t.Fatalf("budget %d: no translation counted inline", budget)
			}
			if !slotted {
				t.Fatalf("budget %d: the last block is not known by its slot", budget)
			}
			if m != 0 {
				t.Fatalf("budget %d: inline counting off, yet %d translations counted inline", budget, m)
			}
			if len(with) != len(without) {
				t.Fatalf("budget %d: %d slices inline, %d with the hook", budget, len(with), len(without))
			}
			for i := range with {
				if with[i] != without[i] {
					t.Fatalf("budget %d, slice %d: inline %+v, hook %+v", budget, i, with[i], without[i])
				}
			}
			last := with[len(with)-1].stop
			if last.Reason != want {
				t.Fatalf("budget %d: last stop %+v", budget, last)
			}
		}
	}
}

// Engines whose blocks need more than a count keep calling their hook:
// Block events, memory events (each block's time), no hook at all; so
// does every engine with inline counting off. Their counts are the same.
func TestInlineCountingFallsBack(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		on   bool
	}{
		{"blocks", Options{Blocks: true}, true},
		{"memory", Options{Memory: true}, true},
		{"off", Options{}, false},
	} {
		got, n, _ := runSlices(t, c.on, c.opts, loopCode, 7)
		if n != 0 {
			t.Fatalf("%s: %d translations counted inline", c.name, n)
		}
		var insns, blocks uint64
		for _, s := range got {
			insns += s.stop.Insns
			blocks += s.stop.Blocks
		}
		// 1 mov + 1000 * 3 loop instructions + syscall, in 1 + 1000 + 1 blocks
		// (the first block is mov and the loop's first pass).
		if insns != 3002 {
			t.Fatalf("%s: %d instructions, want 3002", c.name, insns)
		}
		if blocks == 0 {
			t.Fatalf("%s: no blocks counted", c.name)
		}
	}
	e := newEngine(t, Options{Bare: true}, loopCode)
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall || e.InlineCounted() != 0 {
		t.Fatalf("bare engine: stop %+v, %d translations counted inline", s, e.InlineCounted())
	}
}

// A block whose sped-up instructions save time (Options.Speedup) is
// counted by the hook, which adds the saving: its slot never gets a
// count, and the slices are those of the hook alone.
func TestInlineCountingLeavesSpeedupToHook(t *testing.T) {
	skipUnlessUnicorn201(t)
	opts := Options{Speedup: func(uint64) int { return 50 }}
	with, _, _ := runSlices(t, true, opts, loopCode, 7)
	without, _, _ := runSlices(t, false, opts, loopCode, 7)
	if len(with) != len(without) {
		t.Fatalf("%d slices inline, %d with the hook", len(with), len(without))
	}
	var saved uint64
	for i := range with {
		if with[i] != without[i] {
			t.Fatalf("slice %d: inline %+v, hook %+v", i, with[i], without[i])
		}
		saved += with[i].stop.Saved
	}
	if saved == 0 {
		t.Fatal("no time saved by the speedup: the test tests nothing")
	}
}
