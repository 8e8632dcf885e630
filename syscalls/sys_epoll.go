// epoll: instances, their items and ready list, epoll_ctl and epoll_wait
// (fs/eventpoll.c).

package syscalls

import (
	"fmt"
	"slices"
)

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
	if t.restart.of(c) {
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
