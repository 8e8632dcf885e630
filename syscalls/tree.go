package syscalls

// ProcessTree answers for the process's place among the guest's
// processes, which the runtime (package guest) keeps: its parent, its
// process group and session, and the terminal's foreground process group
// (tcgetpgrp, tcsetpgrp). Without one, the process is alone: it leads its
// own group and session, its parent is pid-1.
type ProcessTree interface {
	Ppid() int
	// Foreground returns the foreground process group of the
	// controlling terminal, ENOTTY when the process's session has none.
	Foreground() (int, Errno)
	// SetForeground makes pgid the foreground group (tiocspgrp's rules:
	// ENOTTY without the terminal, ESRCH for no such group, EPERM for a
	// group of another session).
	SetForeground(pgid int) Errno
	// Group returns the process's group and session ids.
	Group() (pgid, sid int)
	// Pids returns the run's processes (/proc), in order; Peer returns
	// the kernel of one of them and its state (R, S or Z), nil if pid
	// names none.
	Pids() []int
	Peer(pid int) (*Kernel, byte)
}

// ppid is the parent's pid.
func (k *Kernel) ppid() int {
	if k.Tree != nil {
		return k.Tree.Ppid()
	}
	return k.cfg.Pid - 1
}

// tcgetpgrp: the terminal's foreground process group.
func (k *Kernel) tcgetpgrp(arg uint64) Outcome {
	pg := k.cfg.Pid
	if k.Tree != nil {
		var e Errno
		if pg, e = k.Tree.Foreground(); e != 0 {
			return fail(e)
		}
	}
	return result(0, k.putU32(arg, uint32(pg)))
}

// tcsetpgrp: make a process group the terminal's foreground group.
func (k *Kernel) tcsetpgrp(arg uint64) Outcome {
	pg, e := k.getU32(arg)
	switch {
	case e != 0:
		return fail(e)
	case int32(pg) < 0:
		return fail(eINVAL)
	case k.Tree != nil:
		return result(0, k.Tree.SetForeground(int(pg)))
	case int(pg) != k.cfg.Pid:
		return fail(eSRCH) // the only process group is the process's
	}
	return ok(0)
}
