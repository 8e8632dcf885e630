// eventfd: a counter file that wakes its readers and writers (fs/eventfd.c).

package syscalls

// eventFD is an eventfd counter.
type eventFD struct {
	ino       uint64
	count     uint64
	semaphore bool
	q         pollQueue
}

func (e *eventFD) queue() *pollQueue { return &e.q }
func (e *eventFD) seekable() bool    { return false }
func (e *eventFD) stat(*Kernel) (statInfo, Errno) {
	return anonStat()
}

func (e *eventFD) release() error {
	e.q.items = nil
	return nil
}

func (e *eventFD) read(k *Kernel, p []byte, _ int64) (int, Errno) {
	if len(p) < 8 {
		return 0, eINVAL
	}
	if e.count == 0 {
		return 0, eAGAIN
	}
	v := e.count
	if e.semaphore {
		v = 1
	}
	e.count -= v
	le.PutUint64(p, v)
	e.q.wake(pollOut)
	k.readyEvent(e.ino)
	return 8, 0
}

func (e *eventFD) write(k *Kernel, p []byte, _ int64) (int, Errno) {
	if len(p) < 8 {
		return 0, eINVAL
	}
	v := le.Uint64(p)
	if v == ^uint64(0) {
		return 0, eINVAL
	}
	if eventfdMax-e.count < v {
		return 0, eAGAIN
	}
	e.count += v
	e.q.wake(pollIn)
	k.readyEvent(e.ino)
	return 8, 0
}

func (e *eventFD) poll(events uint16) uint16 {
	var r uint16
	if e.count > 0 {
		r |= pollIn | pollRdNm
	}
	if e.count == ^uint64(0) {
		r |= pollErr
	}
	if e.count < eventfdMax {
		r |= pollOut | pollWrNm
	}
	return r & (events | pollErr | pollHup)
}

// recordSize: an eventfd moves one 8-byte value per read or write.
func (e *eventFD) recordSize() int { return 8 }

func sysEventfd(k *Kernel, c *Call) Outcome { return k.eventfd(uint32(c.Args[0]), 0) }

func sysEventfd2(k *Kernel, c *Call) Outcome { return k.eventfd(uint32(c.Args[0]), uint32(c.Args[1])) }

func (k *Kernel) eventfd(count, flags uint32) Outcome {
	if flags&^efdFlags != 0 {
		return fail(eINVAL)
	}
	e := &eventFD{ino: k.nextIno, count: uint64(count), semaphore: flags&efdSemaphore != 0}
	k.nextIno++
	f := newOpenFile(e, oRDWR|flags&oNONBLOCK, "")
	fd, err := k.install(f, 0, flags&oCLOEXEC != 0)
	return result(uint64(fd), err)
}
