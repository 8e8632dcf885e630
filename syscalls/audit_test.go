package syscalls

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"emuprof/mm"
)

// Calls that used to succeed without an effect: each now takes effect or
// fails as Linux fails it.

const (
	nrFsync       = 74
	nrSyncfs      = 306
	nrFadvise64   = 221
	nrPrctl       = 157
	nrSetrlimit   = 160
	nrSchedSetaff = 203
	nrGetcpu      = 309
	nrPreadv2     = 327
	nrPwritev2    = 328
	nrMlock       = 149
	nrMunlock     = 150
	nrMlockall    = 151
	nrRtSigaction = 13
)

// pipeFDs makes a pipe and returns its read and write ends.
func (h *harness) pipeFDs(flags uint64) (uint64, uint64) {
	h.t.Helper()
	fds := h.alloc(8)
	h.must(nrPipe2, fds, flags)
	return uint64(le.Uint32(h.peek(fds, 4))), uint64(le.Uint32(h.peek(fds+4, 4)))
}

func TestFsyncAndFadvise(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir, Stdin: strings.NewReader("")})
	fd := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFsync, fd)
	r, _ := h.pipeFDs(0)
	h.errno(eINVAL, nrFsync, r)
	h.errno(eINVAL, nrFsync, 1) // a stream
	h.must(nrSyncfs, r)
	h.errno(eBADF, nrFsync, h.must(nrOpen, h.str("f"), oPATH))
	h.must(nrFadvise64, fd, 0, 0, 1)
	h.errno(eSPIPE, nrFadvise64, r, 0, 0, 1)
	h.errno(eSPIPE, nrFadvise64, 0, 0, 0, 1) // stdin is a pipe
	h.errno(eINVAL, nrFadvise64, fd, 0, negOne, 1)
}

func TestFcntlOwnerAndPipeSize(t *testing.T) {
	h := newHarness(t, Config{Pid: 1000})
	r, w := h.pipeFDs(0)
	h.must(nrFcntl, r, fSetOwn, 1000)
	if got := int64(h.must(nrFcntl, r, fGetOwn)); got != 1000 {
		t.Errorf("F_GETOWN = %d after F_SETOWN 1000", got)
	}
	h.must(nrFcntl, r, fSetOwn, uint64(0xffffffff)&^999) // -1000: the process group
	if got := h.ret(nrFcntl, r, fGetOwn); got != -1000 {
		t.Errorf("F_GETOWN = %d after F_SETOWN -1000", got)
	}
	h.errno(eSRCH, nrFcntl, r, fSetOwn, 4321)

	if got := h.must(nrFcntl, w, fSetPipeSize, 5000); got != 8192 {
		t.Errorf("F_SETPIPE_SZ 5000 = %d, want 8192", got)
	}
	if got := h.must(nrFcntl, r, fGetPipeSize); got != 8192 {
		t.Errorf("F_GETPIPE_SZ = %d", got)
	}
	buf := h.alloc(20000)
	if n := h.must(nrWrite, w, buf, 20000); n != 8192 {
		t.Errorf("write to an 8 KiB pipe = %d", n)
	}
	h.errno(eBUSY, nrFcntl, w, fSetPipeSize, 4096)
	if got := h.must(nrFcntl, w, fSetPipeSize, 300000); got != 1<<19 {
		t.Errorf("F_SETPIPE_SZ 300000 = %d, want 524288", got)
	}
	h.must(nrWrite, w, buf, 20000)
	h.errno(eBADF, nrFcntl, 1, fGetPipeSize)

	// Packet mode is not emulated: refused, not ignored.
	fds := h.alloc(8)
	h.errno(eINVAL, nrPipe2, fds, oDIRECT)
	h.errno(eINVAL, nrFcntl, r, fSetFL, oDIRECT)

	u := newHarness(t, Config{Uid: 1000})
	_, w = u.pipeFDs(0)
	u.errno(ePERM, nrFcntl, w, fSetPipeSize, 2<<20)
}

