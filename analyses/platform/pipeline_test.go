package platform

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"emuprof/analyses/calls"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// recorder is an analysis that writes down what it sees, and asks for a
// delay of every thread it sees call a routine.
type recorder struct {
	env   *Env
	seen  []string
	needs trace.Needs
	done  bool
}

func (r *recorder) Events(b []trace.Event) {
	for _, ev := range b {
		s := fmt.Sprintf("%v/%d/%d/%d", ev.Kind, ev.Tid, ev.Time, ev.Flags)
		switch ev.Kind {
		case trace.KindCall:
			s += r.env.Routines().Get(uint32ToRoutine(ev.Block)).Name
			r.env.Clock().Delay(ev.Tid, 5)
		case trace.KindBlock:
			s += fmt.Sprintf("@%#x", r.env.Block(ev.Block).Addr)
		}
		r.seen = append(r.seen, s)
	}
}
func (r *recorder) Finish()                          { r.done = true }
func (r *recorder) Needs() trace.Needs               { return r.needs }
func (r *recorder) MarkPartial(string)               {}
func (r *recorder) Write(string) ([]string, error)   { return nil, nil }
func (r *recorder) Summary(io.Writer) error          { return nil }
func (r *recorder) Section() (string, string, error) { return "", "", nil }
func (r *recorder) String() string                   { return fmt.Sprint(r.seen) }

type syms struct{}

func (syms) Routine(pc uint64) (trace.Routine, bool) {
	return trace.Routine{Entry: pc &^ 0xff, Name: fmt.Sprintf("r%x", pc>>8), Object: "prog"}, true
}
func (syms) Line(uint64) (string, int, bool) { return "", 0, false }

// randomTrace is a random program: calls, returns, jumps and accesses of
// two threads.
func randomTrace(seed uint64) *tracetest.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	tr := tracetest.New(syms{})
	sp := map[uint32]uint64{1: 0x8000, 2: 0x6000}
	for range 3000 {
		tid := uint32(1 + rng.IntN(2))
		addr := uint64(0x1000 + rng.IntN(16)*0x100)
		if rng.IntN(3) == 0 {
			addr += uint64(rng.IntN(8) * 0x10) // not an entry
		}
		end := []trace.End{trace.EndCall, trace.EndRet, trace.EndJump, trace.EndOther}[rng.IntN(4)]
		switch end {
		case trace.EndCall:
			sp[tid] -= 8
		case trace.EndRet:
			sp[tid] = min(sp[tid]+8, 0x8000)
		}
		tr.Block(tid, addr, sp[tid], uint32(1+rng.IntN(5)), 5, end)
		for range rng.IntN(4) {
			tr.Mem(trace.KindRead, tid, uint64(rng.IntN(1<<12)), 4)
		}
	}
	return tr
}

// Async delivery gives every analysis exactly the stream that synchronous
// delivery gives, whatever the batch sizes, and Sync returns the delays the
// analyses asked for, in order.
func TestPipelineAsyncEqualsSync(t *testing.T) {
	for seed := range uint64(5) {
		tr := randomTrace(seed)
		var outs [2][]string
		var delays [2]int
		for mode, async := range []bool{false, true} {
			env := NewEnv(syms{}, "prog", nil)
			a := &recorder{env: env, needs: trace.Needs{Wants: trace.Wants{Calls: true}}}
			b := &recorder{env: env}
			p := NewPipeline(env, tr.Blocks, []Instance{a, b}, async)
			if n := p.Needs(); !n.Calls || !n.Blocks {
				t.Fatalf("needs %+v", n)
			}
			evs := slices.Clone(tr.Events)
			rng := rand.New(rand.NewPCG(seed, 9))
			for len(evs) > 0 {
				n := min(len(evs), 1+rng.IntN(200))
				batch := slices.Clone(evs[:n]) // the emulator's buffers alternate
				p.Events(batch)
				evs = evs[n:]
				if rng.IntN(4) == 0 {
					delays[mode] += len(p.Sync())
				}
			}
			p.Finish()
			delays[mode] += len(p.Sync())
			if !a.done || !b.done || p.Err() != nil {
				t.Fatalf("finish: %v %v %v", a.done, b.done, p.Err())
			}
			if !slices.Equal(a.seen, b.seen) {
				t.Fatalf("seed %d: two analyses saw different streams", seed)
			}
			outs[mode] = a.seen
		}
		if !slices.Equal(outs[0], outs[1]) {
			t.Fatalf("seed %d: async stream differs from sync", seed)
		}
		if delays[0] != delays[1] || delays[0] == 0 {
			t.Errorf("seed %d: delays %v", seed, delays)
		}
	}
}

