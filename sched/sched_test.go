package sched

import (
	"slices"
	"testing"

	"emuprof/trace"
)

// spawnN creates threads with tids 1..n, all children of tid 1.
func spawnN(s *Scheduler, n int) []*Thread {
	ts := make([]*Thread, n)
	for i := range ts {
		var parent *Thread
		if i > 0 {
			parent = ts[0]
		}
		ts[i] = s.Spawn(i+1, parent)
	}
	return ts
}

func tids(ts []*Thread) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.Tid
	}
	return out
}

func TestPickOrderByClockThenTid(t *testing.T) {
	s := New(Config{})
	// Spawn out of tid order: Pick must not depend on spawn order.
	t3 := s.Spawn(3, nil)
	t1 := s.Spawn(1, t3)
	t2 := s.Spawn(2, t3)
	t1.Clock, t2.Clock, t3.Clock = 50, 10, 10

	var got []int
	for range 6 {
		th := s.Pick()
		got = append(got, th.Tid)
		s.Ran(th, 100, 1)
	}
	// t2 and t3 tie at 10 -> t2; then t3 (10) ; then t1 (50);
	// then t2 (110) ties t3 (110) -> t2, t3; then t1 (150).
	want := []int{2, 3, 1, 2, 3, 1}
	if !slices.Equal(got, want) {
		t.Fatalf("pick order %v, want %v", got, want)
	}
	if got := tids(s.Threads()); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("Threads() tids %v, want sorted", got)
	}
	if t1.Switches != 2 || t1.Insns != 200 || t1.Blocks != 2 || t1.Clock != 250 {
		t.Fatalf("t1 stats: switches %d insns %d blocks %d clock %d", t1.Switches, t1.Insns, t1.Blocks, t1.Clock)
	}
	if s.Makespan() != 250 {
		t.Fatalf("makespan %d, want 250", s.Makespan())
	}
	if s.Thread(2) != t2 || s.Thread(9) != nil {
		t.Fatal("Thread lookup")
	}
}

func TestQuantumPerturbation(t *testing.T) {
	const q = 10000
	seq := func(seed uint64) []uint64 {
		s := New(Config{Quantum: q, Seed: seed})
		th := s.Spawn(1, nil)
		out := make([]uint64, 200)
		for i := range out {
			out[i] = s.Quantum(th)
		}
		return out
	}
	for _, v := range seq(0) {
		if v != q {
			t.Fatalf("unperturbed quantum %d, want %d", v, q)
		}
	}
	a, b, c := seq(1), seq(1), seq(2)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different quanta")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same quanta")
	}
	lo, hi := a[0], a[0]
	for _, v := range slices.Concat(a, c) {
		if v < q/8 || v > 2*q {
			t.Fatalf("quantum %d outside [%d, %d]", v, q/8, 2*q)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo < q { // 400 uniform draws over ~18750 values span far more
		t.Fatalf("quanta barely vary: [%d, %d]", lo, hi)
	}
}

func TestTieBreakPerturbation(t *testing.T) {
	firstPicks := func(seed uint64) []int {
		s := New(Config{Seed: seed})
		spawnN(s, 8)
		var out []int
		for range 8 {
			th := s.Pick()
			out = append(out, th.Tid)
			s.Ran(th, 10, 1) // all at clock 0 until each has run once
		}
		return out
	}
	if got := firstPicks(0); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("unperturbed ties %v, want tid order", got)
	}
	distinct := 0
	for seed := uint64(1); seed <= 16; seed++ {
		a, b := firstPicks(seed), firstPicks(seed)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d: %v then %v", seed, a, b)
		}
		sorted := slices.Sorted(slices.Values(a))
		if !slices.Equal(sorted, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Fatalf("seed %d: ties must still be fair (each once): %v", seed, a)
		}
		if !slices.Equal(a, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
			distinct++
		}
	}
	if distinct < 12 {
		t.Fatalf("only %d of 16 seeds perturbed the tie order", distinct)
	}
}