func TestNoAtimeNeedsOwner(t *testing.T) {
	// A file of another user: root makes one, anyone else uses one of root's.
	dir := t.TempDir()
	theirs := "/etc/passwd"
	if os.Getuid() == 0 {
		theirs = filepath.Join(dir, "theirs")
		writeFile(t, theirs, "x")
		if err := os.Chown(theirs, 2000, 2000); err != nil {
			t.Fatal(err)
		}
	} else if fi, err := os.Stat(theirs); err != nil || fi.Sys().(*syscall.Stat_t).Uid == uint32(os.Getuid()) {
		t.Fatalf("%s is not a readable file of another user: %v", theirs, err)
	}
	h := newHarness(t, Config{Cwd: dir, Uid: 1000, Gid: 1000})
	h.errno(ePERM, nrOpen, h.str(theirs), oRDONLY|oNOATIME)
	fd := h.must(nrOpen, h.str(theirs), oRDONLY)
	h.errno(ePERM, nrFcntl, fd, fSetFL, oNOATIME)
}

func TestTerminalSettings(t *testing.T) {
	h := newHarness(t, Config{StdinTTY: true, Pid: 1000})
	tio := h.alloc(64)
	h.must(nrIoctl, 0, tcGets, tio)
	b := h.peek(tio, 36)
	le.PutUint32(b[12:], le.Uint32(b[12:])&^0xa) // -icanon -echo, as a password prompt does
	h.poke(tio, b)
	h.must(nrIoctl, 0, tcSetsW, tio)
	got := h.alloc(64)
	h.must(nrIoctl, 0, tcGets, got)
	if lflag := le.Uint32(h.peek(got+12, 4)); lflag&0xa != 0 {
		t.Errorf("c_lflag %#x after clearing ICANON and ECHO", lflag)
	}
	ws := h.alloc(8)
	h.poke(ws, []byte{50, 0, 132, 0, 0, 0, 0, 0})
	h.must(nrIoctl, 0, tiocSWinSz, ws)
	h.must(nrIoctl, 0, tiocGWinSz, got)
	if rows, cols := le.Uint16(h.peek(got, 2)), le.Uint16(h.peek(got+2, 2)); rows != 50 || cols != 132 {
		t.Errorf("winsize %dx%d after TIOCSWINSZ 50x132", rows, cols)
	}
	h.errno(eFAULT, nrIoctl, 0, tcSets, 8)
	h.errno(eINVAL, nrIoctl, 0, tcFlsh, 3)
	pg := h.alloc(4)
	h.poke(pg, le.AppendUint32(nil, 1000))
	h.must(nrIoctl, 0, tiocSPGRP, pg)
	h.poke(pg, le.AppendUint32(nil, 77))
	h.errno(eSRCH, nrIoctl, 0, tiocSPGRP, pg)
}

func TestRWF(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	writeFile(t, p, "0123456789")
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("f"), oRDWR)
	iov := h.alloc(16)
	h.poke(iov, le.AppendUint64(le.AppendUint64(nil, h.str("ab")), 2))
	// RWF_APPEND: at the end whatever the offset; the position is kept.
	h.must(nrPwritev2, fd, iov, 1, 3, 0, rwfAppend)
	h.must(nrPwritev2, fd, iov, 1, negOne, 0, rwfAppend)
	if got, _ := os.ReadFile(p); string(got) != "0123456789abab" {
		t.Errorf("file %q after RWF_APPEND writes", got)
	}
	if pos := h.must(nrLseek, fd, 0, seekCur); pos != 14 {
		t.Errorf("position %d after an RWF_APPEND write at -1, want 14", pos)
	}
	if got := h.k.fds[fd].f.flags & oAPPEND; got != 0 {
		t.Error("RWF_APPEND left O_APPEND set")
	}
	// RWF_NOWAIT on an empty pipe: EAGAIN at once, no waiting.
	r, _ := h.pipeFDs(0)
	h.poke(iov, le.AppendUint64(le.AppendUint64(nil, h.alloc(8)), 8))
	out := h.call(nrPreadv2, r, iov, 1, negOne, 0, rwfNowait)
	if out.Ret != eAGAIN.Ret() || out.Wait != nil {
		t.Errorf("preadv2 RWF_NOWAIT on an empty pipe: ret %d wait %#v", int64(out.Ret), out.Wait)
	}
}

