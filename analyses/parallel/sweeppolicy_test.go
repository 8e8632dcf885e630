package parallel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"emuprof/trace"
)

// sweepMode is how often a test run sweeps the timeline.
type sweepMode int

const (
	sweepEveryBatch sweepMode = iota // to the watermark after every batch (the policy before sweepDiv)
	sweepPolicy                      // sweepPending's policy
	sweepAtEnd                       // Config.SweepAtEnd
)

// output is everything a run writes: the result as JSON, the pprof bytes
// and the summary text.
func output(t *testing.T, r *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(js)
	if err := r.WritePprof(&b); err != nil {
		t.Fatal(err)
	}
	if err := r.Summary(&b, 10); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// runSweeps feeds s's stream (folded as the engine would when fold) in
// batches of random sizes drawn from seed, once per mode, and returns each
// run's output. Sweeping by the policy is checked after every batch to
// have swept to less than sweepNs/sweepDiv behind where sweeping every batch
// did: what bounds its pending pieces;
// and a thread's slice of pieces to hold no more swept pieces than pending
// ones: what bounds its memory.
func (s *script) runSweeps(t *testing.T, cfg Config, fold bool, seed uint64) [3][]byte {
	t.Helper()
	var as [3]*Analysis
	var ps [3]interface {
		Events([]trace.Event)
		Finish()
		Err() error
	}
	for m := range as {
		c := cfg
		c.SweepAtEnd = sweepMode(m) == sweepAtEnd
		a, p := s.pipeline(t, c)
		as[m], ps[m] = a, p
	}
	evs := s.events()
	if fold {
		evs = foldStream(evs, s.tr.Blocks.View(), as[0].Needs())
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := 0; i < len(evs); {
		n := 1 + rng.IntN(1+rng.IntN(40))
		b := evs[i:min(i+n, len(evs))]
		i += len(b)
		for m, p := range ps {
			p.Events(slices.Clone(b)) // the stage marks calls in place

			if sweepMode(m) == sweepEveryBatch {
				w, _ := as[m].watermark()
				as[m].sweep(w)
			}
		}
		for m, a := range as[:sweepAtEnd] {
			for _, th := range a.all {
				if pending := len(th.pieces) - th.head; th.head > pending {
					t.Fatalf("mode %d, after event %d: thread %d keeps %d swept pieces before its %d pending ones",
						m, i, th.tid, th.head, pending)
				}
			}
		}
		every, pol := as[sweepEveryBatch], as[sweepPolicy]
		if pol.swept <= every.swept-pol.sweepNs/sweepDiv {
			t.Fatalf("after event %d: the policy swept to %d, sweeping every batch to %d, latest time %d, lag %d",
				i, pol.swept, every.swept, pol.now, pol.sweepNs)
		}
	}
	var out [3][]byte
	for m, p := range ps {
		p.Finish()
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		r := as[m].Result()
		if r.Late != 0 {
			t.Errorf("mode %d: %d ns arrived behind the sweep", m, r.Late)
		}
		out[m] = output(t, r)
	}
	return out
}

func sameOutputs(t *testing.T, what string, out [3][]byte) {
	t.Helper()
	for m, name := range []string{"", "by the policy", "at the end"} {
		if m == 0 || bytes.Equal(out[0], out[m]) {
			continue
		}
		a, b := out[0], out[m]
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		from := max(0, i-200)
		t.Errorf("%s: sweeping %s differs from sweeping every batch at byte %d:\n every batch %q\n %s %q",
			what, name, i, a[from:min(len(a), i+80)], name, b[from:min(len(b), i+80)])
	}
}

// On random programs scheduled like package sched does, block by block
// and folded, in random batches: sweeping by sweepPending's policy writes
// the same bytes as sweeping after every batch and as sweeping at the end,
// with small quanta (the policy sweeps often) and large ones (it sweeps
// rarely).
func TestSweepPolicy(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		n := []int{1, 2, 3, 4, 8}[seed%5]
		q := []uint32{10, 40, 400, 5000}[seed%4]
		s := simulate(seed, n, q)
		for _, cfg := range []Config{{CPUs: n, Quantum: uint64(q)}, {CPUs: n, Quantum: uint64(q), IdleBase: "threads", Spin: "overhead"}} {
			for _, fold := range []bool{false, true} {
				what := fmt.Sprintf("seed %d, %d cpus, quantum %d, idle base %q, fold %v", seed, n, q, cfg.IdleBase, fold)
				sameOutputs(t, what, s.runSweeps(t, cfg, fold, seed))
			}
		}
	}
}
