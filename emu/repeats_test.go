package emu

import (
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// repeatsRun runs foldCode as two threads, 3 and 4, in alternate slices of
// 7 instructions, each with its own registers; thread 4 exits after its
// third slice and a new thread 4 starts the code afresh. It returns the
// stream.
func repeatsRun(t *testing.T, opts Options) []trace.Event {
	t.Helper()
	e := newEngine(t, opts, foldCode)
	var got []trace.Event
	e.SetSink(func(b []trace.Event) { got = append(got, b...) })
	start := cpu.Regs{RIP: codeAddr, RSP: 0x21000}
	regs := map[uint32]cpu.Regs{3: start, 4: start}
	done := map[uint32]bool{}
	for slice := 0; !done[3] || !done[4]; slice++ {
		tid := uint32(3 + slice%2)
		if done[tid] {
			continue
		}
		e.SetTid(tid)
		r := regs[tid]
		if err := e.WriteRegs(&r); err != nil {
			t.Fatal(err)
		}
		s := e.Run(r.RIP, 7)
		if err := e.ReadRegs(&r); err != nil {
			t.Fatal(err)
		}
		regs[tid] = r
		switch {
		case s.Reason == cpu.StopSyscall:
			done[tid] = true
		case s.Reason != cpu.StopQuantum:
			t.Fatalf("stop %+v", s)
		}
		if tid == 4 && slice == 5 {
			e.Emit(trace.Event{Kind: trace.KindThreadExit, Tid: 4})
			regs[4] = start
		}
		e.Emit(trace.Event{Kind: trace.KindSwitch, Tid: tid})
	}
	e.Drain()
	return got
}

// Encoding.Repeats: the engine flags a block that is one of the last four
// its thread ran of those Repeats accepts, as the model
// (tracetest.MarkRepeats) does, with a ring per thread kept across
// switches and forgotten at exit; an ordinary run holds no block that
// repeats.
func TestRepeats(t *testing.T) {
	all := func(*trace.BlockInfo) bool { return true }
	oneLine := foldSyms{func(uint64) int { return 1 }}
	opts := Options{Blocks: true, StackPointer: true, Symbols: oneLine, Encoding: trace.Encoding{Repeats: all}}
	plain := repeatsRun(t, opts)
	flagged := 0
	for _, ev := range plain {
		if ev.Repeat() {
			flagged++
		}
	}
	// The model, from the stream with its flags cleared.
	bare := append([]trace.Event(nil), plain...)
	for i := range bare {
		bare[i].Flags &^= trace.FlagRepeat
	}
	table := trace.NewBlockTable()
	ids := map[uint32]bool{}
	for _, ev := range plain {
		if ev.Kind == trace.KindBlock && !ids[ev.Block] {
			ids[ev.Block] = true
		}
	}
	for range len(ids) {
		table.Add(trace.BlockInfo{Routine: trace.Routine{Name: "f"}})
	}
	want := tracetest.MarkRepeats(bare, table.View(), all)
	for i := range plain {
		if plain[i].Flags != want[i].Flags {
			t.Fatalf("event %d %+v: flags %#x, the model says %#x", i, plain[i], plain[i].Flags, want[i].Flags)
		}
	}
	if flagged < 100 {
		t.Fatalf("only %d blocks repeat: the loop's should", flagged)
	}

	// Refused blocks clear the ring: nothing repeats.
	opts.Repeats = func(*trace.BlockInfo) bool { return false }
	for i, ev := range repeatsRun(t, opts) {
		if ev.Repeat() {
			t.Fatalf("event %d repeats with Repeats refusing every block: %+v", i, ev)
		}
	}

	// With Fold: a block that repeats neither extends a run nor starts
	// one, so each is an event of its own, and the others make runs.
	opts.Repeats, opts.Fold = all, all
	folded := repeatsRun(t, opts)
	count := func(evs []trace.Event) (blocks, repeats, runs int, insns map[uint32]uint32) {
		insns = map[uint32]uint32{}
		for _, ev := range evs {
			if ev.Kind != trace.KindBlock {
				continue
			}
			blocks += int(ev.Folded) + 1
			insns[ev.Tid] += ev.Size
			if ev.Folded > 0 {
				runs++
			}
			if ev.Repeat() && ev.Folded == 0 {
				repeats++
			}
		}
		return
	}
	pb, pr, _, pi := count(plain)
	fb, fr, runs, fi := count(folded)
	if pb != fb || pr != fr || pi[3] != fi[3] || pi[4] != fi[4] || runs == 0 {
		t.Errorf("folded: %d blocks, %d repeating alone, %d runs, instructions %v; block by block: %d blocks, %d repeating, instructions %v",
			fb, fr, runs, fi, pb, pr, pi)
	}
}