func TestFutexFIFOAndBitsets(t *testing.T) {
	s := New(Config{})
	ts := spawnN(s, 5)
	const addr = 0x7000
	// Arrival order 3, 2, 4: wake order must follow it, not tids.
	s.FutexWait(ts[2], addr, ^uint32(0), NoDeadline)
	s.FutexWait(ts[1], addr, ^uint32(0), NoDeadline)
	s.FutexWait(ts[3], addr, ^uint32(0), NoDeadline)
	if n := s.Waiters(WaitFutex, addr); n != 3 {
		t.Fatalf("waiters %d, want 3", n)
	}
	var order []int
	for range 3 {
		if n := s.FutexWake(ts[0], addr, 1, ^uint32(0)); n != 1 {
			t.Fatalf("FutexWake woke %d, want 1", n)
		}
		for _, th := range ts[1:4] {
			if th.State == Runnable && !slices.Contains(order, th.Tid) {
				order = append(order, th.Tid)
			}
		}
	}
	if !slices.Equal(order, []int{3, 2, 4}) {
		t.Fatalf("wake order %v, want FIFO [3 2 4]", order)
	}
	if n := s.FutexWake(ts[0], addr, 1, ^uint32(0)); n != 0 {
		t.Fatalf("empty queue woke %d", n)
	}
	if ts[1].FutexWaits != 1 || ts[1].Wakeups != 1 || !ts[1].Woken || ts[1].WakeResult != 0 {
		t.Fatalf("stats of a woken waiter: %+v", ts[1])
	}

	// Bitsets: 2 waits on bit 0, 3 on bit 1, 4 on both, 5 on bit 0.
	s.FutexWait(ts[1], addr, 1, NoDeadline)
	s.FutexWait(ts[2], addr, 2, NoDeadline)
	s.FutexWait(ts[3], addr, 3, NoDeadline)
	s.FutexWait(ts[4], addr, 1, NoDeadline)
	if n := s.FutexWake(ts[0], addr, 1<<30, 2); n != 2 {
		t.Fatalf("bitset 2 woke %d, want 2 (tids 3, 4)", n)
	}
	if ts[1].State != Blocked || ts[2].State != Runnable || ts[3].State != Runnable || ts[4].State != Blocked {
		t.Fatal("bitset 2 woke the wrong threads")
	}
	if n := s.FutexWake(ts[0], addr, 1, 1); n != 1 || ts[1].State != Runnable || ts[4].State != Blocked {
		t.Fatal("bitset 1, n=1 must wake the first matching waiter (tid 2) only")
	}
	if n := s.FutexWake(ts[0], addr+4, 10, ^uint32(0)); n != 0 {
		t.Fatal("a wake on another address woke someone")
	}
}

func TestFutexRequeue(t *testing.T) {
	s := New(Config{})
	ts := spawnN(s, 7)
	const a, b = 0x1000, 0x2000
	s.FutexWait(ts[6], b, ^uint32(0), NoDeadline) // already on b
	for _, th := range ts[1:6] {                  // tids 2..6 on a
		s.FutexWait(th, a, ^uint32(0), NoDeadline)
	}
	if n := s.FutexRequeue(ts[0], a, 1, b, 2); n != 3 {
		t.Fatalf("requeue returned %d, want 1 woken + 2 requeued", n)
	}
	if ts[1].State != Runnable {
		t.Fatal("first waiter of a not woken")
	}
	if s.Waiters(WaitFutex, a) != 2 || s.Waiters(WaitFutex, b) != 3 {
		t.Fatalf("waiters a=%d b=%d, want 2 and 3", s.Waiters(WaitFutex, a), s.Waiters(WaitFutex, b))
	}
	if ts[2].Wait.Addr != b || ts[4].Wait.Addr != a {
		t.Fatal("requeued waiters must now wait on addr2, the others on addr")
	}
	// b's order: 7 (was there), then 3, 4 (requeued in order).
	var order []int
	for range 3 {
		s.FutexWake(ts[0], b, 1, ^uint32(0))
		for _, th := range []*Thread{ts[6], ts[2], ts[3]} {
			if th.State == Runnable && !slices.Contains(order, th.Tid) {
				order = append(order, th.Tid)
			}
		}
	}
	if !slices.Equal(order, []int{7, 3, 4}) {
		t.Fatalf("order on addr2 %v, want [7 3 4]", order)
	}
	// Requeue onto the same address moves waiters to the tail.
	if n := s.FutexRequeue(ts[0], a, 0, a, 1); n != 1 {
		t.Fatalf("self-requeue returned %d", n)
	}
	s.FutexWake(ts[0], a, 1, ^uint32(0))
	if ts[5].State != Runnable || ts[4].State != Blocked {
		t.Fatal("self-requeue must move the head (tid 5) behind tid 6")
	}
}