func TestMadvise(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data"), strings.Repeat("D", 5000))
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("data"), oRDONLY)
	a := h.must(nrMmap, 0, 2*mm.PageSize, protRW, mapPrivate, fd, 0)
	h.poke(a, []byte("private"))
	// Dropping private file pages reads the file again.
	h.must(nrMadvise, a, mm.PageSize, madvDontNeed)
	if got := string(h.peek(a, 7)); got != "DDDDDDD" {
		t.Errorf("after MADV_DONTNEED a private file page holds %q, want the file's", got)
	}
	h.errno(eINVAL, nrMadvise, a, mm.PageSize, 7) // no such advice
	h.errno(eINVAL, nrMadvise, a, mm.PageSize, madvFree)
	h.errno(eINVAL, nrMadvise, a, mm.PageSize, madvRemove)
	ro := h.must(nrMmap, 0, mm.PageSize, protRead, mapPrivate, fd, 0)
	h.errno(eINVAL, nrMadvise, ro, mm.PageSize, madvPopulateWrite)
	h.must(nrMadvise, ro, mm.PageSize, madvPopulateRead)
	h.errno(eINVAL, nrMadvise, a, mm.PageSize, madvHWPoison) // no CONFIG_MEMORY_FAILURE
	h.must(nrMadvise, a, mm.PageSize, madvWillNeed)
	h.errno(eNOMEM, nrMadvise, a, 64*mm.PageSize, madvWillNeed)
	s := h.must(nrMmap, 0, mm.PageSize, protRW, mapShared|mapAnonymous, negOne, 0)
	h.poke(s, []byte("shared"))
	h.must(nrMadvise, s, mm.PageSize, madvRemove)
	if got := h.peek(s, 6); string(got) != "\x00\x00\x00\x00\x00\x00" {
		t.Errorf("MADV_REMOVE left %q", got)
	}
}

func TestMlock(t *testing.T) {
	h := newHarness(t, Config{Uid: 1000})
	a := h.must(nrMmap, 0, 4*mm.PageSize, protRW, mapPrivAnon, negOne, 0)
	h.must(nrMlock, a, 2*mm.PageSize)
	h.errno(eINVAL, nrMadvise, a, mm.PageSize, madvDontNeed) // locked pages stay
	h.must(nrMunlock, a, 2*mm.PageSize)
	h.must(nrMadvise, a, mm.PageSize, madvDontNeed)
	h.errno(eNOMEM, nrMlock, a+16*mm.PageSize, mm.PageSize)
	h.errno(eINVAL, nrMlockall, 0)
	h.errno(eINVAL, nrMlockall, mclOnFault)
	// RLIMIT_MEMLOCK: 8 KiB.
	lim := h.alloc(16)
	h.poke(lim, le.AppendUint64(le.AppendUint64(nil, 2*mm.PageSize), 2*mm.PageSize))
	h.must(nrSetrlimit, rlimitMemLock, lim)
	h.must(nrMlock, a, 2*mm.PageSize)
	h.errno(eNOMEM, nrMlock, a+2*mm.PageSize, mm.PageSize)
	h.must(nrMlock, a, mm.PageSize) // already locked: no more
	h.poke(lim, make([]byte, 16))
	h.must(nrSetrlimit, rlimitMemLock, lim)
	h.errno(ePERM, nrMlock, a, mm.PageSize)
}

