// Package sched is emuprof's deterministic guest-thread scheduler: per-thread
// virtual clocks, the choice of which guest thread runs next on the single
// emulated CPU, futex wait queues, blocking and waking, timers, the --cpus
// model, and deadlock detection.
//
// It is pure scheduling logic. The run loop (in cmd/emuprof) owns the
// emulator and the register contexts and drives a Scheduler like this:
//
//	for !s.Done() {
//		t := s.Pick()
//		if t == nil { // every live thread is blocked and no timer is pending
//			report(s.Deadlock())
//			break
//		}
//		// restore t.Ctx; if t.Woken, deliver t.WakeResult in rax, or
//		// re-execute the syscall if t.Wait.Restart; clear t.Woken
//		// run t for up to s.Quantum(t) instructions, stopping after a
//		// syscall that blocks or exits
//		s.Ran(t, insns, blocks)
//		// handle the syscall: it may call Block, Wake, FutexWait,
//		// FutexWake, FutexRequeue, WakeAll, Spawn or Exit
//	}
//
// # Virtual time
//
// Every thread has a clock in virtual nanoseconds. Running n instructions
// costs n×NsPerInsn nanoseconds of CPU work (see "The CPU model" for how work
// turns into clock time). A new thread starts at its parent's clock. A
// blocked thread's clock jumps to its waker's clock when it is woken (never
// backwards), or to its deadline when it times out. Nothing here reads the
// host clock, iterates a map, or depends on anything but the sequence of
// calls, so the same calls always give the same schedule.
//
// # Choosing the next thread
//
// Pick returns the runnable thread with the smallest clock. Ties go to the
// thread that has done the least CPU work (RunNs), then to the lowest thread
// id. The middle key matters only when threads compete for too few CPUs: with
// the tid alone, the same high-tid threads would lose every tie and do all
// the waiting (4 threads × 1000 ns on 3 CPUs in 10 ns quanta would end at
// 1500 ns instead of ≈1333 ns); least-work-first rotates the waiting as
// time-slicing does.
//
// Timers are events on the same time line: a blocked thread with a deadline
// competes in Pick with the time max(clock, deadline), and if it comes first
// it times out (its clock becomes that time, WakeResult is -ETIMEDOUT for a
// futex wait and 0 otherwise) and is returned. So a sleeper wakes at its
// deadline even while another thread spins; when nothing is runnable, the
// earliest timer fires. Pick returns nil only when no thread is runnable and
// no timer is pending: with live threads left that is a deadlock, and
// Deadlock reports them.
//
// Because every thread that becomes runnable enters with a clock no smaller
// than the last picked one (a woken thread takes its waker's clock, a new
// thread its parent's, a timer its deadline), the clocks returned by Pick
// never decrease: the schedule is a discrete-event simulation in virtual-time
// order, at the granularity of a quantum (Config.Quantum instructions,
// counted at block granularity by the run loop).
//
// # The CPU model
//
// --cpus N says that at most N threads make progress in the same virtual
// time interval. The scheduler models N virtual CPUs, each with the virtual
// time at which it becomes free. When a thread runs d ns of work (Ran,
// Charge), the work is placed on one CPU: it starts at max(thread clock, that
// CPU's free time) and the thread's clock and the CPU's free time both become
// start+d. The CPU chosen is the one that lets the work start earliest,
// wasting the least idle time: the CPU that became free last among those free
// by the thread's clock, or else the one that becomes free first (ties: lowest
// CPU index). Time spent waiting for a CPU is the thread's QueuedNs.
//
// This "free-at" model was preferred over stretching each quantum by R/N
// when R runnable threads exceed N CPUs, because:
//   - it is exact: the busy intervals of each CPU never overlap, so at no
//     virtual instant do more than N threads run, and it uses no division,
//     so no nanosecond is lost to rounding;
//   - it only counts contention that really overlaps in virtual time: a
//     runnable thread whose clock is far ahead (or that exits soon) does not
//     slow down the others, whereas the R/N rule charges every quantum for
//     every runnable thread whatever its clock;
//   - it is work-conserving: a CPU is idle only when no thread had work for
//     it at that virtual time, so the makespan is that of a greedy list
//     scheduler with quantum-sized slices, which is what time-slicing
//     approximates, and idle CPU time (idleness) is well defined.
//
// With N = 2, four threads with 1000 ns of work each end at 2000 ns; with
// N ≥ 4 they end at 1000 ns. The makespan (Makespan) is the largest clock any
// thread reached: the program's virtual duration.
//
// # Perturbed schedules
//
// Config.Seed = 0 gives the plain schedule above. A non-zero seed perturbs it
// deterministically, in the spirit of rr's chaos mode, to expose other legal
// interleavings: every quantum length is drawn uniformly from
// [Quantum/8, 2×Quantum], and ties between equally early threads are broken
// by a random priority drawn afresh at every Pick instead of by thread id.
// Both come from PCG32 streams seeded by Seed, so a seed always gives the
// same schedule.
//
// # Events
//
// If Config.Trace is set, the scheduler reports ThreadStart (Spawn),
// ThreadExit (Exit), Switch (Pick, when the thread changes), BlockOn (Block,
// FutexWait) and Wake (any wake or timeout; Aux is the waker's tid, 0 for a
// timeout or an external wake) as trace.Event values, synchronously, so the
// run loop should drain the emulator's event buffer before calling into the
// scheduler to keep the stream in guest order.
package sched

