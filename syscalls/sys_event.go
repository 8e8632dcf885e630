package syscalls

import (
	"fmt"
	"math"
	"slices"
)

// Event files: eventfd, timerfd and epoll, as Linux's fs/eventfd.c,
// fs/timerfd.c and fs/eventpoll.c behave for one process.
//
// Readiness changes are delivered the way Linux delivers them: a file whose
// readiness changes (pipes, eventfds, timerfds, epoll instances) has a
// pollQueue; an epoll item registers on it at EPOLL_CTL_ADD, and a change
// calls the items back with the poll key, which puts them on their epoll's
// ready list (in callback order) unless they are there already. epoll_wait
// reports the ready list in order, and level-triggered items go back to its
// tail, so the order of the events a program sees is Linux's.
//
// Timers run on the virtual clock: a timerfd expires when the clock of the
// thread that looks at it (read, poll, epoll_wait, timerfd_gettime) has
// passed its expiry, and a thread that waits for one is parked until then.

// ReadyWait says that an epoll_wait, or a read of a timerfd, found nothing
// ready and returned at once. The runtime parks the thread until
// Kernel.OnPipeEvent reports a change of Object (of any object when Object
// is 0) or until virtual time Until (≤ 0: no deadline), and then re-executes
// the call, which completes, times out or asks to wait again. A re-executed
// call keeps the deadline of the first execution (Kernel remembers it per
// thread).
type ReadyWait struct {
	Object uint64
	Until  int64
	What   string
}

// epoll flags and limits.
const (
	epollCloexec   = oCLOEXEC
	epollCtlAdd    = 1
	epollCtlDel    = 2
	epollCtlMod    = 3
	epollRdHup     = 0x2000
	epollExclusive = 1 << 28
	epollWakeup    = 1 << 29
	epollOneShot   = 1 << 30
	epollET        = 1 << 31
	// epollPrivate are the flags that are not poll events.
	epollPrivate = epollOneShot | epollET | epollWakeup | epollExclusive
	// epollExclusiveOK are the events EPOLLEXCLUSIVE may come with.
	epollExclusiveOK = pollIn | pollOut | pollErr | pollHup | epollWakeup | epollET | epollExclusive
	epollEventSize   = 12 // struct epoll_event is packed on x86-64
	epollMaxEvents   = 0x7fffffff / epollEventSize
	epollMaxNests    = 4
)

// eventfd and timerfd flags.
const (
	efdSemaphore     = 1
	efdFlags         = oCLOEXEC | oNONBLOCK | efdSemaphore
	tfdFlags         = oCLOEXEC | oNONBLOCK
	tfdTimerAbstime  = 1
	tfdCancelOnSet   = 2
	tfdSettimeFlags  = tfdTimerAbstime | tfdCancelOnSet
	eventfdMax       = ^uint64(0) - 1
	anonInode        = 1039 // the inode every anonymous file shares
	devAnon          = 16   // 0:16, anon_inodefs
	timerNoDeadline  = -1
	restartNoTimeout = -1
)

// pollQueue is the wait queue of a file whose readiness changes: the epoll
// items watching it. Linux adds waiters at the head of the queue, so a
// change calls the newest item back first.
type pollQueue struct{ items []*epItem }

func (q *pollQueue) add(it *epItem) { q.items = append(q.items, it) }

func (q *pollQueue) remove(it *epItem) {
	q.items = slices.DeleteFunc(q.items, func(x *epItem) bool { return x == it })
}

// wake calls back the items of q with the poll events key (0: any).
func (q *pollQueue) wake(key uint32) {
	for i := len(q.items) - 1; i >= 0; i-- {
		if i < len(q.items) {
			q.items[i].callback(key)
		}
	}
}

// queuer is implemented by files whose readiness changes.
type queuer interface {
	queue() *pollQueue
}

// readyEvent tells the runtime that object id changed in a way that may
// let a parked thread proceed (it wakes the readers and writers waiting on
// id and every thread in poll or epoll_wait).
func (k *Kernel) readyEvent(id uint64) {
	if k.OnPipeEvent != nil {
		k.OnPipeEvent(id)
	}
}

// anonStat is what fstat says of an anonymous file (eventfd, epoll,
// timerfd): they all share one inode of anon_inodefs.
func anonStat() (statInfo, Errno) {
	return statInfo{dev: devAnon, ino: anonInode, nlink: 1, mode: 0o600, blksize: 4096}, 0
}

// ---------------------------------------------------------------------
// eventfd

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

