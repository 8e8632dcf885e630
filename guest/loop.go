package guest

import (
	"fmt"
	"math"
	"time"

	"emuprof/cpu"
	"emuprof/sched"
	"emuprof/syscalls"
	"emuprof/trace"
)

// ExitMaxInsns is the exit code when --max-insns stops the guest (like timeout(1)).
const ExitMaxInsns = 124

// ExitMemoryLimit is the exit code when --memory-limit stops the run (as
// a shell reports a process killed by SIGKILL, the OOM killer's signal).
const ExitMemoryLimit = 137

// Linux signal numbers used in crash reports.
const (
	sigILL  = 4
	sigTRAP = 5
	sigABRT = 6
	sigBUS  = 7
	sigFPE  = 8
	sigKILL = 9
	sigSEGV = 11
)

var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", sigILL: "SIGILL", sigTRAP: "SIGTRAP",
	sigABRT: "SIGABRT", sigBUS: "SIGBUS", sigFPE: "SIGFPE", sigKILL: "SIGKILL", 10: "SIGUSR1", sigSEGV: "SIGSEGV",
	12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}

// SignalName names a Linux signal number.
func SignalName(sig int) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}

// loop runs threads until the first process ends and no other can run.
func (p *Process) loop() *Result {
	for {
		if p.exited && p.sched.Alive() == 0 {
			return &Result{ExitStatus: p.exitStatus}
		}
		if p.interrupted() {
			return &Result{ExitStatus: 130, Signal: 2, Reason: reasonInterrupted, Partial: true}
		}
		if p.cfg.TimeControl != nil {
			p.cpu.Drain()
			for _, d := range p.cfg.TimeControl() {
				if th := p.sched.Thread(int(d.Tid)); th != nil && th.State != sched.Exited {
					p.sched.Pause(th, d.Ns)
				}
			}
		}
		if len(p.m.sig.timed) > 0 {
			p.fireTimers()
			if p.exited && p.sched.Alive() == 0 {
				return &Result{ExitStatus: p.exitStatus}
			}
		}
		if p.cfg.HostNet {
			p.pumpHost()
		}
		t := p.sched.Pick()
		if t == nil {
			if p.sched.Alive() == 0 || p.exited {
				// Orphans blocked for ever are left behind.
				return &Result{ExitStatus: p.exitStatus}
			}
			if p.cfg.HostNet && p.kernel.PumpHost(hostPoll) {
				continue // the host may still send or connect
			}
			return p.deadlock()
		}
		q := p.m.owner[t.Tid]
		res := q.slice(t)
		if res != nil && q != p && res.Signal != 0 && res.Reason != reasonInterrupted {
			// A process other than the first crashed: it dies of the
			// signal, the others go on.
			q.killed(res.Signal)
			continue
		}
		if res != nil {
			return res
		}
	}
}

const reasonInterrupted = "interrupted"

// hostPoll is how long the loop waits for the host at a time (--net host),
// so that it still sees emuprof's own stops.
const hostPoll = 100 * time.Millisecond

// pumpHost moves bytes between the host's network and the run (--net
// host). While every thread waits, and some until a deadline, the host
// is given that deadline in real time first: a guest waiting for a host
// reply with a timeout sees the reply, not a timeout that virtual time
// reached at once.
func (p *Process) pumpHost() {
	p.kernel.PumpHost(0)
	for p.sched.Waiting() && !p.interrupted() {
		at, ok := p.sched.Next()
		if !ok {
			return // nothing has a deadline: Pick finds no thread and the loop waits
		}
		if at != p.m.hostFor {
			p.m.hostFor, p.m.hostWaited = at, 0
		}
		left := time.Duration(at-p.sched.Now()) - p.m.hostWaited
		if left <= 0 || !p.kernel.HostLive() {
			return
		}
		start := time.Now()
		p.kernel.PumpHost(min(left, hostPoll))
		p.m.hostWaited += time.Since(start)
	}
}

