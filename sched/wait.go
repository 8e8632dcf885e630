package sched

import (
	"fmt"

	"emuprof/trace"
)

// WaitKind says what a blocked thread waits for; the kinds are the event
// stream's (trace.WaitKind), so BlockOn and Wake events say it.
type WaitKind = trace.WaitKind

// Wait kinds. WaitNone is the zero value and is not used by a blocked thread.
const (
	WaitNone      = trace.WaitNone
	WaitFutex     = trace.WaitFutex     // futex word; Addr = guest address
	WaitSleep     = trace.WaitSleep     // nanosleep / clock_nanosleep; Deadline set
	WaitPipeRead  = trace.WaitPipeRead  // empty pipe or socket; Addr = object id
	WaitPipeWrite = trace.WaitPipeWrite // full pipe or socket; Addr = object id
	WaitPoll      = trace.WaitPoll      // poll / select / epoll_wait; Addr = object id
	WaitJoin      = trace.WaitJoin      // waiting for a thread or child; Addr = its id
	WaitStdin     = trace.WaitStdin     // host stdin; Addr = 0 or fd
	WaitOther     = trace.WaitOther     // anything else
)

// Wait describes what a blocked thread waits on. Threads blocked on the same
// (Kind, Addr) form one FIFO queue.
type Wait struct {
	Kind WaitKind
	// Addr is the futex address, or an id of the object waited on
	// (pipe, poll set, thread...), chosen by the caller.
	Addr uint64
	// Bitset is the futex wait bitset (FUTEX_BITSET_MATCH_ANY = 0xffffffff
	// for plain FUTEX_WAIT); a FutexWake wakes the waiter only if the two
	// bitsets intersect.
	Bitset uint32
	// Deadline is the absolute virtual time at which the wait times out;
	// ≤ 0 (NoDeadline) means never.
	Deadline int64
	// Restart asks the run loop to re-execute the syscall when the thread
	// is woken (pipes, poll) rather than return WakeResult. A timeout
	// clears it.
	Restart bool
	// What describes the wait for deadlock reports, e.g. "read pipe:[3]";
	// if empty, String derives one from Kind and Addr.
	What string
}

// String describes the wait for humans.
func (w Wait) String() string {
	d := w.What
	if d == "" {
		d = fmt.Sprintf("%v %#x", w.Kind, w.Addr)
	}
	if w.Deadline > 0 {
		d += fmt.Sprintf(" until %dns", w.Deadline)
	}
	return d
}

type waitKey struct {
	kind WaitKind
	addr uint64
}

// waitQueue holds the threads blocked on one (kind, addr) in arrival order.
type waitQueue struct {
	ts []*Thread
}

func (s *Scheduler) queue(k waitKey) *waitQueue {
	q := s.queues[k]
	if q == nil {
		if n := len(s.spare); n > 0 {
			q = s.spare[n-1]
			s.spare = s.spare[:n-1]
		} else {
			q = new(waitQueue)
		}
		s.queues[k] = q
	}
	return q
}

// compact keeps the first n threads of q and frees q if it is empty.
func (s *Scheduler) compact(k waitKey, q *waitQueue, n int) {
	clear(q.ts[n:])
	q.ts = q.ts[:n]
	if n == 0 {
		delete(s.queues, k)
		s.spare = append(s.spare, q)
	}
}

func (s *Scheduler) dequeue(t *Thread) {
	if !t.queued {
		return
	}
	t.queued = false
	k := waitKey{t.Wait.Kind, t.Wait.Addr}
	q := s.queues[k]
	for i, u := range q.ts {
		if u == t {
			copy(q.ts[i:], q.ts[i+1:])
			s.compact(k, q, len(q.ts)-1)
			return
		}
	}
}

// Waiters returns how many threads are blocked on (kind, addr).
func (s *Scheduler) Waiters(kind WaitKind, addr uint64) int {
	if q := s.queues[waitKey{kind, addr}]; q != nil {
		return len(q.ts)
	}
	return 0
}

// Block parks t (normally the running thread) on w. It joins the tail of the
// FIFO queue of (w.Kind, w.Addr) and stays blocked until a Wake, FutexWake,
// FutexRequeue, WakeAll or its deadline. Blocking a thread that is not
// runnable is a bug in the caller and panics.
func (s *Scheduler) Block(t *Thread, w Wait) {
	if t.State != Runnable {
		panic(fmt.Sprintf("sched: Block: tid %d is %v", t.Tid, t.State))
	}
	t.State = Blocked
	t.Wait = w
	t.Woken = false
	t.TimedOut = false
	t.WakeResult = 0
	q := s.queue(waitKey{w.Kind, w.Addr})
	q.ts = append(q.ts, t)
	t.queued = true
	s.emit(trace.KindBlockOn, t, w.Addr, 0, uint32(w.Kind))
}

