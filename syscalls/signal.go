package syscalls

import "slices"

// Signal generation, queues and dequeueing, after Linux's kernel/signal.c:
// a signal is queued on the target thread (tkill, tgkill, faults) or on the
// process (kill, timers, SIGCHLD, SIGPIPE); __send_signal drops a signal
// that is ignored and not blocked, and a standard signal already pending;
// complete_signal picks the thread that takes a process signal (the main
// thread unless it blocks it, else the first thread that does not) and
// kills the whole process at once when the default action is fatal;
// dequeue_signal takes the thread's own signals before the process's,
// synchronous ones (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGSYS) first,
// then the lowest number. The runtime (package guest) runs the handlers:
// it asks Dequeue at its delivery points and builds the signal frames.

// SigInfo is a siginfo_t as the guest sees it (128 bytes,
// include/uapi/asm-generic/siginfo.h on x86-64): si_signo at 0, si_errno
// at 4, si_code at 8, then the union at 16 (_kill: pid, uid; _rt: pid,
// uid, value at 24; _sigchld: pid, uid, status at 24, utime at 32, stime at
// 40; _sigfault: addr at 16).
type SigInfo [128]byte

// si_code values (include/uapi/asm-generic/siginfo.h).
const (
	SIUser     = 0
	SIKernel   = 0x80
	SIQueue    = -1
	SITimer    = -2
	SITkill    = -6
	SegvMaperr = 1
	SegvAccerr = 2
	BusAdrerr  = 2
	FpeIntdiv  = 1
	IllIllopn  = 2
	CldExited  = 1
	CldKilled  = 2
	CldDumped  = 3
)

// Signo returns si_signo.
func (i *SigInfo) Signo() int { return int(int32(le.Uint32(i[0:]))) }

// NewSigInfo returns the siginfo of signal sig with code (and nothing else).
func NewSigInfo(sig, code int) SigInfo {
	var i SigInfo
	le.PutUint32(i[0:], uint32(sig))
	le.PutUint32(i[8:], uint32(int32(code)))
	return i
}

// KillInfo is the siginfo of a signal sent by process pid as user uid.
func KillInfo(sig, code, pid, uid int) SigInfo {
	i := NewSigInfo(sig, code)
	le.PutUint32(i[16:], uint32(pid))
	le.PutUint32(i[20:], uint32(uid))
	return i
}

// FaultInfo is the siginfo of a synchronous fault at addr.
func FaultInfo(sig, code int, addr uint64) SigInfo {
	i := NewSigInfo(sig, code)
	le.PutUint64(i[16:], addr)
	return i
}

// ChildInfo is the SIGCHLD siginfo of child pid: code CLD_EXITED with its
// exit status, or CLD_KILLED/CLD_DUMPED with the signal; utime and stime
// in clock ticks.
func ChildInfo(code, pid, uid, status int, utime, stime int64) SigInfo {
	i := KillInfo(sigChld, code, pid, uid)
	le.PutUint32(i[24:], uint32(status))
	le.PutUint64(i[32:], uint64(utime))
	le.PutUint64(i[40:], uint64(stime))
	return i
}

// sigQueue is a set of pending signals: one instance of each standard
// signal, every instance of a real-time one, in order.
type sigQueue struct {
	mask  uint64
	infos []SigInfo
}

// add queues info; a standard signal already pending is dropped.
func (q *sigQueue) add(info SigInfo) {
	sig := info.Signo()
	if sig < sigRTMin && q.mask&sigBit(sig) != 0 {
		return
	}
	q.mask |= sigBit(sig)
	q.infos = append(q.infos, info)
}

// take removes the first instance of sig.
func (q *sigQueue) take(sig int) SigInfo {
	var out SigInfo
	more := false
	found := -1
	for i := range q.infos {
		if q.infos[i].Signo() != sig {
			continue
		}
		if found < 0 {
			found, out = i, q.infos[i]
		} else {
			more = true
			break
		}
	}
	if found >= 0 {
		q.infos = slices.Delete(q.infos, found, found+1)
	}
	if !more {
		q.mask &^= sigBit(sig)
	}
	return out
}