// slice runs thread t of p for one quantum, until a syscall or a fault, and
// handles what stopped it. A result ends the run.
func (p *Process) slice(t *sched.Thread) *Result {
	if err := p.switchTo(t); err != nil {
		return p.internal(err)
	}
	if len(p.m.sig.dying) > 0 && p.dies() {
		return nil
	}
	ts := p.threads[t.Tid]
	if ts.blocked {
		return nil // woken for a signal that went elsewhere: it waits on
	}
	if !ts.sig.retried {
		if res := p.deliverSignals(t); res != nil || p.exited && p.alive() == 0 {
			return res
		}
	}
	budget := p.sched.Quantum(t)
	if p.sched.Alone(t) && p == p.m.root {
		// Nobody else could run before t's next syscall. (Only in the
		// first process's engine, which Ctrl-C stops: another process
		// running alone returns every quantum to see the interrupt.)
		budget = 0
	}
	if res := p.checkMemory(); res != nil {
		return res
	}
	if p.cfg.MaxInsns > 0 {
		if p.m.insns >= p.cfg.MaxInsns {
			return &Result{ExitStatus: ExitMaxInsns, Partial: true,
				Reason: fmt.Sprintf("stopped after %d instructions (--max-insns) at %s", p.m.insns, p.syms.Format(p.cpu.PC()))}
		}
		if left := p.cfg.MaxInsns - p.m.insns; budget == 0 || budget > left {
			budget = left
		}
	}
	if len(p.m.sig.timed) > 0 || p.kernel.CPUTimersArmed() {
		budget = p.timerBudget(t, budget)
	}
	if p.model != nil {
		p.sched.Charge(t, p.model.Resume(uint32(t.Tid), t.Wakeups, t.RunNs, t.QueuedNs, t.BlockedNs))
	}
	start := p.sched.StartTime(t)
	p.cpu.SetClock(start)
	ran := t.RunNs
	if p.model != nil {
		p.model.Begin(uint32(t.Tid), start, p.sched.Alone(t))
	}
	stop := p.cpu.Run(p.cpu.PC(), budget)
	p.m.insns += stop.Insns
	if p.model != nil {
		p.cpu.Drain() // the slice's events priced: its cost is known
		p.sched.RanNs(t, stop.Insns, stop.Blocks, p.model.End())
	} else {
		p.sched.RanSaved(t, stop.Insns, stop.Blocks, stop.Saved)
	}
	if p.kernel.CPUTimersArmed() {
		if sig := p.kernel.ChargeCPU(t.Tid, t.RunNs-ran); sig != 0 {
			p.doom(p, sig, t.Clock)
		}
	}
	if p.interrupted() {
		return &Result{ExitStatus: 130, Signal: 2, Reason: reasonInterrupted, Partial: true}
	}
	if stop.Err != nil {
		return p.internal(stop.Err)
	}
	switch stop.Reason {
	case cpu.StopSyscall:
		return p.syscall(t)
	case cpu.StopQuantum, cpu.StopRequest:
	case cpu.StopFault:
		if _, mapped := p.as.Find(stop.FaultAddr); mapped {
			stop.FaultProt = true // an unbacked PROT_NONE page (mm/backed.go)
		}
		return p.memoryFault(t, &stop)
	case cpu.StopInvalid:
		return p.fault(t, sigILL, syscalls.IllIllopn, p.cpu.PC(), 6, 0, "invalid instruction")
	case cpu.StopIntr:
		return p.exception(t, stop.IntNo)
	default:
		// The engine halted by itself (hlt): a privileged instruction in user mode.
		return p.fault(t, sigSEGV, syscalls.SIKernel, 0, 13, 0, "privileged instruction")
	}
	return nil
}

// interrupted says whether the user asked to stop (Ctrl-C).
func (p *Process) interrupted() bool {
	select {
	case <-p.cfg.Interrupt:
		return true
	default:
		return false
	}
}

func intrSignal(intno uint32) (int, string) {
	switch intno {
	case 0:
		return sigFPE, "integer divide error"
	case 1, 3:
		return sigTRAP, "breakpoint"
	case 6:
		return sigILL, "invalid instruction"
	case 16, 19:
		return sigFPE, "floating-point exception"
	case 0x80:
		return sigSEGV, "int 0x80 (32-bit system calls are not supported)"
	}
	return sigSEGV, fmt.Sprintf("CPU exception %d", intno)
}