func TestPrctlAndLimits(t *testing.T) {
	h := newHarness(t, Config{Uid: 1000})
	if d := h.must(nrPrctl, prGetDumpable); d != 1 {
		t.Errorf("PR_GET_DUMPABLE = %d", d)
	}
	h.must(nrPrctl, prSetDumpable, 0)
	if d := h.must(nrPrctl, prGetDumpable); d != 0 {
		t.Errorf("PR_GET_DUMPABLE = %d after PR_SET_DUMPABLE 0", d)
	}
	h.errno(eINVAL, nrPrctl, prSetDumpable, 2)
	h.must(nrPrctl, prSetPDeathSig, 9)
	sig := h.alloc(4)
	h.must(nrPrctl, prGetPDeathSig, sig)
	if got := le.Uint32(h.peek(sig, 4)); got != 9 {
		t.Errorf("PR_GET_PDEATHSIG = %d after setting 9", got)
	}
	h.errno(eINVAL, nrPrctl, prSetPDeathSig, 65)
	h.errno(eINVAL, nrPrctl, prSetVMA, 0, 0x10000000, 4096, h.str("name"))

	lim := h.alloc(16)
	h.poke(lim, le.AppendUint64(le.AppendUint64(nil, 100), 200))
	h.must(nrSetrlimit, rlimitNoFile, lim)
	h.poke(lim, le.AppendUint64(le.AppendUint64(nil, 100), 300))
	h.errno(ePERM, nrSetrlimit, rlimitNoFile, lim) // raising a hard limit
	r := newHarness(t, Config{Uid: 0})
	rl := r.alloc(16)
	r.poke(rl, le.AppendUint64(le.AppendUint64(nil, 100), 2<<20))
	r.errno(ePERM, nrSetrlimit, rlimitNoFile, rl) // above nr_open, even for root
}

func TestAffinity(t *testing.T) {
	h := newHarness(t, Config{CPUs: 8})
	mask := h.alloc(8)
	h.poke(mask, []byte{0x24, 0, 0, 0, 0, 0, 0, 0}) // CPUs 2 and 5
	h.must(nrSchedSetaff, 0, 8, mask)
	got := h.alloc(8)
	h.must(nrSchedGetaffin, 0, 8, got)
	if b := h.peek(got, 1)[0]; b != 0x24 {
		t.Errorf("sched_getaffinity mask %#x, want 0x24", b)
	}
	cpu := h.alloc(4)
	h.must(nrGetcpu, cpu, 0)
	if c := le.Uint32(h.peek(cpu, 4)); c != 2 {
		t.Errorf("getcpu = %d, want the first allowed CPU 2", c)
	}
	h.poke(mask, []byte{0, 1, 0, 0, 0, 0, 0, 0}) // CPU 8: not online
	h.errno(eINVAL, nrSchedSetaff, 0, 8, mask)
	h.errno(eFAULT, nrSchedSetaff, 0, 8, 16)
}

func TestFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, Config{Cwd: dir})
	lim := h.alloc(16)
	h.poke(lim, le.AppendUint64(le.AppendUint64(nil, 10), rlimInfinity))
	h.must(nrSetrlimit, rlimitFSize, lim)
	fd := h.must(nrOpen, h.str("f"), oWRONLY|oCREAT, 0o644)
	buf := h.str(strings.Repeat("x", 20))
	if n := h.must(nrWrite, fd, buf, 20); n != 10 {
		t.Errorf("write past RLIMIT_FSIZE = %d, want the 10 bytes below it", n)
	}
	// SIGXFSZ ignored: the write fails with EFBIG.
	act := h.alloc(32)
	h.poke(act, le.AppendUint64(nil, sigIgn))
	h.must(nrRtSigaction, sigXfsz, act, 0, 8)
	h.errno(eFBIG, nrWrite, fd, buf, 1)
	h.errno(eFBIG, nrFtruncate, fd, 11)
	h.must(nrFtruncate, fd, 5)
	// By default SIGXFSZ ends the process.
	h.poke(act, le.AppendUint64(nil, sigDfl))
	h.must(nrRtSigaction, sigXfsz, act, 0, 8)
	h.must(nrLseek, fd, 10, seekSet)
	if out := h.call(nrWrite, fd, buf, 1); out.Action != ExitGroup || out.Signal != sigXfsz {
		t.Errorf("write at RLIMIT_FSIZE: action %v signal %d, want death by SIGXFSZ", out.Action, out.Signal)
	}
}
