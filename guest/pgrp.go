package guest

import (
	"maps"
	"slices"

	"emuprof/sched"
	"emuprof/syscalls"
)

// Process groups and sessions (issue 9), kept as Linux keeps them
// (kernel/sys.c: setpgid, setsid, getpgid, getsid; drivers/tty/
// tty_jobctrl.c: tiocgpgrp, tiocspgrp). The first process leads its own
// group and session, which owns the terminal; a child inherits its
// parent's group and session. Delivering a signal to a group (kill with a
// pid of 0 or below) is the signal code's (it may use inGroup).

// process returns the process with thread id pid (Linux's find_task_by_vpid:
// any thread, zombies included), or nil.
func (p *Process) process(pid int) *Process {
	if pid <= 0 {
		return nil
	}
	return p.m.owner[pid]
}

// groupExists says whether a process of session sid is in group pgid.
func (p *Process) groupExists(pgid, sid int) bool {
	for _, q := range p.m.owner {
		if q.pgid == pgid && (sid == 0 || q.sid == sid) {
			return true
		}
	}
	return false
}

// inGroup returns the processes of group pgid, in pid order.
func (p *Process) inGroup(pgid int) []*Process {
	var out []*Process
	for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
		if q := p.m.owner[tid]; q.pid == tid && q.pgid == pgid {
			out = append(out, q)
		}
	}
	return out
}

// getpgid is getpgid(2) (session: getsid) of process pid, 0 the caller.
func (p *Process) getpgid(pid int, session bool) syscalls.Outcome {
	q := p
	if pid != 0 {
		if q = p.process(pid); q == nil {
			return ret(syscalls.ESRCH.Ret())
		}
	}
	if session {
		return ret(uint64(q.sid))
	}
	return ret(uint64(q.pgid))
}

// setsid starts a session. A process group leader, or a process whose
// pid is some group's id, cannot.
func (p *Process) setsid() syscalls.Outcome {
	if p.groupExists(p.pid, 0) {
		return ret(syscalls.EPERM.Ret())
	}
	p.pgid, p.sid = p.pid, p.pid // and it has no controlling terminal
	if p.digest != nil {
		p.hash(0x5e5, uint64(p.pid))
	}
	return ret(uint64(p.pid))
}

// setpgid moves process pid (0: the caller) into group pgid (0: its own),
// with Linux's checks, in its order.
func (p *Process) setpgid(pid, pgid int) uint64 {
	if pid == 0 {
		pid = p.pid
	}
	if pgid == 0 {
		pgid = pid
	}
	if pgid < 0 {
		return syscalls.EINVAL.Ret()
	}
	q := p.process(pid)
	if q == nil {
		return syscalls.ESRCH.Ret()
	}
	if q.pid != pid {
		return syscalls.EINVAL.Ret() // a thread that does not lead its process
	}
	if q.parent == p && q != p {
		if q.sid != p.sid {
			return syscalls.EPERM.Ret()
		}
		if q.execs > 0 {
			return syscalls.EACCES.Ret() // the child has exec'd
		}
	} else if q != p {
		return syscalls.ESRCH.Ret()
	}
	if q.sid == q.pid {
		return syscalls.EPERM.Ret() // a session leader
	}
	if pgid != pid && !p.groupExists(pgid, p.sid) {
		return syscalls.EPERM.Ret()
	}
	q.pgid = pgid
	if p.digest != nil {
		p.hash(0x5e79, uint64(pid), uint64(pgid))
	}
	return 0
}

// tree is a process's syscalls.ProcessTree.
type tree struct{ p *Process }

func (t tree) Ppid() int { return int(t.p.getppid()) }

func (t tree) Group() (pgid, sid int) { return t.p.pgid, t.p.sid }

// Pids: the processes of the run that are not reaped.
func (t tree) Pids() []int {
	var pids []int
	for tid, q := range t.p.m.owner {
		if q.pid == tid {
			pids = append(pids, tid)
		}
	}
	slices.Sort(pids)
	return pids
}

// Peer: process pid's kernel, and its state: Z exited, R if a thread of it
// runs or could, else S.
func (t tree) Peer(pid int) (*syscalls.Kernel, byte) {
	q := t.p.m.owner[pid]
	if q == nil || q.pid != pid {
		return nil, 0
	}
	if q.exited {
		return q.kernel, 'Z'
	}
	for _, tid := range q.tids() {
		if th := q.sched.Thread(tid); th != nil && th.State != sched.Blocked && th.State != sched.Exited {
			return q.kernel, 'R'
		}
	}
	return q.kernel, 'S'
}

// Foreground: the terminal belongs to the first process's session.
func (t tree) Foreground() (int, syscalls.Errno) {
	p := t.p
	if p.sid != p.m.ttySid {
		return 0, syscalls.Errno(syscalls.ENOTTY)
	}
	return p.m.fgPgrp, 0
}

func (t tree) SetForeground(pgid int) syscalls.Errno {
	p := t.p
	switch {
	case p.sid != p.m.ttySid:
		return syscalls.Errno(syscalls.ENOTTY)
	case !p.groupExists(pgid, 0):
		return syscalls.Errno(syscalls.ESRCH)
	case !p.groupExists(pgid, p.sid):
		return syscalls.Errno(syscalls.EPERM)
	}
	p.m.fgPgrp = pgid
	return 0
}
