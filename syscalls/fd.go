package syscalls

import "os"

// fileOps is what an open file can do. Offsets are byte positions for
// seekable files and ignored by streams.
type fileOps interface {
	read(k *Kernel, p []byte, off int64) (int, Errno)
	write(k *Kernel, p []byte, off int64) (int, Errno)
	stat(k *Kernel) (statInfo, Errno)
	// seekable reports whether the file has a position (lseek, pread).
	seekable() bool
	// release is called when the last descriptor referring to the open
	// file is closed.
	release() error
}

// dirOps is implemented by directories.
type dirOps interface {
	// list returns the entries, sorted by name, with "." and "..".
	list(k *Kernel) ([]dirent, Errno)
	// location is where the directory is, for *at() calls and fchdir.
	location() loc
}

// pollOps is implemented by files whose readiness can change.
type pollOps interface {
	poll(events uint16) uint16
}

// ttyOps is implemented by files that may be terminals.
type ttyOps interface {
	isTTY() bool
}

// hostOps is implemented by open host regular files.
type hostOps interface {
	hostFile() (*os.File, string)
}

// openFile is an open file description: the state shared by the
// descriptors that dup() made from one open().
type openFile struct {
	ops   fileOps
	flags uint32 // access mode and status flags (O_*)
	off   int64  // the position (pos, setPos)
	// hostPos, when set, holds the position instead of off: a standard
	// stream that is a host file shares the host descriptor's (stdio.go).
	hostPos *os.File
	// guest is the path the file was opened at ("" for pipes and streams).
	guest string
	refs  int
	// dents is the getdents64 snapshot of a directory, taken when reading
	// from position 0.
	dents []dirent
	// owner is the F_SETOWN process (negative: process group).
	owner int32
	// watchers are the epoll items watching the file.
	watchers []*epItem
}

func newOpenFile(ops fileOps, flags uint32, guest string) *openFile {
	return &openFile{ops: ops, flags: flags, guest: guest, refs: 1}
}

// readable and writable: access mode 3 (O_ACCMODE) opens a file for
// neither, after checking both permissions (ioctl only), as Linux does.
func (f *openFile) readable() bool {
	acc := f.flags & oAccMode
	return f.flags&oPATH == 0 && (acc == oRDONLY || acc == oRDWR)
}

func (f *openFile) writable() bool {
	acc := f.flags & oAccMode
	return f.flags&oPATH == 0 && (acc == oWRONLY || acc == oRDWR)
}

// fdSlot is one entry of the descriptor table.
type fdSlot struct {
	f       *openFile
	cloexec bool
}

// fdArg decodes an int fd argument.
func fdArg(a uint64) int { return int(int32(a)) }

// file returns the open file of fd.
func (k *Kernel) file(fd int) (*openFile, Errno) {
	if fd < 0 || fd >= len(k.fds) || k.fds[fd].f == nil {
		return nil, eBADF
	}
	return k.fds[fd].f, 0
}

// maxFDs is the current RLIMIT_NOFILE.
func (k *Kernel) maxFDs() int {
	if n := k.rlimits[rlimitNoFile].cur; n < 1<<20 {
		return int(n)
	}
	return 1 << 20
}

// install puts f at the lowest free descriptor >= min. It takes over the
// caller's reference to f.
func (k *Kernel) install(f *openFile, min int, cloexec bool) (int, Errno) {
	limit := k.maxFDs()
	for fd := min; fd < limit; fd++ {
		if fd >= len(k.fds) {
			k.fds = append(k.fds, make([]fdSlot, fd+1-len(k.fds))...)
		}
		if k.fds[fd].f == nil {
			k.fds[fd] = fdSlot{f: f, cloexec: cloexec}
			return fd, 0
		}
	}
	return -1, eMFILE
}

// installAt puts f at fd, closing what was there. It takes over the
// caller's reference to f.
func (k *Kernel) installAt(fd int, f *openFile, cloexec bool) {
	if fd < len(k.fds) && k.fds[fd].f != nil {
		_ = k.closeFD(fd) // may shrink the table: closing the highest fd drops the free slots below it
	}
	if fd >= len(k.fds) {
		k.fds = append(k.fds, make([]fdSlot, fd+1-len(k.fds))...)
	}
	k.fds[fd] = fdSlot{f: f, cloexec: cloexec}
}

// closeFD frees fd and releases its open file when it was the last
// reference.
func (k *Kernel) closeFD(fd int) error {
	f := k.fds[fd].f
	k.fds[fd] = fdSlot{}
	for len(k.fds) > 3 && k.fds[len(k.fds)-1].f == nil {
		k.fds = k.fds[:len(k.fds)-1]
	}
	return k.unref(f)
}

// unref drops a reference to f (a descriptor, or one in flight in a
// socket's queue) and releases f at the last.
func (k *Kernel) unref(f *openFile) error {
	f.refs--
	k.dropLocks(f, f.refs == 0)
	if f.refs > 0 {
		return nil
	}
	k.removeWatchers(f)
	if k.watched() {
		if f.writable() {
			k.fileEvent(f, inCloseWrite)
		} else {
			k.fileEvent(f, inCloseNowrite)
		}
	}
	err := f.ops.release()
	if pe, isPipe := f.ops.(*pipeEnd); isPipe {
		if p := pe.p; (p.readers == 0) != (p.writers == 0) {
			p.rdq.wake(0)
			p.wrq.wake(0)
		}
		k.pipeEvent(pe.p)
	}
	if s, isSock := f.ops.(*socket); isSock {
		s.close(k)
	}
	return err
}
