package guest

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"emuprof/cpu"
	"emuprof/sched"
	"emuprof/syscalls"
	"emuprof/trace"
)

// Signal delivery to guest handlers, as Linux's arch/x86/kernel/signal.c
// and signal_64.c do it, at points that depend on virtual time only:
//
//   - when a system call returns (a signal the thread sent itself, one a
//     call unblocked, rt_sigreturn's pending ones);
//   - when the scheduler switches a thread in (signals other threads,
//     processes and timers sent it meanwhile);
//   - at a fault (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE);
//   - a thread blocked in a system call is woken by a signal it takes
//     (sched.Interrupt): the call fails with EINTR, or is restarted under
//     SA_RESTART as Linux restarts it (-ERESTARTSYS: reads, writes, wait4,
//     futex waits without a timeout, locks...; never nanosleep, select,
//     poll, epoll_wait, pause, rt_sigsuspend).
//
// ITIMER_REAL (alarm, setitimer) expires on the virtual clock: the run
// loop fires a process's timer when no thread could run before its expiry,
// and run slices stop at it, so SIGALRM arrives at the same instruction on
// every run.
//
// The frame is Linux's x86-64 rt_sigframe (arch/x86/include/asm/sigframe.h)
// below the red zone, or on the alternate stack (get_sigframe):
//
//	struct rt_sigframe {              // 440 bytes, at sp ≡ 8 (mod 16)
//		char *pretcode;           // 0: sa_restorer (SA_RESTORER)
//		struct ucontext uc;       // 8
//		struct siginfo info;      // 312 (written under SA_SIGINFO only)
//	};
//	struct ucontext {                 // include/uapi/asm-generic/ucontext.h
//		unsigned long uc_flags;   // 0: UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS
//		struct ucontext *uc_link; // 8: 0
//		stack_t uc_stack;         // 16: ss_sp, ss_flags, ss_size
//		struct sigcontext uc_mcontext; // 40: 256 bytes
//		sigset_t uc_sigmask;      // 296: the mask to restore
//	};
//	struct sigcontext {               // arch/x86/include/uapi/asm/sigcontext.h
//		r8 r9 r10 r11 r12 r13 r14 r15 rdi rsi rbp rbx rdx rax rcx rsp rip
//		eflags; u16 cs, gs, fs, ss; err; trapno; oldmask; cr2;
//		struct _fpstate *fpstate; reserved1[8];
//	};
//
// and above it, 64-byte aligned, the 512-byte fxsave image the fpstate
// pointer points to (fpu__alloc_mathframe; the emulated CPU has no XSAVE,
// so there is no xstate header). The handler starts with rdi = signal,
// rsi = &info, rdx = &uc, rax = 0, rsp = the frame, DF cleared and the FPU
// in its initial state; rt_sigreturn restores every register, the FPU
// state, the mask and the alternate stack from the (possibly modified)
// frame.

const (
	frameSize  = 440
	frameUC    = 8
	frameMC    = frameUC + 40
	frameMask  = frameUC + 296
	frameInfo  = 312
	redZone    = 128
	ucFlags    = 2 | 4 // UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
	userCS     = 0x33
	userSS     = 0x2b
	flagsClear = 0x400 | 0x100 | 0x10000 // DF, TF, RF (setup_rt_frame)
	// fixEflags are the flags rt_sigreturn takes from the frame
	// (FIX_EFLAGS: AC OF DF TF SF ZF AF PF CF RF).
	fixEflags = 0x40000 | 0x800 | 0x400 | 0x100 | 0x80 | 0x40 | 0x10 | 0x4 | 0x1 | 0x10000

	// sigWaitKey marks the waits of pause, rt_sigsuspend and
	// rt_sigtimedwait (WaitOther, with the tid).
	sigWaitKey = 0x5167 << 40
)

// sigThread is a thread's signal state in the runtime.
type sigThread struct {
	// interrupted: a signal woke the thread from its wait.
	interrupted bool
	// retried: the interrupted call is being re-executed to see whether
	// it can complete; if it would wait again, the signal interrupts it.
	retried bool
	// args are the arguments of the call the thread is parked in.
	args [6]uint64
	// set and info are rt_sigtimedwait's set and siginfo address.
	set, info uint64
	// err, trapno and cr2 describe the thread's last fault (sigcontext).
	err, trapno, cr2 uint64
}