// take1 removes the instance at index j.
func (q *sigQueue) take1(j int) {
	sig := q.infos[j].Signo()
	q.infos = slices.Delete(q.infos, j, j+1)
	if !slices.ContainsFunc(q.infos, func(i SigInfo) bool { return i.Signo() == sig }) {
		q.mask &^= sigBit(sig)
	}
}

// drop forgets every instance of the signals in set.
func (q *sigQueue) drop(set uint64) {
	if q.mask&set == 0 {
		return
	}
	q.infos = slices.DeleteFunc(q.infos, func(i SigInfo) bool { return set&sigBit(i.Signo()) != 0 })
	q.mask &^= set
}

// sigRTMin is the first real-time signal (SIGRTMIN of the kernel).
const sigRTMin = 32

// syncMask are the signals dequeued first (SYNCHRONOUS_MASK).
const syncMask = 1<<(sigSegv-1) | 1<<(sigBus-1) | 1<<(sigIll-1) | 1<<(sigTrap-1) | 1<<(sigFpe-1) | 1<<(sigSys-1)

// Sigaction flags.
const (
	SANoCldStop = 1
	SANoCldWait = 2
	SASiginfo   = 4
	SAOnStack   = 0x08000000
	SARestart   = 0x10000000
	SANoDefer   = 0x40000000
	SAResetHand = 0x80000000
	SARestorer  = 0x04000000
)

// SigAction is a signal's disposition as rt_sigaction set it.
type SigAction struct {
	Handler, Flags, Restorer, Mask uint64
}

// Disposition values of SigAction.Handler.
const (
	SigDfl = sigDfl
	SigIgn = sigIgn
)

// Action returns the disposition of sig.
func (k *Kernel) Action(sig int) SigAction {
	a := k.sigactions[sig]
	return SigAction{a.handler, a.flags, a.restorer, a.mask}
}

// DefaultIgnored reports whether the default action of sig does nothing
// (the stop signals included: nothing could continue the process).
func DefaultIgnored(sig int) bool { return sigDefaultIgnored(sig) }

// ignored reports whether sig sent to thread t would be dropped at once
// (sig_ignored: not blocked, and ignored or ignored by default).
func (k *Kernel) ignored(t *threadState, sig int) bool {
	if sigBit(sig)&unblockable != 0 {
		return false
	}
	if t != nil && (t.sigmask|t.realBlocked)&sigBit(sig) != 0 {
		return false
	}
	h := k.sigactions[sig].handler
	return h == sigIgn || h == sigDfl && sigDefaultIgnored(sig)
}

// fatalDefault reports whether sig's disposition kills the process.
func (k *Kernel) fatalDefault(sig int) bool {
	return sig == sigKill || k.sigactions[sig].handler == sigDfl && !sigDefaultIgnored(sig)
}

// SendResult says what sending a signal did.
type SendResult struct {
	// Tid is the thread that should take the signal now (the runtime
	// interrupts it if it is blocked); 0: none does yet.
	Tid int
	// Fatal says that the default action kills the process now.
	Fatal bool
}

// liveTids returns the process's threads in tid order.
func (k *Kernel) liveTids() []int {
	ts := make([]int, 0, len(k.threads))
	for tid := range k.threads {
		ts = append(ts, tid)
	}
	slices.Sort(ts)
	return ts
}

// wants says whether thread tid may take sig now (wants_signal).
func (k *Kernel) wants(tid, sig int) bool {
	t := k.threads[tid]
	return t != nil && (sig == sigKill || t.sigmask&sigBit(sig) == 0)
}

