package syscalls

// pidfds (kernel/pid.c, kernel/signal.c): a descriptor that names a
// process. The runtime (package guest) owns the processes: it performs
// pidfd_open, pidfd_send_signal, waitid(P_PIDFD) and clone(CLONE_PIDFD)
// with OpenPidFD and PidFD. Reads and writes fail with EINVAL, as Linux's.
// A pidfd is readable once its process has exited, and hangs up once it
// is reaped (pidfd_poll); the runtime calls PidExited then.

// pidFD is an open pidfd; state reports whether its process exited and
// whether it was reaped.
type pidFD struct {
	pid   int
	state func() (exited, reaped bool)
	q     pollQueue
}

func (p *pidFD) queue() *pollQueue { return &p.q }

func (p *pidFD) poll(events uint16) uint16 {
	exited, reaped := p.state()
	switch {
	case reaped:
		return events&(pollIn|pollRdNm) | pollHup
	case exited:
		return events & (pollIn | pollRdNm)
	}
	return 0
}

// PidExited wakes the pollers of the pidfds of process pid: it exited or
// was reaped.
func (k *Kernel) PidExited(pid int) {
	for _, s := range k.fds {
		if s.f == nil {
			continue
		}
		if p, ok := s.f.ops.(*pidFD); ok && p.pid == pid {
			p.q.wake(pollIn | pollRdNm | pollHup)
		}
	}
}

func (*pidFD) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eINVAL }
func (*pidFD) write(*Kernel, []byte, int64) (int, Errno) { return 0, eINVAL }
func (*pidFD) stat(*Kernel) (statInfo, Errno)            { return anonStat() }
func (*pidFD) seekable() bool                            { return false }
func (p *pidFD) release() error {
	p.q.items = nil
	return nil
}

// OpenPidFD installs a pidfd of process pid (close-on-exec, as always);
// state tells the process's exit.
func (k *Kernel) OpenPidFD(pid int, nonblock bool, state func() (exited, reaped bool)) (int, Errno) {
	flags := uint32(oRDWR)
	if nonblock {
		flags |= oNONBLOCK
	}
	return k.install(newOpenFile(&pidFD{pid: pid, state: state}, flags, ""), 0, true)
}

// PidFD returns the process a pidfd names and whether it is non-blocking;
// EBADF for a descriptor that is not a pidfd (pidfd_get_pid).
func (k *Kernel) PidFD(fd int) (pid int, nonblock bool, e Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return 0, false, eBADF
	}
	p, isPid := f.ops.(*pidFD)
	if !isPid {
		return 0, false, eBADF
	}
	return p.pid, f.flags&oNONBLOCK != 0, 0
}