// sigMachine is the signal state of a run.
type sigMachine struct {
	// timed are the processes whose ITIMER_REAL may be armed.
	timed []*Process
	// timer is set while a timer's signal is sent: the wake is at its
	// expiry, by nobody.
	timer   bool
	timerAt int64
	// dying are the processes a fatal signal from another process will
	// kill when they next run (doom).
	dying    map[*Process]int
	fpInit   [cpu.FPStateSize]byte
	fpInitOK bool
}

// bindSignals connects the kernel's signal callback to p.
func (p *Process) bindSignals() {
	p.kernel.OnSignal = p.signalled
}

// signalled: thread tid of p should take a signal now; if it is blocked
// in an interruptible wait, the signal interrupts it.
func (p *Process) signalled(tid int) {
	t := p.sched.Thread(tid)
	ts := p.threads[tid]
	if t == nil || ts == nil || t.State != sched.Blocked || !ts.blocked {
		return
	}
	if t.Wait.Kind == sched.WaitJoin && t.Wait.Addr&vforkKey != 0 {
		return // a vfork parent waits for its child, signals or not
	}
	waker, at := p.m.cur, p.sched.Now()
	if p.m.sig.timer {
		waker, at = nil, p.m.sig.timerAt
	}
	if p.sched.Interrupt(t, waker, at) {
		ts.sig.interrupted = true
	}
}

// parkSignal parks t in a call that waits for a signal.
func (p *Process) parkSignal(t *sched.Thread, c *syscalls.Call, what string, deadline int64) {
	p.sched.Block(t, sched.Wait{Kind: sched.WaitOther, Addr: sigWaitKey | uint64(t.Tid), Deadline: deadline, What: what})
	p.block(t, c)
}

// sigtimedwait is rt_sigtimedwait (do_sigtimedwait): a pending signal of
// the set is taken at once; otherwise the set is unblocked while the
// thread waits, up to the timeout (EAGAIN), for one of them, or until
// another signal's handler interrupts it (EINTR).
func (p *Process) sigtimedwait(t *sched.Thread, c *syscalls.Call) syscalls.Outcome {
	a := c.Args
	if a[3] != 8 {
		return ret(syscalls.EINVAL.Ret())
	}
	var b [16]byte
	if !p.kernel.Accessible(a[0], 8, false) || p.cpu.ReadMem(a[0], b[:8]) != nil {
		return ret(syscalls.EFAULT.Ret())
	}
	set := binary.LittleEndian.Uint64(b[:8])
	deadline := sched.NoDeadline
	if a[2] != 0 {
		ns, e := p.futexTimeout(a[2])
		if e != 0 {
			return ret(e)
		}
		deadline = c.Now + ns
		if ns == 0 {
			deadline = 0
		}
	}
	if info, ok := p.kernel.TakeSet(t.Tid, set); ok {
		return ret(p.putSigInfo(a[1], &info))
	}
	if deadline == 0 {
		return ret(syscalls.EAGAIN.Ret())
	}
	p.kernel.WaitSet(t.Tid, set)
	if p.kernel.Deliverable(t.Tid) {
		// Another signal is pending: it interrupts the wait at once.
		p.kernel.TakeSet(t.Tid, 0)
		return ret(syscalls.EINTR.Ret())
	}
	p.parkSignal(t, c, "rt_sigtimedwait", deadline)
	ts := p.threads[t.Tid]
	ts.sig.set, ts.sig.info = set, a[1]
	return syscalls.Outcome{Action: syscalls.Block}
}

// putSigInfo stores info at addr (if not NULL) and returns the signal
// number, or -EFAULT.
func (p *Process) putSigInfo(addr uint64, info *syscalls.SigInfo) uint64 {
	if addr != 0 {
		if !p.kernel.Accessible(addr, 128, true) || p.cpu.WriteMem(addr, info[:]) != nil {
			return syscalls.EFAULT.Ret()
		}
	}
	return uint64(info.Signo())
}

// restartable reports whether an interrupted call nr is restarted under
// SA_RESTART (it returns -ERESTARTSYS in Linux), rather than failing with
// EINTR whatever the flags (-ERESTARTNOHAND, -ERESTART_RESTARTBLOCK).
func restartable(nr uint64, args [6]uint64) bool {
	switch nr {
	case 0, 1, 2, 16, 17, 18, 19, 20, 40, 61, 72, 73, 247, 257, 275, 276, 295, 296, 327, 328:
		return true
	case syscalls.NrFutex:
		return args[3] == 0 // with a timeout: a restart block, EINTR
	}
	return false
}

