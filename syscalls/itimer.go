package syscalls

// Interval timers on the virtual clock: alarm, setitimer, getitimer
// (kernel/time/itimer.c). ITIMER_REAL counts virtual time: the runtime
// asks TimerDeadline, and calls FireTimer when the process's virtual time
// reaches it (SIGALRM, from the kernel, to the process), so that the
// signal arrives at the same guest instruction on every run.
// ITIMER_VIRTUAL and ITIMER_PROF count the process's virtual CPU time
// (the runtime charges each run slice with ChargeCPU and stops slices
// when one runs out): SIGVTALRM and SIGPROF, to the running thread
// preferably (account_process_tick's check_cpu_itimer).

const (
	itimerReal    = 0
	itimerVirtual = 1
	itimerProf    = 2
)

// itimer is one interval timer. For ITIMER_REAL, deadline is the absolute
// virtual time of its expiry (0: disarmed); for the others, value is the
// CPU time left (0: disarmed).
type itimer struct {
	deadline, value, interval int64
}

// remaining is itimer_get_remtime: the time left, 1 µs for an expired
// timer whose signal is still to come, 0 if disarmed.
func (t *itimer) remaining(which int, now int64) int64 {
	if which != itimerReal {
		return t.value
	}
	if t.deadline == 0 {
		return 0
	}
	return max(t.deadline-now, 1000)
}

// getTimeval reads a struct timeval as ns: EINVAL unless valid.
func (k *Kernel) getTimeval(addr uint64) (int64, Errno) {
	b := make([]byte, 16)
	if e := k.copyIn(addr, b); e != 0 {
		return 0, e
	}
	sec, usec := int64(le.Uint64(b)), int64(le.Uint64(b[8:]))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return 0, eINVAL
	}
	return sec*1e9 + usec*1e3, 0
}

// putItimerval writes value and interval (ns) as a struct itimerval.
func (k *Kernel) putItimerval(addr uint64, interval, value int64) Errno {
	b := make([]byte, 32)
	le.PutUint64(b, uint64(interval/1e9))
	le.PutUint64(b[8:], uint64(interval%1e9/1e3))
	le.PutUint64(b[16:], uint64(value/1e9))
	le.PutUint64(b[24:], uint64(value%1e9/1e3))
	return k.copyOut(addr, b)
}

// setItimer is do_setitimer: it returns the old value and interval.
func (k *Kernel) setItimer(which int, now, value, interval int64) (oldValue, oldInterval int64) {
	t := &k.itimers[which]
	oldValue, oldInterval = t.remaining(which, now), t.interval
	if value == 0 {
		interval = 0
	}
	t.interval = interval
	if which == itimerReal {
		t.deadline = 0
		if value != 0 {
			t.deadline = now + value
		}
	} else {
		t.value = value
		if value > 0 {
			t.value += tickNsec // set_cpu_itimer
		}
	}
	return oldValue, oldInterval
}

// tickNsec is the emulated kernel's tick (HZ=250, Debian's), which
// set_cpu_itimer adds to a CPU-time timer's first expiry.
const tickNsec = 4_000_000

func sysSetitimer(k *Kernel, c *Call) Outcome {
	which := int(int32(c.Args[0]))
	var value, interval int64
	if c.Args[1] != 0 {
		var e Errno
		if interval, e = k.getTimeval(c.Args[1]); e != 0 {
			return fail(e)
		}
		if value, e = k.getTimeval(c.Args[1] + 16); e != 0 {
			return fail(e)
		}
	}
	if which < itimerReal || which > itimerProf {
		return fail(eINVAL)
	}
	ov, oi := k.setItimer(which, c.Now, value, interval)
	if c.Args[2] != 0 {
		return result(0, k.putItimerval(c.Args[2], oi, ov))
	}
	return ok(0)
}

func sysGetitimer(k *Kernel, c *Call) Outcome {
	which := int(int32(c.Args[0]))
	if which < itimerReal || which > itimerProf {
		return fail(eINVAL)
	}
	t := &k.itimers[which]
	return result(0, k.putItimerval(c.Args[1], t.interval, t.remaining(which, c.Now)))
}