// Send generates the signal info describes: for thread tid alone
// (group false), or for the process (tid is then the thread it prefers,
// normally the main thread).
func (k *Kernel) Send(tid int, info SigInfo, group bool) SendResult {
	sig := info.Signo()
	if sig <= 0 || sig > nSig {
		return SendResult{}
	}
	if _, ok := k.threads[tid]; !ok && !group {
		return SendResult{}
	}
	if k.ignored(k.threads[tid], sig) {
		return SendResult{}
	}
	if group {
		k.sharedSigs.add(info)
	} else {
		k.thread(tid).pending.add(info)
	}
	// complete_signal: the thread that takes it.
	target := 0
	switch {
	case k.wants(tid, sig):
		target = tid
	case !group:
		return SendResult{}
	default:
		for _, u := range k.liveTids() {
			if k.wants(u, sig) {
				target = u
				break
			}
		}
	}
	if target == 0 {
		return SendResult{}
	}
	if k.fatalDefault(sig) && k.threads[target].realBlocked&sigBit(sig) == 0 {
		return SendResult{Tid: target, Fatal: true}
	}
	k.threads[target].sigPending = true
	if k.OnSignal != nil {
		k.OnSignal(target)
	}
	return SendResult{Tid: target}
}

// sendSelf sends sig (SI_USER from the process itself) to the process of
// the calling thread, as send_sig does: the outcome kills the process when
// the default action is fatal.
func (k *Kernel) sendSelf(c *Call, sig int) Outcome {
	r := k.Send(c.Tid, KillInfo(sig, SIUser, k.cfg.Pid, k.uids.real), true)
	if r.Fatal {
		return Outcome{Action: ExitGroup, Status: 128 + sig, Signal: sig}
	}
	return ok(0)
}

// Deliverable reports whether thread tid has a signal it does not block.
func (k *Kernel) Deliverable(tid int) bool {
	t := k.threads[tid]
	if t == nil {
		return false
	}
	return t.pending.mask&^t.sigmask != 0 || t.sigPending && k.sharedSigs.mask&^t.sigmask != 0
}

// recalc is recalc_sigpending after thread t's mask changed: it looks at
// the process's signals if it may take one.
func (k *Kernel) recalc(t *threadState) {
	t.sigPending = (t.pending.mask|k.sharedSigs.mask)&^t.sigmask != 0
}

// DoneDelivering says that thread tid has taken every signal it could
// (get_signal found nothing more).
func (k *Kernel) DoneDelivering(tid int) {
	if t := k.threads[tid]; t != nil {
		t.sigPending = false
	}
}

// Dequeue takes the next signal thread tid does not block: its own first,
// then the process's; synchronous signals first, then the lowest number
// (next_signal).
func (k *Kernel) Dequeue(tid int) (SigInfo, bool) {
	t := k.threads[tid]
	if t == nil {
		return SigInfo{}, false
	}
	return k.dequeueMask(t, ^t.sigmask)
}

// dequeueMask takes the next pending signal among allowed.
func (k *Kernel) dequeueMask(t *threadState, allowed uint64) (SigInfo, bool) {
	for _, q := range [2]*sigQueue{&t.pending, &k.sharedSigs} {
		ready := q.mask & allowed
		if ready == 0 {
			continue
		}
		if ready&syncMask != 0 {
			ready &= syncMask
		}
		sig := 1
		for ready&1 == 0 {
			ready >>= 1
			sig++
		}
		info := q.take(sig)
		k.timerDelivered(&info)
		return info, true
	}
	return SigInfo{}, false
}

// Handling returns the mask to save in the frame of a handler of sig about
// to run on thread tid (the mask sigsuspend replaced, if any), and applies
// the handler's effects: sa_mask and sig itself blocked (unless
// SA_NODEFER), SA_RESETHAND's return to the default action.
func (k *Kernel) Handling(tid, sig int) (saved uint64) {
	t := k.thread(tid)
	saved = t.sigmask
	if t.restoreMask {
		saved, t.restoreMask = t.savedMask, false
	}
	a := &k.sigactions[sig]
	blocked := t.sigmask | a.mask
	if a.flags&SANoDefer == 0 {
		blocked |= sigBit(sig)
	}
	if a.flags&SAResetHand != 0 {
		a.handler = sigDfl // SA_ONESHOT, in get_signal
	}
	t.sigmask = blocked &^ unblockable
	k.recalc(t)
	return saved
}

