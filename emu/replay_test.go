package emu

import (
	"fmt"
	"slices"
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
)

// callLoop calls a function 1000 times: three blocks an iteration (the
// call, the function, the loop's test), each an event.
var callLoop = []byte{
	0xb9, 0xe8, 0x03, 0, 0, // mov ecx, 1000
	0xe8, 0x06, 0, 0, 0, // loop: call f
	0xff, 0xc9, // dec ecx
	0x75, 0xf7, // jnz loop
	0x0f, 0x05, // syscall
	0x01, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00, // f: add [0x20000], ecx
	0xc3, // ret
}

// pushLoop is callLoop with a push in the loop: its blocks repeat, and
// the stack pointer of their events does not.
var pushLoop = []byte{
	0xb9, 0xe8, 0x03, 0, 0, // mov ecx, 1000
	0x50,                // loop: push rax
	0xe8, 0x06, 0, 0, 0, // call f
	0xff, 0xc9, // dec ecx
	0x75, 0xf6, // jnz loop
	0x0f, 0x05, // syscall
	0x01, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00, // f: add [0x20000], ecx
	0xc3, // ret
}

// spLoop is callLoop whose stack pointer drops by 8 once, at the 500th
// iteration, with the same blocks (sete, not a branch): the replay must
// stop at the first event whose stack pointer is not its template's.
var spLoop = []byte{
	0xb9, 0xe8, 0x03, 0, 0, // mov ecx, 1000
	0xe8, 0x19, 0, 0, 0, // loop: call f
	0xff, 0xc9, // dec ecx
	0x31, 0xd2, // xor edx, edx
	0x81, 0xf9, 0xf4, 0x01, 0, 0, // cmp ecx, 500
	0x0f, 0x94, 0xc2, // sete dl
	0xc1, 0xe2, 0x03, // shl edx, 3
	0x48, 0x29, 0xd4, // sub rsp, rdx
	0x85, 0xc9, // test ecx, ecx
	0x75, 0xe4, // jnz loop
	0x0f, 0x05, // syscall
	0x01, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00, // f: add [0x20000], ecx
	0xc3, // ret
}

// runCallLoop is callLoop whose function is two blocks of one line, the
// second entered by a jump: each period holds a run of blocks (fold_fast
// in fold.h takes its second block), with runCallSyms and Options.Fold.
var runCallLoop = append(slices.Clone(callLoop[:len(callLoop)-1]), // callLoop but its ret
	0xeb, 0x00, // jmp +0: a new block, of the same line
	0x90, // nop
	0xc3, // ret
)

// runCallSyms names runCallLoop's code: its first 16 bytes are routine
// main, line 1; the rest routine f, line 2.
type runCallSyms struct{}

func (runCallSyms) Routine(pc uint64) (trace.Routine, bool) {
	if pc-codeAddr < 16 {
		return trace.Routine{Entry: codeAddr, Name: "main", Object: "/loop"}, true
	}
	return trace.Routine{Entry: codeAddr + 16, Name: "f", Object: "/loop"}, true
}

func (runCallSyms) Line(pc uint64) (string, int, bool) {
	if pc-codeAddr < 16 {
		return "loop.c", 1, true
	}
	return "loop.c", 2, true
}

// replayStream runs code in slices of budget instructions (0: at once)
// with Block events and returns them, and how many blocks the hook
// replayed.
func replayStream(t *testing.T, code []byte, opts Options, budget uint64) ([]trace.Event, uint64) {
	t.Helper()
	opts.Blocks, opts.StackPointer = true, true
	e := newEngine(t, opts, code)
	// The top of the data pages: pushLoop pushes 8,000 bytes.
	if err := e.WriteRegs(&cpu.Regs{RIP: codeAddr, RSP: 0x22000}); err != nil {
		t.Fatal(err)
	}
	var got []trace.Event
	e.SetSink(func(b []trace.Event) { got = append(got, b...) })
	pc := uint64(codeAddr)
	for i := 0; ; i++ {
		s := e.Run(pc, budget)
		// What Go emits between slices comes after the slice's events.
		e.Emit(trace.Event{Kind: trace.KindSyscall, Tid: 0, Addr: uint64(i)})
		if s.Reason == cpu.StopSyscall {
			break
		}
		if s.Reason != cpu.StopQuantum || i > 100000 {
			t.Fatalf("slice %d: stop %+v", i, s)
		}
		pc = e.PC()
	}
	e.Drain()
	if got := loopSum(t, e); got != 500500 {
		t.Fatalf("sum %d, want 500500", got)
	}
	return got, e.replayedBlocks()
}

// Replaying a loop's periods gives the events of the ordinary hook, byte
// for byte and in order, whatever stops the engine in a period, however
// often the buffer is handed on while the periods' events are written,
// and when the stack pointer stops repeating.
func TestReplayMakesTheSameEvents(t *testing.T) {
	for _, c := range []struct {
		name   string
		code   []byte
		buffer int
		budget uint64
		replay bool // the hook must replay most blocks
		runs   bool // with runCallSyms and Options.Fold
	}{
		{"calls", callLoop, 0, 0, true, false},
		{"calls, small buffer", callLoop, 16, 0, true, false},
		{"calls, slices of 7", callLoop, 0, 7, false, false},
		{"calls, slices of 100", callLoop, 64, 100, true, false},
		{"calls, slices of 1001", callLoop, 0, 1001, true, false},
		{"push", pushLoop, 0, 0, false, false},
		{"stack pointer", spLoop, 0, 0, true, false},
		{"calls with runs", runCallLoop, 0, 0, true, true},
		{"calls with runs, slices of 7", runCallLoop, 0, 7, false, true},
		{"calls with runs, slices of 101", runCallLoop, 64, 101, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{BufferEvents: c.buffer}
			if c.runs {
				opts.Symbols, opts.Fold = runCallSyms{}, func(*trace.BlockInfo) bool { return true }
			}
			want, n := replayStream(t, c.code, opts, c.budget)
			if n != 0 {
				t.Fatalf("replayed %d blocks without Options.Replay", n)
			}
			if c.runs && !slices.ContainsFunc(want, func(e trace.Event) bool { return e.Folded > 0 }) {
				t.Fatal("no run of blocks in the stream")
			}
			opts.Replay = true
			got, n := replayStream(t, c.code, opts, c.budget)
			sameEvents(t, got, want)
			if c.replay && n < 2000 {
				t.Fatalf("replayed %d of about 3000 blocks", n)
			}
			// With Repeat events: the same stream once they are
			// written out, in fewer events.
			opts.RepeatEvents = true
			rep, _ := replayStream(t, c.code, opts, c.budget)
			sameEvents(t, trace.ExpandRepeats(rep), want)
			repeats := 0
			for _, e := range rep {
				if e.Kind == trace.KindRepeat {
					repeats++
				}
			}
			if c.replay && (repeats == 0 || len(rep) > len(want)/2) {
				t.Fatalf("%d events with %d Repeat events, %d without", len(rep), repeats, len(want))
			}
			t.Log(fmt.Sprintf("%d events, %d blocks replayed", len(got), n))
		})
	}
}

// sameEvents fails t unless got and want are the same events.
func sameEvents(t *testing.T, got, want []trace.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events with replay, %d without", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %+v with replay, %+v without", i, got[i], want[i])
		}
	}
}