import (
	"fmt"
	"slices"

	"emuprof/defaults"
	"emuprof/trace"
)

// ETIMEDOUT is Linux's errno for a timed-out wait (x86-64 value, whatever the
// host). A futex wait that times out resumes with WakeResult = -ETIMEDOUT.
const ETIMEDOUT = 110

// NoDeadline is the Wait.Deadline (and FutexWait deadline) of a wait without
// a timeout. Any deadline ≤ 0 means none, so a zero Wait never times out;
// virtual time 0 precedes every guest instruction, so no real timeout is lost.
const NoDeadline int64 = -1

// Defaults applied by New to zero Config fields (package defaults).
const (
	DefaultCPUs      = defaults.CPUs
	DefaultQuantum   = defaults.Quantum // instructions
	DefaultNsPerInsn = defaults.NsPerInsn
)

// State is a thread's scheduling state. A running thread is Runnable.
type State int

// Thread states.
const (
	Runnable State = iota
	Blocked
	Exited
)

var stateNames = [...]string{"runnable", "blocked", "exited"}

// String returns the state's name.
func (st State) String() string {
	if st >= 0 && int(st) < len(stateNames) {
		return stateNames[st]
	}
	return fmt.Sprintf("State(%d)", int(st))
}

// Config configures a Scheduler. Zero fields take the defaults.
type Config struct {
	// CPUs is the number of virtual CPUs (--cpus); default 8.
	CPUs int
	// Quantum is the time slice in guest instructions; default 10000.
	Quantum uint64
	// NsPerInsn is the virtual cost of one instruction in ns; default 1.
	NsPerInsn int64
	// Seed perturbs the schedule (see the package comment); 0 = unperturbed.
	Seed uint64
	// Trace, if not nil, receives the scheduler's events as they happen.
	Trace func(trace.Event)
}

// Thread is one guest thread. The scheduler owns State, Clock, Wait and the
// statistics; the run loop may read them and owns Ctx. The run loop clears
// Woken once it has delivered a wake, and may set ExitStatus before Exit.
type Thread struct {
	Tid    int
	Parent int   // tid of the parent, 0 for the first thread
	Clock  int64 // virtual ns
	Start  int64 // Clock at Spawn
	State  State

	// Wait is what the thread waits on while Blocked. After a wake it still
	// describes the finished wait, so that the run loop can read
	// Wait.Restart; it is replaced by the next Block.
	Wait Wait
	// WakeResult is the syscall result to deliver when the thread resumes
	// after a wake (0, -ETIMEDOUT, ...), unless Wait.Restart asks to
	// re-execute the syscall instead.
	WakeResult int64
	// Woken is set when the thread leaves Blocked (wake or timeout) and
	// cleared by the next Block; the run loop clears it once it has
	// delivered WakeResult or restarted the syscall.
	Woken bool
	// TimedOut says that the last wake was the wait's deadline passing.
	// A timeout also clears Wait.Restart.
	TimedOut bool
	// ExitStatus is reported in the ThreadExit event; the run loop sets it.
	ExitStatus int

	// Statistics.
	Insns, Blocks uint64 // guest instructions and basic blocks run (Ran)
	savedRem      int64  // RanSaved's fraction of a ns still to charge, ×100
	Switches      uint64 // times Pick switched to this thread
	FutexWaits    uint64 // futex waits that blocked
	Wakeups       uint64 // times the thread left Blocked (including timeouts)
	Timeouts      uint64 // wakes caused by a deadline
	RunNs         int64  // virtual ns of CPU work (Ran, Charge)
	QueuedNs      int64  // virtual ns spent runnable but waiting for a CPU
	BlockedNs     int64  // virtual ns spent blocked
	DelayedNs     int64  // virtual ns added by Delay
	// Unless the caller sets Clock itself, Clock = Start + RunNs +
	// QueuedNs + BlockedNs + DelayedNs.

	// Ctx is the run loop's saved register context; the scheduler never
	// looks at it.
	Ctx any

	queued bool // in s.queues under (Wait.Kind, Wait.Addr)
}

