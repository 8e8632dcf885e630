package sched

import "testing"

// TestChargeBestFitCPU: work goes to the CPU that became free last by the
// thread's clock, so that a CPU free earlier stays free for a thread whose
// clock is earlier. Two CPUs: CPU 0 busy until 100, CPU 1 until 50; a
// thread at 200 takes CPU 0, and one at 60 then runs on CPU 1 at once (on
// CPU 1 the first would have made the second wait for CPU 0 until 100).
func TestChargeBestFitCPU(t *testing.T) {
	s := New(Config{CPUs: 2})
	ts := spawnN(s, 4)
	s.Charge(ts[0], 100) // CPU 0: [0, 100)
	s.Charge(ts[1], 50)  // CPU 1: [0, 50)
	ts[2].Clock = 200
	s.Charge(ts[2], 1000)
	ts[3].Clock = 60
	s.Charge(ts[3], 10)
	if ts[3].QueuedNs != 0 || ts[3].Clock != 70 {
		t.Errorf("thread at 60 after a thread at 200 took a CPU: queued %d ns, clock %d; want 0, 70 (CPU 1 free since 50)", ts[3].QueuedNs, ts[3].Clock)
	}
	if ts[2].QueuedNs != 0 || ts[2].Clock != 1200 || s.Makespan() != 1200 {
		t.Errorf("thread at 200: queued %d, clock %d, makespan %d; want 0, 1200, 1200", ts[2].QueuedNs, ts[2].Clock, s.Makespan())
	}
}

// TestPauseHoldsItsCPU: causal profiling's pauses (Coz §4.4: every thread
// but the one running the selected line pauses, together). Two CPUs, three
// threads: X works on CPU 0 until 1000, R on CPU 1 until 500, W waits for
// a CPU. R and W each pause 300 ns (X ran the selected line): R holds CPU 1,
// so W, queued behind R, starts at 800, not at 500 (with Delay it would:
// the pauses of the two threads sharing CPU 1 would vanish into W's wait).
// On one CPU a pause of a thread whose CPU ran another thread since is
// absorbed by the wait, as natively: the other thread ran meanwhile.
func TestPauseHoldsItsCPU(t *testing.T) {
	s := New(Config{CPUs: 2})
	ts := spawnN(s, 3)
	x, r, w := ts[0], ts[1], ts[2]
	s.Charge(x, 1000) // CPU 0: [0, 1000)
	s.Charge(r, 500)  // CPU 1: [0, 500)
	s.Pause(r, 300)
	s.Pause(w, 300)
	s.Charge(w, 100)
	if r.Clock != 800 || w.Clock != 900 || w.QueuedNs != 500 || w.DelayedNs != 300 {
		t.Errorf("R clock %d, W clock %d queued %d delayed %d; want 800, 900, 500, 300", r.Clock, w.Clock, w.QueuedNs, w.DelayedNs)
	}
	d := New(Config{CPUs: 2})
	ts = spawnN(d, 3)
	d.Charge(ts[0], 1000)
	d.Charge(ts[1], 500)
	d.Delay(ts[1], 300)
	d.Delay(ts[2], 300)
	d.Charge(ts[2], 100)
	if ts[2].Clock != 600 {
		t.Errorf("with Delay: W clock %d, want 600 (the pauses vanish)", ts[2].Clock)
	}

	one := New(Config{CPUs: 1})
	ts = spawnN(one, 2)
	b, a := ts[1], ts[0]
	one.Charge(b, 200) // [0, 200)
	one.Charge(a, 500) // [200, 700): a ran the selected line
	one.Pause(b, 300)  // b no longer holds the CPU
	one.Charge(b, 100)
	if b.Clock != 800 || b.QueuedNs != 200 {
		t.Errorf("one CPU: b clock %d queued %d; want 800, 200", b.Clock, b.QueuedNs)
	}
	one.Charge(a, 100)
	if a.Clock != 900 {
		t.Errorf("one CPU: a clock %d, want 900", a.Clock)
	}
}
