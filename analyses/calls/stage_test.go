package calls

import (
	"fmt"
	"strings"
	"testing"

	"emuprof/analyses"
	"emuprof/analyses/tracetest"
)

// describe renders a stage's output: calls and returns by routine name,
// blocks by address, memory events by kind, "!" marking hidden events.
func describe(s *Stage, evs []analyses.Event) string {
	var out []string
	for _, ev := range evs {
		var d string
		switch ev.Kind {
		case analyses.KindCall:
			d = "+" + s.Routines().Get(RoutineID(ev.Block)).Name
		case analyses.KindReturn:
			d = "-" + s.Routines().Get(RoutineID(ev.Block)).Name
		case analyses.KindBlock:
			d = fmt.Sprintf("%#x", ev.Addr)
		default:
			d = ev.Kind.String()
		}
		if ev.Flags&analyses.FlagHidden != 0 {
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
	tr.Mem(analyses.KindRead, 1, 0x9000, 8)
	tr.Block(1, 0x5000, 0x7ff8, 9, 8, call) // the resolver calls _dl_fixup
	tr.Mem(analyses.KindWrite, 1, 0x7f00, 8)
	tr.Block(1, 0x6000, 0x7f00, 4, 4, ret)
	tr.Block(1, 0x5008, 0x7ff8, 2, 4, jmp) // on to puts
	tr.Block(1, 0x7000, 0x7ff8, 2, 4, ret) // puts
	tr.Mem(analyses.KindRead, 1, 0x9100, 4)
	tr.Block(1, 0x1005, 0x8000, 1, 3, call) // main calls f
	tr.Other(analyses.KindSwitch, 2, 0, 1)
	tr.Block(2, 0x8000, 0x6000, 1, 5, oth) // thread 2
	tr.Other(analyses.KindThreadExit, 2, 0, 0)
	tr.Block(1, 0x2000, 0x7ff8, 1, 5, oth)
	s := NewStage()
	var out []analyses.Event
	emit := func(evs []analyses.Event) { out = append(out, evs...) }
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