// String describes the thread for deadlock reports, e.g.
// "tid 3 blocked on read pipe:[3] at 1200ns".
func (t *Thread) String() string {
	switch t.State {
	case Blocked:
		return fmt.Sprintf("tid %d blocked on %v at %dns", t.Tid, t.Wait, t.Clock)
	default:
		return fmt.Sprintf("tid %d %v at %dns", t.Tid, t.State, t.Clock)
	}
}

// Scheduler schedules the guest threads of one run. It is not safe for
// concurrent use; the run loop is its only caller.
type Scheduler struct {
	cfg Config

	all   []*Thread       // every thread ever spawned, by tid then spawn order
	live  []*Thread       // threads not exited, by tid
	byTid map[int]*Thread // latest thread with each tid (lookup only)

	queues map[waitKey]*waitQueue // lookup only, never iterated
	spare  []*waitQueue           // emptied queues kept for reuse
	moved  []*Thread              // scratch for FutexRequeue

	cpuFree []int64   // per virtual CPU: the virtual time it becomes free
	cpuLast []*Thread // per virtual CPU: the thread whose work it ran last (Pause)

	cur      *Thread // last thread returned by Pick
	now      int64   // clock of the last picked thread (never decreases)
	makespan int64

	quantumRNG, tieRNG pcg32

	deadlock []*Thread
}

// New returns a Scheduler for cfg, with defaults for zero fields.
func New(cfg Config) *Scheduler {
	if cfg.CPUs <= 0 {
		cfg.CPUs = DefaultCPUs
	}
	if cfg.Quantum == 0 {
		cfg.Quantum = DefaultQuantum
	}
	if cfg.NsPerInsn <= 0 {
		cfg.NsPerInsn = DefaultNsPerInsn
	}
	s := &Scheduler{
		cfg:     cfg,
		byTid:   make(map[int]*Thread),
		queues:  make(map[waitKey]*waitQueue),
		cpuFree: make([]int64, cfg.CPUs),
		cpuLast: make([]*Thread, cfg.CPUs),
	}
	if cfg.Seed != 0 {
		s.quantumRNG = newPCG32(cfg.Seed, 1)
		s.tieRNG = newPCG32(cfg.Seed, 2)
	}
	return s
}

// Config returns the configuration in effect (defaults filled in).
func (s *Scheduler) Config() Config { return s.cfg }

// Spawn creates a runnable thread with the given tid. Its clock is the
// parent's clock, or the current virtual time (0 at the start) when parent is
// nil. A tid may be reused only after its previous owner exited; Spawn panics
// otherwise, as that is a bug in the caller.
func (s *Scheduler) Spawn(tid int, parent *Thread) *Thread {
	if old := s.byTid[tid]; old != nil && old.State != Exited {
		panic(fmt.Sprintf("sched: Spawn: tid %d is alive", tid))
	}
	t := &Thread{Tid: tid, Clock: s.now}
	if parent != nil {
		t.Parent = parent.Tid
		t.Clock = parent.Clock
	}
	t.Start = t.Clock
	s.byTid[tid] = t
	// Insert after every thread with a tid ≤ tid: sorted, and spawn order
	// among reused tids.
	i, _ := slices.BinarySearchFunc(s.all, tid+1, cmpTid)
	s.all = slices.Insert(s.all, i, t)
	i, _ = slices.BinarySearchFunc(s.live, tid, cmpTid)
	s.live = slices.Insert(s.live, i, t)
	s.bump(t.Clock)
	s.emit(trace.KindThreadStart, t, 0, uint64(t.Parent), 0)
	return t
}

func cmpTid(t *Thread, tid int) int {
	switch {
	case t.Tid < tid:
		return -1
	case t.Tid > tid:
		return 1
	}
	return 0
}

// Thread returns the thread with the given tid (the latest one if the tid was
// reused), or nil.
func (s *Scheduler) Thread(tid int) *Thread { return s.byTid[tid] }

// Threads returns every thread ever spawned, exited ones included, sorted by
// tid. The slice is a copy.
func (s *Scheduler) Threads() []*Thread { return slices.Clone(s.all) }

// Alive returns the number of threads that have not exited.
func (s *Scheduler) Alive() int { return len(s.live) }

// Done reports whether every thread has exited.
func (s *Scheduler) Done() bool { return len(s.live) == 0 }