func TestTimedWaitWhenNothingRunnable(t *testing.T) {
	s := New(Config{})
	ts := spawnN(s, 3)
	ts[0].Clock, ts[1].Clock, ts[2].Clock = 100, 200, 300
	s.FutexWait(ts[0], 0x10, ^uint32(0), 5000)
	s.Block(ts[1], Wait{Kind: WaitSleep, Deadline: 4000})
	s.Block(ts[2], Wait{Kind: WaitPipeRead, Addr: 3, Restart: true}) // no deadline

	th := s.Pick()
	if th != ts[1] {
		t.Fatalf("Pick returned %v, want the sleeper (tid 2)", th)
	}
	if th.Clock != 4000 || th.WakeResult != 0 || !th.TimedOut || !th.Woken {
		t.Fatalf("earliest timer: got %v result %d", th, th.WakeResult)
	}
	if th.BlockedNs != 3800 || th.Timeouts != 1 {
		t.Fatalf("sleeper blocked %d ns, timeouts %d", th.BlockedNs, th.Timeouts)
	}
	s.Exit(th)
	th = s.Pick()
	if th != ts[0] {
		t.Fatalf("Pick returned %v, want the futex waiter (tid 1)", th)
	}
	if th.Clock != 5000 || th.WakeResult != -ETIMEDOUT || th.State != Runnable {
		t.Fatalf("futex timeout: got %v result %d", th, th.WakeResult)
	}
	if s.Waiters(WaitFutex, 0x10) != 0 {
		t.Fatal("timed-out waiter still queued")
	}
	if s.Makespan() != 5000 {
		t.Fatalf("makespan %d, want 5000", s.Makespan())
	}
	// A deadline already in the past fires at the thread's own clock.
	s.FutexWait(ts[0], 0x10, ^uint32(0), 1)
	if th = s.Pick(); th != ts[0] || th.Clock != 5000 {
		t.Fatalf("past deadline: %v", th)
	}
}

func TestTimerFiresWhileOthersRun(t *testing.T) {
	s := New(Config{Quantum: 300})
	ts := spawnN(s, 2)
	s.Block(ts[1], Wait{Kind: WaitSleep, Deadline: 1000})
	var picks []int64
	for {
		th := s.Pick()
		if th == ts[1] {
			break
		}
		picks = append(picks, th.Clock)
		s.Ran(th, s.Quantum(th), 1)
		if th.Clock > 100000 {
			t.Fatal("sleeper never woke while the other thread spun")
		}
	}
	// The spinner runs 0-300-600-900-1200; the sleeper's 1000 comes first.
	if !slices.Equal(picks, []int64{0, 300, 600, 900}) {
		t.Fatalf("spinner picks %v", picks)
	}
	if ts[1].Clock != 1000 || ts[1].WakeResult != 0 {
		t.Fatalf("sleeper woke at %d", ts[1].Clock)
	}
}

func TestWakeClockJumpsToWaker(t *testing.T) {
	s := New(Config{})
	ts := spawnN(s, 3)
	ts[0].Clock, ts[1].Clock, ts[2].Clock = 100, 5000, 9000
	s.Block(ts[0], Wait{Kind: WaitPipeRead, Addr: 3, Restart: true})
	s.Block(ts[2], Wait{Kind: WaitPipeRead, Addr: 3, Restart: true})
	if n := s.WakeAll(ts[1], WaitPipeRead, 3); n != 2 {
		t.Fatalf("WakeAll woke %d", n)
	}
	if ts[0].Clock != 5000 || ts[0].BlockedNs != 4900 || !ts[0].Wait.Restart || !ts[0].Woken {
		t.Fatalf("woken thread: clock %d blocked %d restart %v", ts[0].Clock, ts[0].BlockedNs, ts[0].Wait.Restart)
	}
	if ts[2].Clock != 9000 {
		t.Fatalf("a wake moved a clock backwards: %d", ts[2].Clock)
	}
	s.FutexWait(ts[0], 0x40, ^uint32(0), NoDeadline)
	ts[1].Clock = 7000
	if !s.Wake(ts[0], ts[1], -4) || ts[0].Clock != 7000 || ts[0].WakeResult != -4 {
		t.Fatalf("Wake: clock %d result %d", ts[0].Clock, ts[0].WakeResult)
	}
	if s.Wake(ts[0], ts[1], 0) {
		t.Fatal("Wake of a runnable thread reported true")
	}
	if s.Waiters(WaitFutex, 0x40) != 0 {
		t.Fatal("Wake left the thread queued")
	}
}