// switchTo makes t the running thread, saving the previous one's registers.
func (p *Process) switchTo(t *sched.Thread) error {
	ts := p.threads[t.Tid]
	if p.m.cur != t {
		if c := p.m.cur; c != nil && c.State != sched.Exited {
			// Its registers are in its own process's engine.
			o := p.m.owner[c.Tid]
			if err := o.cpu.Save(o.threads[c.Tid].ctx); err != nil {
				return err
			}
		}
		if err := p.cpu.Restore(ts.ctx); err != nil {
			return err
		}
		p.cpu.SetTid(uint32(t.Tid))
		p.m.cur = t
		if p.digest != nil {
			p.hash(0x5317c4, uint64(t.Tid))
		}
	}
	return p.resumeBlocked(t, ts)
}

// syscall handles the syscall the running thread just executed.
func (p *Process) syscall(t *sched.Thread) *Result {
	r := &p.sysRegs
	if err := p.cpu.ReadRegs(r); err != nil {
		return p.internal(err)
	}
	call := syscalls.Call{Tid: t.Tid, Nr: r.RAX, Args: [6]uint64{r.RDI, r.RSI, r.RDX, r.R10, r.R8, r.R9},
		PC: r.RIP - 2, Now: t.Clock, SP: r.RSP, Task: p.taskFor(t)}
	// No delivery here: the syscall's events join the engine's buffer
	// (Emit), in order, and the analyses get full batches. Lock-heavy
	// code makes a futex call every few dozen blocks, and a delivery per
	// call cost the analysis thread a hand-over each.
	out := p.kernel.Do(&call)
	if out.Action == syscalls.Ended {
		return p.task.end
	}
	if p.cfg.Strace != nil {
		result := fmt.Sprintf("%#x", out.Ret)
		if out.Action == syscalls.Block || out.Wait != nil {
			result += " (may block)"
		}
		fmt.Fprintf(p.cfg.Strace, "[%d] %s(%#x, %#x, %#x, %#x, %#x, %#x) = %s\n", t.Tid, syscalls.Name(call.Nr),
			call.Args[0], call.Args[1], call.Args[2], call.Args[3], call.Args[4], call.Args[5], result)
	}
	if out.Err != nil {
		p.exitStatus = 2
		return &Result{ExitStatus: 2, Partial: true, Reason: p.describeSyscallError(out.Err, call.PC)}
	}
	if p.model != nil {
		ns := p.model.Syscall(call.Nr, call.Args[1], int64(out.Ret))
		p.sched.Charge(t, ns)
		p.threads[t.Tid].kernelNs = ns
	}
	switch out.Action {
	case syscalls.ExitGroup:
		if out.Signal != 0 {
			// A signal the program sent itself took its default action
			// (abort's SIGABRT): report it like a crash.
			return p.crash(out.Signal, "signal sent by the program")
		}
		p.exited, p.exitStatus = true, out.Status&0xff
		p.recordSyscall(t, call.Nr, uint64(out.Status))
		p.exitGroup(out.Status)
		p.processExit((out.Status & 0xff) << 8)
		return nil
	case syscalls.Exit:
		p.recordSyscall(t, call.Nr, uint64(out.Status))
		return p.exitThread(t, out.Status)
	}
	if out.Action == syscalls.Block || p.parks(t, &call, out) {
		p.parkedWithSignal(t)
		return nil // the result is delivered when the thread resumes
	}
	p.threads[t.Tid].sig.retried = false
	r.RAX = out.Ret
	// The kernel's syscall return clobbers rcx and r11.
	r.RCX, r.R11 = r.RIP, r.RFLAGS
	if err := p.cpu.WriteRegs(r); err != nil {
		return p.internal(err)
	}
	p.recordSyscall(t, call.Nr, out.Ret)
	return p.deliverSignals(t)
}

func (p *Process) recordSyscall(t *sched.Thread, nr, ret uint64) {
	if p.digest != nil {
		p.hash(0x5c, nr, ret)
	}
	if p.cfg.Needs.Syscalls {
		ts := p.threads[t.Tid]
		kernel := uint32(min(ts.kernelNs, math.MaxUint32))
		ts.kernelNs = 0 // set again by the thread's next call under a model
		p.emit(trace.Event{Kind: trace.KindSyscall, Tid: uint32(t.Tid), Time: t.Clock, Addr: nr, Aux: ret, Block: kernel})
	}
}