// Now returns the current virtual time: the clock of the thread last returned
// by Pick. It never decreases.
func (s *Scheduler) Now() int64 { return s.now }

// Makespan returns the largest clock any thread has reached.
func (s *Scheduler) Makespan() int64 { return s.makespan }

// readyAt is when t could run next: its clock if runnable, its wake-up
// deadline (not before its clock) if blocked with a timeout; ready is false
// otherwise.
func (t *Thread) readyAt() (at int64, ready bool) {
	switch {
	case t.State == Runnable:
		return t.Clock, true
	case t.State == Blocked && t.Wait.Deadline > 0:
		return max(t.Clock, t.Wait.Deadline), true
	}
	return 0, false
}

// Pick chooses the thread to run next: the runnable thread with the smallest
// clock (ties: least RunNs then lowest tid, or a random priority with a
// Seed), unless a
// blocked thread's deadline comes no later, in which case that thread times
// out (see the package comment) and is returned. It returns nil when no
// thread is runnable and no timer is pending; if threads are alive that is a
// deadlock, and Deadlock returns them. Pick does not allocate unless it finds
// a deadlock.
func (s *Scheduler) Pick() *Thread {
	var best *Thread
	var bestAt int64
	var bestPrio uint32
	drawn := false
	for _, t := range s.live {
		at, ready := t.readyAt()
		if !ready {
			continue
		}
		switch {
		case best == nil || at < bestAt:
			best, bestAt, drawn = t, at, false
		case at > bestAt:
		case s.cfg.Seed == 0:
			// Tie: least CPU work first, then lowest tid (s.live is
			// sorted by tid).
			if t.RunNs < best.RunNs {
				best = t
			}
		default:
			if !drawn {
				bestPrio, drawn = s.tieRNG.next(), true
			}
			// s.live is sorted by tid, so on equal priorities the
			// lower tid (already best) stays.
			if p := s.tieRNG.next(); p < bestPrio {
				best, bestPrio = t, p
			}
		}
	}
	s.deadlock = nil
	if best == nil {
		if len(s.live) > 0 {
			s.deadlock = slices.Clone(s.live)
		}
		return nil
	}
	if best.State == Blocked {
		s.dequeue(best)
		best.TimedOut = true
		best.Timeouts++
		best.Wait.Restart = false
		result := int64(0)
		if best.Wait.Kind == WaitFutex {
			result = -ETIMEDOUT
		}
		s.resume(best, bestAt, 0, result)
	}
	s.now = max(s.now, best.Clock)
	if best != s.cur {
		prev := 0
		if s.cur != nil {
			prev = s.cur.Tid
		}
		s.cur = best
		best.Switches++
		s.emit(trace.KindSwitch, best, 0, uint64(prev), 0)
	}
	return best
}

// Deadlock returns the live threads as they were when Pick last returned nil
// with threads alive (all blocked, no timer pending), sorted by tid; nil if
// the last Pick found a thread to run or everything has exited.
func (s *Scheduler) Deadlock() []*Thread { return slices.Clone(s.deadlock) }

// Quantum returns how many guest instructions t may run before the next
// Pick: Config.Quantum, or with a Seed a length drawn uniformly from
// [Quantum/8, 2×Quantum].
func (s *Scheduler) Quantum(t *Thread) uint64 {
	q := s.cfg.Quantum
	if s.cfg.Seed == 0 {
		return q
	}
	lo := max(q/8, 1)
	return lo + s.quantumRNG.bounded(2*q-lo+1)
}

// Alone says whether t is the only thread that could run before t's next
// system call: no other thread is runnable or waiting on a timer. The run
// loop then need not preempt t at all (the next Pick would choose t again),
// which saves a trip out of the emulator per quantum.
func (s *Scheduler) Alone(t *Thread) bool {
	for _, u := range s.live {
		if u != t && (u.State == Runnable || u.State == Blocked && u.Wait.Deadline > 0) {
			return false
		}
	}
	return true
}

// Ran records that t ran insns guest instructions in blocks basic blocks and
// advances its clock by insns×NsPerInsn ns of work through the CPU model
// (see Charge).
func (s *Scheduler) Ran(t *Thread, insns, blocks uint64) {
	t.Insns += insns
	t.Blocks += blocks
	s.Charge(t, int64(insns)*s.cfg.NsPerInsn)
}

