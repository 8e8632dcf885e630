package syscalls

import (
	"encoding/binary"
	"errors"
)

// Task is the calling thread as the guest runtime (package guest) sees it:
// what a handler needs beyond the kernel's own state, the scheduler, the
// CPU's registers and the other processes of the run. The runtime sets
// Call.Task for every call.
//
// A handler that blocks does so in place: it returns the Outcome of the
// Task method that parked the thread (Action Block), and the runtime
// delivers the call's result when the scheduler wakes the thread. A
// method whose work ended the run or replaced the thread's registers
// (rt_sigreturn, a failed fork) returns Action Ended.
type Task interface {
	// ReadMem loads guest memory as the CPU would, without the
	// kernel's access events.
	ReadMem(addr uint64, b []byte) error

	// Clone creates a thread or, without CLONE_THREAD, a process
	// (clone, clone3, fork, vfork).
	Clone(c *Call, a CloneArgs) Outcome
	// Exec replaces the process's image (execve, execveat).
	Exec(c *Call, dirfd int, path, argv, envp uint64, flags int) Outcome
	// Wait4 and Waitid wait for a child process.
	Wait4(c *Call) Outcome
	Waitid(c *Call) Outcome
	// Futex performs every futex operation.
	Futex(c *Call) Outcome

	// WaitForSignal parks the thread until a signal it takes arrives
	// (pause, rt_sigsuspend): what names the wait.
	WaitForSignal(c *Call, what string) Outcome
	// Sigtimedwait is rt_sigtimedwait.
	Sigtimedwait(c *Call) Outcome
	// Sigreturn restores the registers, mask and alternate stack from
	// the signal frame at the stack pointer.
	Sigreturn(c *Call) Outcome
	// TimersChanged says that a call may have armed or disarmed
	// ITIMER_REAL (alarm, setitimer, timer_settime).
	TimersChanged()

	// Kill sends sig to the processes pid names other than the caller's
	// (kill(2)'s pid rules); self says that the caller's is one of them
	// too, which the kernel then signals itself.
	Kill(pid, sig int) (out Outcome, self bool)
	// KillThread sends sig to thread tid when it belongs to another
	// process, of pid tgid if tgid is not 0; other is false when it does
	// not.
	KillThread(tgid, tid, sig int) (out Outcome, other bool)
	// Sigqueue is rt_sigqueueinfo to another process pid.
	Sigqueue(c *Call, pid int) Outcome
	// PidfdOpen and PidfdSendSignal are pidfd_open and
	// pidfd_send_signal.
	PidfdOpen(pid int, flags uint32) Outcome
	PidfdSendSignal(c *Call) Outcome

	// Getpgid returns the process group (session: the session) of
	// process pid, 0 for the caller.
	Getpgid(pid int, session bool) Outcome
	// Setpgid and Setsid are setpgid(2) and setsid(2).
	Setpgid(pid, pgid int) Outcome
	Setsid() Outcome
}

// CloneArgs are the arguments of clone, clone3, fork and vfork, as clone
// takes them: the exit signal in the low byte of Flags.
type CloneArgs struct {
	Flags, Stack, ParentTid, ChildTid, TLS uint64
	// Pidfd is where CLONE_PIDFD stores the new pidfd.
	Pidfd uint64
}

// errNoTask stops a call that needs the runtime when the kernel runs
// without one (the package's own tests).
var errNoTask = errors.New("needs the guest runtime (Call.Task is nil)")

// byTask adapts a handler that needs the runtime.
func byTask(fn func(t Task, k *Kernel, c *Call) Outcome) handler {
	return func(k *Kernel, c *Call) Outcome {
		if c.Task == nil {
			return fatal(c, errNoTask)
		}
		return fn(c.Task, k, c)
	}
}

const (
	clonePidfd = 0x1000
	// cloneVfork, cloneParentSettid: the flags fork-like calls name.
	cloneVfork        = 0x4000
	cloneParentSettid = 0x100000
)

func sysClone(t Task, _ *Kernel, c *Call) Outcome {
	a := c.Args
	if a[0]&clonePidfd != 0 && a[0]&cloneParentSettid != 0 {
		// CLONE_PIDFD stores the pidfd where clone's parent tid goes.
		return fail(eINVAL)
	}
	return t.Clone(c, CloneArgs{Flags: a[0], Stack: a[1], ParentTid: a[2], ChildTid: a[3], TLS: a[4], Pidfd: a[2]})
}

