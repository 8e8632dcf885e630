package syscalls

import "slices"

// Event files: eventfd (sys_eventfd.go), timerfd (sys_timerfd.go) and epoll
// (sys_epoll.go), as Linux's fs/eventfd.c, fs/timerfd.c and fs/eventpoll.c
// behave for one process. This file holds what they share.
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