// ---------------------------------------------------------------------
// timerfd

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
		if k.cfg.Uid != 0 {
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

// ---------------------------------------------------------------------
// epoll

// epItem is one file watched by an epoll instance.
type epItem struct {
	ep     *epollFile
	f      *openFile
	fd     int
	events uint32
	data   uint64
	// linked says that the item is on ep's ready list.
	linked bool
	// q is the queue the item waits on (nil: the file never changes).
	q *pollQueue
}

// pollNow returns the item's ready events.
func (it *epItem) pollNow() uint32 {
	p, canPoll := it.f.ops.(pollOps)
	if !canPoll {
		return 0
	}
	return uint32(p.poll(uint16(it.events)|pollErr|pollHup)) & it.events
}

// callback is Linux's ep_poll_callback: the file changed with poll events
// key (0: any).
func (it *epItem) callback(key uint32) {
	if it.events&^epollPrivate == 0 {
		return // a fired EPOLLONESHOT item waits for EPOLL_CTL_MOD
	}
	if key != 0 && key&it.events == 0 {
		return
	}
	it.ep.link(it)
}

// epollFile is an epoll instance.
type epollFile struct {
	ino   uint64
	items []*epItem // in insertion order
	ready []*epItem // the ready list
	q     pollQueue
}

func (ep *epollFile) queue() *pollQueue                         { return &ep.q }
func (ep *epollFile) seekable() bool                            { return false }
func (ep *epollFile) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eINVAL }
func (ep *epollFile) write(*Kernel, []byte, int64) (int, Errno) { return 0, eINVAL }
func (ep *epollFile) stat(*Kernel) (statInfo, Errno) {
	return anonStat()
}

func (ep *epollFile) release() error {
	for _, it := range ep.items {
		ep.unhook(it)
	}
	ep.items, ep.ready, ep.q.items = nil, nil, nil
	return nil
}

// link puts it at the tail of the ready list unless it is on it.
func (ep *epollFile) link(it *epItem) {
	if it.linked {
		return
	}
	it.linked = true
	ep.ready = append(ep.ready, it)
	ep.q.wake(pollIn)
}

func (ep *epollFile) unlink(it *epItem) {
	if it.linked {
		it.linked = false
		ep.ready = slices.DeleteFunc(ep.ready, func(x *epItem) bool { return x == it })
	}
}

// unhook detaches it from its file.
func (ep *epollFile) unhook(it *epItem) {
	if it.q != nil {
		it.q.remove(it)
	}
	it.f.watchers = slices.DeleteFunc(it.f.watchers, func(x *epItem) bool { return x == it })
}

// remove deletes it from ep.
func (ep *epollFile) remove(it *epItem) {
	ep.unlink(it)
	ep.unhook(it)
	ep.items = slices.DeleteFunc(ep.items, func(x *epItem) bool { return x == it })
}

// poll: readable when an item on the ready list is ready (items found not
// ready leave the list, as in Linux's ep_read_events_proc).
func (ep *epollFile) poll(events uint16) uint16 {
	ready := false
	for _, it := range slices.Clone(ep.ready) {
		if it.pollNow() != 0 {
			ready = true
			break
		}
		ep.unlink(it)
	}
	if ready {
		return events & (pollIn | pollRdNm)
	}
	return 0
}

// find returns the item of (f, fd).
func (ep *epollFile) find(f *openFile, fd int) *epItem {
	for _, it := range ep.items {
		if it.f == f && it.fd == fd {
			return it
		}
	}
	return nil
}

// nests reports whether ep reaches target through nested epoll instances
// (a loop), or nests deeper than Linux allows.
func (ep *epollFile) nests(target *epollFile, depth int) bool {
	if ep == target || depth > epollMaxNests {
		return true
	}
	for _, it := range ep.items {
		if sub, isEpoll := it.f.ops.(*epollFile); isEpoll && sub.nests(target, depth+1) {
			return true
		}
	}
	return false
}

// epollable reports whether f can be watched (Linux: the file has a poll
// method): pipes, the standard streams, terminals, /dev/random, event
// files. Regular files and directories cannot (EPERM).
func epollable(f *openFile) bool {
	switch o := f.ops.(type) {
	case *pipeEnd, *stream, *eventFD, *timerFD, *epollFile, *inotifyFD, *pidFD, *socket:
		return true
	case *device:
		return o.kind == devTTY || o.kind == devRandom
	}
	return false
}

// removeWatchers drops the epoll items watching f: its last descriptor
// was closed (Linux's eventpoll_release).
func (k *Kernel) removeWatchers(f *openFile) {
	for len(f.watchers) > 0 {
		it := f.watchers[0]
		it.ep.remove(it)
	}
}

func sysEpollCreate(k *Kernel, c *Call) Outcome {
	if int32(c.Args[0]) <= 0 {
		return fail(eINVAL)
	}
	return k.epollCreate(0)
}

func sysEpollCreate1(k *Kernel, c *Call) Outcome {
	flags := uint32(c.Args[0])
	if flags&^epollCloexec != 0 {
		return fail(eINVAL)
	}
	return k.epollCreate(flags)
}