func TestDeadlock(t *testing.T) {
	s := New(Config{})
	ts := spawnN(s, 4)
	s.Exit(ts[0])
	s.FutexWait(ts[1], 0x7ffff7d8a910, ^uint32(0), NoDeadline)
	s.Block(ts[2], Wait{Kind: WaitPipeRead, Addr: 3, Restart: true, What: "read pipe:[3]"})
	s.Block(ts[3], Wait{Kind: WaitJoin, Addr: 2})
	if th := s.Pick(); th != nil {
		t.Fatalf("Pick returned %v with everyone blocked", th)
	}
	dl := s.Deadlock()
	if !slices.Equal(tids(dl), []int{2, 3, 4}) || s.Alive() != 3 || s.Done() {
		t.Fatalf("deadlock %v alive %d", tids(dl), s.Alive())
	}
	for _, th := range dl {
		if th.State != Blocked {
			t.Fatalf("%v in deadlock report", th)
		}
	}
	if got := dl[1].String(); got != "tid 3 blocked on read pipe:[3] at 0ns" {
		t.Fatalf("report line %q", got)
	}
	if got := dl[0].Wait.String(); got != "futex 0x7ffff7d8a910" {
		t.Fatalf("futex description %q", got)
	}
	// exit_group: every thread exits, blocked ones leave their queues.
	for _, th := range dl {
		s.Exit(th)
	}
	if th := s.Pick(); th != nil || s.Deadlock() != nil || !s.Done() {
		t.Fatal("all exited must not be a deadlock")
	}
	if s.Waiters(WaitFutex, 0x7ffff7d8a910) != 0 || s.Waiters(WaitPipeRead, 3) != 0 {
		t.Fatal("exited threads still queued")
	}
}

// runWork runs threads with the given amounts of work (instructions) to
// completion and returns the scheduler.
func runWork(t *testing.T, cfg Config, works []uint64) *Scheduler {
	s := New(cfg)
	spawnN(s, len(works))
	rem := slices.Clone(works)
	for !s.Done() {
		th := s.Pick()
		if th == nil {
			t.Fatal("unexpected deadlock")
		}
		n := min(s.Quantum(th), rem[th.Tid-1])
		s.Ran(th, n, 1)
		if rem[th.Tid-1] -= n; rem[th.Tid-1] == 0 {
			s.Exit(th)
		}
	}
	return s
}

func TestCPUModel(t *testing.T) {
	four := []uint64{1000, 1000, 1000, 1000}
	for _, c := range []struct {
		cpus    int
		quantum uint64
		want    int64
	}{
		{2, 0, 2000}, {4, 0, 1000}, {8, 0, 1000},
		{2, 100, 2000}, {2, 7, 2000}, {1, 100, 4000}, {3, 10, 1340},
	} {
		s := runWork(t, Config{CPUs: c.cpus, Quantum: c.quantum}, four)
		if got := s.Makespan(); got != c.want {
			t.Errorf("4×1000 ns on %d CPUs, quantum %d: makespan %d, want %d", c.cpus, c.quantum, got, c.want)
		}
		var run, queued int64
		for _, th := range s.Threads() {
			run += th.RunNs
			queued += th.QueuedNs
			if th.Clock != th.RunNs+th.QueuedNs {
				t.Errorf("tid %d: clock %d != run %d + queued %d", th.Tid, th.Clock, th.RunNs, th.QueuedNs)
			}
		}
		if run != 4000 {
			t.Errorf("total work %d, want 4000", run)
		}
	}
	// NsPerInsn scales work.
	if got := runWork(t, Config{CPUs: 2, NsPerInsn: 3}, four).Makespan(); got != 6000 {
		t.Errorf("NsPerInsn 3: makespan %d, want 6000", got)
	}
}