// RanSaved is Ran for a slice whose sped-up instructions (emuprof run
// --speedup) saved saved hundredths of an instruction's cost: the clock
// advances by (insns×100 − saved)×NsPerInsn/100 ns, the fraction of a ns
// carried over to the thread's next slice. With saved 0 it is Ran.
func (s *Scheduler) RanSaved(t *Thread, insns, blocks, saved uint64) {
	if saved == 0 && t.savedRem == 0 {
		s.Ran(t, insns, blocks)
		return
	}
	t.Insns += insns
	t.Blocks += blocks
	units := (int64(insns)*100-int64(saved))*s.cfg.NsPerInsn + t.savedRem
	t.savedRem = units % 100
	s.Charge(t, units/100)
}

// RanNs is Ran for a slice whose cost a time model worked out: ns of CPU
// work (--time-model).
func (s *Scheduler) RanNs(t *Thread, insns, blocks uint64, ns int64) {
	t.Insns += insns
	t.Blocks += blocks
	s.Charge(t, ns)
}

// Charge advances t's clock by ns of CPU work through the CPU model: the
// work occupies one virtual CPU from max(t.Clock, the CPU's free time) for ns
// nanoseconds. It is Ran without instruction counts, for costs computed by
// the caller.
func (s *Scheduler) Charge(t *Thread, ns int64) {
	if ns <= 0 {
		return
	}
	c := s.cpuFor(t)
	start := max(t.Clock, s.cpuFree[c])
	t.QueuedNs += start - t.Clock
	t.RunNs += ns
	end := start + ns
	s.cpuFree[c] = end
	s.cpuLast[c] = t
	t.Clock = end
	s.bump(end)
}

// cpuFor chooses the virtual CPU t's next work runs on. Best fit: the CPU
// that became free last by t.Clock, so that CPUs free earlier stay
// available to threads with earlier clocks; if all are busy past t.Clock,
// the one that frees first.
func (s *Scheduler) cpuFor(t *Thread) int {
	fit, first := -1, 0
	for i, f := range s.cpuFree {
		if f <= t.Clock && (fit < 0 || f > s.cpuFree[fit]) {
			fit = i
		}
		if f < s.cpuFree[first] {
			first = i
		}
	}
	if fit < 0 {
		return first
	}
	return fit
}

// StartTime is the virtual time at which work t does now starts: its clock,
// or later if every CPU is busy then. Run slices of t are stamped from it,
// so that events carry the times Ran then gives them.
func (s *Scheduler) StartTime(t *Thread) int64 {
	return max(t.Clock, s.cpuFree[s.cpuFor(t)])
}

// Delay advances t's clock by ns without occupying a CPU, as if the thread
// paused (e.g. virtual speedups in causal profiling, or a modelled syscall
// latency).
func (s *Scheduler) Delay(t *Thread, ns int64) {
	if ns <= 0 {
		return
	}
	t.Clock += ns
	t.DelayedNs += ns
	s.bump(t.Clock)
}

// Pause is Delay for a pause of causal profiling's virtual speedup (Coz
// §4.4: while one thread runs the selected line, every other thread
// pauses). The threads pause together, so a CPU that t holds (its last work
// was t's and ends at t's clock) runs nothing during t's pause: its free
// time moves with t's clock, and a thread queued behind t, pausing too,
// starts that much later, as it would natively. With Delay alone the
// pauses of threads that share a CPU would overlap their waits for it and
// vanish: a virtual speedup on a machine with more runnable threads than
// CPUs would not slow the others at all.
func (s *Scheduler) Pause(t *Thread, ns int64) {
	if ns <= 0 {
		return
	}
	for c, u := range s.cpuLast {
		if u == t && s.cpuFree[c] == t.Clock {
			s.cpuFree[c] += ns
		}
	}
	s.Delay(t, ns)
}

// Exit marks t exited. A blocked thread (e.g. killed by exit_group) leaves
// its wait queue. Exiting twice is a no-op.
func (s *Scheduler) Exit(t *Thread) {
	if t.State == Exited {
		return
	}
	s.dequeue(t)
	t.State = Exited
	if i, ok := slices.BinarySearchFunc(s.live, t.Tid, cmpTid); ok && s.live[i] == t {
		s.live = slices.Delete(s.live, i, i+1)
	}
	s.emit(trace.KindThreadExit, t, 0, uint64(int64(t.ExitStatus)), 0)
}

// bump raises the makespan to clock.
func (s *Scheduler) bump(clock int64) {
	if clock > s.makespan {
		s.makespan = clock
	}
}

// emit reports an event of thread t, stamped with t's clock.
func (s *Scheduler) emit(kind trace.Kind, t *Thread, addr, aux uint64, size uint32) {
	if s.cfg.Trace != nil {
		s.cfg.Trace(trace.Event{Kind: kind, Tid: uint32(t.Tid), Time: t.Clock, Addr: addr, Aux: aux, Size: size})
	}
}
