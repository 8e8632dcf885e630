package syscalls

import "math"

// POSIX per-process timers (timer_create, timer_settime, timer_gettime,
// timer_getoverrun, timer_delete), after kernel/time/posix-timers.c and
// posix-cpu-timers.c. Timers on the wall and monotonic clocks expire on the
// virtual clock with ITIMER_REAL (itimer.go: TimerDeadline, FireTimers),
// timers on CPU-time clocks with ITIMER_VIRTUAL (ChargeCPU), so that every
// signal arrives at the same guest instruction on every run. Ids count up
// from 0 per process and are never reused (posix_timer_add); exec and
// fork leave the new image without timers.

const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThread   = 2 // the C library's: the kernel sends a signal
	sigevThreadID = 4
	sigevSize     = 64 // sizeof(struct sigevent)
)

// posixTimer is one timer_create timer.
type posixTimer struct {
	id     int
	clock  int32
	cpu    bool // a CPU-time clock: left counts CPU time
	thread bool // CPU time of the creating thread only
	owner  int  // the creating thread (thread CPU clocks)
	notify int32
	signo  int
	value  uint64 // sigev_value
	tid    int    // SIGEV_THREAD_ID's target
	// deadline is the virtual time of the next expiry (wall clocks), left
	// the CPU time until it (CPU clocks); 0: disarmed.
	deadline, left, interval int64
	// overrun counts the expiries while the signal was pending;
	// lastOverrun is timer_getoverrun's (it_overrun_last).
	overrun, lastOverrun int
}

// timerKind is clockid_to_kclock and the check that the clock has timers
// (EOPNOTSUPP for the raw and coarse clocks); late is the error of the
// kclock's own timer_create, which Linux returns only after the id was
// taken and stored: EOPNOTSUPP for the alarm clocks (they need an RTC the
// emulated machine does not have, as clock_nanosleep says), EINVAL for
// the CPU clock of a process that is not this one.
func (k *Kernel) timerKind(id int32) (cpu, thread bool, e, late Errno) {
	switch id {
	case clockRealtime, clockMonotonic, clockBoottime, clockTAI:
		return false, false, 0, 0
	case clockProcessCPUTimeID:
		return true, false, 0, 0
	case clockThreadCPUTimeID:
		return true, true, 0, 0
	case clockMonotonicRaw, clockRealtimeCoarse, clockMonotonicCoarse:
		return false, false, eOPNOTSUPP, 0
	case clockRealtimeAlarm, clockBoottimeAlarm:
		return false, false, 0, eOPNOTSUPP
	}
	if id >= 0 {
		return false, false, eINVAL, 0
	}
	if id&7 == 3 {
		return false, false, 0, eINVAL // a dynamic clock (CLOCKFD): no such fd
	}
	if _, e := k.clockNow(id, 0); e != 0 {
		return false, false, 0, eINVAL
	}
	return true, id&4 != 0, 0, 0
}

func sysTimerCreate(k *Kernel, c *Call) Outcome {
	clock, evAddr, idAddr := int32(c.Args[0]), c.Args[1], c.Args[2]
	var ev [sigevSize]byte
	if evAddr != 0 {
		if e := k.copyIn(evAddr, ev[:]); e != 0 {
			return fail(e)
		}
	}
	cpu, thread, e, late := k.timerKind(clock)
	if e != 0 {
		return fail(e)
	}
	// The id is taken before the checks below, as posix_timer_add does:
	// a failed call uses one up.
	id := k.nextTimerID
	k.nextTimerID = (k.nextTimerID + 1) & math.MaxInt32
	t := &posixTimer{id: id, clock: clock, cpu: cpu, thread: thread, owner: c.Tid,
		notify: sigevSignal, signo: sigAlrm, value: uint64(id)}
	if evAddr != 0 {
		t.value = le.Uint64(ev[0:])
		t.signo = int(int32(le.Uint32(ev[8:])))
		t.notify = int32(le.Uint32(ev[12:]))
		switch t.notify {
		case sigevThreadID:
			t.tid = int(int32(le.Uint32(ev[16:])))
			if k.threads[t.tid] == nil {
				return fail(eINVAL)
			}
			fallthrough
		case sigevSignal, sigevThread:
			if t.signo <= 0 || t.signo > nSig {
				return fail(eINVAL)
			}
		case sigevNone:
		default:
			return fail(eINVAL)
		}
	}
	if e := k.putU32(idAddr, uint32(id)); e != 0 {
		return fail(e)
	}
	if late != 0 {
		return fail(late)
	}
	k.ptimers = append(k.ptimers, t)
	return ok(0)
}