// interval is one placement of work on a virtual CPU.
type interval struct{ start, end int64 }

// chaos runs a random workload of computing, sleeping, futex waits and
// wakes, and returns the Pick trace (tid, clock) and the work intervals.
func chaos(t *testing.T, cfg Config, threads int) (trace [][2]int64, work []interval, s *Scheduler) {
	s = New(cfg)
	ts := spawnN(s, threads)
	rng := newPCG32(99, 7) // the workload is fixed; only cfg.Seed varies
	left := make([]int, threads)
	for i := range left {
		left[i] = 40
	}
	const lock = 0x5000
	for !s.Done() {
		th := s.Pick()
		if th == nil {
			t.Fatalf("deadlock: %v", s.Deadlock())
		}
		trace = append(trace, [2]int64{int64(th.Tid), th.Clock})
		n := 1 + rng.bounded(s.Quantum(th))
		s.Ran(th, n, 1)
		d := int64(n) * s.Config().NsPerInsn
		work = append(work, interval{th.Clock - d, th.Clock})
		if left[th.Tid-1]--; left[th.Tid-1] == 0 {
			s.FutexWake(th, lock, 1<<30, ^uint32(0))
			s.Exit(th)
			continue
		}
		switch rng.bounded(8) {
		case 0:
			s.Block(th, Wait{Kind: WaitSleep, Deadline: th.Clock + int64(rng.bounded(20000))})
		case 1:
			s.FutexWait(th, lock, ^uint32(0), th.Clock+int64(rng.bounded(50000)))
		case 2:
			s.FutexWake(th, lock, 1+int(rng.bounded(2)), ^uint32(0))
		case 3:
			if th.Tid < threads {
				s.Wake(ts[th.Tid], th, 0)
			}
		}
	}
	return trace, work, s
}

func TestCPUModelNeverOversubscribes(t *testing.T) {
	for _, cpus := range []int{1, 2, 3, 8} {
		cfg := Config{CPUs: cpus, Quantum: 2000, Seed: uint64(cpus)}
		_, work, s := chaos(t, cfg, 6)
		// Sweep: +1 at a start, -1 at an end; ends first at equal times.
		type ev struct {
			at    int64
			delta int
		}
		var evs []ev
		var total int64
		for _, w := range work {
			evs = append(evs, ev{w.start, 1}, ev{w.end, -1})
			total += w.end - w.start
		}
		slices.SortFunc(evs, func(a, b ev) int {
			if a.at != b.at {
				return int(min(max(a.at-b.at, -1), 1))
			}
			return a.delta - b.delta
		})
		busy, peak := 0, 0
		for _, e := range evs {
			busy += e.delta
			peak = max(peak, busy)
		}
		if peak > cpus {
			t.Errorf("%d CPUs: %d threads ran at the same virtual time", cpus, peak)
		}
		for _, th := range s.Threads() {
			if th.Clock != th.Start+th.RunNs+th.QueuedNs+th.BlockedNs+th.DelayedNs {
				t.Errorf("tid %d: clock %d does not add up: %+v", th.Tid, th.Clock, th)
			}
		}
		if s.Makespan()*int64(cpus) < total {
			t.Errorf("%d CPUs: makespan %d cannot hold %d ns of work", cpus, s.Makespan(), total)
		}
	}
}

func TestDeterminismAcrossRuns(t *testing.T) {
	a, _, sa := chaos(t, Config{CPUs: 2, Quantum: 3000, Seed: 5}, 5)
	b, _, sb := chaos(t, Config{CPUs: 2, Quantum: 3000, Seed: 5}, 5)
	c, _, _ := chaos(t, Config{CPUs: 2, Quantum: 3000, Seed: 6}, 5)
	if !slices.Equal(a, b) || sa.Makespan() != sb.Makespan() {
		t.Fatal("same seed, different schedules")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds, same schedule")
	}
	// Pick's clocks never go backwards, perturbed or not.
	for _, seed := range []uint64{0, 5} {
		tr, _, _ := chaos(t, Config{CPUs: 3, Quantum: 3000, Seed: seed}, 5)
		for i := 1; i < len(tr); i++ {
			if tr[i][1] < tr[i-1][1] {
				t.Fatalf("seed %d: pick %d at %d after %d", seed, i, tr[i][1], tr[i-1][1])
			}
		}
	}
}

