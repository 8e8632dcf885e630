package parallel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"emuprof/analyses/platform"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// fakeSyms places each named function in its own 4 KiB of object "prog"
// (or of the object given with "obj:name"), with one source line per 16
// bytes of t.c.
type fakeSyms struct {
	names []string
	objs  []string
	index map[string]int
}

func newSyms() *fakeSyms { return &fakeSyms{index: map[string]int{}} }

const symBase = 0x100000

func (s *fakeSyms) base(name string) uint64 {
	i, ok := s.index[name]
	if !ok {
		i = len(s.names)
		s.index[name] = i
		s.names = append(s.names, name)
		s.objs = append(s.objs, "/bin/prog")
	}
	return symBase + uint64(i)*0x1000
}

func (s *fakeSyms) Routine(pc uint64) (trace.Routine, bool) {
	i := int((pc - symBase) / 0x1000)
	if pc < symBase || i >= len(s.names) {
		return trace.Routine{}, false
	}
	return trace.Routine{Entry: symBase + uint64(i)*0x1000, Name: s.names[i], Object: s.objs[i]}, true
}

func (s *fakeSyms) Line(pc uint64) (string, int, bool) {
	if _, ok := s.Routine(pc); !ok {
		return "", 0, false
	}
	return "t.c", int(pc&0xfff)/16 + 1, true
}

// script writes a multithreaded event stream the way the scheduler and the
// emulator would: blocks with their virtual times, calls and returns made
// of call/entry/ret blocks of no cost, scheduler events.
type script struct {
	syms   *fakeSyms
	tr     *tracetest.Trace
	stacks map[uint32][]scriptFrame
	sites  map[uint32]int
}

type scriptFrame struct {
	fn  string
	ret uint64 // address the frame returns to
	sp  uint64
}

func newScript() *script {
	s := &script{syms: newSyms(), stacks: map[uint32][]scriptFrame{}, sites: map[uint32]int{}}
	s.tr = tracetest.New(s.syms)
	return s
}

func (s *script) top(tid uint32) scriptFrame {
	st := s.stacks[tid]
	return st[len(st)-1]
}

// start creates thread tid (parent 0 for the first) at time at, running
// root.
func (s *script) start(tid, parent uint32, at int64, root string) *script {
	s.spawn(tid, parent, at, root)
	return s.enter(tid)
}

// spawn creates thread tid, which has not run yet.
func (s *script) spawn(tid, parent uint32, at int64, root string) {
	s.tr.SetClock(tid, at)
	s.tr.Events = append(s.tr.Events, trace.Event{Kind: trace.KindThreadStart, Tid: tid, Time: at, Aux: uint64(parent)})
	s.stacks[tid] = []scriptFrame{{fn: root, sp: 0x7f0000 + uint64(tid)*0x10000}}
}

// enter runs the first block of a spawned thread (its root routine's
// entry), at its clock.
func (s *script) enter(tid uint32) *script {
	f := s.top(tid)
	s.tr.Block(tid, s.syms.base(f.fn), f.sp, 0, 1, trace.EndOther)
	return s
}

// work runs n instructions in the current routine (a block of its own
// per n, whose instruction count the block table knows).
func (s *script) work(tid uint32, n uint32) *script {
	return s.workNs(tid, n, int64(n))
}

// workNs is work taking ns ns (under a time model, a Block event's Size is
// its cost).
func (s *script) workNs(tid uint32, n uint32, ns int64) *script {
	f := s.top(tid)
	s.tr.Block(tid, s.syms.base(f.fn)+0x100, f.sp, n, 4+n, trace.EndOther)
	e := &s.tr.Events[len(s.tr.Events)-1]
	e.Size = uint32(ns)
	s.tr.SetClock(tid, e.Time+ns)
	return s
}

// call enters fn from the current routine.
func (s *script) call(tid uint32, fn string) *script {
	f := s.top(tid)
	site := s.syms.base(f.fn) + 0x200 + uint64(s.sites[tid]%128)*0x10
	s.sites[tid]++
	s.tr.Block(tid, site, f.sp, 0, 2, trace.EndCall)
	sp := f.sp - 0x100
	s.stacks[tid] = append(s.stacks[tid], scriptFrame{fn: fn, ret: site + 2, sp: sp})
	s.tr.Block(tid, s.syms.base(fn), sp, 0, 1, trace.EndOther)
	return s
}

