package trms

import (
	"slices"
	"strings"
	"testing"

	"emuprof/analyses/calls"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// fakeSyms maps address ranges to routines.
type fakeSyms []struct {
	lo, hi uint64
	name   string
}

func (s fakeSyms) Routine(pc uint64) (trace.Routine, bool) {
	for _, r := range s {
		if pc >= r.lo && pc < r.hi {
			kind := trace.Ordinary
			if strings.HasSuffix(r.name, "@plt") {
				kind = trace.LinkerStub
			}
			return trace.Routine{Entry: r.lo, Name: r.name, Object: s.object(r.lo), Kind: kind}, true
		}
	}
	return trace.Routine{}, false
}

func (s fakeSyms) Line(pc uint64) (string, int, bool) { return "", 0, false }

func (s fakeSyms) object(pc uint64) string {
	if pc >= 0x7000 {
		return "libc.so.6"
	}
	return "prog"
}

var progSyms = fakeSyms{
	{0x1000, 0x1100, "main"},
	{0x2000, 0x2100, "f"},
	{0x3000, 0x3100, "g"},
	{0x4000, 0x4010, "puts@plt"},
	{0x5000, 0x5100, "_dl_runtime_resolve_xsavec"},
	{0x6000, 0x6100, "_dl_fixup"},
	{0x7000, 0x7100, "puts"},
	{0x8000, 0x8100, "worker"},
}

// stream builds an event stream with its block table (tracetest).
type stream struct{ *tracetest.Trace }

func newStream() *stream { return &stream{tracetest.New(progSyms)} }

func (s *stream) block(tid uint32, addr, sp uint64, insns uint32, n uint16, end trace.End) {
	s.Block(tid, addr, sp, insns, uint32(n), end)
}

func (s *stream) mem(kind trace.Kind, tid uint32, addr uint64, size uint32) {
	s.Mem(kind, tid, addr, size)
}

func (s *stream) other(kind trace.Kind, tid uint32, aux uint64) { s.Other(kind, tid, 0, aux) }

// staged is a profiler fed through the shared call-tracking stage, as the
// platform feeds it; marked counts the Block events it got with calls
// marked on them.
type staged struct {
	*Profiler
	stage  *calls.Stage
	blocks *trace.BlockTable
	marked int
}

func newStaged(cfg Config, s *stream) (*staged, error) { return newStagedMarks(cfg, s, false) }

// newStagedMarks is newStaged with the calls marked on Block events
// (trace.Encoding.CallMarks) or not.
func newStagedMarks(cfg Config, s *stream, marks bool) (*staged, error) {
	st := calls.NewStage()
	p, err := New(cfg, st.Routines())
	if err == nil && marks {
		p.TakeCallMarks(st.Tracker().CCT())
		st.SetCallMarks(p.Needs().CallMarks)
	}
	return &staged{Profiler: p, stage: st, blocks: s.Blocks}, err
}

// Events hands the profiler a copy of evs: the stage marks them in place.
func (f *staged) Events(evs []trace.Event) {
	f.stage.Process(slices.Clone(evs), f.blocks.View(), func(evs []trace.Event) {
		for i := range evs {
			if evs[i].Flags&trace.FlagCalls != 0 {
				f.marked++
			}
		}
		f.Profiler.Events(evs)
	})
}

func (f *staged) Finish() {
	f.stage.Finish(f.Profiler.Events)
	f.Profiler.Finish()
}

// PLDI'12 Example 1 as real events: blocks with terminators, the stack
// pointer, call tracking through calls.Tracker; plus a lazy-binding
// resolver whose accesses must not count, and a second thread.
func TestEventStream(t *testing.T) {
	const x, y, z, w, got = 0x9000, 0x9004, 0x9008, 0x900c, 0x9100
	s := newStream()
	s.other(trace.KindSwitch, 1, 0)
	s.block(1, 0x1000, 0x8000, 3, 10, trace.EndCall) // main: root frame, calls f
	s.block(1, 0x2000, 0x7ff8, 2, 10, trace.EndOther)
	s.mem(trace.KindRead, 1, x, 4)
	s.mem(trace.KindWrite, 1, y, 4)
	s.block(1, 0x200a, 0x7ff8, 4, 6, trace.EndCall) // f calls g
	s.block(1, 0x3000, 0x7fe0, 5, 12, trace.EndOther)
	s.mem(trace.KindRead, 1, x, 4)
	s.mem(trace.KindRead, 1, y, 4)
	s.mem(trace.KindRead, 1, z, 4)
	s.mem(trace.KindWrite, 1, w, 4)
	s.block(1, 0x300c, 0x7fe0, 1, 1, trace.EndRet)  // g returns
	s.block(1, 0x2010, 0x7ff8, 2, 5, trace.EndCall) // f calls puts@plt
	s.block(1, 0x4000, 0x7ff0, 1, 6, trace.EndJump) // plt jumps to the resolver
	s.block(1, 0x5000, 0x7ff0, 9, 20, trace.EndCall)
	s.mem(trace.KindRead, 1, got, 8) // resolver's accesses: ignored
	s.block(1, 0x6000, 0x7f00, 50, 30, trace.EndRet)
	s.mem(trace.KindWrite, 1, got, 8)
	s.block(1, 0x5014, 0x7ff0, 9, 20, trace.EndJump) // resolver jumps to puts
	s.block(1, 0x7000, 0x7ff0, 2, 7, trace.EndRet)   // puts
	s.mem(trace.KindRead, 1, got, 8)                 // puts reads the GOT cells: first reads
	s.block(1, 0x2015, 0x7ff8, 1, 3, trace.EndOther)
	s.mem(trace.KindRead, 1, w, 4)
	s.block(1, 0x2018, 0x7ff8, 1, 1, trace.EndRet) // f returns
	s.block(1, 0x100a, 0x8000, 1, 2, trace.EndOther)
	s.other(trace.KindThreadStart, 2, 1)
	s.other(trace.KindSwitch, 2, 1)
	s.block(2, 0x8000, 0x6000, 1, 4, trace.EndOther) // worker: root of thread 2
	s.mem(trace.KindWrite, 2, x, 4)
	s.other(trace.KindThreadExit, 2, 0)
	s.other(trace.KindSwitch, 1, 2)
	s.mem(trace.KindKernelWrite, 1, z, 4)
	s.block(1, 0x100c, 0x8000, 1, 2, trace.EndOther)
	s.mem(trace.KindRead, 1, x, 4) // induced by thread 2
	s.mem(trace.KindRead, 1, z, 4) // external

	for run := range 4 {
		// Calls and returns as events, and marked on blocks.
		metric, marks := []string{CostBlocks, CostInsns}[run/2], run%2 == 1
		p, err := newStagedMarks(Config{Cost: metric}, s, marks)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]act{}
		p.col.hook = func(tid uint32, r calls.RoutineID, a activation) {
			got[p.Routines().Get(r).Name] = act{tid, "", a.rms, a.trms, a.ext, a.thr, a.extSelf, a.thrSelf, a.cost, a.self}
		}
		p.Events(s.Events[:10])
		p.Events(s.Events[10:]) // batches may split anywhere
		p.Finish()
		check := func(name string, rms, trms, cost uint64) {
			t.Helper()
			a, ok := got[name]
			if !ok {
				t.Fatalf("%s: no activation (%v)", name, got)
			}
			if a.rms != rms || a.trms != trms || a.cost != cost {
				t.Errorf("%s: %s: %v, want RMS %d TRMS %d cost %d", metric, name, a, rms, trms, cost)
			}
		}
		insns := metric == CostInsns
		c := func(blocks, in uint64) uint64 {
			if insns {
				return in
			}
			return blocks
		}
		check("g", 3, 3, c(2, 6))
		check("puts", 2, 2, c(1, 2))
		// The PLT stub's block is linker glue: transparent, not f's cost.
		check("f", 4, 4, c(8, 18))     // x, z (via g), the two GOT cells (via puts)
		check("main", 4, 6, c(11, 23)) // f's 4; TRMS + x (thread-induced) + z (external)
		check("worker", 0, 0, c(1, 1))
		if _, ok := got["_dl_runtime_resolve_xsavec"]; ok {
			t.Error("resolver activation reported")
		}
		if m := got["main"]; m.ext != 1 || m.thr != 1 || m.tid != 1 {
			t.Errorf("main: %v", m)
		}
		if marks != (p.marked >= 4) {
			t.Errorf("marks %v: %d marked blocks", marks, p.marked)
		}
		reps, err := p.Reports()
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 4 || reps[0].Threads[0] != 1 || reps[2].Threads[0] != 2 {
			t.Fatalf("reports: %d", len(reps))
		}
		for _, rt := range reps[0].Routines {
			want := "prog"
			if rt.Name == "puts" {
				want = "libc.so.6"
			}
			if rt.Object != want {
				t.Errorf("routine %s object %q", rt.Name, rt.Object)
			}
		}
	}
}

// A counter too narrow for the pending activations is reported, and the
// profile is marked partial.
func TestCounterTooNarrow(t *testing.T) {
	tr := newTracer(t, Config{CounterBits: 8})
	for range 300 {
		tr.call(1, "r")
	}
	tr.read(1, "x")
	if tr.p.Err() == nil {
		t.Fatal("no error")
	}
	reps, err := tr.p.Reports()
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Partial == "" {
		t.Error("report not marked partial")
	}
}