// timerByID returns the timer with id and its index, or EINVAL.
func (k *Kernel) timerByID(id uint64) (*posixTimer, int, Errno) {
	for i, t := range k.ptimers {
		if uint64(uint32(t.id)) == id&math.MaxUint32 && int32(id) >= 0 {
			return t, i, 0
		}
	}
	return nil, 0, eINVAL
}

// remaining is common_timer_get's value: the time left, forwarding a
// periodic SIGEV_NONE timer (it sends nothing, so nothing rearmed it); an
// expired signalling timer whose signal is still to come shows 1 ns.
func (t *posixTimer) remaining(now int64) int64 {
	if t.cpu {
		return t.left
	}
	if t.deadline == 0 {
		return 0
	}
	if t.deadline <= now && t.notify == sigevNone {
		if t.interval == 0 {
			t.deadline = 0
			return 0
		}
		t.deadline += (now - t.deadline + t.interval) / t.interval * t.interval
	}
	return max(t.deadline-now, 1)
}

func sysTimerSettime(k *Kernel, c *Call) Outcome {
	flags, newAddr, oldAddr := c.Args[1], c.Args[2], c.Args[3]
	if newAddr == 0 {
		return fail(eINVAL)
	}
	interval, value, e := k.getItimerspec(newAddr)
	if e != 0 {
		return fail(e)
	}
	if !validTimespec(interval) || !validTimespec(value) {
		return fail(eINVAL)
	}
	t, _, e := k.timerByID(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	oldValue, oldInterval := t.remaining(c.Now), t.interval
	k.dropTimerSignal(t)
	t.interval, t.deadline, t.left, t.overrun, t.lastOverrun = 0, 0, 0, 0, 0
	if v := value.ns(); v != 0 {
		t.interval = interval.ns()
		if flags&timerAbsTime != 0 {
			now, _ := k.clockNow(t.clock, c.Now)
			v -= now
		}
		if t.cpu {
			t.left = max(v, 1)
		} else {
			t.deadline = c.Now + min(max(v, 0), math.MaxInt64-c.Now)
		}
	}
	if oldAddr != 0 {
		return result(0, k.putItimerspec(oldAddr, nsToTimespec(oldInterval), nsToTimespec(oldValue)))
	}
	return ok(0)
}

func sysTimerGettime(k *Kernel, c *Call) Outcome {
	t, _, e := k.timerByID(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	return result(0, k.putItimerspec(c.Args[1], nsToTimespec(t.interval), nsToTimespec(t.remaining(c.Now))))
}

func sysTimerGetoverrun(k *Kernel, c *Call) Outcome {
	t, _, e := k.timerByID(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	return ok(uint64(min(t.lastOverrun, math.MaxInt32)))
}

func sysTimerDelete(k *Kernel, c *Call) Outcome {
	t, i, e := k.timerByID(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	k.dropTimerSignal(t)
	k.ptimers = append(k.ptimers[:i], k.ptimers[i+1:]...)
	return ok(0)
}

// info is the siginfo of t's signal (_timer: si_tid, si_overrun,
// si_sigval).
func (t *posixTimer) info() SigInfo {
	i := NewSigInfo(t.signo, SITimer)
	le.PutUint32(i[16:], uint32(t.id))
	le.PutUint64(i[24:], t.value)
	return i
}

// isTimerInfo reports whether info is the signal of the timer with id.
func isTimerInfo(info *SigInfo, id int) bool {
	return int32(le.Uint32(info[8:])) == SITimer && int(int32(le.Uint32(info[16:]))) == id
}

// dropTimerSignal forgets t's pending signal (a timer reset or deleted
// does not deliver its old expiry).
func (k *Kernel) dropTimerSignal(t *posixTimer) {
	drop := func(q *sigQueue) {
		for j := range q.infos {
			if isTimerInfo(&q.infos[j], t.id) && q.infos[j].Signo() == t.signo {
				q.take1(j)
				return
			}
		}
	}
	drop(&k.sharedSigs)
	for _, tid := range k.liveTids() {
		drop(&k.threads[tid].pending)
	}
}

// timerDelivered completes the siginfo of a timer signal being dequeued:
// the expiries that passed while it was pending are its overrun.
func (k *Kernel) timerDelivered(info *SigInfo) {
	if int32(le.Uint32(info[8:])) != SITimer {
		return
	}
	for _, t := range k.ptimers {
		if isTimerInfo(info, t.id) {
			t.lastOverrun, t.overrun = t.overrun, 0
			le.PutUint32(info[20:], uint32(min(t.lastOverrun, math.MaxInt32)))
			return
		}
	}
}

// expire counts n expiries of t: its signal, unless it is still pending
// (then they are all overruns). It returns the signal if it kills the
// process.
func (k *Kernel) expire(t *posixTimer, n int64) (fatal int) {
	if t.notify == sigevNone {
		return 0
	}
	if k.queued(t) {
		t.overrun += int(min(n, math.MaxInt32))
		return 0
	}
	t.overrun += int(min(n-1, math.MaxInt32))
	tid, group := k.cfg.Pid, true
	if t.notify == sigevThreadID {
		tid, group = t.tid, false
	}
	if r := k.Send(tid, t.info(), group); r.Fatal {
		return t.signo
	}
	return 0
}

// queued reports whether t's signal waits in a queue.
func (k *Kernel) queued(t *posixTimer) bool {
	in := func(q *sigQueue) bool {
		for j := range q.infos {
			if isTimerInfo(&q.infos[j], t.id) {
				return true
			}
		}
		return false
	}
	if in(&k.sharedSigs) {
		return true
	}
	return t.notify == sigevThreadID && k.threads[t.tid] != nil && in(&k.threads[t.tid].pending)
}

// timerDeadline is the earliest expiry of the process's signalling timers
// on the virtual clock (0: none).
func (k *Kernel) timerDeadline() int64 {
	d := int64(0)
	for _, t := range k.ptimers {
		if !t.cpu && t.notify != sigevNone && t.deadline != 0 && (d == 0 || t.deadline < d) {
			d = t.deadline
		}
	}
	return d
}

// firePosixTimers expires the timers due at now, in id order.
func (k *Kernel) firePosixTimers(now int64) (fatal int) {
	for _, t := range k.ptimers {
		if t.cpu || t.notify == sigevNone || t.deadline == 0 || t.deadline > now {
			continue
		}
		n := int64(1)
		if t.interval > 0 {
			n = (now-t.deadline)/t.interval + 1
			t.deadline += n * t.interval
		} else {
			t.deadline = 0
		}
		if sig := k.expire(t, n); sig != 0 && fatal == 0 {
			fatal = sig
		}
	}
	return fatal
}

// cpuTimerLeft is the CPU time before the first CPU-clock timer expires
// (0: none runs).
func (k *Kernel) cpuTimerLeft() int64 {
	left := int64(0)
	for _, t := range k.ptimers {
		if t.cpu && t.left > 0 && (left == 0 || t.left < left) {
			left = t.left
		}
	}
	return left
}

// chargeTimers counts ns of thread tid's CPU time against the CPU-clock
// timers.
func (k *Kernel) chargeTimers(tid int, ns int64) (fatal int) {
	for _, t := range k.ptimers {
		if !t.cpu || t.left <= 0 || t.thread && t.owner != tid {
			continue
		}
		if t.left -= ns; t.left > 0 {
			continue
		}
		n := int64(1)
		if t.interval > 0 {
			n = -t.left/t.interval + 1
			t.left += n * t.interval
		} else {
			t.left = 0
		}
		if sig := k.expire(t, n); sig != 0 && fatal == 0 {
			fatal = sig
		}
	}
	return fatal
}