// A panicking analysis does not take the run down: Err reports it.
func TestPipelineAnalysisPanic(t *testing.T) {
	tr := randomTrace(1)
	env := NewEnv(syms{}, "prog", nil)
	p := NewPipeline(env, tr.Blocks, []Instance{&panicker{}}, true)
	p.Events(tr.Events)
	p.Events(tr.Events[:1])
	p.Finish()
	if p.Err() == nil {
		t.Fatal("no error from a panicking analysis")
	}
}

type panicker struct{ recorder }

func (*panicker) Events([]trace.Event) { panic("bug") }

func uint32ToRoutine(id uint32) calls.RoutineID { return calls.RoutineID(id) }

// marksRecorder writes down the calls, returns and blocks it sees, the
// calls and returns a Block event is marked with (FlagCalls) as if they
// came as events, but returns without their routine (marks do not say).
type marksRecorder struct {
	recorder
	marked, calls int // marked blocks, Call events
}

func (r *marksRecorder) Events(b []trace.Event) {
	for _, ev := range b {
		switch ev.Kind {
		case trace.KindCall:
			r.calls++
			r.call(ev.Tid, ev.Time, calls.NodeID(ev.Aux), ev.Addr)
		case trace.KindReturn:
			r.seen = append(r.seen, fmt.Sprintf("return/%d/%d", ev.Tid, ev.Time))
		case trace.KindBlock:
			if ev.Flags&trace.FlagCalls != 0 {
				r.marked++
				returns, call := ev.CallMarks()
				for range returns {
					r.seen = append(r.seen, fmt.Sprintf("return/%d/%d", ev.Tid, ev.Time))
				}
				if call != 0 {
					r.call(ev.Tid, ev.Time, calls.NodeID(call-1), ev.Addr)
				}
			}
			r.seen = append(r.seen, fmt.Sprintf("block/%d/%d/%d@%#x", ev.Tid, ev.Time, ev.Flags&^trace.FlagCalls, ev.Addr))
		default:
			r.seen = append(r.seen, fmt.Sprintf("%v/%d/%d", ev.Kind, ev.Tid, ev.Time))
		}
	}
}

func (r *marksRecorder) call(tid uint32, at int64, ctx calls.NodeID, entry uint64) {
	n := r.env.CCT().Node(ctx)
	r.seen = append(r.seen, fmt.Sprintf("call/%d/%d/%s<%d@%#x", tid, at, r.env.Routines().Get(n.Routine).Name, n.Parent, entry))
}

