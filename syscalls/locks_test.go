package syscalls

import (
	"path/filepath"
	"testing"
)

const (
	nrFlock = 73
	nrDup   = 32
)

// flock locks belong to open file descriptions: two open()s of one file
// conflict, dup()s share, and the lock goes with the description's last
// descriptor.
func TestFlock(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir})
	var released []uint64
	h.k.OnLockEvent = func(id uint64) { released = append(released, id) }
	fd1 := h.must(nrOpen, h.str("f"), oRDONLY)
	fd2 := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFlock, fd1, lockEX)
	h.errno(eWOULDBLOCK, nrFlock, fd2, lockEX|lockNB)
	h.errno(eWOULDBLOCK, nrFlock, fd2, lockSH|lockNB)
	out := h.call(nrFlock, fd2, lockSH)
	w, waits := out.Wait.(*LockWait)
	if out.Ret != eAGAIN.Ret() || !waits {
		t.Fatalf("blocking flock on a held lock: ret %d, wait %#v", int64(out.Ret), out.Wait)
	}
	fd3 := h.must(nrDup, fd1)
	h.must(nrFlock, fd3, lockEX|lockNB) // the same description
	h.must(nrClose, fd1)
	h.errno(eWOULDBLOCK, nrFlock, fd2, lockSH|lockNB)
	released = nil
	h.must(nrClose, fd3)
	if len(released) != 1 || released[0] != w.Lock {
		t.Errorf("close released %v, want the waited-for lock %d", released, w.Lock)
	}
	h.must(nrFlock, fd2, lockSH|lockNB)
	fd4 := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFlock, fd4, lockSH|lockNB) // shared locks share
	h.errno(eWOULDBLOCK, nrFlock, fd4, lockEX|lockNB)
	// The failed conversion dropped fd4's lock (as Linux does).
	h.must(nrFlock, fd2, lockEX|lockNB)
	h.must(nrFlock, fd2, lockUN)
	h.errno(eINVAL, nrFlock, fd2, 3)
	pfd := h.must(nrOpen, h.str("f"), oPATH)
	h.errno(eBADF, nrFlock, pfd, lockSH)
	h.errno(eBADF, nrFlock, 77, lockSH)
}

// flockArg places a struct flock in guest memory.
func (h *harness) flockArg(typ, whence uint16, start, n int64, pid int32) uint64 {
	b := make([]byte, flockStructLen)
	le.PutUint16(b[0:], typ)
	le.PutUint16(b[2:], whence)
	le.PutUint64(b[8:], uint64(start))
	le.PutUint64(b[16:], uint64(n))
	le.PutUint32(b[24:], uint32(pid))
	a := h.alloc(flockStructLen)
	h.poke(a, b)
	return a
}