func (k *Kernel) epollCreate(flags uint32) Outcome {
	ep := &epollFile{ino: k.nextIno}
	k.nextIno++
	f := newOpenFile(ep, oRDWR, "")
	fd, e := k.install(f, 0, flags&epollCloexec != 0)
	return result(uint64(fd), e)
}

func sysEpollCtl(k *Kernel, c *Call) Outcome {
	epfd, op, fd, evAddr := fdArg(c.Args[0]), int32(c.Args[1]), fdArg(c.Args[2]), c.Args[3]
	var events uint32
	var data uint64
	if op != epollCtlDel {
		var b [epollEventSize]byte
		if e := k.copyIn(evAddr, b[:]); e != 0 {
			return fail(e)
		}
		events, data = le.Uint32(b[:]), le.Uint64(b[4:])
	}
	f, e := k.file(epfd)
	if e != 0 {
		return fail(e)
	}
	tf, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	if !epollable(tf) {
		return fail(ePERM)
	}
	ep, isEpoll := f.ops.(*epollFile)
	if !isEpoll || f == tf {
		return fail(eINVAL)
	}
	if events&epollExclusive != 0 {
		if op == epollCtlMod {
			return fail(eINVAL)
		}
		if _, targetEpoll := tf.ops.(*epollFile); op == epollCtlAdd && (targetEpoll || events&^epollExclusiveOK != 0) {
			return fail(eINVAL)
		}
	}
	if sub, isEpoll := tf.ops.(*epollFile); isEpoll && op == epollCtlAdd && sub.nests(ep, 1) {
		return fail(eLOOP)
	}
	it := ep.find(tf, fd)
	switch op {
	case epollCtlAdd:
		if it != nil {
			return fail(eEXIST)
		}
		it = &epItem{ep: ep, f: tf, fd: fd, events: events | pollErr | pollHup, data: data}
		if qr, changes := tf.ops.(queuer); changes {
			it.q = qr.queue()
			it.q.add(it)
		}
		ep.items = append(ep.items, it)
		tf.watchers = append(tf.watchers, it)
		if it.pollNow() != 0 {
			ep.link(it)
			k.readyEvent(ep.ino)
		}
	case epollCtlDel:
		if it == nil {
			return fail(eNOENT)
		}
		ep.remove(it)
	case epollCtlMod:
		if it == nil {
			return fail(eNOENT)
		}
		if it.events&epollExclusive != 0 {
			return fail(eINVAL)
		}
		it.events, it.data = events|pollErr|pollHup, data
		if it.pollNow() != 0 {
			ep.link(it)
			k.readyEvent(ep.ino)
		}
	default:
		return fail(eINVAL)
	}
	return ok(0)
}

// epollTimers brings the timerfds ep watches (directly or through nested
// instances) up to virtual time now, and returns the earliest expiry still
// ahead (timerNoDeadline: none).
func (ep *epollFile) epollTimers(now int64, depth int) int64 {
	next := int64(timerNoDeadline)
	for _, it := range slices.Clone(ep.items) {
		var d int64 = timerNoDeadline
		switch o := it.f.ops.(type) {
		case *timerFD:
			o.update(now)
			d = o.deadline()
		case *epollFile:
			if depth < epollMaxNests {
				d = o.epollTimers(now, depth+1)
			}
		case *socket:
			d = o.update(now)
		}
		if d > 0 && (next < 0 || d < next) {
			next = d
		}
	}
	return next
}

// send reports up to max ready events at addr (Linux's ep_send_events).
func (k *Kernel) epollSend(ep *epollFile, addr uint64, max int) (int, Errno) {
	tx := ep.ready
	ep.ready = nil
	n := 0
	var err Errno
	i := 0
	for ; i < len(tx) && n < max; i++ {
		it := tx[i]
		it.linked = false
		rev := it.pollNow()
		if rev == 0 {
			continue
		}
		var b [epollEventSize]byte
		le.PutUint32(b[:], rev)
		le.PutUint64(b[4:], it.data)
		if e := k.copyOut(addr+uint64(n)*epollEventSize, b[:]); e != 0 {
			if n == 0 {
				err = e
			}
			break // the item stays at the head of the list
		}
		n++
		switch {
		case it.events&epollOneShot != 0:
			it.events &= epollPrivate
		case it.events&epollET == 0:
			it.linked = true
			ep.ready = append(ep.ready, it)
		}
	}
	rest := tx[i:]
	for _, it := range rest {
		it.linked = true
	}
	ep.ready = append(slices.Clone(rest), ep.ready...)
	return n, err
}