// resumeSignalled decides what the call t was parked in returns when a
// signal interrupted it, or when it was a wait for signals (pause,
// rt_sigsuspend, rt_sigtimedwait). It sets r and reports whether it did;
// reblock says that t waits again (nothing to deliver any more).
func (p *Process) resumeSignalled(t *sched.Thread, ts *threadState, r *cpu.Regs) (done, reblock bool) {
	s := &ts.sig
	interrupted := s.interrupted
	s.interrupted = false
	switch ts.nr {
	case syscalls.NrRtSigtimedwait:
		if info, ok := p.kernel.TakeSet(t.Tid, s.set); ok {
			r.RAX = p.putSigInfo(s.info, &info)
		} else if t.TimedOut {
			r.RAX = syscalls.EAGAIN.Ret()
		} else if p.kernel.Deliverable(t.Tid) {
			r.RAX = syscalls.EINTR.Ret()
		} else {
			p.kernel.WaitSet(t.Tid, s.set)
			return false, true
		}
		p.recordSyscall(t, ts.nr, r.RAX)
		return true, false
	case syscalls.NrPause, syscalls.NrRtSigsuspend:
		if !p.kernel.Deliverable(t.Tid) {
			return false, true
		}
		r.RAX = syscalls.EINTR.Ret()
		p.recordSyscall(t, ts.nr, r.RAX)
		return true, false
	}
	if !interrupted {
		return false, false
	}
	restartType := t.Wait.Restart || ts.retry
	if restartType && !s.retried {
		// See first whether the call completes now (a pipe that has
		// data, a child that exited): re-execute it; if it would wait
		// again, the signal interrupts it then.
		s.retried = true
		return false, false
	}
	s.retried = false
	sig := p.kernel.Peek(t.Tid)
	if sig == 0 {
		// The signal went to another thread or was discarded: the call
		// goes on.
		if restartType {
			return false, false
		}
		return false, true
	}
	act := p.kernel.Action(sig)
	handler := act.Handler != syscalls.SigDfl && act.Handler != syscalls.SigIgn
	p.kernel.ForgetRestart(t.Tid)
	ts.retry = false
	if !handler || act.Flags&syscalls.SARestart != 0 && restartable(ts.nr, s.args) {
		// Restarted: re-executed once the handler (if any) returns.
		r.RIP -= 2
		r.RAX = ts.nr
		return true, false
	}
	r.RAX = syscalls.EINTR.Ret()
	if left := t.Wait.Deadline - t.Clock; t.Wait.Kind == sched.WaitSleep && left > 0 {
		// nanosleep's remaining time (not for an absolute clock_nanosleep).
		var rem uint64
		switch {
		case ts.nr == syscalls.NrNanosleep:
			rem = s.args[1]
		case ts.nr == syscalls.NrClockNanosleep && s.args[1]&1 == 0:
			rem = s.args[3]
		}
		if rem != 0 {
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:], uint64(left/1e9))
			binary.LittleEndian.PutUint64(b[8:], uint64(left%1e9))
			if !p.kernel.Accessible(rem, 16, true) || p.cpu.WriteMem(rem, b[:]) != nil {
				r.RAX = syscalls.EFAULT.Ret()
			}
		}
	}
	p.recordSyscall(t, ts.nr, r.RAX)
	return true, false
}

// parkedWithSignal: t just parked in a call while a signal it takes is
// pending (a call that unblocked it, or the re-executed call of an
// interrupted wait): the signal interrupts the wait at once, as Linux
// checks signal_pending before it sleeps.
func (p *Process) parkedWithSignal(t *sched.Thread) {
	ts := p.threads[t.Tid]
	if !p.kernel.Deliverable(t.Tid) || t.State != sched.Blocked {
		return
	}
	if t.Wait.Kind == sched.WaitJoin && t.Wait.Addr&vforkKey != 0 {
		return
	}
	if p.sched.Interrupt(t, t, t.Clock) {
		ts.sig.interrupted, ts.sig.retried = true, true
	}
}