// ret returns from the current routine.
func (s *script) ret(tid uint32) *script {
	f := s.top(tid)
	s.tr.Block(tid, s.syms.base(f.fn)+0x300, f.sp, 0, 1, trace.EndRet)
	s.stacks[tid] = s.stacks[tid][:len(s.stacks[tid])-1]
	c := s.top(tid)
	s.tr.Block(tid, f.ret, c.sp, 0, 1, trace.EndOther)
	return s
}

// in runs n instructions in fn (call, work, return).
func (s *script) in(tid uint32, fn string, n uint32) *script {
	return s.call(tid, fn).work(tid, n).ret(tid)
}

func (s *script) clock(tid uint32) int64 {
	// tracetest keeps the clock; the last event of tid has it.
	for i := len(s.tr.Events) - 1; i >= 0; i-- {
		if e := s.tr.Events[i]; e.Tid == tid {
			if e.Kind == trace.KindBlock {
				return e.Time + int64(e.Size)
			}
			return e.Time
		}
	}
	return 0
}

// blockOn blocks tid on (kind, addr) at its clock.
func (s *script) blockOn(tid uint32, kind trace.WaitKind, addr uint64) *script {
	s.tr.Events = append(s.tr.Events, trace.Event{Kind: trace.KindBlockOn, Tid: tid, Time: s.clock(tid), Addr: addr, Size: uint32(kind)})
	return s
}

// wake wakes tid (blocked on (kind, addr)) at time at, by waker (0: timeout).
func (s *script) wake(tid, waker uint32, at int64, kind trace.WaitKind, addr uint64) *script {
	s.tr.SetClock(tid, at)
	s.tr.Events = append(s.tr.Events, trace.Event{Kind: trace.KindWake, Tid: tid, Time: at, Addr: addr, Aux: uint64(waker), Size: uint32(kind)})
	return s
}

func (s *script) exit(tid uint32) *script {
	s.tr.Events = append(s.tr.Events, trace.Event{Kind: trace.KindThreadExit, Tid: tid, Time: s.clock(tid)})
	return s
}

// pipeline returns a fresh analysis and a pipeline that feeds it (with
// the calls and returns marked on Block events: Encoding.CallMarks).
func (s *script) pipeline(t *testing.T, cfg Config) (*Analysis, *platform.Pipeline) {
	return s.pipelineWith(t, cfg, false)
}

