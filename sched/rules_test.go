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