// deliverSignals runs the handlers of the signals thread t (running, its
// registers in the engine) takes now: it builds a frame per signal, each
// on top of the last, as Linux does on its way back to user mode.
// Default actions are applied: ignore, or the death of the process.
func (p *Process) deliverSignals(t *sched.Thread) *Result {
	if !p.kernel.SignalWork(t.Tid) {
		return nil
	}
	for i := 0; i < 64; i++ {
		info, ok := p.kernel.Dequeue(t.Tid)
		if !ok {
			break
		}
		sig := info.Signo()
		act := p.kernel.Action(sig)
		switch {
		case act.Handler == syscalls.SigIgn:
			continue
		case act.Handler == syscalls.SigDfl:
			if syscalls.DefaultIgnored(sig) {
				continue
			}
			return p.dieOf(sig, "signal "+SignalName(sig))
		}
		if res := p.handle(t, &info, act); res != nil {
			return res
		}
	}
	p.kernel.RestoreMask(t.Tid)
	p.kernel.DoneDelivering(t.Tid)
	return nil
}

// dieOf ends process p, killed by sig's default action.
func (p *Process) dieOf(sig int, what string) *Result {
	if p == p.m.root {
		return p.crash(sig, what)
	}
	p.killed(sig)
	return nil
}

// initFPState is the FPU state a handler starts with
// (fpu__clear_user_states): x87 and SSE reset, exceptions masked.
func (p *Process) initFPState() *[cpu.FPStateSize]byte {
	s := &p.m.sig
	if !s.fpInitOK {
		binary.LittleEndian.PutUint16(s.fpInit[0:], 0x37f)
		binary.LittleEndian.PutUint32(s.fpInit[24:], 0x1f80)
		binary.LittleEndian.PutUint32(s.fpInit[28:], 0xffff)
		s.fpInitOK = true
	}
	return &s.fpInit
}

// handle builds the frame of signal info on t's stack and points t at the
// handler (x64_setup_rt_frame, get_sigframe, signal_delivered).
func (p *Process) handle(t *sched.Thread, info *syscalls.SigInfo, act syscalls.SigAction) *Result {
	var r cpu.Regs
	if err := p.cpu.ReadRegs(&r); err != nil {
		return p.internal(err)
	}
	sig, tid := info.Signo(), t.Tid
	altSP, altFlags, altSize := p.kernel.AltStack(tid)
	nested := p.kernel.AltStackFlags(tid, r.RSP) == 1 // on_sig_stack(regs->sp)
	sp := r.RSP - redZone
	entering := false
	if act.Flags&syscalls.SAOnStack != 0 && p.kernel.AltStackFlags(tid, sp) == 0 {
		sp, entering = altSP+altSize, true
	}
	fx := (sp - cpu.FPStateSize) &^ 63
	frame := (fx-frameSize)&^15 - 8
	onAlt := frame > altSP && frame-altSP <= altSize
	if (nested || entering) && !onAlt || !p.kernel.Accessible(frame, fx+cpu.FPStateSize-frame, true) {
		// The frame does not fit: force_sigsegv.
		return p.dieOf(sigSEGV, fmt.Sprintf("no room for the frame of %s at %#x", SignalName(sig), frame))
	}
	var fp [cpu.FPStateSize]byte
	if err := p.cpu.ReadFPState(&fp); err != nil {
		return p.internal(err)
	}
	saved := p.kernel.Handling(tid, sig)
	s := &p.threads[tid].sig
	var b [frameSize]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], act.Restorer)
	le.PutUint64(b[frameUC:], ucFlags)
	le.PutUint64(b[frameUC+16:], altSP)
	le.PutUint32(b[frameUC+24:], uint32(altFlags))
	le.PutUint64(b[frameUC+32:], altSize)
	mc := b[frameMC:]
	for i, v := range [...]uint64{r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15,
		r.RDI, r.RSI, r.RBP, r.RBX, r.RDX, r.RAX, r.RCX, r.RSP, r.RIP, r.RFLAGS} {
		le.PutUint64(mc[8*i:], v)
	}
	le.PutUint16(mc[144:], userCS)
	le.PutUint16(mc[150:], userSS)
	le.PutUint64(mc[152:], s.err)
	le.PutUint64(mc[160:], s.trapno)
	le.PutUint64(mc[168:], saved)
	le.PutUint64(mc[176:], s.cr2)
	le.PutUint64(mc[184:], fx)
	le.PutUint64(b[frameMask:], saved)
	n := frameInfo
	if act.Flags&syscalls.SASiginfo != 0 {
		copy(b[frameInfo:], info[:])
		n = frameSize
	}
	if p.cpu.WriteMem(fx, fp[:]) != nil || p.cpu.WriteMem(frame, b[:n]) != nil {
		return p.dieOf(sigSEGV, "signal frame not writable")
	}
	if altFlags&(1<<31) != 0 {
		p.kernel.DisarmAltStack(tid) // SS_AUTODISARM
	}
	r.RDI, r.RAX, r.RSI, r.RDX = uint64(sig), 0, frame+frameInfo, frame+frameUC
	r.RIP, r.RSP = act.Handler, frame
	r.RFLAGS &^= flagsClear
	if err := p.cpu.WriteRegs(&r); err != nil {
		return p.internal(err)
	}
	if err := p.cpu.WriteFPState(p.initFPState()); err != nil {
		return p.internal(err)
	}
	if p.digest != nil {
		p.hash(0x5167, uint64(tid), uint64(sig), act.Handler)
	}
	if n := p.cfg.Needs; n.Syscalls || n.Calls {
		// The entry of a handler, for the analyses (call tracking: there
		// is no call instruction).
		size := uint32(sig)
		if entering || nested {
			size |= trace.SignalOnAltStack
		}
		p.emit(trace.Event{Kind: trace.KindSyscall, Tid: uint32(tid), Time: t.Clock,
			Addr: trace.SyscallSignalEntry, Aux: act.Restorer, Size: size})
	}
	return nil
}