func (p *Process) describeSyscallError(err error, pc uint64) string {
	if u, ok := err.(*syscalls.UnsupportedError); ok {
		msg := fmt.Sprintf("unsupported syscall %d (%s) at %#x in %s", u.Nr, syscalls.Name(u.Nr), pc, p.syms.Format(pc))
		// Name the caller too: the syscall instruction is usually in a libc wrapper.
		var r cpu.Regs
		if p.cpu.ReadRegs(&r) == nil {
			if callers := p.callers(&r); len(callers) > 0 {
				msg += ", called from " + p.syms.Format(callers[0])
			}
		}
		return msg + " (--unsupported=enosys makes it fail with ENOSYS instead)"
	}
	return fmt.Sprintf("syscall at %#x in %s: %v", pc, p.syms.Format(pc), err)
}

// crash ends the run as if the guest were killed by sig.
func (p *Process) crash(sig int, what string) *Result {
	var r cpu.Regs
	_ = p.cpu.ReadRegs(&r)
	res := &Result{ExitStatus: 128 + sig, Signal: sig, Partial: true,
		Reason: fmt.Sprintf("guest killed by %s: %s at %#x in %s", SignalName(sig), what, r.RIP, p.syms.Format(r.RIP))}
	res.Report = p.backtrace(&r)
	if p.cfg.Strace != nil {
		res.Report = append(res.Report, fmt.Sprintf("  rax=%#x rbx=%#x rcx=%#x rdx=%#x rsi=%#x rdi=%#x rbp=%#x rsp=%#x r8=%#x r9=%#x r10=%#x r11=%#x r12=%#x r13=%#x r14=%#x r15=%#x fs=%#x",
			r.RAX, r.RBX, r.RCX, r.RDX, r.RSI, r.RDI, r.RBP, r.RSP, r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.FSBase))
	}
	if p.m.cur != nil {
		res.Report = append([]string{fmt.Sprintf("thread %d:", p.m.cur.Tid)}, res.Report...)
	}
	return res
}

func (p *Process) internal(err error) *Result {
	pc := p.cpu.PC()
	return &Result{ExitStatus: 2, Partial: true, Reason: fmt.Sprintf("internal error at %#x in %s: %v", pc, p.syms.Format(pc), err)}
}

// deadlock reports every blocked thread with what it waits on and its stack.
func (p *Process) deadlock() *Result {
	res := &Result{ExitStatus: ExitDeadlock, Partial: true, Reason: "deadlock: every thread is blocked and no timer is pending"}
	if c := p.m.cur; c != nil && c.State != sched.Exited {
		o := p.m.owner[c.Tid]
		_ = o.cpu.Save(o.threads[c.Tid].ctx)
	}
	for _, t := range p.sched.Deadlock() {
		res.Report = append(res.Report, fmt.Sprintf("thread %d: blocked on %s", t.Tid, t.Wait))
		o := p.m.owner[t.Tid]
		if o == nil || o.cpu.Restore(o.threads[t.Tid].ctx) != nil {
			continue
		}
		var r cpu.Regs
		if o.cpu.ReadRegs(&r) == nil {
			res.Report = append(res.Report, o.backtrace(&r)...)
		}
	}
	return res
}

// checkMemory stops the run when the memory of its processes (their
// backed guest memory) and of the analyses (trace.MemoryUser) is over
// cfg.MemoryLimit: emuprof's own memory stays bounded, and the profiles
// so far are written, partial. Both figures depend on the guest only.
func (p *Process) checkMemory() *Result {
	limit := p.m.root.cfg.MemoryLimit
	if limit == 0 {
		return nil
	}
	var guest, an uint64
	for tid, q := range p.m.owner {
		if tid != q.pid || q.zombie {
			continue // one thread per process: its first
		}
		if !q.borrows { // a vfork child's memory is its parent's
			guest += q.as.Backed()
		}
		for _, a := range q.cfg.Analyses {
			if m, ok := a.(trace.MemoryUser); ok {
				an += m.MemoryBytes()
			}
		}
	}
	if guest+an <= limit {
		return nil
	}
	return &Result{ExitStatus: ExitMemoryLimit, Partial: true,
		Reason: fmt.Sprintf("stopped at the memory limit (--memory-limit %d MiB: guest memory %d MiB, analyses %d MiB) at %s",
			limit>>20, guest>>20, an>>20, p.syms.Format(p.cpu.PC()))}
}