func TestTraceEvents(t *testing.T) {
	var evs []trace.Event
	s := New(Config{Trace: func(e trace.Event) { evs = append(evs, e) }})
	t1 := s.Spawn(1, nil)
	t2 := s.Spawn(2, t1)
	s.Pick()
	s.Ran(t1, 10, 1)
	s.FutexWait(t1, 0x88, ^uint32(0), NoDeadline)
	s.Pick()
	s.Ran(t2, 30, 1)
	s.FutexWake(t2, 0x88, 1, ^uint32(0))
	t2.ExitStatus = 3
	s.Exit(t2)
	// Every event has its thread's clock: the wake happens at the waker's
	// time and moves the woken thread's clock there.
	want := []trace.Event{
		{Kind: trace.KindThreadStart, Tid: 1},
		{Kind: trace.KindThreadStart, Tid: 2, Aux: 1},
		{Kind: trace.KindSwitch, Tid: 1},
		{Kind: trace.KindBlockOn, Tid: 1, Addr: 0x88, Time: 10, Size: uint32(WaitFutex)},
		{Kind: trace.KindSwitch, Tid: 2, Aux: 1},
		{Kind: trace.KindWake, Tid: 1, Addr: 0x88, Aux: 2, Time: 30, Size: uint32(WaitFutex)},
		{Kind: trace.KindThreadExit, Tid: 2, Aux: 3, Time: 30},
	}
	if !slices.Equal(evs, want) {
		t.Fatalf("events\n%+v\nwant\n%+v", evs, want)
	}
}

func TestTidReuse(t *testing.T) {
	s := New(Config{})
	a := s.Spawn(1, nil)
	b := s.Spawn(2, a)
	s.Exit(b)
	c := s.Spawn(2, a)
	if s.Thread(2) != c || !slices.Equal(tids(s.Threads()), []int{1, 2, 2}) || s.Threads()[1] != b {
		t.Fatal("reused tid: history must keep the exited thread first")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("spawning a live tid must panic")
		}
	}()
	s.Spawn(2, a)
}

func TestPCGReference(t *testing.T) {
	// First outputs of the reference pcg32 demo (seed 42, sequence 54).
	p := newPCG32(42, 54)
	want := []uint32{0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e}
	for i, w := range want {
		if got := p.next(); got != w {
			t.Fatalf("output %d: %#x, want %#x", i, got, w)
		}
	}
}

func TestPickRanDoesNotAllocate(t *testing.T) {
	for _, seed := range []uint64{0, 1} {
		s := New(Config{Seed: seed, CPUs: 4})
		spawnN(s, 8)
		allocs := testing.AllocsPerRun(1000, func() {
			th := s.Pick()
			s.Ran(th, s.Quantum(th), 3)
		})
		if allocs != 0 {
			t.Fatalf("seed %d: %v allocations per Pick+Ran", seed, allocs)
		}
	}
}

func BenchmarkPickRan(b *testing.B) {
	s := New(Config{CPUs: 4})
	spawnN(s, 8)
	b.ReportAllocs()
	for b.Loop() {
		th := s.Pick()
		s.Ran(th, s.Quantum(th), 3)
	}
}

func TestAlone(t *testing.T) {
	s := New(Config{})
	a := s.Spawn(1, nil)
	if !s.Alone(a) {
		t.Fatal("a single thread is alone")
	}
	b := s.Spawn(2, a)
	if s.Alone(a) {
		t.Fatal("a runnable sibling: not alone")
	}
	s.FutexWait(b, 0x1000, ^uint32(0), NoDeadline)
	if !s.Alone(a) {
		t.Fatal("sibling blocked without a timeout: alone")
	}
	s.FutexWake(a, 0x1000, 1, ^uint32(0))
	s.FutexWait(b, 0x1000, ^uint32(0), 5000)
	if s.Alone(a) {
		t.Fatal("sibling waiting on a timer: not alone")
	}
}