// sigreturn is rt_sigreturn: the registers, FPU state, mask and alternate
// stack come back from the frame at rsp-8 (signal_64.c, restore_sigcontext
// and fpu__restore_sig). A frame that cannot be read kills the process
// with SIGSEGV.
func (p *Process) sigreturn(t *sched.Thread, r *cpu.Regs) *Result {
	frame := r.RSP - 8
	var b [frameSize]byte
	if !p.kernel.Accessible(frame, frameSize, false) || p.cpu.ReadMem(frame, b[:]) != nil {
		return p.dieOf(sigSEGV, fmt.Sprintf("rt_sigreturn with a bad frame at %#x", frame))
	}
	le := binary.LittleEndian
	p.kernel.SetSigMask(t.Tid, le.Uint64(b[frameMask:]))
	mc := b[frameMC:]
	g := func(i int) uint64 { return le.Uint64(mc[8*i:]) }
	r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15 = g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7)
	r.RDI, r.RSI, r.RBP, r.RBX, r.RDX, r.RAX, r.RCX, r.RSP, r.RIP = g(8), g(9), g(10), g(11), g(12), g(13), g(14), g(15), g(16)
	r.RFLAGS = r.RFLAGS&^fixEflags | g(17)&fixEflags
	if fx := le.Uint64(mc[184:]); fx == 0 {
		if err := p.cpu.WriteFPState(p.initFPState()); err != nil {
			return p.internal(err)
		}
	} else {
		var fp [cpu.FPStateSize]byte
		if !p.kernel.Accessible(fx, cpu.FPStateSize, false) || p.cpu.ReadMem(fx, fp[:]) != nil {
			return p.dieOf(sigSEGV, fmt.Sprintf("rt_sigreturn with a bad FPU state at %#x", fx))
		}
		if err := p.cpu.WriteFPState(&fp); err != nil {
			return p.internal(err)
		}
	}
	ss := [3]uint64{le.Uint64(b[frameUC+16:]), uint64(le.Uint32(b[frameUC+24:])), le.Uint64(b[frameUC+32:])}
	p.kernel.RestoreAltStack(t.Tid, r.RSP, ss)
	if err := p.cpu.WriteRegs(r); err != nil {
		return p.internal(err)
	}
	if n := p.cfg.Needs; n.Calls && !n.Syscalls {
		p.emit(trace.Event{Kind: trace.KindSyscall, Tid: uint32(t.Tid), Time: t.Clock, Addr: syscalls.NrRtSigreturn, Aux: r.RAX})
	}
	p.recordSyscall(t, syscalls.NrRtSigreturn, r.RAX)
	return p.deliverSignals(t)
}

