package syscalls

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// A standard stream that is a host regular file is that file: fstat says
// S_IFREG with its size, lseek works and moves the host descriptor's
// position (which the host shares), writes land at the position, and
// closing the guest's fd leaves the host's descriptor open.
func TestStdRegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{HostStd: [3]*os.File{nil, f, nil}})
	st := h.alloc(144)
	h.must(nrFstat, 1, st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode&sIFMT != sIFREG {
		t.Errorf("st_mode %o, want a regular file", mode)
	}
	if size := le.Uint64(h.peek(st+48, 8)); size != 10 {
		t.Errorf("st_size %d, want 10", size)
	}
	if pos := h.must(nrLseek, 1, 0, seekCur); pos != 2 {
		t.Errorf("position %d, want the host's 2", pos)
	}
	h.must(nrLseek, 1, 4, seekSet)
	h.must(nrWrite, 1, h.str("ab"), 2)
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 6 {
		t.Errorf("host position %d, want 6", pos)
	}
	h.must(3, 1) // close
	if _, err := f.Seek(0, io.SeekCurrent); err != nil {
		t.Errorf("the host descriptor was closed: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "0123ab6789" {
		t.Errorf("file %q", b)
	}
}

// Reopening /dev/stdout opens the host's file again at offset 0 (O_TRUNC
// empties it), also under an overlay, where a reopening by path would
// write to the overlay's copy instead; /proc/self/fd/1 names the file.
func TestStdReopen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ov, err := NewOverlay(t.TempDir(), "/")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{HostStd: [3]*os.File{nil, f, nil}, Overlay: ov})
	h.must(nrWrite, 1, h.str("ab"), 2)
	fd := h.must(nrOpen, h.str("/dev/stdout"), oWRONLY|oTRUNC)
	h.must(nrWrite, fd, h.str("xyz"), 3)
	if b, _ := os.ReadFile(p); string(b) != "xyz" {
		t.Errorf("host file %q, want \"xyz\"", b)
	}
	h.errno(eACCES, nrOpen, h.str("/dev/stdout"), oRDONLY) // the host gave write access only
	buf := h.alloc(256)
	n := h.must(89, h.str("/proc/self/fd/1"), buf, 256) // readlink
	if got, want := string(h.peek(buf, int(n))), filepath.ToSlash(p); got != want {
		t.Errorf("readlink %q, want %q", got, want)
	}
}