// Wake makes the blocked thread t runnable with WakeResult = result. Its
// clock becomes max(its clock, waker's clock); with a nil waker (an event
// from outside the guest), max(its clock, Now()). It reports whether t was
// blocked; waking a thread that is not blocked does nothing.
func (s *Scheduler) Wake(t *Thread, waker *Thread, result int64) bool {
	if t.State != Blocked {
		return false
	}
	s.dequeue(t)
	at, tid := s.wakeTime(waker)
	s.resume(t, at, tid, result)
	return true
}

// wakeTime returns the time and tid of a waker; a nil waker wakes at Now().
func (s *Scheduler) wakeTime(waker *Thread) (int64, int) {
	if waker == nil {
		return s.now, 0
	}
	return waker.Clock, waker.Tid
}

// resume makes the blocked, dequeued thread t runnable at time at.
func (s *Scheduler) resume(t *Thread, at int64, waker int, result int64) {
	t.State = Runnable
	if at > t.Clock {
		t.BlockedNs += at - t.Clock
		t.Clock = at
		s.bump(at)
	}
	t.WakeResult = result
	t.Woken = true
	t.Wakeups++
	s.emit(trace.KindWake, t, t.Wait.Addr, uint64(waker), uint32(t.Wait.Kind))
}

// FutexWait blocks t on the futex at addr with the given bitset and absolute
// deadline (≤ 0: none), like FUTEX_WAIT / FUTEX_WAIT_BITSET once the caller
// has checked that the futex word still holds the expected value. On a
// timeout the thread resumes with WakeResult -ETIMEDOUT.
func (s *Scheduler) FutexWait(t *Thread, addr uint64, bitset uint32, deadline int64) {
	s.Block(t, Wait{Kind: WaitFutex, Addr: addr, Bitset: bitset, Deadline: deadline})
	t.FutexWaits++
}

// FutexWake wakes, in arrival order, up to n threads waiting on the futex at
// addr whose bitset intersects bitset (FUTEX_WAKE passes 0xffffffff), with
// WakeResult 0. It returns the number woken.
func (s *Scheduler) FutexWake(waker *Thread, addr uint64, n int, bitset uint32) int {
	k := waitKey{WaitFutex, addr}
	q := s.queues[k]
	if q == nil || n <= 0 {
		return 0
	}
	at, tid := s.wakeTime(waker)
	woken, kept := 0, 0
	for _, t := range q.ts {
		if woken < n && t.Wait.Bitset&bitset != 0 {
			t.queued = false
			s.resume(t, at, tid, 0)
			woken++
			continue
		}
		q.ts[kept] = t
		kept++
	}
	s.compact(k, q, kept)
	return woken
}

// FutexRequeue implements FUTEX_REQUEUE / FUTEX_CMP_REQUEUE (after the
// caller's compare): it wakes up to nWake waiters of addr in arrival order
// (whatever their bitsets, as Linux does), then moves up to nRequeue of the
// remaining ones, in order, to the tail of addr2's queue, keeping their
// bitsets and deadlines. It returns woken+requeued, the FUTEX_CMP_REQUEUE
// result; the number woken alone is min(nWake, Waiters(WaitFutex, addr))
// taken before the call.
func (s *Scheduler) FutexRequeue(waker *Thread, addr uint64, nWake int, addr2 uint64, nRequeue int) int {
	k := waitKey{WaitFutex, addr}
	q := s.queues[k]
	if q == nil {
		return 0
	}
	at, tid := s.wakeTime(waker)
	woken, kept := 0, 0
	moved := s.moved[:0]
	for _, t := range q.ts {
		switch {
		case woken < nWake:
			t.queued = false
			s.resume(t, at, tid, 0)
			woken++
		case len(moved) < nRequeue:
			moved = append(moved, t)
		default:
			q.ts[kept] = t
			kept++
		}
	}
	s.compact(k, q, kept)
	if len(moved) > 0 {
		q2 := s.queue(waitKey{WaitFutex, addr2})
		for _, t := range moved {
			t.Wait.Addr = addr2
			q2.ts = append(q2.ts, t)
		}
	}
	n := woken + len(moved)
	clear(moved)
	s.moved = moved[:0]
	return n
}

// WakeAll wakes every thread blocked on (kind, addr), in arrival order, with
// WakeResult 0 (waits on objects normally have Restart set, so the woken
// threads re-execute their syscalls). It returns the number woken; waker may
// be nil as for Wake (and for FutexWake and FutexRequeue).
func (s *Scheduler) WakeAll(waker *Thread, kind WaitKind, addr uint64) int {
	k := waitKey{kind, addr}
	q := s.queues[k]
	if q == nil {
		return 0
	}
	at, tid := s.wakeTime(waker)
	n := len(q.ts)
	for _, t := range q.ts {
		t.queued = false
		s.resume(t, at, tid, 0)
	}
	s.compact(k, q, 0)
	return n
}