// fault delivers the synchronous signal of a fault of the running thread
// to its handler (force_sig_fault); blocked, ignored or without a handler,
// the process dies of it.
func (p *Process) fault(t *sched.Thread, sig, code int, addr, trapno, errCode uint64, what string) *Result {
	if !p.catches(t, sig) {
		return p.crash(sig, what)
	}
	s := &p.threads[t.Tid].sig
	s.err, s.trapno = errCode, trapno
	if trapno == 14 {
		s.cr2 = addr
	}
	p.kernel.Send(t.Tid, syscalls.FaultInfo(sig, code, addr), false)
	return p.deliverSignals(t)
}

// catches reports whether thread t runs a handler for the synchronous
// signal sig: a blocked or ignored one kills the process.
func (p *Process) catches(t *sched.Thread, sig int) bool {
	act := p.kernel.Action(sig)
	return act.Handler != syscalls.SigDfl && act.Handler != syscalls.SigIgn &&
		p.kernel.SigMask(t.Tid)&(1<<(sig-1)) == 0
}

// trackTimer notes that p's ITIMER_REAL may be armed.
func (p *Process) trackTimer() {
	if p.kernel.TimerDeadline() == 0 {
		return
	}
	for _, q := range p.m.sig.timed {
		if q == p {
			return
		}
	}
	p.m.sig.timed = append(p.m.sig.timed, p)
}

// fireTimers expires the process timers due before anything else can
// happen in virtual time (the next Pick), in the order they were armed.
func (p *Process) fireTimers() {
	s := &p.m.sig
	next, any := p.sched.Next()
	kept := s.timed[:0]
	for _, q := range s.timed {
		d := q.kernel.TimerDeadline()
		if d == 0 || q.exited {
			continue
		}
		if !any || d <= next {
			// One signal per expiry seen: intervals that passed meanwhile
			// are overruns, as for a signal still pending.
			s.timer, s.timerAt = true, d
			sig := q.kernel.FireTimers(max(d, p.sched.Now()))
			s.timer = false
			if p.digest != nil {
				p.hash(0xa1a2, uint64(q.pid), uint64(d))
			}
			if sig != 0 {
				q.killedBySignal(sig)
			}
		}
		if !q.exited && q.kernel.TimerDeadline() != 0 {
			kept = append(kept, q)
		}
	}
	clear(s.timed[len(kept):])
	s.timed = kept
}

// timerBudget caps a slice of thread t so that it stops when the earliest
// process timer expires, or when its process's ITIMER_VIRTUAL or
// ITIMER_PROF runs out (0: no limit).
func (p *Process) timerBudget(t *sched.Thread, budget uint64) uint64 {
	ns := p.sched.Config().NsPerInsn
	if left := p.kernel.CPUTimerLeft(); left > 0 {
		n := uint64(max((left+ns-1)/ns, 1))
		if budget == 0 || n < budget {
			budget = n
		}
	}
	start := p.sched.StartTime(t)
	for _, q := range p.m.sig.timed {
		d := q.kernel.TimerDeadline()
		if d == 0 {
			continue
		}
		n := uint64(1)
		if d > start {
			n = uint64((d - start + ns - 1) / ns)
		}
		if budget == 0 || n < budget {
			budget = n
		}
	}
	return budget
}

// killedBySignal ends process p, whose default action for sig is death,
// whatever thread is running.
func (p *Process) killedBySignal(sig int) {
	if p == p.m.root {
		p.exitGroup(128 + sig)
		p.exited, p.exitStatus = true, 128+sig
		p.processExit(sig & 0x7f)
		return
	}
	p.killed(sig)
}

