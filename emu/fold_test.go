package emu

import (
	"slices"
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
)

// foldCode is one routine: a loop of two blocks (dec/jz, then nop/nop/jmp
// back) entered from a first block, and a syscall block after it.
var foldCode = []byte{
	0xb9, 100, 0, 0, 0, // +0  mov ecx, 100
	0xff, 0xc9, //         +5  loop: dec ecx
	0x74, 0x04, //         +7  jz +13
	0x90, 0x90, //         +9  nop; nop
	0xeb, 0xf8, //         +11 jmp loop
	0x0f, 0x05, //         +13 syscall
}

// foldSyms puts foldCode in one routine; lineOf gives each address's line.
type foldSyms struct{ lineOf func(off uint64) int }

func (s foldSyms) Routine(pc uint64) (trace.Routine, bool) {
	return trace.Routine{Entry: codeAddr, Name: "f", Object: "/fold"}, true
}

func (s foldSyms) Line(pc uint64) (string, int, bool) { return "fold.c", s.lineOf(pc - codeAddr), true }

// foldEvents runs foldCode to its syscall in slices of budget instructions
// (0: one slice), emitting a Go event between slices, and returns the stream.
func foldEvents(t *testing.T, fold func(*trace.BlockInfo) bool, lineOf func(uint64) int, budget uint64) ([]trace.Event, *trace.BlockTable) {
	t.Helper()
	return foldRun(t, Options{Blocks: true, StackPointer: true, Symbols: foldSyms{lineOf}, Encoding: trace.Encoding{Fold: fold}}, foldCode, budget)
}

func foldRun(t *testing.T, opts Options, code []byte, budget uint64) ([]trace.Event, *trace.BlockTable) {
	t.Helper()
	e := newEngine(t, opts, code)
	e.SetTid(3)
	var got []trace.Event
	e.SetSink(func(b []trace.Event) { got = append(got, b...) })
	pc := uint64(codeAddr)
	for {
		s := e.Run(pc, budget)
		if s.Reason == cpu.StopSyscall {
			break
		}
		if s.Reason != cpu.StopQuantum {
			t.Fatalf("stop %+v", s)
		}
		e.Drain() // as before a scheduling decision
		e.Emit(trace.Event{Kind: trace.KindSwitch, Tid: 3, Aux: 3})
		var r cpu.Regs
		if err := e.ReadRegs(&r); err != nil {
			t.Fatal(err)
		}
		pc = r.RIP
	}
	e.Drain()
	return got, e.Blocks()
}

