package guest

import (
	"encoding/binary"
	"maps"
	"slices"

	"emuprof/sched"
	"emuprof/syscalls"
)

// pidfds: pidfd_open and pidfd_send_signal here, waitid(P_PIDFD) in
// fork.go's waitid, clone(CLONE_PIDFD) in threads.go; the descriptor
// itself is the kernel's (syscalls/sys_pidfd.go).

const (
	pidfdThread = 0x80 // O_EXCL
	oNonblock   = 0x800
)

// pidfdOpen: a pidfd for a process of the run that has not been reaped.
func (p *Process) pidfdOpen(pid int, flags uint32) syscalls.Outcome {
	if flags&^(oNonblock|pidfdThread) != 0 || pid <= 0 {
		return ret(syscalls.EINVAL.Ret())
	}
	q := p.m.owner[pid]
	if q == nil {
		return ret(syscalls.ESRCH.Ret())
	}
	if q.pid != pid && flags&pidfdThread == 0 {
		return ret(syscalls.ENOENT.Ret()) // a thread, not a thread group leader
	}
	fd, e := p.kernel.OpenPidFD(pid, flags&oNonblock != 0, p.m.exitState(pid))
	if e != 0 {
		return ret(e.Ret())
	}
	return ret(uint64(fd))
}

// pidfdSendSignal is kill(2) to the process a pidfd names; a siginfo, if
// given, is checked as Linux checks it (its own signal number; only a
// process's own signals may claim a kernel or user code), and the signal
// is then sent as kill sends it.
func (p *Process) pidfdSendSignal(c *syscalls.Call) syscalls.Outcome {
	fd, sig, info, flags := int(int32(c.Args[0])), int32(c.Args[1]), c.Args[2], c.Args[3]
	if flags != 0 {
		return ret(syscalls.EINVAL.Ret())
	}
	pid, _, e := p.kernel.PidFD(fd)
	if e != 0 {
		return ret(e.Ret())
	}
	if sig < 0 || sig > 64 {
		return ret(syscalls.EINVAL.Ret())
	}
	q := p.m.owner[pid]
	if q == nil || q.exited {
		return ret(syscalls.ESRCH.Ret())
	}
	if info != 0 {
		var b [128]byte
		if !p.kernel.Accessible(info, 128, false) || p.cpu.ReadMem(info, b[:]) != nil {
			return ret(syscalls.EFAULT.Ret())
		}
		code := int32(binary.LittleEndian.Uint32(b[8:]))
		if int32(binary.LittleEndian.Uint32(b[0:])) != sig {
			return ret(syscalls.EINVAL.Ret())
		}
		if q != p && (code >= 0 || code == syscalls.SITkill) {
			return ret(syscalls.EPERM.Ret())
		}
	}
	kc := *c
	kc.Nr, kc.Args = syscalls.NrKill, [6]uint64{uint64(pid), uint64(sig)}
	return p.kernel.Kill(&kc)
}

// exitState reports whether process pid has exited and been reaped (a
// pidfd's readiness).
func (m *machine) exitState(pid int) func() (exited, reaped bool) {
	return func() (bool, bool) {
		q := m.owner[pid]
		if q == nil || q.pid != pid {
			return true, true
		}
		return q.exited || q.zombie, false
	}
}

// pidfdsChanged tells every process's pidfds of p that p exited or was
// reaped, and wakes the threads polling.
func (p *Process) pidfdsChanged() {
	for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
		if q := p.m.owner[tid]; q.pid == tid && !q.exited {
			q.kernel.PidExited(p.pid)
		}
	}
	p.sched.WakeAll(p.m.cur, sched.WaitPoll, 0)
}