func sysClone3(t Task, _ *Kernel, c *Call) Outcome {
	a, e := readCloneArgs(t, c.Args[0], c.Args[1])
	if e != 0 {
		return fail(e)
	}
	return t.Clone(c, a)
}

func sysFork(t Task, _ *Kernel, c *Call) Outcome { return t.Clone(c, CloneArgs{Flags: sigChld}) }

func sysVfork(t Task, _ *Kernel, c *Call) Outcome {
	return t.Clone(c, CloneArgs{Flags: cloneVM | cloneVfork | sigChld})
}

// readCloneArgs reads and checks clone3's struct clone_args (88 bytes at
// CLONE_ARGS_SIZE_VER2) as Linux's copy_clone_args_from_user and
// clone3_args_valid do, in their order.
func readCloneArgs(t Task, argp, size uint64) (CloneArgs, Errno) {
	const (
		ver0, known   = 64, 88
		pageSize      = 4096
		cloneDetached = 0x400000
		cloneParent   = 0x8000
		clearSighand  = 1 << 32
		intoCgroup    = 1 << 33
	)
	if size > pageSize {
		return CloneArgs{}, e2BIG
	}
	if size < ver0 {
		return CloneArgs{}, eINVAL
	}
	buf := make([]byte, size)
	if err := t.ReadMem(argp, buf); err != nil {
		return CloneArgs{}, eFAULT
	}
	for _, b := range buf[min(size, known):] {
		if b != 0 {
			return CloneArgs{}, e2BIG // a field this kernel does not know
		}
	}
	var f [11]uint64
	for i := range f {
		if 8*i+8 <= int(size) {
			f[i] = binary.LittleEndian.Uint64(buf[8*i:])
		}
	}
	flags, pidfd, childTid, parentTid, exitSignal, stack, stackSize, tls, setTid, setTidSize, cgroup :=
		f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]
	switch {
	case setTidSize > 32, setTid == 0 && setTidSize != 0, setTid != 0 && setTidSize == 0:
		return CloneArgs{}, eINVAL
	case exitSignal&^0xff != 0:
		return CloneArgs{}, eINVAL
	case flags&intoCgroup != 0 && (cgroup > 1<<31-1 || size < known):
		return CloneArgs{}, eINVAL
	case flags&^(0xffffffff|clearSighand|intoCgroup) != 0:
		return CloneArgs{}, eINVAL
	case flags&(cloneDetached|(0xff&^cloneNewTime)) != 0:
		return CloneArgs{}, eINVAL
	case flags&(cloneSighand|clearSighand) == cloneSighand|clearSighand:
		return CloneArgs{}, eINVAL
	case flags&(cloneThread|cloneParent) != 0 && exitSignal != 0:
		return CloneArgs{}, eINVAL
	case exitSignal > 64:
		return CloneArgs{}, eINVAL
	case stack == 0 && stackSize != 0, stack != 0 && stackSize == 0:
		return CloneArgs{}, eINVAL
	case stack != 0 && (stack+stackSize < stack || stack+stackSize > 0x7ffffffff000):
		return CloneArgs{}, eINVAL // access_ok
	}
	sp := uint64(0)
	if stack != 0 {
		sp = stack + stackSize
	}
	// The exit signal travels in the low byte of the flags, as clone's.
	return CloneArgs{Flags: flags | exitSignal, Stack: sp, ParentTid: parentTid, ChildTid: childTid, TLS: tls, Pidfd: pidfd}, 0
}

func sysExecve(t Task, _ *Kernel, c *Call) Outcome {
	return t.Exec(c, atFDCWD, c.Args[0], c.Args[1], c.Args[2], 0)
}

func sysExecveat(t Task, _ *Kernel, c *Call) Outcome {
	a := c.Args
	flags := int(a[4])
	if flags&^(atEmptyPath|atSymlinkNoFollow) != 0 {
		return fail(eINVAL)
	}
	return t.Exec(c, int(int32(a[0])), a[1], a[2], a[3], flags)
}

func sysWait4(t Task, _ *Kernel, c *Call) Outcome  { return t.Wait4(c) }
func sysWaitid(t Task, _ *Kernel, c *Call) Outcome { return t.Waitid(c) }
func sysFutex(t Task, _ *Kernel, c *Call) Outcome  { return t.Futex(c) }

func sysRtSigreturn(t Task, _ *Kernel, c *Call) Outcome { return t.Sigreturn(c) }