// restartDeadline is the absolute deadline of a waiting call with timeout
// ns (-1: none): the one remembered when the call is re-executed after a
// wait, else now+timeout, remembered until the call completes.
func (k *Kernel) restartDeadline(c *Call, timeout int64) int64 {
	t := k.thread(c.Tid)
	if t.restart.valid && t.restart.nr == c.Nr && t.restart.args == c.Args {
		return t.restart.deadline
	}
	d := int64(restartNoTimeout)
	if timeout >= 0 {
		d = c.Now + timeout
	}
	t.restart = restartState{valid: true, nr: c.Nr, args: c.Args, deadline: d}
	return d
}

// epollWait is epoll_wait with a timeout in ns (-1: none).
func (k *Kernel) epollWait(c *Call, epfd int, addr uint64, maxEvents int32, timeout int64) Outcome {
	if maxEvents <= 0 || maxEvents > epollMaxEvents {
		return fail(eINVAL)
	}
	if !accessOK(addr, uint64(maxEvents)*epollEventSize) {
		return fail(eFAULT)
	}
	f, e := k.file(epfd)
	if e != 0 {
		return fail(e)
	}
	ep, isEpoll := f.ops.(*epollFile)
	if !isEpoll {
		return fail(eINVAL)
	}
	timer := ep.epollTimers(c.Now, 1)
	n, e := k.epollSend(ep, addr, int(maxEvents))
	if e != 0 || n > 0 || timeout == 0 {
		return result(uint64(n), e)
	}
	if out, waits := k.waitReady(c, timeout, timer, fmt.Sprintf("epoll_wait on fd %d", epfd)); waits {
		return out
	}
	return ok(0)
}

// waitReady is the end of a call that found nothing ready (poll, epoll_wait):
// with a timeout (ns; -1: none) that has not passed since the first
// execution of the call, it asks to wait until something changes, the
// timeout, or timer (the earliest expiry of a timerfd the call watches;
// timerNoDeadline: none), and the call is made again then. It returns
// false when the call must complete now (a zero or passed timeout).
func (k *Kernel) waitReady(c *Call, timeout, timer int64, what string) (Outcome, bool) {
	if timeout == 0 {
		return Outcome{}, false
	}
	deadline := k.restartDeadline(c, timeout)
	if deadline >= 0 && c.Now >= deadline {
		return Outcome{}, false
	}
	return Outcome{Ret: 0, Wait: &ReadyWait{Until: earliest(deadline, timer), What: what}}, true
}

// earliest is the earlier of two deadlines (negative: none).
func earliest(a, b int64) int64 {
	if a < 0 || b >= 0 && b < a {
		return b
	}
	return a
}

// timersOf brings the timers behind f (a timerfd, or those an epoll
// instance watches) up to virtual time now and returns their earliest
// expiry still ahead (timerNoDeadline: none).
func (k *Kernel) timersOf(f *openFile, now int64) int64 {
	switch o := f.ops.(type) {
	case *timerFD:
		o.update(now)
		return o.deadline()
	case *epollFile:
		return o.epollTimers(now, 1)
	case *socket:
		return o.update(now)
	}
	return timerNoDeadline
}

// epollMs converts an epoll_wait timeout in ms to ns (-1: none).
func epollMs(a uint64) int64 {
	ms := int64(int32(a))
	if ms < 0 {
		return -1
	}
	return ms * 1e6
}

func sysEpollWait(k *Kernel, c *Call) Outcome {
	return k.epollWait(c, fdArg(c.Args[0]), c.Args[1], int32(c.Args[2]), epollMs(c.Args[3]))
}

// epollSigmask checks the signal mask argument of epoll_pwait, ppoll and
// pselect6 (maskedWait applies it).
func (k *Kernel) epollSigmask(addr, size uint64) Errno {
	if addr == 0 {
		return 0
	}
	if size != 8 {
		return eINVAL
	}
	_, e := k.getU64(addr)
	return e
}

func sysEpollPwait(k *Kernel, c *Call) Outcome {
	if e := k.epollSigmask(c.Args[4], c.Args[5]); e != 0 {
		return fail(e)
	}
	return k.maskedWait(c, c.Args[4], k.epollWait(c, fdArg(c.Args[0]), c.Args[1], int32(c.Args[2]), epollMs(c.Args[3])))
}

func sysEpollPwait2(k *Kernel, c *Call) Outcome {
	timeout := int64(-1)
	if c.Args[3] != 0 {
		ts, e := k.getTimespec(c.Args[3])
		if e != 0 {
			return fail(e)
		}
		if !validTimespec(ts) {
			return fail(eINVAL)
		}
		timeout = ts.ns()
	}
	if e := k.epollSigmask(c.Args[4], c.Args[5]); e != 0 {
		return fail(e)
	}
	return k.maskedWait(c, c.Args[4], k.epollWait(c, fdArg(c.Args[0]), c.Args[1], int32(c.Args[2]), timeout))
}
