package guest

import (
	"encoding/binary"
	"fmt"

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
// ITIMER_REAL (alarm, setitimer; sigtimer.go) expires on the virtual clock:
// the run loop fires a process's timer when no thread could run before its
// expiry, and run slices stop at it, so SIGALRM arrives at the same
// instruction on every run. Faults are in sigfault.go, signals to other
// processes in sigkill.go.
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
	if n, partial := p.kernel.PartialResult(t.Tid); partial {
		p.kernel.ForgetRestart(t.Tid)
		ts.retry = false
		r.RAX = n
		p.recordSyscall(t, ts.nr, r.RAX)
		return true, false
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
