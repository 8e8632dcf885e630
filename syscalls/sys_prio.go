package syscalls

// Scheduling policy, priority and personality queries (sched_getscheduler,
// sched_setscheduler, sched_get_priority_min/max, getpriority,
// setpriority, get_robust_list, personality, clock_settime): the answers of
// Linux for a process of this run; other pids are unknown here (ESRCH).
// The scheduler is emuprof's own: a nice value and a policy are recorded
// and reported, and do not change which thread runs.

const (
	schedOther    = 0
	schedFIFO     = 1
	schedRR       = 2
	schedBatch    = 3
	schedIdle     = 5
	schedDeadline = 6
	prioProcess   = 0
	prioUser      = 2
)

// ownPid reports whether pid (0: the caller) names this process or one of
// its threads.
func (k *Kernel) ownPid(pid int, tid int) bool {
	return pid == 0 || pid == k.cfg.Pid || pid == tid || k.threads[pid] != nil
}

func sysSchedGetscheduler(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	switch {
	case pid < 0:
		return fail(eINVAL)
	case !k.ownPid(pid, c.Tid):
		return fail(eSRCH)
	}
	return ok(uint64(k.policy))
}

func sysSchedSetscheduler(k *Kernel, c *Call) Outcome {
	pid, policy := int(int32(c.Args[0])), int(int32(c.Args[1]))
	if pid < 0 || c.Args[2] == 0 {
		return fail(eINVAL)
	}
	prio, e := k.getU32(c.Args[2])
	if e != 0 {
		return fail(e)
	}
	if !k.ownPid(pid, c.Tid) {
		return fail(eSRCH)
	}
	switch policy {
	case schedOther, schedBatch, schedIdle:
		if prio != 0 {
			return fail(eINVAL)
		}
	case schedFIFO, schedRR:
		if prio < 1 || prio > 99 {
			return fail(eINVAL)
		}
		if k.uids.eff != 0 {
			return fail(ePERM) // no RLIMIT_RTPRIO
		}
	case schedDeadline:
		return fail(eINVAL) // needs sched_setattr
	default:
		return fail(eINVAL)
	}
	k.policy = policy
	return ok(0)
}

// priorityRange is the static priority range of a policy.
func priorityRange(policy int32) (lo, hi uint64, e Errno) {
	switch policy {
	case schedFIFO, schedRR:
		return 1, 99, 0
	case schedOther, schedBatch, schedIdle, schedDeadline:
		return 0, 0, 0
	}
	return 0, 0, eINVAL
}

func sysSchedGetPriorityMax(k *Kernel, c *Call) Outcome {
	_, hi, e := priorityRange(int32(c.Args[0]))
	return result(hi, e)
}

func sysSchedGetPriorityMin(k *Kernel, c *Call) Outcome {
	lo, _, e := priorityRange(int32(c.Args[0]))
	return result(lo, e)
}

// priorityTarget checks getpriority's and setpriority's which and who.
func (k *Kernel) priorityTarget(c *Call) Errno {
	which, who := c.Args[0], int(int32(c.Args[1]))
	switch {
	case which > prioUser:
		return eINVAL
	case which == prioProcess && !k.ownPid(who, c.Tid):
		return eSRCH
	case which != prioProcess && who != 0 && who != k.cfg.Pid && who != k.uids.real:
		return eSRCH
	}
	return 0
}

// sysGetpriority returns 20 - nice, as the raw system call does.
func sysGetpriority(k *Kernel, c *Call) Outcome {
	if e := k.priorityTarget(c); e != 0 {
		return fail(e)
	}
	return ok(uint64(20 - k.nice))
}

func sysSetpriority(k *Kernel, c *Call) Outcome {
	if e := k.priorityTarget(c); e != 0 {
		return fail(e)
	}
	nice := max(-20, min(19, int(int32(c.Args[2]))))
	if nice < k.nice && k.uids.eff != 0 {
		return fail(eACCES) // lowering it needs CAP_SYS_NICE
	}
	k.nice = nice
	return ok(0)
}

func sysGetRobustList(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	if !k.ownPid(pid, c.Tid) {
		return fail(eSRCH)
	}
	tid := c.Tid
	if pid != 0 && k.threads[pid] != nil {
		tid = pid
	}
	if e := k.putU64(c.Args[1], k.thread(tid).robustList); e != 0 {
		return fail(e)
	}
	return result(0, k.putU64(c.Args[2], 24))
}

// sysPersonality reports the execution domain; 0xffffffff only asks.
func sysPersonality(k *Kernel, c *Call) Outcome {
	old := k.personality
	if p := uint32(c.Args[0]); p != 0xffffffff {
		k.personality = p
	}
	return ok(uint64(old))
}

// sysClockSettime: the virtual clocks cannot be set. CLOCK_REALTIME says
// EPERM, as to a process without CAP_SYS_TIME; the others are not settable
// (EINVAL), as on Linux.
func sysClockSettime(k *Kernel, c *Call) Outcome {
	t, e := k.getTimespec(c.Args[1])
	if e != 0 {
		return fail(e)
	}
	id := int32(c.Args[0])
	if _, e := k.clockNow(id, c.Now); e != 0 || id != clockRealtime {
		return fail(eINVAL)
	}
	if t.nsec < 0 || t.nsec >= 1e9 || t.sec < 0 {
		return fail(eINVAL)
	}
	return fail(ePERM)
}