// SigMask returns thread tid's signal mask.
func (k *Kernel) SigMask(tid int) uint64 { return k.thread(tid).sigmask }

// SetSigMask sets thread tid's signal mask (rt_sigreturn), SIGKILL and
// SIGSTOP excepted.
func (k *Kernel) SetSigMask(tid int, m uint64) {
	t := k.thread(tid)
	t.sigmask = m &^ unblockable
	k.recalc(t)
}

// Suspend replaces thread tid's mask with m until a handler runs or
// RestoreMask (rt_sigsuspend, and pselect6, ppoll and epoll_pwait with
// a mask): the handler's frame saves the old mask.
func (k *Kernel) Suspend(tid int, m uint64) {
	t := k.thread(tid)
	if !t.restoreMask {
		t.savedMask, t.restoreMask = t.sigmask, true
	}
	t.sigmask = m &^ unblockable
	k.recalc(t)
}

// RestoreMask puts back the mask Suspend replaced, if a handler did not.
func (k *Kernel) RestoreMask(tid int) {
	t := k.thread(tid)
	if t.restoreMask {
		t.sigmask, t.restoreMask = t.savedMask, false
		k.recalc(t)
	}
}

// WaitSet makes thread tid wait for the signals of set (rt_sigtimedwait):
// they are unblocked while it waits, so that they choose it. EndWaitSet
// takes one of them back.
func (k *Kernel) WaitSet(tid int, set uint64) {
	t := k.thread(tid)
	t.realBlocked, t.waitingSet = t.sigmask, true
	t.sigmask &^= set
	k.recalc(t)
}

// TakeSet ends a WaitSet, if any, and dequeues a pending signal of set
// for thread tid, blocked or not.
func (k *Kernel) TakeSet(tid int, set uint64) (SigInfo, bool) {
	t := k.thread(tid)
	if t.waitingSet {
		t.sigmask, t.realBlocked, t.waitingSet = t.realBlocked, 0, false
		k.recalc(t)
	}
	return k.dequeueMask(t, set&^unblockable)
}

// AltStack returns thread tid's alternate signal stack: base, flags
// (SS_DISABLE, SS_AUTODISARM) and size.
func (k *Kernel) AltStack(tid int) (sp, flags, size uint64) {
	a := k.thread(tid).altStack
	return a[0], a[1], a[2]
}

// DisarmAltStack forgets thread tid's alternate stack (SS_AUTODISARM,
// when a handler starts on it).
func (k *Kernel) DisarmAltStack(tid int) { k.thread(tid).altStack = [3]uint64{0, ssDisable, 0} }

// RestoreAltStack is rt_sigreturn's restore_altstack: sigaltstack with the
// frame's uc_stack at stack pointer sp, errors ignored.
func (k *Kernel) RestoreAltStack(tid int, sp uint64, ss [3]uint64) {
	_ = k.setAltStack(tid, sp, ss)
}

// NewThread gives thread tid, created by parent, its signal state (the
// parent's mask, nothing pending, no alternate stack), the parent's CPU
// affinity mask and name (comm), as clone does.
func (k *Kernel) NewThread(parent, tid int) {
	t := k.thread(tid)
	if p := k.threads[parent]; p != nil {
		t.sigmask, t.affinity, t.name = p.sigmask, p.affinity, p.name
	}
}