// A run of blocks of one routine and line, entered by falling through or a
// branch, comes as one Block event: the first block's address, the last
// block's id and terminator, every instruction. Another line, a Go event
// or a refusing Fold starts a new event.
func TestFoldRuns(t *testing.T) {
	all := func(*trace.BlockInfo) bool { return true }
	oneLine := func(off uint64) int {
		if off < 13 {
			return 1
		}
		return 2
	}
	plain, _ := foldEvents(t, nil, oneLine, 0)
	const insns = 3 + 99*(3+2) + 1 // first block, the loop (99 times nop/jmp and dec/jz), the syscall block
	sum := func(evs []trace.Event) (n uint32, blocks int) {
		for _, ev := range evs {
			if ev.Kind == trace.KindBlock {
				n += ev.Size
				blocks++
			}
		}
		return
	}
	if n, blocks := sum(plain); n != insns || blocks != 1+2*99+1 {
		t.Fatalf("without folding: %d instructions in %d events, want %d in %d", n, blocks, insns, 1+2*99+1)
	}

	got, table := foldEvents(t, all, oneLine, 0)
	if len(got) != 2 {
		t.Fatalf("%d events, want 2: %+v", len(got), got)
	}
	last := table.View().Get(got[0].Block)
	if got[0].Addr != codeAddr || last.Addr != codeAddr+5 || got[0].End != trace.EndCond || got[0].Size != insns-1 || got[0].Aux != 0x21000 {
		t.Errorf("run %+v (last block %+v)", got[0], last)
	}
	if got[1].Addr != codeAddr+13 || got[1].Size != 1 || got[1].End != trace.EndSyscall || got[1].Time != int64(insns-1) {
		t.Errorf("syscall block %+v", got[1])
	}

	// Each block on a line of its own: nothing folds.
	split, _ := foldEvents(t, all, func(off uint64) int { return int(off) }, 0)
	if len(split) != len(plain) {
		t.Errorf("blocks of different lines: %d events, want %d", len(split), len(plain))
	}
	// A Fold that refuses: nothing folds.
	if refused, _ := foldEvents(t, func(*trace.BlockInfo) bool { return false }, oneLine, 0); len(refused) != len(plain) {
		t.Errorf("refused blocks: %d events, want %d", len(refused), len(plain))
	}
	// Slices of at most 50 instructions with a Go event between them: a
	// run never spans one.
	sliced, _ := foldEvents(t, all, oneLine, 50)
	n, _ := sum(sliced)
	for i, ev := range sliced {
		if ev.Kind == trace.KindBlock && ev.Size > 50 || ev.Kind == trace.KindSwitch && sliced[i+1].Kind != trace.KindBlock {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	if n != insns {
		t.Errorf("sliced: %d instructions, want %d", n, insns)
	}
}

// FoldMemory: a run goes on past its blocks' memory events, which follow
// its Block event in order; a Block event stands for at most 256 blocks.
// FoldRoutines: a run spans lines. Without them, the same code gives one
// event per block.
func TestFoldMemoryAndRoutines(t *testing.T) {
	all := func(*trace.BlockInfo) bool { return true }
	perBlock := func(off uint64) int { return int(off) } // every block on a line of its own
	opts := Options{Blocks: true, Memory: true, StackPointer: true, Symbols: foldSyms{perBlock}, Encoding: trace.Encoding{Fold: all}}
	plain, _ := foldRun(t, opts, loopCode, 0)
	opts.FoldMemory, opts.FoldRoutines = true, true
	folded, _ := foldRun(t, opts, loopCode, 0)
	count := func(evs []trace.Event) (events, blocks, insns, mem int) {
		for _, ev := range evs {
			switch ev.Kind {
			case trace.KindBlock:
				events++
				blocks += 1 + int(ev.Folded)
				insns += int(ev.Size)
			case trace.KindRead, trace.KindWrite:
				mem++
			}
		}
		return
	}
	if e, b, n, m := count(plain); e != 1001 || b != 1001 || n != 3002 || m != 2000 {
		t.Fatalf("without FoldMemory/FoldRoutines: %d events for %d blocks, %d instructions, %d accesses", e, b, n, m)
	}
	if e, b, n, m := count(folded); e != 4 || b != 1001 || n != 3002 || m != 2000 {
		t.Fatalf("folded: %d events for %d blocks, %d instructions, %d accesses; want 4 for 1001, 3002, 2000", e, b, n, m)
	}
	// Each Block event is followed by the accesses of its blocks (one add
	// each: a read and a write; the syscall block has none) and then by the
	// next Block event.
	for i := 0; i < len(folded); {
		ev := folded[i]
		if ev.Kind != trace.KindBlock {
			t.Fatalf("event %d: %+v, want a Block event", i, ev)
		}
		j := i + 1
		for j < len(folded) && folded[j].Kind != trace.KindBlock {
			j++
		}
		want := 2 * (1 + int(ev.Folded))
		if j == len(folded) {
			want -= 2 // the syscall block
		}
		if j-i-1 != want || ev.Folded == 0 {
			t.Errorf("Block event %d (%d more blocks): %d accesses follow, want %d", i, ev.Folded, j-i-1, want)
		}
		i = j
	}
	// FoldMemory alone: lines still cut runs. The first block, the loop's
	// 999 iterations (in 4 events of at most 256) and the syscall block
	// are on three lines.
	opts.FoldRoutines = false
	lines, _ := foldRun(t, opts, loopCode, 0)
	if e, b, _, _ := count(lines); e != 6 || b != 1001 {
		t.Errorf("FoldMemory without FoldRoutines: %d events for %d blocks, want 6 for 1001", e, b)
	}
}

// Blocks that FoldCycles takes come in periodic runs: a run starts at a
// block the thread ran p ≤ 4 blocks before (those p of its routine, each
// named by its event) and repeats them, with the period in its flags; so
// the stream's blocks, each periodic run expanded from the blocks before
// it, are those of the stream without folding, also across slices and
// thread switches (after which the engine forgets the thread's last
// blocks), and across lines. Blocks inside an ordinary run (Fold) are not
// named, and no periodic run repeats them.
func TestFoldCycles(t *testing.T) {
	oneLine := func(off uint64) int {
		if off < 13 {
			return 1
		}
		return 2
	}
	blocks := func(evs []trace.Event) (ids []uint32, events, periodic int) {
		for _, ev := range evs {
			if ev.Kind != trace.KindBlock {
				continue
			}
			events++
			p := ev.Period()
			if p == 0 {
				for range ev.Folded {
					ids = append(ids, 0) // inside an ordinary run
				}
				ids = append(ids, ev.Block)
				continue
			}
			periodic++
			if p > len(ids) {
				t.Fatalf("period %d after %d blocks", p, len(ids))
			}
			period := ids[len(ids)-p:]
			if slices.Contains(period, 0) {
				t.Fatalf("a periodic run repeats blocks inside an ordinary run: %+v", ev)
			}
			for i := range int(ev.Folded) + 1 {
				ids = append(ids, period[i%p])
			}
			if ids[len(ids)-1] != ev.Block {
				t.Fatalf("periodic run %+v does not end with its last block", ev)
			}
		}
		return
	}
	opts := Options{Blocks: true, StackPointer: true, Symbols: foldSyms{oneLine},
		Encoding: trace.Encoding{Fold: func(*trace.BlockInfo) bool { return false }, FoldCycles: func(*trace.BlockInfo) bool { return true }}}
	plain, _ := foldEvents(t, nil, oneLine, 0)
	want, _, _ := blocks(plain)
	for _, budget := range []uint64{0, 50, 7} {
		got, _ := foldRun(t, opts, foldCode, budget)
		ids, events, periodic := blocks(got)
		if !slices.Equal(ids, want) {
			t.Fatalf("budget %d: blocks %v, want %v", budget, ids, want)
		}
		if budget == 0 && (events != 5 || periodic != 1) {
			// The first block, the loop's two, a periodic run of the
			// other 196, the syscall block.
			t.Errorf("%d events, %d periodic, want 5 and 1: %+v", events, periodic, got)
		}
		if periodic == 0 {
			t.Errorf("budget %d: no periodic run", budget)
		}
	}
	// A thread switch makes the engine forget the thread's last blocks:
	// no run starts before it ran a period again.
	e := newEngine(t, opts, foldCode)
	var got []trace.Event
	e.SetSink(func(b []trace.Event) { got = append(got, b...) })
	pc := uint64(codeAddr)
	for {
		e.SetTid(3)
		s := e.Run(pc, 20)
		if s.Reason == cpu.StopSyscall {
			break
		}
		var r cpu.Regs
		if err := e.ReadRegs(&r); err != nil {
			t.Fatal(err)
		}
		pc = r.RIP
		e.Emit(trace.Event{Kind: trace.KindSwitch, Tid: 3, Aux: 3})
	}
	e.Drain()
	ids, _, periodic := blocks(got)
	if !slices.Equal(ids, want) || periodic == 0 {
		t.Fatalf("with switches: %d periodic, blocks %v, want %v", periodic, ids, want)
	}
	// Fold takes every block too: on one line the loop is an ordinary
	// run; each block on a line of its own, a periodic run across lines.
	opts.Fold = func(*trace.BlockInfo) bool { return true }
	got, _ = foldRun(t, opts, foldCode, 0)
	if ids, events, periodic := blocks(got); len(ids) != len(want) || events != 2 || periodic != 0 {
		t.Errorf("one line: %d events, %d periodic, want 2 and 0: %+v", events, periodic, got)
	}
	opts.Symbols = foldSyms{func(off uint64) int { return int(off) }}
	got, _ = foldRun(t, opts, foldCode, 0)
	if ids, events, periodic := blocks(got); !slices.Equal(ids, want) || events != 5 || periodic != 1 {
		t.Errorf("a line per block: %d events, %d periodic, want 5 and 1: %+v", events, periodic, got)
	}
	n := 0
	for _, ev := range got {
		switch {
		case ev.Kind == trace.KindSwitch:
			n = 0
		case ev.Kind == trace.KindBlock:
			if n < 2 && ev.Period() != 0 {
				t.Fatalf("a periodic run right after a switch: %+v", got)
			}
			n++
		}
	}
	// A loop of three blocks whose last two are one line, an ordinary
	// run: a periodic run must not take its period across that run,
	// whose inner block no event names (blocks fails on it).
	threeCode := []byte{
		0xb9, 100, 0, 0, 0, // +0  mov ecx, 100
		0xff, 0xc9, //         +5  loop: dec ecx        (line 1)
		0x74, 0x07, //         +7  jz +16
		0x90,       //         +9  nop                 (line 2)
		0xeb, 0x00, //         +10 jmp +12: a new block, of line 2
		0x90, 0x90, //         +12 nop; nop
		0xeb, 0xf5, //         +14 jmp loop
		0x0f, 0x05, //         +16 syscall            (line 3)
	}
	opts.Symbols = foldSyms{func(off uint64) int {
		switch {
		case off < 9:
			return 1
		case off < 16:
			return 2
		}
		return 3
	}}
	for _, budget := range []uint64{0, 7} {
		got, _ = foldRun(t, opts, threeCode, budget)
		ids, _, _ := blocks(got)
		// The first block, 99 times the loop's three, the syscall's.
		if len(ids) != 1+99*3+1 {
			t.Fatalf("budget %d: %d blocks, want %d", budget, len(ids), 1+99*3+1)
		}
	}
}
