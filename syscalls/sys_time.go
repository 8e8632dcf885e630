package syscalls

// Time: clock_gettime, clock_getres, gettimeofday, time, nanosleep,
// clock_nanosleep. Every clock is derived from the calling thread's virtual
// clock (Call.Now), never from the host's.

// coarseRes is the resolution of the *_COARSE clocks (a 250 Hz tick).
const coarseRes = 4_000_000

// clockNow returns the value of clock id at virtual time now.
func (k *Kernel) clockNow(id int32, now int64) (int64, Errno) {
	switch {
	case id < 0:
		// CPU-time clocks of a process or thread (clock_getcpuclockid):
		// ~pid<<3 | perthread<<2 | which. which 3 names a clock fd (none
		// is a clock here); no pid exceeds PID_MAX_LIMIT (4194304).
		if id&3 == 3 || ^id>>3 > 4194304 {
			return 0, eINVAL
		}
		return now, 0
	}
	switch id {
	case clockRealtime, clockTAI, clockRealtimeAlarm:
		return k.realtime(now), 0
	case clockRealtimeCoarse:
		t := k.realtime(now)
		return t - t%coarseRes, 0
	case clockMonotonic, clockMonotonicRaw, clockBoottime, clockBoottimeAlarm:
		return monotonic(now), 0
	case clockMonotonicCoarse:
		t := monotonic(now)
		return t - t%coarseRes, 0
	case clockProcessCPUTimeID, clockThreadCPUTimeID:
		return now, 0
	}
	return 0, eINVAL
}

func sysClockGettime(k *Kernel, c *Call) Outcome {
	t, e := k.clockNow(int32(c.Args[0]), c.Now)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.putTimespec(c.Args[1], nsToTimespec(t)))
}

func sysClockGetres(k *Kernel, c *Call) Outcome {
	id := int32(c.Args[0])
	if _, e := k.clockNow(id, c.Now); e != 0 {
		return fail(e)
	}
	if c.Args[1] == 0 {
		return ok(0)
	}
	res := int64(1)
	if id == clockRealtimeCoarse || id == clockMonotonicCoarse {
		res = coarseRes
	}
	return result(0, k.putTimespec(c.Args[1], timespec{0, res}))
}

func sysGettimeofday(k *Kernel, c *Call) Outcome {
	if c.Args[0] != 0 {
		t := nsToTimespec(k.realtime(c.Now))
		t.nsec /= 1000
		if e := k.putTimespec(c.Args[0], t); e != 0 {
			return fail(e)
		}
	}
	if c.Args[1] != 0 {
		if e := k.putU64(c.Args[1], 0); e != 0 { // UTC, no DST
			return fail(e)
		}
	}
	return ok(0)
}

func sysTime(k *Kernel, c *Call) Outcome {
	t := nsToTimespec(k.realtime(c.Now)).sec
	if c.Args[0] != 0 {
		if e := k.putU64(c.Args[0], uint64(t)); e != 0 {
			return fail(e)
		}
	}
	return ok(uint64(t))
}

// sleepFor validates a relative sleep request and returns its outcome:
// success at once, with the wake-up time in Wait.
func (k *Kernel) sleepUntil(c *Call, until int64) Outcome {
	out := ok(0)
	out.Wait = &SleepWait{Until: max(until, c.Now)}
	return out
}

func validSleep(t timespec) bool { return t.sec >= 0 && t.nsec >= 0 && t.nsec < 1e9 }

func sysNanosleep(k *Kernel, c *Call) Outcome {
	t, e := k.getTimespec(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	if !validSleep(t) {
		return fail(eINVAL)
	}
	return k.sleepUntil(c, c.Now+t.ns())
}

func sysClockNanosleep(k *Kernel, c *Call) Outcome {
	id, flags := int32(c.Args[0]), c.Args[1]
	switch id {
	case clockRealtime, clockMonotonic, clockBoottime, clockTAI, clockProcessCPUTimeID:
	case clockThreadCPUTimeID, clockMonotonicRaw, clockRealtimeCoarse, clockMonotonicCoarse,
		clockRealtimeAlarm, clockBoottimeAlarm:
		// Clocks one cannot sleep on (the alarm clocks need an RTC the
		// emulated machine does not have).
		return fail(eOPNOTSUPP)
	default:
		if _, e := k.clockNow(id, c.Now); id >= 0 || e != 0 {
			return fail(eINVAL)
		}
	}
	t, e := k.getTimespec(c.Args[2])
	if e != 0 {
		return fail(e)
	}
	if !validSleep(t) {
		return fail(eINVAL)
	}
	if flags&timerAbsTime == 0 {
		return k.sleepUntil(c, c.Now+t.ns())
	}
	clk, _ := k.clockNow(id, c.Now)
	return k.sleepUntil(c, c.Now+(t.ns()-clk))
}
