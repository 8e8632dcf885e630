package calls

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// describe renders a stage's output: calls and returns by routine name,
// blocks by address, memory events by kind, "!" marking hidden events.
func describe(s *Stage, evs []trace.Event) string {
	var out []string
	for _, ev := range evs {
		var d string
		switch ev.Kind {
		case trace.KindCall:
			d = "+" + s.Routines().Get(RoutineID(ev.Block)).Name
		case trace.KindReturn:
			d = "-" + s.Routines().Get(RoutineID(ev.Block)).Name
		case trace.KindBlock:
			d = fmt.Sprintf("%#x", ev.Addr)
		default:
			d = ev.Kind.String()
		}
		if ev.Flags&trace.FlagHidden != 0 {
			d += "!"
		}
		out = append(out, fmt.Sprintf("%d:%s@%d", ev.Tid, d, ev.Time))
	}
	return strings.Join(out, " ")
}

// The stage inserts Calls before the callee's first block and Returns
// before the block returned to, hides the PLT stub and the resolver with
// their memory accesses, keeps times, and ends the pending activations at a
// thread's exit and at Finish (at the time of the last event seen).
func TestStageStream(t *testing.T) {
	tr := tracetest.New(syms)
	tr.Block(1, 0x1000, 0x8000, 3, 5, call) // main calls puts@plt
	tr.Block(1, 0x4000, 0x7ff8, 1, 6, jmp)  // the stub: jmp *GOT
	tr.Mem(trace.KindRead, 1, 0x9000, 8)
	tr.Block(1, 0x5000, 0x7ff8, 9, 8, call) // the resolver calls _dl_fixup
	tr.Mem(trace.KindWrite, 1, 0x7f00, 8)
	tr.Block(1, 0x6000, 0x7f00, 4, 4, ret)
	tr.Block(1, 0x5008, 0x7ff8, 2, 4, jmp) // on to puts
	tr.Block(1, 0x7000, 0x7ff8, 2, 4, ret) // puts
	tr.Mem(trace.KindRead, 1, 0x9100, 4)
	tr.Block(1, 0x1005, 0x8000, 1, 3, call) // main calls f
	tr.Other(trace.KindSwitch, 2, 0, 1)
	tr.Block(2, 0x8000, 0x6000, 1, 5, oth) // thread 2
	tr.Other(trace.KindThreadExit, 2, 0, 0)
	tr.Block(1, 0x2000, 0x7ff8, 1, 5, oth)
	s := NewStage()
	var out []trace.Event
	emit := func(evs []trace.Event) { out = append(out, evs...) }
	// Batches may split anywhere.
	s.Process(tr.Events[:5], tr.Blocks.View(), emit)
	s.Process(tr.Events[5:], tr.Blocks.View(), emit)
	got := describe(s, out)
	out = nil
	s.Finish(emit)
	got += " | " + describe(s, out)
	want := "1:+main@0 1:0x1000@0 1:0x4000!@3 1:read!@4 1:0x5000!@4 1:write!@13 1:0x6000!@13 1:0x5008!@17 " +
		"1:+puts@19 1:0x7000@19 1:read@21 1:-puts@21 1:0x1005@21 " +
		"2:switch@0 2:+thread_fn@0 2:0x8000@0 2:-thread_fn@1 2:thread-exit@1 1:+f@22 1:0x2000@22 | 1:-f@22 1:-main@22"
	if got != want {
		t.Errorf("stage output\n got %s\nwant %s", got, want)
	}
}

// A Repeat event goes through the stage when the stage's state repeats
// over its period (the copies would come out as the period does), and is
// written out otherwise: either way the stream, written out, is the one
// the stage makes of the written-out input.
func TestStageRepeats(t *testing.T) {
	loop := func(tr *tracetest.Trace) { // main's loop calls f
		tr.Block(1, 0x1010, 0x8000, 3, 5, call)
		tr.Block(1, 0x2000, 0x7ff8, 4, 5, ret)
		tr.Block(1, 0x1015, 0x8000, 2, 5, trace.EndCond)
	}
	deeper := func(tr *tracetest.Trace) { // f calls f at the same stack pointer: the stack grows
		tr.Block(1, 0x2000, 0x7ff8, 4, 5, call)
	}
	for _, c := range []struct {
		name   string
		iter   func(*tracetest.Trace)
		marks  bool
		passes bool // the Repeat event goes through
	}{
		{"loop, marks", loop, true, true},
		{"loop, call events", loop, false, false},
		{"deeper, marks", deeper, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := tracetest.New(syms)
			tr.Block(1, 0x1000, 0x8000, 2, 5, oth)
			c.iter(tr)
			from := len(tr.Events)
			c.iter(tr)
			tr.Repeat(1, from, 5)
			c.iter(tr)
			tr.Block(1, 0x1020, 0x8000, 1, 5, oth)
			tr.Other(trace.KindThreadExit, 1, 0, 0)
			run := func(in []trace.Event, split int) []trace.Event {
				s := NewStage()
				s.SetCallMarks(c.marks)
				var out []trace.Event
				emit := func(evs []trace.Event) { out = append(out, evs...) }
				batch := append([]trace.Event(nil), in...)
				s.Process(batch[:split], tr.Blocks.View(), emit)
				s.Process(batch[split:], tr.Blocks.View(), emit)
				s.Finish(emit)
				return out
			}
			want := run(trace.ExpandRepeats(tr.Events), 2)
			for _, split := range []int{0, 2, from - 1, from} {
				got := run(tr.Events, split)
				passed := 0
				for _, e := range got {
					if e.Kind == trace.KindRepeat {
						passed++
					}
				}
				if passed != map[bool]int{true: 1}[c.passes] {
					t.Errorf("split %d: %d Repeat events out", split, passed)
				}
				if g := trace.ExpandRepeats(got); !slices.Equal(g, want) {
					t.Errorf("split %d: written out\n got %v\nwant %v", split, g, want)
				}
			}
		})
	}
}