// The process's POSIX locks never conflict with one another, but OFD locks
// (of an open file description) conflict with them and with each other.
func TestRecordLocks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "0123456789")
	h := newHarness(t, Config{Cwd: dir, Pid: 4242})
	fd1 := h.must(nrOpen, h.str("f"), oRDWR)
	fd2 := h.must(nrOpen, h.str("f"), oRDWR)
	ro := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFcntl, fd1, fSetLK, h.flockArg(fWrlck, seekSet, 0, 10, 0))
	h.must(nrFcntl, fd2, fSetLK, h.flockArg(fWrlck, seekSet, 0, 10, 0))
	h.errno(eAGAIN, nrFcntl, fd2, fOFDSetLK, h.flockArg(fRdlck, seekSet, 5, 1, 0))
	out := h.call(nrFcntl, fd2, fOFDSetLKW, h.flockArg(fRdlck, seekSet, 5, 1, 0))
	if _, waits := out.Wait.(*LockWait); !waits {
		t.Errorf("F_OFD_SETLKW on a held range: wait %#v", out.Wait)
	}
	q := h.flockArg(fRdlck, seekSet, 5, 1, 0)
	h.must(nrFcntl, fd2, fOFDGetLK, q)
	got := h.peek(q, flockStructLen)
	if le.Uint16(got) != fWrlck || le.Uint64(got[8:]) != 0 || le.Uint64(got[16:]) != 10 || int32(le.Uint32(got[24:])) != 4242 {
		t.Errorf("F_OFD_GETLK = type %d start %d len %d pid %d, want the POSIX write lock 0+10 of pid 4242",
			le.Uint16(got), le.Uint64(got[8:]), le.Uint64(got[16:]), int32(le.Uint32(got[24:])))
	}
	q = h.flockArg(fWrlck, seekSet, 0, 0, 0)
	h.must(nrFcntl, fd1, fGetLK, q)
	if le.Uint16(h.peek(q, 2)) != fUnlck {
		t.Errorf("F_GETLK against the process's own locks: type %d, want F_UNLCK", le.Uint16(h.peek(q, 2)))
	}
	// Unlocking the middle splits the POSIX lock; the OFD lock then fits.
	h.must(nrFcntl, fd1, fSetLK, h.flockArg(fUnlck, seekSet, 4, 3, 0))
	h.must(nrFcntl, fd2, fOFDSetLK, h.flockArg(fRdlck, seekSet, 5, 1, 0))
	q = h.flockArg(fWrlck, seekSet, 0, 0, 0)
	h.must(nrFcntl, ro, fGetLK, q)
	got = h.peek(q, flockStructLen)
	if le.Uint16(got) != fRdlck || le.Uint64(got[8:]) != 5 || le.Uint64(got[16:]) != 1 || int32(le.Uint32(got[24:])) != -1 {
		t.Errorf("F_GETLK = type %d start %d len %d pid %d, want the OFD read lock 5+1, pid -1",
			le.Uint16(got), le.Uint64(got[8:]), le.Uint64(got[16:]), int32(le.Uint32(got[24:])))
	}
	// Closing any descriptor of the file drops the process's POSIX locks.
	h.errno(eAGAIN, nrFcntl, fd2, fOFDSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 0))
	h.must(nrClose, ro)
	h.must(nrFcntl, fd2, fOFDSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 0))
	// The OFD locks go with their description.
	h.errno(eAGAIN, nrFcntl, fd1, fSetLK, h.flockArg(fWrlck, seekSet, 0, 0, 0))
	h.must(nrClose, fd2)
	h.must(nrFcntl, fd1, fSetLK, h.flockArg(fWrlck, seekSet, 0, 0, 0))

	ro = h.must(nrOpen, h.str("f"), oRDONLY)
	h.errno(eBADF, nrFcntl, ro, fSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 0))
	h.errno(eINVAL, nrFcntl, fd1, fOFDSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 7))
	h.errno(eINVAL, nrFcntl, fd1, fSetLK, h.flockArg(5, seekSet, 0, 1, 0))
	h.errno(eINVAL, nrFcntl, fd1, fSetLK, h.flockArg(fRdlck, seekSet, -3, 1, 0))
}

// POSIX record locks belong to the process: a forked child does not
// inherit them, so the parent's lock conflicts with the child's request
// (F_GETLK names the parent), and the child's closing of its copy of the
// descriptor leaves the parent's lock in place. flock locks, of the shared
// open file description, are the child's too.
func TestRecordLocksAcrossFork(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "0123456789")
	h := newHarness(t, Config{Cwd: dir, Pid: 1000})
	fd := h.must(nrOpen, h.str("f"), oRDWR)
	h.must(nrFcntl, fd, fSetLK, h.flockArg(fWrlck, seekSet, 0, 0, 0))
	h.must(nrFlock, fd, lockEX)
	child := h.k.Fork(1000, 1001, h.as) // memory shared, as after vfork: the harness's scratch
	do := func(nr uint64, args ...uint64) int64 {
		c := &Call{Tid: 1001, Nr: nr}
		copy(c.Args[:], args)
		return int64(child.Do(c).Ret)
	}
	if r := do(nrFcntl, fd, fSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 0)); r != -int64(eAGAIN) {
		t.Errorf("child's F_SETLK over the parent's lock: %d, want EAGAIN", r)
	}
	q := h.flockArg(fRdlck, seekSet, 0, 1, 0)
	if r := do(nrFcntl, fd, fGetLK, q); r != 0 || le.Uint16(h.peek(q, 2)) != fWrlck || le.Uint32(h.peek(q+24, 4)) != 1000 {
		t.Errorf("child's F_GETLK: %d, type %d pid %d; want the parent's write lock", r, le.Uint16(h.peek(q, 2)), le.Uint32(h.peek(q+24, 4)))
	}
	if r := do(nrFlock, fd, lockEX|lockNB); r != 0 {
		t.Errorf("child's flock on the shared description: %d, want 0", r)
	}
	do(3, fd) // close
	fd2 := h.must(nrOpen, h.str("f"), oRDWR)
	h.errno(eAGAIN, nrFcntl, fd2, fOFDSetLK, h.flockArg(fWrlck, seekSet, 0, 1, 0)) // the parent's lock stays
	if err := child.Close(); err != nil {
		t.Fatal(err)
	}
}