// sendTo sends sig from thread t of p to process q (kill(2)): its
// handler runs, or its default action kills it.
func (p *Process) sendTo(t *sched.Thread, q *Process, sig int) {
	if sig == 0 || q.exited {
		return
	}
	pid, uid := p.kernel.Identity()
	res := q.kernel.Send(q.pid, syscalls.KillInfo(sig, syscalls.SIUser, pid, uid), true)
	if p.digest != nil {
		p.hash(0x6b11, uint64(q.pid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
}

// threadKillTo is tkill or tgkill to thread tid of another process q.
func (p *Process) threadKillTo(t *sched.Thread, q *Process, tid, sig int) syscalls.Outcome {
	if sig < 0 || sig > 64 {
		return ret(syscalls.EINVAL.Ret())
	}
	if th := p.sched.Thread(tid); th == nil || th.State == sched.Exited || q.exited {
		return ret(syscalls.ESRCH.Ret())
	}
	if sig == 0 {
		return ret(0)
	}
	pid, uid := p.kernel.Identity()
	res := q.kernel.Send(tid, syscalls.KillInfo(sig, syscalls.SITkill, pid, uid), false)
	if p.digest != nil {
		p.hash(0x6b13, uint64(tid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
	return ret(0)
}

// sigqueueTo is rt_sigqueueinfo to another process pid.
func (p *Process) sigqueueTo(t *sched.Thread, c *syscalls.Call, pid int) syscalls.Outcome {
	sig := int(int32(c.Args[1]))
	if sig < 0 || sig > 64 {
		return ret(syscalls.EINVAL.Ret())
	}
	info, e := p.kernel.QueuedInfo(c, sig, c.Args[2])
	if e != 0 {
		return ret(e.Ret())
	}
	q := p.m.owner[pid]
	if q == nil || q.pid != pid {
		return ret(syscalls.ESRCH.Ret())
	}
	if sig == 0 || q.exited {
		return ret(0)
	}
	res := q.kernel.Send(q.pid, info, true)
	if p.digest != nil {
		p.hash(0x6b12, uint64(q.pid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
	return ret(0)
}

// killLatency is the virtual time a fatal signal takes to kill another
// process. On Linux the target dies in its own context: its threads wake
// with SIGKILL pending and exit when they next run, on another CPU, tens
// of microseconds later; meanwhile the sender goes on (a shell's `kill
// $!; wait $!` is in wait before its child is gone, and reports the
// death). Killing the target within kill(2) would have its parent see
// the death, and SIGCHLD, the instant kill returns.
const killLatency = 50_000 // ns

// doom makes process q die of sig when one of its threads next runs, not
// before virtual time at.
func (p *Process) doom(q *Process, sig int, at int64) {
	s := &p.m.sig
	if s.dying == nil {
		s.dying = map[*Process]int{}
	}
	if _, ok := s.dying[q]; ok || q.exited {
		return
	}
	s.dying[q] = sig
	for _, tid := range q.tids() {
		th := p.sched.Thread(tid)
		switch {
		case th == nil || th.State == sched.Exited:
		case th.State == sched.Blocked:
			p.sched.Interrupt(th, nil, at)
		case th.Clock < at:
			p.sched.Delay(th, at-th.Clock)
		}
	}
}

// dies ends p if a fatal signal from another process doomed it; it
// reports whether it did.
func (p *Process) dies() bool {
	sig, ok := p.m.sig.dying[p]
	if !ok {
		return false
	}
	delete(p.m.sig.dying, p)
	if !p.exited {
		p.killedBySignal(sig)
	}
	return true
}

// killOthers is kill(2)'s part for other processes (kill_something_info):
// to a process, to the caller's process group (0), to every process but
// init and the caller (-1), or to group -pid. self says that the caller's
// process is a target too: the kernel sends it its signal last
// (syscalls.Task.Kill), so that its death by it comes after the others
// have theirs.
func (p *Process) killOthers(t *sched.Thread, pid, sig int) (out syscalls.Outcome, self bool) {
	if pid > 0 {
		q := p.m.owner[pid]
		if q == nil || q.pid != pid {
			return ret(syscalls.ESRCH.Ret()), false
		}
		p.sendTo(t, q, sig)
		return ret(0), false
	}
	var targets []*Process
	switch {
	case pid == 0:
		targets = p.inGroup(p.pgid)
	case pid == -1:
		for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
			if q := p.m.owner[tid]; q.pid == tid && tid > 1 && q != p {
				targets = append(targets, q)
			}
		}
	case pid == math.MinInt32:
		return ret(syscalls.ESRCH.Ret()), false // -INT_MIN overflows
	default:
		targets = p.inGroup(-pid)
	}
	if len(targets) == 0 {
		return ret(syscalls.ESRCH.Ret()), false
	}
	for _, q := range targets {
		if q == p {
			self = true
		} else {
			p.sendTo(t, q, sig)
		}
	}
	return ret(0), self
}

// notifyOrphans sends the children of the exiting process p that asked
// for it (prctl PR_SET_PDEATHSIG) their signal, from p (as
// forget_original_parent does when their parent thread exits; emuprof
// knows the parent process, not the thread).
func (p *Process) notifyOrphans() {
	at := p.sched.Now()
	if c := p.m.cur; c != nil {
		at = c.Clock
	}
	_, uid := p.kernel.Identity()
	for _, c := range p.children {
		if c.exited || c.zombie {
			continue
		}
		for _, tid := range c.tids() {
			sig := c.kernel.PdeathSig(tid)
			if sig <= 0 || sig > 64 || !c.kernel.ThreadAlive(tid) {
				continue
			}
			if c.kernel.Send(tid, syscalls.KillInfo(sig, syscalls.SIUser, p.pid, uid), true).Fatal {
				p.doom(c, sig, at+killLatency)
			}
		}
	}
}

// notifyParent sends SIGCHLD to the parent of the exited process p
// (do_notify_parent) and reports whether p is reaped at once: its parent
// ignores SIGCHLD or set SA_NOCLDWAIT.
func (p *Process) notifyParent() (autoreap bool) {
	par := p.parent
	if par == nil || par.exited {
		return false
	}
	code, status := syscalls.CldExited, p.wstatus>>8&0xff
	if sig := p.wstatus & 0x7f; sig != 0 {
		code, status = syscalls.CldKilled, sig
		if p.wstatus&0x80 != 0 {
			code = syscalls.CldDumped
		}
	}
	var ticks int64
	for tid := range p.threads {
		if th := p.sched.Thread(tid); th != nil {
			ticks += th.RunNs / 10_000_000 // clock_t at 100 Hz
		}
	}
	_, uid := p.kernel.Identity()
	act := par.kernel.Action(17)
	if act.Handler == syscalls.SigIgn || act.Flags&syscalls.SANoCldWait != 0 {
		autoreap = true
	}
	if act.Handler != syscalls.SigIgn {
		par.kernel.Send(par.pid, syscalls.ChildInfo(code, p.pid, uid, status, ticks, 0), true)
	}
	return autoreap
}

// memoryFault delivers SIGSEGV for a page fault (do_user_addr_fault):
// SEGV_MAPERR or SEGV_ACCERR, si_addr and cr2 the address, the error code
// user|write|fetch|protection.
func (p *Process) memoryFault(t *sched.Thread, stop *cpu.Stop) *Result {
	what, code, ec := "unmapped", syscalls.SegvMaperr, uint64(4)
	if stop.FaultProt {
		what, code = "protected", syscalls.SegvAccerr
		if v, ok := p.as.Find(stop.FaultAddr); ok && v.Prot != 0 {
			ec |= 1 // present: a PROT_NONE page has no page table entry
		}
	}
	switch stop.FaultAccess {
	case cpu.FaultWrite:
		ec |= 2
	case cpu.FaultFetch:
		ec |= 16
	}
	if stop.FaultAccess != cpu.FaultFetch && p.catches(t, sigSEGV) {
		// The handler sees the faulting instruction, not its block.
		var r cpu.Regs
		if err := p.cpu.ReadRegs(&r); err != nil {
			return p.internal(err)
		}
		if pc := p.faultPC(&r, stop.FaultAddr); pc != r.RIP {
			r.RIP = pc
			if err := p.cpu.WriteRegs(&r); err != nil {
				return p.internal(err)
			}
		}
	}
	return p.fault(t, sigSEGV, code, stop.FaultAddr, 14, ec,
		fmt.Sprintf("%s of %s address %#x", stop.FaultAccess, what, stop.FaultAddr))
}

// exception delivers the signal of CPU exception vector intno (the traps
// of arch/x86/kernel/traps.c): divide error SIGFPE/FPE_INTDIV, int3
// SIGTRAP/SI_KERNEL, invalid opcode SIGILL/ILL_ILLOPN, others SIGSEGV.
func (p *Process) exception(t *sched.Thread, intno uint32) *Result {
	sig, what := intrSignal(intno)
	if intno == 0x80 {
		return p.crash(sig, what)
	}
	code, addr := syscalls.SIKernel, uint64(0)
	switch sig {
	case sigFPE:
		code, addr = syscalls.FpeIntdiv, p.cpu.PC()
	case sigILL:
		code, addr = syscalls.IllIllopn, p.cpu.PC()
	}
	return p.fault(t, sig, code, addr, uint64(intno), 0, what)
}
