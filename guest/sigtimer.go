// ITIMER_REAL on the virtual clock: when a process timer fires, and how it
// bounds a run slice.

package guest

import "emuprof/sched"

// trackTimer notes that p's ITIMER_REAL may be armed.
func (p *Process) trackTimer() {
	if p.kernel.TimerDeadline() == 0 {
		return
	}
	for _, q := range p.m.sig.timed {
		if q == p {
			return
		}
	}
	p.m.sig.timed = append(p.m.sig.timed, p)
}

// fireTimers expires the process timers due before anything else can
// happen in virtual time (the next Pick), in the order they were armed.
func (p *Process) fireTimers() {
	s := &p.m.sig
	next, any := p.sched.Next()
	kept := s.timed[:0]
	for _, q := range s.timed {
		d := q.kernel.TimerDeadline()
		if d == 0 || q.exited {
			continue
		}
		if !any || d <= next {
			// One signal per expiry seen: intervals that passed meanwhile
			// are overruns, as for a signal still pending.
			s.timer, s.timerAt = true, d
			sig := q.kernel.FireTimers(max(d, p.sched.Now()))
			s.timer = false
			if p.digest != nil {
				p.hash(0xa1a2, uint64(q.pid), uint64(d))
			}
			if sig != 0 {
				q.killedBySignal(sig)
			}
		}
		if !q.exited && q.kernel.TimerDeadline() != 0 {
			kept = append(kept, q)
		}
	}
	clear(s.timed[len(kept):])
	s.timed = kept
}

// timerBudget caps a slice of thread t so that it stops when the earliest
// process timer expires, or when its process's ITIMER_VIRTUAL or
// ITIMER_PROF runs out (0: no limit).
func (p *Process) timerBudget(t *sched.Thread, budget uint64) uint64 {
	ns := p.sched.Config().NsPerInsn
	if left := p.kernel.CPUTimerLeft(); left > 0 {
		n := uint64(max((left+ns-1)/ns, 1))
		if budget == 0 || n < budget {
			budget = n
		}
	}
	start := p.sched.StartTime(t)
	for _, q := range p.m.sig.timed {
		d := q.kernel.TimerDeadline()
		if d == 0 {
			continue
		}
		n := uint64(1)
		if d > start {
			n = uint64((d - start + ns - 1) / ns)
		}
		if budget == 0 || n < budget {
			budget = n
		}
	}
	return budget
}
