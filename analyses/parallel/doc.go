// Package parallel attributes work, idleness, overhead and lock waiting to
// calling contexts, as HPCToolkit does (Tallent & Mellor-Crummey, "Effective
// Performance Measurement and Analysis of Multithreaded Applications",
// PPoPP'09, cited TM09 below; the implementable write-up is
// shared/specs/PARALLEL-HPCTOOLKIT.md, cited "spec"), but exactly: the
// emulator knows, for every virtual nanosecond, which thread runs which
// block on which of the run's virtual cores, so the paper's sampled
// estimators become integrals (spec §2.1, §2.3).
//
// # Metrics (spec §2.1)
//
// A thread is working while it runs a block that is not a spin-wait; it is
// idle while blocked (futex, sleep, I/O, join), queued for a core, or
// spinning. With n cores and n_w(t) working threads (n_w ≤ n: the CPU model
// never runs more than n threads at once):
//
//	W(c)  = Σ virtual time of the blocks run in context c            (work)
//	I(c)  = Σ ∫ (n − n_w(t)) / n_w(t) dt over c's working time       (idleness, TM09 §2.1)
//	O(c)  = the part of W(c) spent in parallel-runtime code          (overhead, TM09 §2.2)
//	I_unattributed = ∫ [n_w(t) = 0] · n dt                           (nobody works: TM09 cannot see it)
//
// so that Σ W + Σ I + I_unattributed = n × makespan exactly (spec
// invariant 1). With --idle-base threads (HPCToolkit's code, spec §1.1) the
// idle count is the number of threads that are blocked or spinning instead
// of n − n_w. Per context, idleness is kept exactly as numerators per
// working-thread count k (Σ n_idle·dt while k threads work) and rounded to
// integer nanoseconds at the end by largest remainder within each k, so the
// totals stay exact.
//
// # Reconstructing the global timeline
//
// Events of different threads arrive in emulation order, not in time order:
// the scheduler (package sched) runs one thread for a slice (up to a quantum
// of instructions), then picks the runnable thread with the smallest clock,
// and each slice is placed on the virtual CPU that lets it start earliest.
// A slice of thread A that covers [t, t+q) is delivered entirely before the
// slice of B that covers [t+5, t+q+5) on another core. Idleness at time t
// depends on every thread's state at t, so it cannot be computed when a
// block arrives.
//
// Work, overhead, spin, waiting and lock blame need no global view and are
// added when their event arrives. For idleness, each thread keeps the
// intervals of its recent working blocks (consecutive blocks with the same
// context and line merged); a sweep integrates them over [swept, w) in time
// order, cutting the timeline wherever the number of working threads
// changes, and discards them. w, the watermark, is a time before which no
// more running interval can arrive. It follows from the scheduler's rules:
//
//   - Picks happen in non-decreasing clock order, and every event after a
//     pick has a time no earlier than that pick's clock: a runnable thread
//     runs from its own clock on, a woken thread takes its waker's clock, a
//     timeout fires at a deadline that the pick order reached, a new thread
//     starts at its parent's clock.
//   - The clock of the latest pick is at least the clock of the running
//     thread when its current run of blocks began (its clock before the
//     first block after another thread's block, or after a gap or a wake),
//     and, once that run is longer than a slice can be (2 × quantum
//     instructions, or one larger block: Env.Sched), at least its time
//     that many instructions back (runWindow counts them, at least, and
//     keeps checkpoints: under a time model a slice's ns bound, 2 × quantum
//     × MaxInsnNs, is over 100 ms): within a run a thread re-picked
//     continues on the core it left, so a later slice starts exactly at
//     its clock.
//
// So w = max over the runs seen of that bound, capped by the clock of every
// runnable thread. The sweep runs after a batch once w is an eighth of
// that length (at NsPerInsn) past what was swept (sweepDiv: where the timeline is cut
// does not change the result, and small batches would otherwise each pay
// for a sweep); pending intervals stay bounded by about a slice per
// thread. A hidden --parallel-sweep-at-end keeps every interval until the
// end instead, and the tests check that sweeping after every batch, by
// that rule and at the end give identical profiles; an interval that would
// arrive behind w anyway (none is known) is counted as "late" and reported.
//
// # Calling contexts (TM09 §3–§4, spec §1.3)
//
// Contexts are logical: a thread's context is its creation context (the
// context of the thread that created it, at the ThreadStart: TM09 §4.2)
// followed by its own calls, from the shared call-tracking stage; a chain of
// runtime frames (pthread, libgomp, and the libc helpers they call) is
// collapsed into the routine through which user code entered the runtime,
// and user code called back by the runtime (a thread's start routine, an
// OpenMP outlined body) starts a new user frame. So a worker of
// pthread_create runs in main>pthread_create>worker, and an OpenMP worker's
// share of a parallel loop in main>GOMP_parallel>main._omp_fn.0, the same
// context as the master's share. Leaves are source lines (DWARF) or, without
// lines, routines.
//
// # Overhead and spinning (TM09 §2.2, spec §1.2, §4.3–4.4)
//
// Work in a collapsed runtime chain, or in a block of a runtime routine, is
// overhead of the context that entered the runtime. Runtime routines are
// known by name (pthread_*, __lll_*, futex helpers, sem_*, GOMP_*, gomp_*,
// omp_*, musl's __wait/__wake/__timedwait, ...) or by object (libpthread,
// libgomp, libomp, ...). A thread spins when it runs a spin loop known by
// name (libgomp's do_spin and do_wait, glibc's pthread_spin_lock, ...) or
// runtime code that cycles through the same few runtime blocks (spinCycle
// consecutive blocks within a cycle of at most four; other code breaks the
// cycle), as those loops do while re-reading a word another thread will
// write (stripped runtimes have no names). With --spin idle (the
// default, TM09 and spec §4.3: a spinning core does no useful work) spin
// time is idleness, recorded as the spin metric of the spinner's context;
// with --spin overhead (issue 13's wording) it is work and overhead.
//
// # Runs of blocks
//
// The engine may deliver consecutive blocks as one event (Encoding.Fold):
// runs of one routine and line, whose time goes to one key whatever their
// blocks. Spin detection counts the runtime blocks (but the spin loops
// known by name) that repeat one of the thread's last four such blocks; the
// engine keeps those four per thread and flags each block that repeats
// (Encoding.Repeats, Event.Repeat), so an ordinary run of runtime blocks,
// which holds none that repeats, resets the count: a lock's fast path is
// one event per routine. A loop that alternates between lines needs each
// line's share, so every block may also come in a periodic run
// (Encoding.FoldCycles): a run that repeats the last p ≤ 4 blocks the thread
// ran, of its routine, each named by its event. Each thread keeps its last
// blocks (hist), so the analysis knows every block of such a run
// (periodicRun) and attributes it exactly as block by block. In runtime
// code every block of such a run repeats one of the four before it: the
// i-th raises the cycle count to cyc + i + 1, and the first
// spinCycle − 1 − cyc blocks work and the rest spin. A run of blocks of
// several lines is charged to each line its blocks' time, and its working
// time becomes one periodic piece of the timeline, which the sweep splits
// by line arithmetically (piece.share):
// pieces stay one per event. A libgomp barrier's 3-block spin loop and
// omp_reduce's loop over two lines then cost one event per 256 blocks.
//
// # Repeat events
//
// The engine replays a loop whose blocks and events repeat and, with
// Encoding.RepeatEvents, writes one period and a Repeat event for the
// repetitions; the call stage hands it on when its state repeats (package
// analyses). The analysis handles the period and, when the period left the
// thread as it found it (its stacks, last blocks, spin count, its clock dt
// later) and its time is one stretch of working pieces, multiplies the
// period's charges and lays the repetitions on the timeline as one
// periodic piece whose pattern is the period's pieces, split by the sweep
// arithmetically as a periodic run's. Otherwise it handles the
// repetitions one by one (repeat.go). On mutex_counter 4 1000000 the
// 4 M iterations of the lock loop come as 19,361 Repeat events, all
// charged at once.
//
// # Lock-wait blame (spec §1.4: HPCToolkit's later directed blame, not TM09)
//
// A futex wait is classified by the routines on the waiter's stack (lock,
// condvar, barrier, join, semaphore, unexplained). The waiting time since a
// lock's previous release accumulates on the futex address and is charged,
// when a thread wakes a waiter of that address (its release), to the
// releaser's context at that moment (blame_at_release): the lockwait metric
// for lock waits, and the blame metric for every futex wait. Blame is a
// separate metric, never added to idleness: the waiter's core also shows up
// as undirected idleness of whoever works meanwhile. Blame still pending at
// the end (locks never released, waits that timed out) is "unreleased".
package parallel
