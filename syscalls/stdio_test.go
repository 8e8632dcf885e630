package syscalls

import (
	"io/fs"
	"syscall"
	"testing"
)

// A program started with fd 0 closed sees it closed: EBADF, and the next
// open gets 0.
func TestStdinClosed(t *testing.T) {
	h := newHarness(t, Config{StdinClosed: true})
	h.errno(eBADF, nrRead, 0, h.alloc(8), 8)
	h.errno(eBADF, nrFstat, 0, h.alloc(144))
	if fd := h.must(nrOpen, h.str("/dev/null"), oRDONLY); fd != 0 {
		t.Errorf("open gave fd %d, want 0", fd)
	}
}

// failWriter fails every write as a host file on a full disk does.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// A write to the host stream fails with the host's errno (stdout on
// /dev/full: ENOSPC), not a generic EIO.
func TestStreamWriteErrno(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Errno
	}{
		{&fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}, eNOSPC},
		{&fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EFBIG}, eFBIG},
		{fs.ErrClosed, eIO},
	} {
		h := newHarness(t, Config{Stdout: failWriter{c.err}})
		h.errno(c.want, nrWrite, 1, h.str("x"), 1)
	}
}
