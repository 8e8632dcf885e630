package syscalls

// pidfds (kernel/pid.c, kernel/signal.c): a descriptor that names a
// process. The runtime (package guest) owns the processes: it performs
// pidfd_open, pidfd_send_signal, waitid(P_PIDFD) and clone(CLONE_PIDFD)
// with OpenPidFD and PidFD. Reads and writes fail with EINVAL, as Linux's.

// pidFD is an open pidfd.
type pidFD struct{ pid int }

func (*pidFD) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eINVAL }
func (*pidFD) write(*Kernel, []byte, int64) (int, Errno) { return 0, eINVAL }
func (*pidFD) stat(*Kernel) (statInfo, Errno)            { return anonStat() }
func (*pidFD) seekable() bool                            { return false }
func (*pidFD) release() error                            { return nil }

// OpenPidFD installs a pidfd of process pid (close-on-exec, as always).
func (k *Kernel) OpenPidFD(pid int, nonblock bool) (int, Errno) {
	flags := uint32(oRDWR)
	if nonblock {
		flags |= oNONBLOCK
	}
	return k.install(newOpenFile(&pidFD{pid: pid}, flags, ""), 0, true)
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
