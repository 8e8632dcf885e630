package parallel

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"emuprof/trace"
)

// foldStream folds a block-by-block stream as the engine does for needs
// (emu/fold.h, trace.Encoding.Fold and FoldCycles): consecutive blocks of
// a thread, of one routine and line, entered by falling through or a
// branch, not a routine's entry, with no other event between, become one
// event (an ordinary run), of blocks Repeats accepts none of which repeats
// (FlagRepeat, set before) or of blocks it refuses; blocks that FoldCycles takes also come in
// periodic runs, which start at a block the thread ran p ≤ 4 blocks
// before, those p blocks of its routine and named by their events, and go
// on with the block p back.
func foldStream(evs []trace.Event, blocks trace.BlockView, needs trace.Needs) []trace.Event {
	type runKey struct {
		entry uint64
		file  string
		line  int
		cycle bool
		track bool
	}
	keys := map[runKey]uint32{}
	id := func(k runKey) uint32 {
		v, ok := keys[k]
		if !ok {
			v = uint32(len(keys) + 1)
			keys[k] = v
		}
		return v
	}
	keyOf := func(b *trace.BlockInfo) (fold, cycle uint32) {
		if b.Routine.Name == "" {
			return 0, 0
		}
		if needs.FoldCycles != nil && needs.FoldCycles(b) {
			cycle = id(runKey{entry: b.Routine.Entry, cycle: true})
		}
		if needs.Fold(b) {
			fold = id(runKey{entry: b.Routine.Entry, file: b.File, line: b.Line, track: needs.Repeats != nil && needs.Repeats(b)})
		}
		return fold, cycle
	}
	var (
		out           []trace.Event
		open          = -1 // the event a block may extend
		openKey       uint32
		period        int
		lastEnd       trace.End
		hist, histKey [4]uint32 // the thread's last blocks, most recent first
		histN         int
		histTid       = ^uint32(0)
	)
	pushHist := func(id, k uint32) {
		copy(hist[1:], hist[:3])
		copy(histKey[1:], histKey[:3])
		hist[0], histKey[0] = id, k
		histN = min(histN+1, 4)
	}
	for _, ev := range evs {
		if ev.Kind != trace.KindBlock {
			out = append(out, ev)
			open = -1
			continue
		}
		if ev.Tid != histTid {
			histN, histTid = 0, ev.Tid
		}
		b := blocks.Get(ev.Block)
		fold, cycle := keyOf(b)
		head := b.Routine.Entry == b.Addr
		if !head && open == len(out)-1 && out[open].Tid == ev.Tid && out[open].Folded < 255 &&
			(lastEnd == trace.EndOther || lastEnd == trace.EndCond || lastEnd == trace.EndJump) &&
			(period > 0 && cycle != 0 && openKey == cycle && period <= histN && hist[period-1] == ev.Block ||
				period == 0 && fold != 0 && openKey == fold && !ev.Repeat()) {
			e := &out[open]
			e.Folded++
			e.Size += ev.Size
			e.Block = ev.Block
			e.End = ev.End
			lastEnd = ev.End
			if period == 0 {
				hist[0] = 0
			}
			pushHist(ev.Block, cycle)
			continue
		}
		period = 0
		if cycle != 0 {
			for i := range histN {
				if histKey[i] != cycle || hist[i] == 0 {
					break
				}
				if hist[i] == ev.Block {
					period = i + 1
					break
				}
			}
		}
		ev.Flags = trace.Flags(period<<1) | ev.Flags&trace.FlagRepeat
		out = append(out, ev)
		open, openKey, lastEnd = -1, fold, ev.End
		switch {
		case period > 0:
			openKey = cycle
		case ev.Repeat():
			openKey = 0 // a block that repeats starts no ordinary run
		}
		if openKey != 0 {
			open = len(out) - 1
		}
		pushHist(ev.Block, cycle)
	}
	return out
}

// runFolded runs s's stream folded as the engine would for the analysis,
// and returns the result and how many block events and periodic runs it
// took.
func (s *script) runFolded(t *testing.T, cfg Config) (r *Result, events, periodic int) {
	t.Helper()
	a, p := s.pipeline(t, cfg)
	evs := foldStream(s.events(), s.tr.Blocks.View(), a.Needs())
	for _, ev := range evs {
		if ev.Kind == trace.KindBlock {
			events++
		}
	}
	p.Events(evs)
	p.Finish()
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if a.periodicMissed != 0 {
		t.Errorf("%d periodic runs did not match the ring", a.periodicMissed)
	}
	return a.Result(), events, a.periodic
}

