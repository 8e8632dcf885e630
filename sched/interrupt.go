package sched

// Interrupt wakes the blocked thread t because a signal interrupts its
// wait, at virtual time at (never before Now, so that picked clocks never
// decrease; its own clock if later), as a wake by waker (nil: a timer).
// WakeResult is 0: the run loop decides what the interrupted call returns.
// It reports whether t was blocked.
func (s *Scheduler) Interrupt(t *Thread, waker *Thread, at int64) bool {
	if t.State != Blocked {
		return false
	}
	s.dequeue(t)
	tid := 0
	if waker != nil {
		tid = waker.Tid
		at = max(at, waker.Clock)
	}
	s.resume(t, max(at, s.now), tid, 0)
	return true
}

// Waiting reports whether no live thread is runnable: each is blocked,
// some perhaps until a deadline.
func (s *Scheduler) Waiting() bool {
	for _, t := range s.live {
		if t.State == Runnable {
			return false
		}
	}
	return true
}

// Next returns the virtual time of the next Pick, if nothing changes
// before it: the smallest clock of a runnable thread or deadline of a
// blocked one (max with its clock). ok is false when there is none. The
// run loop fires the process timers that expire by then first.
func (s *Scheduler) Next() (at int64, ok bool) {
	for _, t := range s.live {
		a, ready := t.readyAt()
		if !ready {
			continue
		}
		if !ok || a < at {
			at, ok = a, true
		}
	}
	return at, ok
}