// With every analysis taking call marks (Encoding.CallMarks), the stage marks
// the calls and returns before a block on it, and inserts no Call event:
// the same calls, with the same contexts, and returns as Call and Return
// events give, on random programs with threads that exit, in random
// batches. One analysis that needs Call events is enough for events.
func TestPipelineCallMarks(t *testing.T) {
	for seed := range uint64(20) {
		tr := randomTrace(seed)
		rng := rand.New(rand.NewPCG(seed, 3))
		var exits []trace.Event // thread 2 exits now and then (its stack ends in Returns)
		for i, ev := range tr.Events {
			exits = append(exits, ev)
			if ev.Tid == 2 && ev.Kind == trace.KindBlock && rng.IntN(300) == 0 && i+1 < len(tr.Events) && tr.Events[i+1].Kind == trace.KindBlock {
				exits = append(exits, trace.Event{Kind: trace.KindThreadExit, Tid: 2, Time: ev.Time + 1})
			}
		}
		var outs [2]*marksRecorder
		for mode, marks := range []bool{false, true} {
			env := NewEnv(syms{}, "prog", nil)
			a := &marksRecorder{recorder: recorder{env: env, needs: trace.Needs{Wants: trace.Wants{Calls: true}, Encoding: trace.Encoding{CallMarks: true}}}}
			list := []Instance{a, &recorder{env: env, needs: trace.Needs{Wants: trace.Wants{Syscalls: true}}}}
			if !marks {
				list = append(list, &recorder{env: env, needs: trace.Needs{Wants: trace.Wants{Calls: true}}})
			}
			p := NewPipeline(env, tr.Blocks, list, false)
			feedRandom(p, slices.Clone(exits), rng)
			p.Finish()
			if p.Err() != nil {
				t.Fatal(p.Err())
			}
			outs[mode] = a
		}
		ev, mk := outs[0], outs[1]
		if !slices.Equal(ev.seen, mk.seen) {
			i := 0
			for i < len(ev.seen) && i < len(mk.seen) && ev.seen[i] == mk.seen[i] {
				i++
			}
			t.Fatalf("seed %d: marks differ from events at %d:\n events %v\n marks  %v", seed, i,
				ev.seen[i:min(i+5, len(ev.seen))], mk.seen[i:min(i+5, len(mk.seen))])
		}
		if ev.marked != 0 || ev.calls == 0 || mk.calls != 0 || mk.marked == 0 {
			t.Fatalf("seed %d: %d marked blocks and %d Call events with events, %d and %d with marks", seed, ev.marked, ev.calls, mk.marked, mk.calls)
		}
	}
}

// streamRecorder keeps a copy of every event it sees.
type streamRecorder struct {
	recorder
	evs []trace.Event
}

func (r *streamRecorder) Events(b []trace.Event) { r.evs = append(r.evs, b...) }

// trace.ExpandCallMarks turns the marked stream into the one the stage
// gives an analysis that takes no marks, on random programs in random
// batches: the same events in the same order (Block events' Aux aside:
// the stack pointer, which marks replace).
func TestExpandCallMarks(t *testing.T) {
	for seed := range uint64(20) {
		tr := randomTrace(seed)
		var streams [2][]trace.Event
		var routine func(ctx uint32) uint32
		for mode, marks := range []bool{false, true} {
			env := NewEnv(syms{}, "prog", nil)
			a := &streamRecorder{recorder: recorder{env: env, needs: trace.Needs{Wants: trace.Wants{Calls: true}, Encoding: trace.Encoding{CallMarks: marks}}}}
			p := NewPipeline(env, tr.Blocks, []Instance{a}, false)
			feedRandom(p, slices.Clone(tr.Events), rand.New(rand.NewPCG(seed, 5)))
			p.Finish()
			streams[mode] = a.evs
			if marks {
				routine = func(ctx uint32) uint32 { return uint32(env.CCT().Node(calls.NodeID(ctx)).Routine) }
			}
		}
		plain, marked := streams[0], streams[1]
		if !slices.ContainsFunc(marked, func(e trace.Event) bool { return e.Flags&trace.FlagCalls != 0 }) {
			t.Fatalf("seed %d: no marked block", seed)
		}
		got := trace.ExpandCallMarks(marked, routine)
		for i := range plain {
			if plain[i].Kind == trace.KindBlock {
				plain[i].Aux = 0
			}
		}
		for i := range got {
			if got[i].Kind == trace.KindBlock {
				got[i].Aux = 0
			}
		}
		if !slices.Equal(got, plain) {
			i := 0
			for i < len(got) && i < len(plain) && got[i] == plain[i] {
				i++
			}
			t.Fatalf("seed %d: expanded marks differ from events at %d of %d/%d:\n got  %+v\n want %+v", seed, i, len(got), len(plain),
				got[i:min(i+3, len(got))], plain[i:min(i+3, len(plain))])
		}
	}
}

// feedRandom hands evs to p in batches of 1 to 100 events, at random.
func feedRandom(p *Pipeline, evs []trace.Event, rng *rand.Rand) {
	for len(evs) > 0 {
		n := min(len(evs), 1+rng.IntN(100))
		p.Events(evs[:n])
		evs = evs[n:]
	}
}
