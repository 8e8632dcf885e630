package guest

import (
	"emuprof/sched"
	"emuprof/syscalls"
)

// task is the thread making a system call, as the table's handlers see it
// (syscalls.Task): what they need of the scheduler, the registers of the
// call (sysRegs, written back after it) and the run's other processes.
// One per process, reset for each call.
type task struct {
	p *Process
	t *sched.Thread
	// end is the run's result when a method returned syscalls.Ended.
	end *Result
}

// taskFor readies p's task for a call by t.
func (p *Process) taskFor(t *sched.Thread) *task {
	p.task = task{p: p, t: t}
	return &p.task
}

// ended ends the call with res: the run's result, or nil when the thread
// goes on from registers the runtime already set.
func (k *task) ended(res *Result) syscalls.Outcome {
	k.end = res
	return syscalls.Outcome{Action: syscalls.Ended}
}

func (k *task) ReadMem(addr uint64, b []byte) error { return k.p.cpu.ReadMem(addr, b) }

func (k *task) Clone(c *syscalls.Call, a syscalls.CloneArgs) syscalls.Outcome {
	out, end := k.p.clone(k.t, c, &k.p.sysRegs, a.Flags, a.Stack, a.ParentTid, a.ChildTid, a.TLS, a.Pidfd)
	if end != nil {
		return k.ended(end)
	}
	return out
}

func (k *task) Exec(_ *syscalls.Call, dirfd int, path, argv, envp uint64, flags int) syscalls.Outcome {
	return k.p.execve(k.t, &k.p.sysRegs, dirfd, path, argv, envp, flags)
}

func (k *task) Wait4(c *syscalls.Call) syscalls.Outcome  { return k.p.wait4(k.t, c) }
func (k *task) Waitid(c *syscalls.Call) syscalls.Outcome { return k.p.waitid(k.t, c) }
func (k *task) Futex(c *syscalls.Call) syscalls.Outcome  { return k.p.futex(k.t, c) }

func (k *task) WaitForSignal(c *syscalls.Call, what string) syscalls.Outcome {
	k.p.parkSignal(k.t, c, what, sched.NoDeadline)
	return syscalls.Outcome{Action: syscalls.Block}
}

func (k *task) Sigtimedwait(c *syscalls.Call) syscalls.Outcome { return k.p.sigtimedwait(k.t, c) }

func (k *task) Sigreturn(*syscalls.Call) syscalls.Outcome {
	return k.ended(k.p.sigreturn(k.t, &k.p.sysRegs))
}

func (k *task) TimersChanged() { k.p.trackTimer() }

func (k *task) Kill(pid, sig int) (syscalls.Outcome, bool) { return k.p.killOthers(k.t, pid, sig) }

func (k *task) KillThread(tgid, tid, sig int) (syscalls.Outcome, bool) {
	p := k.p
	if q := p.m.owner[tid]; tid > 0 && q != nil && q != p && (tgid == 0 || tgid == q.pid) {
		return p.threadKillTo(k.t, q, tid, sig), true
	}
	return syscalls.Outcome{}, false
}

func (k *task) Sigqueue(c *syscalls.Call, pid int) syscalls.Outcome {
	return k.p.sigqueueTo(k.t, c, pid)
}

func (k *task) PidfdOpen(pid int, flags uint32) syscalls.Outcome { return k.p.pidfdOpen(pid, flags) }

func (k *task) PidfdSendSignal(c *syscalls.Call) syscalls.Outcome { return k.p.pidfdSendSignal(c) }

func (k *task) Getpgid(pid int, session bool) syscalls.Outcome { return k.p.getpgid(pid, session) }

func (k *task) Setpgid(pid, pgid int) syscalls.Outcome { return ret(k.p.setpgid(pid, pgid)) }

func (k *task) Setsid() syscalls.Outcome { return k.p.setsid() }