func sysPause(t Task, k *Kernel, c *Call) Outcome {
	if k.Deliverable(c.Tid) {
		return fail(eINTR)
	}
	return t.WaitForSignal(c, "pause")
}

func sysRtSigsuspend(t Task, k *Kernel, c *Call) Outcome {
	a := c.Args
	if a[1] != 8 {
		return fail(eINVAL)
	}
	var b [8]byte
	if !k.Accessible(a[0], 8, false) || t.ReadMem(a[0], b[:]) != nil {
		return fail(eFAULT)
	}
	k.Suspend(c.Tid, binary.LittleEndian.Uint64(b[:]))
	if k.Deliverable(c.Tid) {
		return fail(eINTR)
	}
	return t.WaitForSignal(c, "rt_sigsuspend")
}

func sysRtSigtimedwait(t Task, _ *Kernel, c *Call) Outcome { return t.Sigtimedwait(c) }

// timerCall is a call that arms a timer the runtime must watch.
func timerCall(fn handler) handler {
	return func(k *Kernel, c *Call) Outcome {
		out := k.perform(c, fn)
		if c.Task != nil {
			c.Task.TimersChanged()
		}
		return out
	}
}

// sysKillAny is kill(2): the runtime signals other processes, the kernel
// its own.
func sysKillAny(k *Kernel, c *Call) Outcome {
	pid, sig := int(int32(c.Args[0])), int(int32(c.Args[1]))
	if c.Task == nil {
		return k.perform(c, sysKill)
	}
	if sig < 0 || sig > 64 {
		return fail(eINVAL)
	}
	if pid == k.cfg.Pid {
		return k.perform(c, sysKill)
	}
	out, self := c.Task.Kill(pid, sig)
	if !self {
		return out
	}
	c2 := *c
	c2.Args[0] = uint64(k.cfg.Pid)
	return k.perform(&c2, sysKill)
}

// Kill is kill(2) with c's arguments (pidfd_send_signal's delivery).
func (k *Kernel) Kill(c *Call) Outcome { return sysKillAny(k, c) }

// sysTkillAny and sysTgkillAny are tkill and tgkill: a thread of another
// process is the runtime's.
func sysTkillAny(k *Kernel, c *Call) Outcome {
	if c.Task != nil {
		if out, other := c.Task.KillThread(0, int(int32(c.Args[0])), int(int32(c.Args[1]))); other {
			return out
		}
	}
	return k.perform(c, sysTkill)
}

func sysTgkillAny(k *Kernel, c *Call) Outcome {
	if tgid := int(int32(c.Args[0])); c.Task != nil && tgid > 0 {
		if out, other := c.Task.KillThread(tgid, int(int32(c.Args[1])), int(int32(c.Args[2]))); other {
			return out
		}
	}
	return k.perform(c, sysTgkill)
}

func sysRtSigqueueinfoAny(k *Kernel, c *Call) Outcome {
	if pid := int(int32(c.Args[0])); c.Task != nil && pid > 0 && pid != k.cfg.Pid {
		return c.Task.Sigqueue(c, pid)
	}
	return k.perform(c, sysRtSigqueueinfo)
}

func sysPidfdOpen(t Task, _ *Kernel, c *Call) Outcome {
	return t.PidfdOpen(int(int32(c.Args[0])), uint32(c.Args[1]))
}

func sysPidfdSendSignal(t Task, _ *Kernel, c *Call) Outcome { return t.PidfdSendSignal(c) }

// The process group calls: the runtime keeps the groups; a kernel without
// it is a process alone.
func sysGetppidAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysGetppid)
	}
	return ok(uint64(k.ppid()))
}

func sysGetpgrpAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysGetpgrp)
	}
	return c.Task.Getpgid(0, false)
}

func sysGetpgidAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysGetpgid)
	}
	return c.Task.Getpgid(int(int32(c.Args[0])), false)
}

func sysGetsidAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysGetpgid)
	}
	return c.Task.Getpgid(int(int32(c.Args[0])), true)
}

func sysSetpgidAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysSetpgid)
	}
	return c.Task.Setpgid(int(int32(c.Args[0])), int(int32(c.Args[1])))
}

func sysSetsidAny(k *Kernel, c *Call) Outcome {
	if c.Task == nil {
		return k.perform(c, sysSetsid)
	}
	return c.Task.Setsid()
}