// Runs and periodic runs (Encoding.Fold, FoldCycles) give exactly the result
// of their blocks one by one: cycles of periods 1 to 5 (5 is no periodic
// run) in runtime code (spin detection), in a spin loop known by name and
// in user code, entered with the cycle count anywhere, broken off, of one
// line or two, interleaved with another spinning thread and with other
// code; blocks of 1 to 3 instructions; idle base cores and threads, spin
// idle and overhead.
func TestPeriodicRuns(t *testing.T) {
	const seeds = 60
	folded, plain, periodic := 0, 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 13))
		s := newScript().start(1, 0, 0, "main").start(2, 1, 0, "w1").start(3, 1, 0, "w2")
		s.call(2, "gomp_team_barrier_wait_end")
		s.call(3, "pthread_mutex_lock")
		for range 40 {
			tid := uint32(2 + rng.IntN(2))
			called := rng.IntN(3)
			if called > 0 {
				s.call(tid, []string{"", "body", "do_spin"}[called])
			}
			f := s.top(tid)
			base := s.syms.base(f.fn)
			// A pattern of 1 to 5 distinct blocks (offsets 0x40–0x50: lines
			// 5 and 6), repeated, perhaps cut short.
			p := 1 + rng.IntN(5)
			offs := rng.Perm(5)[:p]
			reps := rng.IntN(90)
			n := p*reps + rng.IntN(p+1)
			for i := range n {
				off := uint64(0x40 + 4*offs[i%p])
				insns := uint32(1 + off%3)
				s.tr.Block(tid, base+off, f.sp, insns, 4, []trace.End{trace.EndCond, trace.EndJump, trace.EndOther}[offs[i%p]%3])
			}
			if called > 0 {
				s.ret(tid)
			}
			switch rng.IntN(4) {
			case 0:
				s.work(1, uint32(1+rng.IntN(50)))
			case 1:
				s.in(tid, "helper", uint32(1+rng.IntN(5)))
			}
		}
		s.ret(2).ret(3).exit(2).exit(3).work(1, 10).exit(1)
		for _, cfg := range []Config{cores(3), {CPUs: 4, IdleBase: "threads"}, {CPUs: 3, Spin: "overhead"}} {
			want := s.runAll(t, cfg)
			got, events, runs := s.runFolded(t, cfg)
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if string(a) != string(b) {
				t.Fatalf("seed %d, %+v: folded result differs:\n block by block %s\n folded        %s", seed, cfg, a, b)
			}
			folded += events
			periodic += runs
		}
		// The canonical expansion of periodic runs alone gives the plain
		// stream back (but for the stack pointers of the blocks inside).
		view := s.tr.Blocks.View()
		cyclesOnly := trace.Needs{Encoding: trace.Encoding{Fold: func(*trace.BlockInfo) bool { return false }, FoldCycles: foldCycles}}
		cycles := foldStream(s.tr.Events, view, cyclesOnly)
		if !slices.ContainsFunc(cycles, func(e trace.Event) bool { return e.Period() > 0 }) {
			t.Fatalf("seed %d: no periodic run", seed)
		}
		got := trace.ExpandPeriodicRuns(cycles, view, 1)
		want := slices.Clone(s.tr.Events)
		for i := range want {
			if want[i].Kind == trace.KindBlock && i < len(got) && got[i].Aux == 0 {
				want[i].Aux = 0
			}
		}
		if !slices.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("seed %d: expanded periodic runs differ from the plain stream at %d of %d/%d", seed, i, len(got), len(want))
		}
		for _, ev := range s.tr.Events {
			if ev.Kind == trace.KindBlock {
				plain += 3
			}
		}
	}
	t.Logf("%d block events folded into %d with %d periodic runs", plain, folded, periodic)
	if periodic == 0 || folded > plain*3/4 {
		t.Errorf("%d block events folded into %d with %d periodic runs: the runs were not taken", plain, folded, periodic)
	}
}