// ExitThread forgets thread tid: its pending signals are lost, and the
// process's pending signals go to the threads left that take them
// (retarget_shared_pending).
func (k *Kernel) ExitThread(tid int) {
	delete(k.threads, tid)
	left := k.sharedSigs.mask
	for _, u := range k.liveTids() {
		if left == 0 {
			break
		}
		t := k.threads[u]
		if take := left &^ t.sigmask; take != 0 {
			left &^= take
			t.sigPending = true
			if k.OnSignal != nil {
				k.OnSignal(u)
			}
		}
	}
}

// ThreadAlive reports whether tid is a thread of the process.
func (k *Kernel) ThreadAlive(tid int) bool { return k.threads[tid] != nil }

// Peek returns the signal Dequeue would take next for thread tid (0:
// none), leaving it pending.
func (k *Kernel) Peek(tid int) int {
	t := k.threads[tid]
	if t == nil {
		return 0
	}
	for _, m := range [2]uint64{t.pending.mask, k.sharedSigs.mask} {
		ready := m &^ t.sigmask
		if ready == 0 {
			continue
		}
		if ready&syncMask != 0 {
			ready &= syncMask
		}
		sig := 1
		for ready&1 == 0 {
			ready >>= 1
			sig++
		}
		return sig
	}
	return 0
}

// SignalWork reports whether thread tid has something for the runtime's
// delivery point: a signal it does not block, or a mask to put back.
func (k *Kernel) SignalWork(tid int) bool {
	t := k.threads[tid]
	return t != nil && (t.restoreMask || k.Deliverable(tid))
}

// ForgetRestart drops what the kernel kept of a waiting call of thread
// tid that a signal interrupted (a ReadyWait's deadline).
func (k *Kernel) ForgetRestart(tid int) {
	if t := k.threads[tid]; t != nil {
		t.restart.valid = false
	}
}

// PartialResult is what the waiting call of thread tid returns when a
// signal interrupts it after it did part of its work, as Linux returns
// what was done rather than EINTR: the bytes of a stream send or a
// MSG_WAITALL receive, the messages of sendmmsg or recvmmsg. It reports
// false when nothing was done.
func (k *Kernel) PartialResult(tid int) (uint64, bool) {
	t := k.threads[tid]
	if t == nil || !t.restart.valid {
		return 0, false
	}
	if t.restart.nr == nrSendmmsg || t.restart.nr == nrRecvmmsg {
		if s, _, e := k.sockOf(fdArg(t.restart.args[0])); t.restart.nr == nrRecvmmsg && t.restart.msgs > 0 && e == 0 {
			// do_recvmmsg keeps the inner recvmsg's error for the next
			// call, and that error is the kernel's ERESTARTSYS.
			s.err = eRESTARTSYS
		}
		return uint64(t.restart.msgs), t.restart.msgs > 0
	}
	return t.restart.done, t.restart.done > 0
}

// Identity returns the process id and user id signals sent by the process
// carry.
func (k *Kernel) Identity() (pid, uid int) { return k.cfg.Pid, k.uids.real }

// maskedWait gives a call that waits with a signal mask at addr (pselect6, ppoll,
// epoll_pwait: set_user_sigmask) its mask: it holds while the call waits,
// so that a signal it unblocks interrupts the wait (EINTR, never
// restarted) and the handler runs under it, the frame saving the old mask;
// a call that returns without waiting puts the old mask back at once.
func (k *Kernel) maskedWait(c *Call, addr uint64, out Outcome) Outcome {
	if addr == 0 {
		return out
	}
	mask, e := k.getU64(addr)
	if e != 0 {
		return out
	}
	if out.Wait == nil || out.Err != nil {
		k.RestoreMask(c.Tid)
		return out
	}
	k.Suspend(c.Tid, mask)
	if k.Deliverable(c.Tid) {
		return fail(eINTR)
	}
	return out
}

// PdeathSig returns the signal thread tid asked for when its parent dies
// (prctl PR_SET_PDEATHSIG; 0: none).
func (k *Kernel) PdeathSig(tid int) int {
	if t := k.threads[tid]; t != nil {
		return t.pdeathsig
	}
	return 0
}
