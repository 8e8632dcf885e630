// timerfd: timers on the virtual clock, read and polled as files
// (fs/timerfd.c).

package syscalls

import "math"

// timerFD is a timer on the virtual clock.
type timerFD struct {
	ino   uint64
	clock int32
	armed bool
	// next is the virtual time of the next expiry; interval the period
	// (0: one shot).
	next, interval int64
	ticks          uint64
	abs            bool // armed with TFD_TIMER_ABSTIME
	q              pollQueue
}

func (t *timerFD) queue() *pollQueue { return &t.q }
func (t *timerFD) seekable() bool    { return false }
func (t *timerFD) stat(*Kernel) (statInfo, Errno) {
	return anonStat()
}
func (t *timerFD) recordSize() int { return 8 }

func (t *timerFD) release() error {
	t.q.items = nil
	return nil
}

func (t *timerFD) write(*Kernel, []byte, int64) (int, Errno) { return 0, eINVAL }

// update counts the expiries up to virtual time now.
func (t *timerFD) update(now int64) {
	if !t.armed || now < t.next {
		return
	}
	if t.interval > 0 {
		n := (now-t.next)/t.interval + 1
		t.ticks += uint64(n)
		t.next += n * t.interval
	} else {
		t.ticks++
		t.armed = false
	}
	t.q.wake(pollIn)
}

// deadline is the virtual time of the next expiry, timerNoDeadline if none.
func (t *timerFD) deadline() int64 {
	if !t.armed {
		return timerNoDeadline
	}
	return t.next
}

func (t *timerFD) read(k *Kernel, p []byte, _ int64) (int, Errno) {
	if len(p) < 8 {
		return 0, eINVAL
	}
	t.update(k.now)
	if t.ticks == 0 {
		return 0, eAGAIN
	}
	le.PutUint64(p, t.ticks)
	t.ticks = 0
	return 8, 0
}

func (t *timerFD) poll(events uint16) uint16 {
	if t.ticks > 0 {
		return events & (pollIn | pollRdNm)
	}
	return 0
}

// timerClock checks a timerfd clock id.
func (k *Kernel) timerClock(id int32) Errno {
	switch id {
	case clockRealtime, clockMonotonic, clockBoottime:
		return 0
	case clockRealtimeAlarm, clockBoottimeAlarm:
		if k.uids.eff != 0 {
			return ePERM // CAP_WAKE_ALARM
		}
		return 0
	}
	return eINVAL
}

// clockOffset is what clock id reads at virtual time 0.
func (k *Kernel) clockOffset(id int32) int64 {
	switch id {
	case clockRealtime, clockRealtimeAlarm:
		return k.cfg.EpochNanos
	}
	return MonotonicOffset
}

func sysTimerfdCreate(k *Kernel, c *Call) Outcome {
	id, flags := int32(c.Args[0]), uint32(c.Args[1])
	if flags&^tfdFlags != 0 {
		return fail(eINVAL)
	}
	if e := k.timerClock(id); e != 0 {
		return fail(e)
	}
	t := &timerFD{ino: k.nextIno, clock: id}
	k.nextIno++
	f := newOpenFile(t, oRDWR|flags&oNONBLOCK, "")
	fd, e := k.install(f, 0, flags&oCLOEXEC != 0)
	return result(uint64(fd), e)
}

// timer returns the timerfd open at fd.
func (k *Kernel) timer(fd int) (*timerFD, Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return nil, e
	}
	t, isTimer := f.ops.(*timerFD)
	if !isTimer {
		return nil, eINVAL
	}
	return t, 0
}

// getItimerspec loads a struct itimerspec (interval, then value).
func (k *Kernel) getItimerspec(addr uint64) (interval, value timespec, e Errno) {
	var b [32]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return timespec{}, timespec{}, e
	}
	interval = timespec{int64(le.Uint64(b[:])), int64(le.Uint64(b[8:]))}
	value = timespec{int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))}
	return interval, value, 0
}

func validTimespec(t timespec) bool { return t.sec >= 0 && t.nsec >= 0 && t.nsec < 1e9 }

// timerSetting returns the interval and the remaining time of t at now.
func (t *timerFD) setting(now int64) (interval, value timespec) {
	t.update(now)
	var left int64
	if t.armed {
		left = max(t.next-now, 0)
	}
	return nsToTimespec(t.interval), nsToTimespec(left)
}

func (k *Kernel) putItimerspec(addr uint64, interval, value timespec) Errno {
	var b [32]byte
	le.PutUint64(b[:], uint64(interval.sec))
	le.PutUint64(b[8:], uint64(interval.nsec))
	le.PutUint64(b[16:], uint64(value.sec))
	le.PutUint64(b[24:], uint64(value.nsec))
	return k.copyOut(addr, b[:])
}

func sysTimerfdSettime(k *Kernel, c *Call) Outcome {
	fd, flags, newAddr, oldAddr := fdArg(c.Args[0]), c.Args[1], c.Args[2], c.Args[3]
	interval, value, e := k.getItimerspec(newAddr)
	if e != 0 {
		return fail(e)
	}
	if int32(flags)&^tfdSettimeFlags != 0 || !validTimespec(interval) || !validTimespec(value) {
		return fail(eINVAL)
	}
	t, e := k.timer(fd)
	if e != 0 {
		return fail(e)
	}
	oldInterval, oldValue := t.setting(c.Now)
	t.ticks, t.armed, t.interval, t.abs = 0, false, 0, flags&tfdTimerAbstime != 0
	if v := value.ns(); v != 0 || value.sec != 0 {
		t.armed = true
		t.interval = interval.ns()
		if t.abs {
			t.next = v - k.clockOffset(t.clock)
		} else {
			t.next = c.Now + min(v, math.MaxInt64-c.Now)
		}
		t.update(c.Now)
	}
	k.readyEvent(t.ino)
	if oldAddr != 0 {
		if e := k.putItimerspec(oldAddr, oldInterval, oldValue); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

func sysTimerfdGettime(k *Kernel, c *Call) Outcome {
	t, e := k.timer(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	interval, value := t.setting(c.Now)
	return result(0, k.putItimerspec(c.Args[1], interval, value))
}