// pipelineWith is pipeline; with callEvents, the analysis gets Call and
// Return events instead, as beside an analysis that needs them (emuprof
// profile).
func (s *script) pipelineWith(t *testing.T, cfg Config, callEvents bool) (*Analysis, *platform.Pipeline) {
	t.Helper()
	env := platform.NewEnv(s.syms, "/bin/prog", []string{"prog"})
	a, err := New(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	list := []platform.Instance{a}
	if callEvents {
		list = append(list, eventsNeeder{})
	}
	return a, platform.NewPipeline(env, s.tr.Blocks, list, false)
}

// eventsNeeder is an analysis that needs Call and Return events (no call
// marks) and does nothing.
type eventsNeeder struct{}

func (eventsNeeder) Events([]trace.Event)             {}
func (eventsNeeder) Finish()                          {}
func (eventsNeeder) Needs() trace.Needs               { return trace.Needs{Wants: trace.Wants{Calls: true}} }
func (eventsNeeder) MarkPartial(string)               {}
func (eventsNeeder) Write(string) ([]string, error)   { return nil, nil }
func (eventsNeeder) Summary(io.Writer) error          { return nil }
func (eventsNeeder) Section() (string, string, error) { return "", "", nil }

// events returns the stream as the engine gives it, block by block: with
// the flags of Encoding.Repeats.
func (s *script) events() []trace.Event {
	return tracetest.MarkRepeats(s.tr.Events, s.tr.Blocks.View(), spinWatched)
}

// run feeds the stream to a fresh analysis, in batches of batch events (0:
// all at once), and returns its result.
func (s *script) run(t *testing.T, cfg Config, batch int) *Result {
	return s.runWith(t, cfg, batch, false)
}

// runWith is run, with Call and Return events if callEvents
// (pipelineWith).
func (s *script) runWith(t *testing.T, cfg Config, batch int, callEvents bool) *Result {
	t.Helper()
	a, p := s.pipelineWith(t, cfg, callEvents)
	evs := s.events()
	if batch <= 0 {
		batch = len(evs)
	}
	for i := 0; i < len(evs); i += batch {
		p.Events(evs[i:min(i+batch, len(evs))])
	}
	p.Finish()
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	return a.Result()
}

// runAll runs the stream in four ways (one batch, event by event, sweep
// at the end, with Call and Return events), checks that they agree, that nothing arrived late, and the
// invariants that hold for every stream; it returns the result.
func (s *script) runAll(t *testing.T, cfg Config) *Result {
	t.Helper()
	r := s.run(t, cfg, 0)
	one := s.run(t, cfg, 1)
	events := s.runWith(t, cfg, 0, true)
	cfg.SweepAtEnd = true
	end := s.run(t, cfg, 0)
	js := func(r *Result) string {
		b, _ := json.Marshal(r)
		return string(b)
	}
	for _, o := range []struct {
		name string
		r    *Result
	}{{"event by event", one}, {"sweeping at the end", end}, {"with call events", events}} {
		a, b := js(r), js(o.r)
		if a == b {
			continue
		}
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		from := max(0, i-300)
		t.Errorf("results differ %s:\n one batch %s\n %s %s", o.name, a[from:min(len(a), i+100)], o.name, b[from:min(len(b), i+100)])
	}
	if one.Late != 0 {
		t.Errorf("%d ns arrived behind the sweep", one.Late)
	}
	checkInvariants(t, r)
	return r
}

// checkInvariants checks the spec's invariants 1, 3, 4 and 5.
func checkInvariants(t *testing.T, r *Result) {
	t.Helper()
	if r.IdleBase == "cores" {
		if got, want := r.Total.Work+r.Total.Idleness+r.Unattr, int64(r.Cores)*r.Makespan; got != want {
			t.Errorf("work %d + idleness %d + unattributed %d = %d, want cores × makespan = %d × %d = %d",
				r.Total.Work, r.Total.Idleness, r.Unattr, got, r.Cores, r.Makespan, want)
		}
	}
	var blame, futexWait int64
	for _, l := range r.Locks {
		blame += l.BlameNs
		futexWait += l.WaitNs
	}
	if blame+r.Unrel != futexWait {
		t.Errorf("blame %d + unreleased %d != futex waiting %d", blame, r.Unrel, futexWait)
	}
	if r.Total.Blame != blame {
		t.Errorf("blame in contexts %d != blame of the locks %d", r.Total.Blame, blame)
	}
	for _, c := range r.Contexts {
		if c.Self.Overhead < 0 || c.Self.Overhead > c.Self.Work {
			t.Errorf("context %d: overhead %d outside [0, work %d]", c.ID, c.Self.Overhead, c.Self.Work)
		}
		sum := c.Self
		for _, d := range r.Contexts {
			if d.Parent == c.ID && d.ID != c.ID {
				sum.add(d.Total)
			}
		}
		if sum != c.Total {
			t.Errorf("context %d: inclusive %+v != exclusive + children %+v", c.ID, c.Total, sum)
		}
	}
}

// byRoutine sums the exclusive metrics of the contexts whose routine is fn.
func byRoutine(r *Result, fn string) Metrics {
	var m Metrics
	for _, c := range r.Contexts {
		if c.Routine == fn {
			m.add(c.Self)
		}
	}
	return m
}

// byPath returns the exclusive metrics of the context with the given path.
func byPath(t *testing.T, r *Result, path string) Metrics {
	t.Helper()
	for _, c := range r.Contexts {
		if r.Path(c.ID) == path {
			return c.Self
		}
	}
	var paths bytes.Buffer
	for _, c := range r.Contexts {
		fmt.Fprintf(&paths, " %s", r.Path(c.ID))
	}
	t.Fatalf("no context %s; have%s", path, paths.String())
	return Metrics{}
}
