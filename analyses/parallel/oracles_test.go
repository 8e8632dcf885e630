package parallel

import (
	"testing"

	"emuprof/analyses/platform"
	"emuprof/trace"
)

// The test oracles of shared/specs/PARALLEL-HPCTOOLKIT.md §3 (H1–H11), as
// hand-written streams; every one is also checked for the invariants and
// for giving the same result whatever the batching (helpers_test.go).

const (
	futex = trace.WaitFutex
	sleep = trace.WaitSleep
	lockL = 0x5000
)

func cores(n int) Config { return Config{CPUs: n} }

func want(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// H1 (TM09 §6, the Quartz example): n = 4; main runs x for 10 while three
// workers wait, then four threads run y for 10.
func TestH1SerialPhase(t *testing.T) {
	s := newScript().start(1, 0, 0, "main")
	for w := uint32(2); w <= 4; w++ {
		s.start(w, 1, 0, "worker").blockOn(w, futex, lockL)
	}
	s.call(1, "x").work(1, 10)
	for w := uint32(2); w <= 4; w++ {
		s.wake(w, 1, 10, futex, lockL)
	}
	s.ret(1).in(1, "y", 10).exit(1)
	for w := uint32(2); w <= 4; w++ {
		s.in(w, "y", 10).exit(w)
	}
	r := s.runAll(t, cores(4))
	x, y := byRoutine(r, "x"), byRoutine(r, "y")
	want(t, "W(x)", x.Work, 10)
	want(t, "I(x)", x.Idleness, 30) // (n−1)·t
	want(t, "W(y)", y.Work, 40)
	want(t, "I(y)", y.Idleness, 0)
	want(t, "makespan", r.Makespan, 20)
	want(t, "unattributed", r.Unattr, 0)
	// The workers run in main's context (their creation context, TM09 §4.2).
	want(t, "W(main>worker>y)", byPath(t, r, "main>worker>y").Work, 30)
}

// H2: n = 2, barrier imbalance: A works 3; B works 1, then waits until A
// arrives at 3.
func TestH2Barrier(t *testing.T) {
	s := newScript().start(1, 0, 0, "A").start(2, 1, 0, "B")
	s.in(1, "a", 3)
	s.in(2, "b", 1).call(2, "pthread_barrier_wait").blockOn(2, futex, lockL)
	s.call(1, "pthread_barrier_wait").wake(2, 1, 3, futex, lockL).ret(1).exit(1)
	s.ret(2).exit(2)
	r := s.runAll(t, cores(2))
	want(t, "W(a)", byRoutine(r, "a").Work, 3)
	want(t, "W(b)", byRoutine(r, "b").Work, 1)
	want(t, "I(a)", byRoutine(r, "a").Idleness, 2)
	want(t, "I(b)", byRoutine(r, "b").Idleness, 0)
	want(t, "effort", r.Total.Effort(), 6)
	want(t, "barrier waiting", r.WaitByClass["barrier"], 2)
	// The barrier's wait is blamed on the last arriver, not as lock wait.
	want(t, "blame(A>pthread_barrier_wait)", byPath(t, r, "A>pthread_barrier_wait").Blame, 2)
	want(t, "lockwait", r.Total.Lockwait, 0)
}

// H3 (TM09 §2.1): three threads work on a quad core; each records 1/3 of
// idleness per unit of work.
func TestH3ThreeOfFour(t *testing.T) {
	s := newScript().start(1, 0, 0, "t1").start(2, 1, 0, "t2").start(3, 1, 0, "t3")
	for tid := uint32(1); tid <= 3; tid++ {
		s.work(tid, 3).exit(tid)
	}
	r := s.runAll(t, cores(4))
	for _, fn := range []string{"t1", "t2", "t3"} {
		m := byRoutine(r, fn)
		want(t, "W("+fn+")", m.Work, 3)
		want(t, "I("+fn+")", m.Idleness, 1)
	}
	want(t, "total idleness", r.Total.Idleness, 3)
}

// H4: n = 4; H holds the lock for h = 5 in crit and releases it in unlock
// while m = 3 threads wait the whole time.
func TestH4LockBlame(t *testing.T) {
	s := newScript().start(1, 0, 0, "H")
	for w := uint32(2); w <= 4; w++ {
		s.start(w, 1, 0, "waiter").call(w, "pthread_mutex_lock").blockOn(w, futex, lockL)
	}
	s.in(1, "crit", 5).call(1, "unlock")
	for w := uint32(2); w <= 4; w++ {
		s.wake(w, 1, 5, futex, lockL)
	}
	s.ret(1).exit(1)
	for w := uint32(2); w <= 4; w++ {
		s.ret(w).exit(w)
	}
	r := s.runAll(t, cores(4))
	want(t, "B(H>unlock)", byPath(t, r, "H>unlock").Lockwait, 15) // m·h
	want(t, "W(H>crit)", byPath(t, r, "H>crit").Work, 5)
	want(t, "I(H>crit)", byPath(t, r, "H>crit").Idleness, 15)
	want(t, "LW(H>waiter>pthread_mutex_lock)", byPath(t, r, "H>waiter>pthread_mutex_lock").Wait, 15) // 5 per waiter
	if len(r.Locks) != 1 || r.Locks[0].Class != "lock" || r.Locks[0].Waits != 3 || r.Locks[0].BlameNs != 15 {
		t.Errorf("locks %+v", r.Locks)
	}
}

// H5: n = 3, a chained hand-off on lock L: A holds [0,2), B waits [0,2)
// then holds [2,4), C waits [0,4) then holds [4,6); A and B keep working
// after their release.
func TestH5ChainedHandOff(t *testing.T) {
	s := newScript().start(1, 0, 0, "A").start(2, 1, 0, "B").start(3, 1, 0, "C")
	s.call(2, "pthread_mutex_lock").blockOn(2, futex, lockL)
	s.call(3, "pthread_mutex_lock").blockOn(3, futex, lockL)
	s.in(1, "cs", 2).call(1, "unlock").wake(2, 1, 2, futex, lockL).ret(1).in(1, "after", 4).exit(1)
	s.ret(2).in(2, "cs", 2).call(2, "unlock").wake(3, 2, 4, futex, lockL).ret(2).in(2, "after", 2).exit(2)
	s.ret(3).in(3, "cs", 2).exit(3)
	r := s.runAll(t, cores(3))
	want(t, "B(A>unlock)", byPath(t, r, "A>unlock").Lockwait, 4)
	want(t, "B(A>B>unlock)", byPath(t, r, "A>B>unlock").Lockwait, 2)
	want(t, "Σ blame", r.Total.Lockwait, 6)
	want(t, "LW(B)", byPath(t, r, "A>B>pthread_mutex_lock").Wait, 2)
	want(t, "LW(C)", byPath(t, r, "A>C>pthread_mutex_lock").Wait, 4)
	want(t, "I(A>cs)", byPath(t, r, "A>cs").Idleness, 4)
	want(t, "I(A>after)", byPath(t, r, "A>after").Idleness, 1)
	want(t, "I(B>cs)", byPath(t, r, "A>B>cs").Idleness, 1)
	want(t, "I(C>cs)", byPath(t, r, "A>C>cs").Idleness, 0)
	want(t, "I(B>after)", byPath(t, r, "A>B>after").Idleness, 0)
	want(t, "W", r.Total.Work, 12)
	want(t, "I", r.Total.Idleness, 6)
}

// H6: n = 2, four working threads: a, b run [0,1), c, d wait for a core
// and run [1,2). No idleness: n_w is capped at n.
func TestH6Oversubscribed(t *testing.T) {
	s := newScript().start(1, 0, 0, "a").start(2, 1, 0, "b").start(3, 1, 0, "c").start(4, 1, 0, "d")
	s.work(1, 1).exit(1).work(2, 1).exit(2)
	s.tr.SetClock(3, 1).SetClock(4, 1)
	s.work(3, 1).exit(3).work(4, 1).exit(4)
	r := s.runAll(t, cores(2))
	for _, fn := range []string{"a", "b", "c", "d"} {
		want(t, "W("+fn+")", byRoutine(r, fn).Work, 1)
		want(t, "I("+fn+")", byRoutine(r, fn).Idleness, 0)
	}
	want(t, "makespan", r.Makespan, 2)
	want(t, "queued(c)", r.Threads[2].Queued, 1)
}

// H7: n = 1; main spends 1 in pthread_create (runtime, working), then 9
// computing.
func TestH7Overhead(t *testing.T) {
	s := newScript().start(1, 0, 0, "main").in(1, "pthread_create", 1).work(1, 9).exit(1)
	r := s.runAll(t, cores(1))
	want(t, "W", r.Total.Work, 10)
	want(t, "O(main>pthread_create)", byPath(t, r, "main>pthread_create").Overhead, 1)
	want(t, "U", r.Useful, 9)
	want(t, "I", r.Total.Idleness, 0)
}

// H8: n = 2, every thread blocked for 2: nobody can be blamed.
func TestH8AllBlocked(t *testing.T) {
	s := newScript().start(1, 0, 0, "main").start(2, 1, 0, "t")
	s.blockOn(1, sleep, 0).blockOn(2, sleep, 0)
	s.wake(1, 0, 2, sleep, 0).wake(2, 0, 2, sleep, 0).exit(1).exit(2)
	r := s.runAll(t, cores(2))
	want(t, "W", r.Total.Work, 0)
	want(t, "I", r.Total.Idleness, 0)
	want(t, "I_unattributed", r.Unattr, 4)
	want(t, "sleep waiting", r.WaitByClass["sleep"], 4)
}

// H9: a perfectly balanced parallel loop.
func TestH9Balanced(t *testing.T) {
	s := newScript().start(1, 0, 0, "main")
	for tid := uint32(2); tid <= 4; tid++ {
		s.start(tid, 1, 0, "worker")
	}
	for tid := uint32(1); tid <= 4; tid++ {
		s.in(tid, "loop", 25).exit(tid)
	}
	r := s.runAll(t, cores(4))
	want(t, "I", r.Total.Idleness, 0)
	want(t, "W", r.Total.Work, 100)
	if r.Efficiency != 1 {
		t.Errorf("parallel efficiency %v, want 1", r.Efficiency)
	}
	if r.Program.Text != VerdictLowLow {
		t.Errorf("verdict %q", r.Program.Text)
	}
}

// H10: a serial phase before any other thread exists: idleness counts idle
// cores (TM09) but not idle threads (HPCToolkit's code).
func TestH10IdleBase(t *testing.T) {
	s := newScript().start(1, 0, 0, "main").work(1, 10).exit(1)
	r := s.runAll(t, cores(4))
	want(t, "I (cores)", r.Total.Idleness, 30)
	r = s.runAll(t, Config{CPUs: 4, IdleBase: "threads"})
	want(t, "I (threads)", r.Total.Idleness, 0)
}

// H10 with threads: in the threads base, a blocked thread is an idle one.
func TestIdleBaseThreads(t *testing.T) {
	s := newScript().start(1, 0, 0, "main").start(2, 1, 0, "w").blockOn(2, futex, lockL)
	s.work(1, 10).wake(2, 1, 10, futex, lockL).exit(1).work(2, 4).exit(2)
	r := s.runAll(t, Config{CPUs: 8, IdleBase: "threads"})
	want(t, "I(main)", byRoutine(r, "main").Idleness, 10) // one idle thread per unit
	want(t, "I(w)", byRoutine(r, "w").Idleness, 0)
	want(t, "capacity", r.Capacity, 24) // W 14 + I 10
}

// H11: Table 1 (TM09 §2.1), θ = 0.10, equality is high.
func TestH11Table1(t *testing.T) {
	for _, c := range []struct {
		w, i, o int64
		want    string
	}{
		{98, 2, 1, VerdictLowLow},
		{98, 2, 30, VerdictLowHigh},
		{60, 40, 1, VerdictHighLow},
		{60, 40, 30, VerdictHighHigh},
		{90, 10, 0, VerdictHighLow},  // idle ratio 0.10 exactly
		{100, 0, 10, VerdictLowHigh}, // overhead ratio 0.10 exactly
		{91, 9, 9, VerdictLowLow},
	} {
		if got := Classify(c.w, c.i, c.o, 0.10, 0.10).Text; got != c.want {
			t.Errorf("Classify(%d, %d, %d) = %q, want %q", c.w, c.i, c.o, got, c.want)
		}
	}
	if VerdictLowLow != "effectively parallel; focus on serial performance" || VerdictLowHigh != "coarsen concurrency granularity" ||
		VerdictHighLow != "refine concurrency granularity" || VerdictHighHigh != "switch parallelization strategies" {
		t.Error("Table 1's strings changed")
	}
}

// Spin-waiting: a thread cycling through two blocks of a runtime routine
// (libgomp's barrier) is idle after spinCycle blocks (--spin idle) or works
// in the runtime (--spin overhead); the other thread's work is charged the
// spinner's core as idleness only in the first case.
func TestSpin(t *testing.T) {
	build := func() *script {
		s := newScript().start(1, 0, 0, "main").start(2, 1, 0, "w")
		s.work(1, 100).exit(1)
		s.call(2, "gomp_team_barrier_wait_end")
		f := s.top(2)
		for i := 0; i < 50; i++ { // two blocks of one instruction each
			s.tr.Block(2, s.syms.base(f.fn)+0x40, f.sp, 1, 4, trace.EndCond)
			s.tr.Block(2, s.syms.base(f.fn)+0x44, f.sp, 1, 4, trace.EndCond)
		}
		return s.ret(2).exit(2)
	}
	r := build().runAll(t, cores(2))
	// Not yet spinning: the cycle's first two blocks, then its first
	// spinCycle−1 repetitions.
	spin := int64(100 - (2 + spinCycle - 1))
	want(t, "spin", r.Total.Spin, spin)
	want(t, "W(spinner)", byRoutine(r, "gomp_team_barrier_wait_end").Work, 100-spin)
	want(t, "O(spinner)", byRoutine(r, "gomp_team_barrier_wait_end").Overhead, 100-spin)
	want(t, "I(main)", byRoutine(r, "main").Idleness, spin)
	r = build().runAll(t, Config{CPUs: 2, Spin: "overhead"})
	want(t, "spin", r.Total.Spin, spin)
	want(t, "W(spinner)", byRoutine(r, "gomp_team_barrier_wait_end").Work, 100)
	want(t, "O(spinner)", byRoutine(r, "gomp_team_barrier_wait_end").Overhead, 100)
	want(t, "I(main)", byRoutine(r, "main").Idleness, 0)
}

// A run that did not finish is marked partial in its result, even when
// told after the end of the stream (as the command does).
func TestPartial(t *testing.T) {
	s := newScript().start(1, 0, 0, "main").work(1, 5)
	env := platform.NewEnv(s.syms, "/bin/prog", nil)
	a, err := New(cores(1), env)
	if err != nil {
		t.Fatal(err)
	}
	p := platform.NewPipeline(env, s.tr.Blocks, []platform.Instance{a}, false)
	p.Events(s.events())
	p.Finish()
	a.MarkPartial("deadlock")
	if a.Result().Partial != "deadlock" {
		t.Errorf("partial %q", a.Result().Partial)
	}
}
