package parallel

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"emuprof/trace"
)

// compressRepeats replaces, as the engine's replay does, every stretch of
// evs where a period of 1 to 32 Block events of one thread comes three
// or more times in a row (each the same events, later by the same time)
// with its first period, a Repeat event and its second period (and the
// rest but the last: Aux), and its last period.
func compressRepeats(evs []trace.Event) []trace.Event {
	same := func(a, b []trace.Event, dt int64) bool {
		for i := range a {
			x := a[i]
			x.Time += dt
			if x != b[i] || a[i].Kind != trace.KindBlock || a[i].Tid != a[0].Tid {
				return false
			}
		}
		return true
	}
	var out []trace.Event
	for i := 0; i < len(evs); {
		taken := false
		for n := 1; n <= 32 && i+3*n <= len(evs) && !taken; n++ {
			p := evs[i : i+n]
			dt := evs[i+n].Time - evs[i].Time
			k := 0 // periods after the first
			for i+(k+2)*n <= len(evs) && dt > 0 && same(p, evs[i+(k+1)*n:i+(k+2)*n], int64(k+1)*dt) {
				k++
			}
			if k < 3 {
				continue
			}
			r := trace.Event{Kind: trace.KindRepeat, Tid: p[0].Tid, Time: evs[i+n].Time, Size: uint32(n), Aux: uint64(k - 2), Addr: uint64(dt)}
			out = append(out, p...)
			out = append(out, r)
			out = append(out, evs[i+n:i+2*n]...)
			out = append(out, evs[i+k*n:i+(k+1)*n]...)
			i += (k + 1) * n
			taken = true
		}
		if !taken {
			out = append(out, evs[i])
			i++
		}
	}
	return out
}

// loop runs reps iterations of a loop in thread tid's current routine:
// a call of fn from one site, work in it, and work of its own.
func (s *script) loop(tid uint32, fn string, reps int, inner, outer uint32) *script {
	f := s.top(tid)
	base := s.syms.base(f.fn)
	for range reps {
		s.tr.Block(tid, base+0x80, f.sp, outer, 4, trace.EndCall)
		sp := f.sp - 0x100
		s.stacks[tid] = append(s.stacks[tid], scriptFrame{fn: fn, ret: base + 0x84, sp: sp})
		s.work(tid, inner)
		s.tr.Block(tid, s.syms.base(fn)+0x300, sp, 1, 1, trace.EndRet)
		s.stacks[tid] = s.stacks[tid][:len(s.stacks[tid])-1]
		s.tr.Block(tid, base+0x84, f.sp, 2, 2, trace.EndCond)
	}
	return s
}

// Repeat events give exactly the profile of the stream written out:
// loops that call a lock routine or user code, spin in the runtime,
// alternate two lines, or call a routine that alternates two lines (a
// periodic run in each period when folded), in threads that interleave, wait and wake; block
// by block and folded as the engine folds; idle base cores and threads,
// spin idle and overhead. Most repetitions are charged at once.
func TestRepeatEvents(t *testing.T) {
	var charged, written, repeats int
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 29))
		s := newScript().start(1, 0, 0, "main").start(2, 1, 0, "w1").start(3, 1, 0, "w2")
		for range 12 {
			tid := uint32(1 + rng.IntN(3))
			reps := rng.IntN(40)
			switch rng.IntN(6) {
			case 0:
				s.loop(tid, "pthread_mutex_lock", reps, uint32(1+rng.IntN(4)), uint32(1+rng.IntN(4)))
			case 1:
				s.loop(tid, "body", reps, uint32(1+rng.IntN(4)), uint32(rng.IntN(3)))
			case 2:
				s.call(tid, "gomp_team_barrier_wait_end")
				base := s.syms.base("gomp_team_barrier_wait_end")
				for range reps {
					s.tr.Block(tid, base+0x40, s.top(tid).sp, 2, 4, trace.EndCond)
					s.tr.Block(tid, base+0x48, s.top(tid).sp, 1, 4, trace.EndJump)
				}
				s.ret(tid)
			case 3:
				f := s.top(tid)
				for range reps {
					s.tr.Block(tid, s.syms.base(f.fn)+0x40, f.sp, 3, 4, trace.EndCond)
					s.tr.Block(tid, s.syms.base(f.fn)+0x50, f.sp, 1, 4, trace.EndJump)
				}
			case 5: // a loop around a call of body, which alternates two lines (periodic runs when folded)
				f := s.top(tid)
				base, body, m := s.syms.base(f.fn), s.syms.base("body"), 4+rng.IntN(8)
				for range reps {
					s.tr.Block(tid, base+0x80, f.sp, 1, 4, trace.EndCall)
					sp := f.sp - 0x100
					for j := range m {
						s.tr.Block(tid, body+0x40+uint64(j%2)*0x10, sp, uint32(1+j%2), 4, trace.EndCond)
					}
					s.tr.Block(tid, body+0x300, sp, 1, 1, trace.EndRet)
					s.tr.Block(tid, base+0x84, f.sp, 2, 2, trace.EndCond)
				}
			case 4:
				if tid != 1 {
					s.blockOn(tid, trace.WaitFutex, 0x9000)
					s.wake(tid, 1, s.clock(1)+int64(rng.IntN(50)), trace.WaitFutex, 0x9000)
				}
			}
		}
		s.exit(2).exit(3).work(1, 10).exit(1)
		for _, cfg := range []Config{cores(3), {CPUs: 4, IdleBase: "threads"}, {CPUs: 3, Spin: "overhead"}} {
			for _, fold := range []bool{false, true} {
				a, p := s.pipeline(t, cfg)
				plain := s.events()
				if fold {
					plain = foldStream(plain, s.tr.Blocks.View(), a.Needs())
				}
				comp := compressRepeats(plain)
				if x := trace.ExpandRepeats(comp); len(x) != len(plain) {
					t.Fatalf("seed %d: the compressed stream expands to %d events, not %d", seed, len(x), len(plain))
				}
				p.Events(comp)
				p.Finish()
				if p.Err() != nil {
					t.Fatal(p.Err())
				}
				b, p2 := s.pipeline(t, cfg)
				p2.Events(plain)
				p2.Finish()
				got, _ := json.Marshal(a.Result())
				want, _ := json.Marshal(b.Result())
				if string(got) != string(want) {
					t.Fatalf("seed %d, %+v, fold %v: with Repeat events\n%s\nwritten out\n%s", seed, cfg, fold, got, want)
				}
				checkInvariants(t, a.Result())
				charged += a.rep.charged
				written += a.rep.written
				for _, e := range comp {
					if e.Kind == trace.KindRepeat {
						repeats++
					}
				}
			}
		}
	}
	t.Logf("%d Repeat events: %d charged at once, %d written out (in the stage or here)", repeats, charged, written)
	if charged < repeats/2 {
		t.Errorf("%d of %d Repeat events charged at once", charged, repeats)
	}
}