// sysAlarm is alarm_setitimer: the seconds left of the previous alarm,
// rounded to the nearest (never 0 for a pending one).
func sysAlarm(k *Kernel, c *Call) Outcome {
	old, _ := k.setItimer(itimerReal, c.Now, int64(uint32(c.Args[0]))*1e9, 0)
	sec, nsec := old/1e9, old%1e9
	if sec == 0 && nsec != 0 || nsec >= 5e8 {
		sec++
	}
	return ok(uint64(sec))
}

// TimerDeadline returns the virtual time at which ITIMER_REAL or the first
// POSIX timer on a wall or monotonic clock expires (0: none is armed).
func (k *Kernel) TimerDeadline() int64 {
	d, p := k.itimers[itimerReal].deadline, k.timerDeadline()
	if d == 0 || p != 0 && p < d {
		return p
	}
	return d
}

// FireTimers expires the timers due at virtual time now: ITIMER_REAL sends
// SIGALRM from the kernel to the process and is rearmed by its interval
// (it_real_fn, hrtimer_forward); then the POSIX timers (sys_timer.go). It
// returns a signal that kills the process (0: none).
func (k *Kernel) FireTimers(now int64) (fatal int) {
	if t := &k.itimers[itimerReal]; t.deadline != 0 && t.deadline <= now {
		if t.interval > 0 {
			for t.deadline <= now {
				t.deadline += t.interval
			}
		} else {
			t.deadline = 0
		}
		if k.Send(k.cfg.Pid, NewSigInfo(sigAlrm, SIKernel), true).Fatal {
			fatal = sigAlrm
		}
	}
	if sig := k.firePosixTimers(now); fatal == 0 {
		fatal = sig
	}
	return fatal
}

// sysRestartSyscall: the runtime never leaves a restart block for the
// guest to resume (it restarts interrupted calls itself), so this is
// do_no_restart_syscall.
func sysRestartSyscall(*Kernel, *Call) Outcome { return fail(eINTR) }

// CPUTimersArmed reports whether ITIMER_VIRTUAL or ITIMER_PROF runs.
func (k *Kernel) CPUTimersArmed() bool {
	return k.itimers[itimerVirtual].value > 0 || k.itimers[itimerProf].value > 0 || k.cpuTimerLeft() > 0
}

// CPUTimerLeft returns the CPU time left before the first of ITIMER_VIRTUAL,
// ITIMER_PROF and the CPU-clock POSIX timers expires (0: none runs).
func (k *Kernel) CPUTimerLeft() int64 {
	left := k.cpuTimerLeft()
	for _, w := range [2]int{itimerVirtual, itimerProf} {
		if v := k.itimers[w].value; v > 0 && (left == 0 || v < left) {
			left = v
		}
	}
	return left
}

// ChargeCPU counts ns of CPU time that thread tid ran against
// ITIMER_VIRTUAL and ITIMER_PROF; one that runs out sends SIGVTALRM or
// SIGPROF to the process, preferably to tid, and is rearmed with its
// interval (the intervals that passed meanwhile are overruns). It reports
// whether a signal kills the process.
func (k *Kernel) ChargeCPU(tid int, ns int64) (fatal int) {
	for _, w := range [2]int{itimerVirtual, itimerProf} {
		t := &k.itimers[w]
		if t.value <= 0 || ns <= 0 {
			continue
		}
		if t.value -= ns; t.value > 0 {
			continue
		}
		if t.interval > 0 {
			for t.value <= 0 {
				t.value += t.interval
			}
		} else {
			t.value = 0
		}
		sig := sigVtalrm
		if w == itimerProf {
			sig = sigProf
		}
		if r := k.Send(tid, NewSigInfo(sig, SIKernel), true); r.Fatal && fatal == 0 {
			fatal = sig
		}
	}
	if sig := k.chargeTimers(tid, ns); fatal == 0 {
		fatal = sig
	}
	return fatal
}
