package syscalls

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"emuprof/trace"
)

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenReadLseekFstat(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.txt"), "0123456789")
	h := newHarness(t, Config{Cwd: dir, EpochNanos: 1_700_000_000e9})

	fd := h.must(nrOpenat, atFDCWDArg, h.str("data.txt"), oRDONLY)
	if fd != 3 {
		t.Fatalf("first fd = %d", fd)
	}
	buf := h.alloc(100)
	h.events = nil
	if n := h.must(nrRead, fd, buf, 100); n != 10 {
		t.Fatalf("read = %d", n)
	}
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, []access{{trace.KindKernelWrite, buf, 10}}) {
		t.Errorf("kernel writes = %v, want exactly (%#x,10)", got, buf)
	}
	if string(h.peek(buf, 10)) != "0123456789" {
		t.Errorf("data %q", h.peek(buf, 10))
	}
	h.events = nil
	if n := h.must(nrRead, fd, buf, 100); n != 0 {
		t.Errorf("read at EOF = %d", n)
	}
	if len(h.events) != 0 {
		t.Errorf("read at EOF reported %v", h.events)
	}
	if off := h.must(nrLseek, fd, 2, seekSet); off != 2 {
		t.Errorf("lseek = %d", off)
	}
	if n := h.must(nrRead, fd, buf, 3); n != 3 || string(h.peek(buf, 3)) != "234" {
		t.Errorf("read after seek = %d %q", n, h.peek(buf, 3))
	}
	if off := h.must(nrLseek, fd, negOne-1, seekCur); off != 3 {
		t.Errorf("lseek cur-2 = %d", off)
	}
	if off := h.must(nrLseek, fd, 0, seekEnd); off != 10 {
		t.Errorf("lseek end = %d", off)
	}
	h.errno(eINVAL, nrLseek, fd, negOne-20, seekCur)
	h.errno(eINVAL, nrLseek, fd, 0, 7)
	if n := h.must(nrPread64, fd, buf, 4, 6); n != 4 || string(h.peek(buf, 4)) != "6789" {
		t.Errorf("pread = %d %q", n, h.peek(buf, 4))
	}

	st := h.alloc(statSize)
	h.must(nrFstat, fd, st)
	if size := h.u64(st + 48); size != 10 {
		t.Errorf("st_size = %d", size)
	}
	if mode := le.Uint32(h.peek(st+24, 4)); mode != sIFREG|0o644 {
		t.Errorf("st_mode = %o", mode)
	}
	if blksize := h.u64(st + 56); blksize != 4096 {
		t.Errorf("st_blksize = %d", blksize)
	}
	// fstat through newfstatat(fd, "", AT_EMPTY_PATH) as glibc does.
	st2 := h.alloc(statSize)
	h.must(nrNewfstatat, fd, h.str(""), st2, atEmptyPath)
	if !slices.Equal(h.peek(st, statSize), h.peek(st2, statSize)) {
		t.Error("fstat and newfstatat(AT_EMPTY_PATH) differ")
	}
	h.errno(eNOENT, nrNewfstatat, fd, h.str(""), st2, 0)
	h.must(nrClose, fd)
	h.errno(eBADF, nrClose, fd)
	h.errno(eBADF, nrRead, fd, buf, 1)
	h.errno(eNOENT, nrOpenat, atFDCWDArg, h.str("missing"), oRDONLY)
	h.errno(eFAULT, nrOpenat, atFDCWDArg, 0x1000, oRDONLY)
	h.errno(eNOTDIR, nrOpenat, atFDCWDArg, h.str("data.txt/x"), oRDONLY)
	h.errno(eNOTDIR, nrOpenat, atFDCWDArg, h.str("data.txt"), oRDONLY|oDIRECTORY)
}

func TestStatLayout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), strings.Repeat("x", 5000))
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir, Uid: 1000, Gid: 1000})
	st := h.alloc(statSize)
	h.must(nrStat, h.str("l"), st)
	if size := h.u64(st + 48); size != 5000 {
		t.Errorf("stat st_size = %d", size)
	}
	if blocks := h.u64(st + 64); blocks != 16 {
		t.Errorf("st_blocks = %d", blocks)
	}
	if nlink := h.u64(st + 16); nlink != 1 {
		t.Errorf("st_nlink = %d", nlink)
	}
	if uid := le.Uint32(h.peek(st+28, 4)); uid != 1000 {
		t.Errorf("st_uid = %d (host-owned files appear owned by the guest)", uid)
	}
	ino := h.u64(st + 8)
	h.must(nrLstat, h.str("l"), st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode&sIFMT != sIFLNK {
		t.Errorf("lstat mode = %o", mode)
	}
	if size := h.u64(st + 48); size != 1 {
		t.Errorf("lstat size = %d", size)
	}

	sx := h.alloc(statxSize)
	h.must(nrStatx, atFDCWDArg, h.str("f"), 0, statxBasicStats, sx)
	if mask := le.Uint32(h.peek(sx, 4)); mask != statxBasicStats {
		t.Errorf("stx_mask = %#x", mask)
	}
	if size := h.u64(sx + 40); size != 5000 {
		t.Errorf("stx_size = %d", size)
	}
	if mode := le.Uint16(h.peek(sx+28, 2)); mode != sIFREG|0o644 {
		t.Errorf("stx_mode = %o", mode)
	}
	if i := h.u64(sx + 32); i != ino {
		t.Errorf("stx_ino = %d, st_ino %d", i, ino)
	}
	h.errno(eINVAL, nrStatx, atFDCWDArg, h.str("f"), 0x8000000, 0, sx)
}

func TestCreateWriteTimes(t *testing.T) {
	dir := t.TempDir()
	const epoch = 1_600_000_000_000_000_000
	h := newHarness(t, Config{Cwd: dir, EpochNanos: epoch})
	h.now = 5_000_000_123
	h.must(0x5f, 0o077) // umask
	fd := h.must(nrOpenat, atFDCWDArg, h.str("out"), oWRONLY|oCREAT|oTRUNC, 0o666)
	data := h.str("hello")
	h.events = nil
	if n := h.must(nrWrite, fd, data, 5); n != 5 {
		t.Fatalf("write = %d", n)
	}
	if got := h.only(trace.KindKernelRead); !slices.Equal(got, []access{{trace.KindKernelRead, data, 5}}) {
		t.Errorf("kernel reads = %v", got)
	}
	h.errno(eBADF, nrRead, fd, data, 1)
	st := h.alloc(statSize)
	h.must(nrFstat, fd, st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode != sIFREG|0o600 {
		t.Errorf("created mode = %o, want 0600 (guest umask 077)", mode)
	}
	mt := int64(h.u64(st+88))*1e9 + int64(h.u64(st+96))
	if mt != epoch+h.now {
		t.Errorf("mtime = %d, want virtual %d", mt, epoch+h.now)
	}
	h.must(nrFtruncate, fd, 2)
	h.must(nrClose, fd)
	got, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil || string(got) != "he" {
		t.Errorf("host file %q %v", got, err)
	}
	// O_APPEND writes at the end whatever the position.
	fd = h.must(nrOpenat, atFDCWDArg, h.str("out"), oWRONLY|oAPPEND)
	h.must(nrWrite, fd, data, 5)
	h.must(nrClose, fd)
	if got, _ := os.ReadFile(filepath.Join(dir, "out")); string(got) != "hehello" {
		t.Errorf("append: %q", got)
	}
	// utimensat with explicit times.
	ts := h.alloc(32)
	h.poke(ts, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 100), 5), 200), utimeOmit))
	h.must(nrUtimensat, atFDCWDArg, h.str("out"), ts, 0)
	h.must(nrStat, h.str("out"), st)
	if at, mt := h.u64(st+72), h.u64(st+88); at != 100 || mt != uint64(epoch+h.now)/1e9 {
		t.Errorf("after utimensat atime %d mtime %d", at, mt)
	}
	h.errno(eEXIST, nrOpenat, atFDCWDArg, h.str("out"), oWRONLY|oCREAT|oEXCL, 0o644)
}

func TestWriteStdout(t *testing.T) {
	h := newHarness(t, Config{})
	msg := h.str("hello, world\n")
	h.events = nil
	if n := h.must(nrWrite, 1, msg, 13); n != 13 {
		t.Fatalf("write = %d", n)
	}
	if h.stdout.String() != "hello, world\n" {
		t.Errorf("stdout %q", h.stdout.String())
	}
	if got := h.only(trace.KindKernelRead); !slices.Equal(got, []access{{trace.KindKernelRead, msg, 13}}) {
		t.Errorf("kernel reads = %v", got)
	}
	// writev: two buffers, reported separately; the iovec array too.
	a, b := h.str("ab"), h.str("cde")
	iov := h.alloc(32)
	h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, a), 2), b), 3))
	h.events = nil
	if n := h.must(nrWritev, 2, iov, 2); n != 5 {
		t.Fatalf("writev = %d", n)
	}
	if h.stderr.String() != "abcde" {
		t.Errorf("stderr %q", h.stderr.String())
	}
	want := []access{{trace.KindKernelRead, iov, 32}, {trace.KindKernelRead, a, 2}, {trace.KindKernelRead, b, 3}}
	if got := h.only(trace.KindKernelRead); !slices.Equal(got, want) {
		t.Errorf("writev reads = %v, want %v", got, want)
	}
	// Not a terminal: ENOTTY; fstat says FIFO.
	h.errno(eNOTTY, nrIoctl, 1, tcGets, h.alloc(64))
	h.errno(eNOTTY, nrIoctl, 1, tiocGWinSz, h.alloc(8))
	st := h.alloc(statSize)
	h.must(nrFstat, 1, st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode&sIFMT != sIFIFO {
		t.Errorf("stdout mode %o", mode)
	}
	h.errno(eSPIPE, nrLseek, 1, 0, seekCur)
	h.errno(eBADF, nrRead, 1, msg, 1)
}

func TestTTY(t *testing.T) {
	h := newHarness(t, Config{StdoutTTY: true})
	ws := h.alloc(8)
	h.must(nrIoctl, 1, tiocGWinSz, ws)
	if rows, cols := le.Uint16(h.peek(ws, 2)), le.Uint16(h.peek(ws+2, 2)); rows != 24 || cols != 80 {
		t.Errorf("winsize %dx%d", rows, cols)
	}
	h.must(nrIoctl, 1, tcGets, h.alloc(64))
	h.errno(eNOTTY, nrIoctl, 0, tcGets, h.alloc(64))
}

func TestStdin(t *testing.T) {
	h := newHarness(t, Config{Stdin: strings.NewReader("input")})
	buf := h.alloc(16)
	h.events = nil
	if n := h.must(nrRead, 0, buf, 16); n != 5 || string(h.peek(buf, 5)) != "input" {
		t.Fatalf("read stdin = %d", n)
	}
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, []access{{trace.KindKernelWrite, buf, 5}}) {
		t.Errorf("kernel writes %v", got)
	}
	if n := h.must(nrRead, 0, buf, 16); n != 0 {
		t.Errorf("read at EOF = %d", n)
	}
}

func TestReadvPartial(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ten"), "abcdefghij")
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("ten"), oRDONLY)
	a, b := h.alloc(4), h.alloc(100)
	iov := h.alloc(32)
	h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, a), 4), b), 100))
	h.events = nil
	if n := h.must(nrReadv, fd, iov, 2); n != 10 {
		t.Fatalf("readv = %d", n)
	}
	want := []access{{trace.KindKernelWrite, a, 4}, {trace.KindKernelWrite, b, 6}}
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, want) {
		t.Errorf("readv writes = %v, want %v", got, want)
	}
	if string(h.peek(a, 4))+string(h.peek(b, 6)) != "abcdefghij" {
		t.Error("readv data")
	}
	h.errno(eINVAL, nrReadv, fd, iov, 1025)
}

// dirent64 is a parsed linux_dirent64.
type dirent64 struct {
	ino  uint64
	off  int64
	typ  uint8
	name string
}

func parseDirents(t *testing.T, b []byte) []dirent64 {
	t.Helper()
	var out []dirent64
	for len(b) > 0 {
		reclen := int(le.Uint16(b[16:]))
		if reclen < 20 || reclen%8 != 0 || reclen > len(b) {
			t.Fatalf("bad d_reclen %d", reclen)
		}
		name := b[19:reclen]
		name = name[:slices.Index(name, 0)]
		out = append(out, dirent64{le.Uint64(b), int64(le.Uint64(b[8:])), b[18], string(name)})
		b = b[reclen:]
	}
	return out
}

func TestGetdents64(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b"), "")
	writeFile(t, filepath.Join(dir, "a"), "")
	writeFile(t, filepath.Join(dir, "c", "inner"), "")
	if err := os.Symlink("a", filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpenat, atFDCWDArg, h.str("."), oRDONLY|oDIRECTORY|oCLOEXEC)
	buf := h.alloc(4096)
	h.events = nil
	n := h.must(nrGetdents64, fd, buf, 4096)
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, []access{{trace.KindKernelWrite, buf, n}}) {
		t.Errorf("kernel writes %v", got)
	}
	ents := parseDirents(t, h.peek(buf, int(n)))
	var names []string
	for _, e := range ents {
		names = append(names, e.name)
	}
	if !slices.Equal(names, []string{".", "..", "a", "b", "c", "d"}) {
		t.Fatalf("names %v", names)
	}
	types := map[string]uint8{".": dtDir, "..": dtDir, "a": dtReg, "b": dtReg, "c": dtDir, "d": dtLnk}
	st := h.alloc(statSize)
	for i, e := range ents {
		if e.typ != types[e.name] {
			t.Errorf("%s: d_type %d", e.name, e.typ)
		}
		if e.off != int64(i+1) {
			t.Errorf("%s: d_off %d", e.name, e.off)
		}
		h.must(nrLstat, h.str(e.name), st)
		if ino := h.u64(st + 8); ino != e.ino {
			t.Errorf("%s: d_ino %d, st_ino %d", e.name, e.ino, ino)
		}
	}
	if n := h.must(nrGetdents64, fd, buf, 4096); n != 0 {
		t.Errorf("second getdents64 = %d", n)
	}
	// A buffer too small for one entry; then entries one by one after a rewind.
	h.must(nrLseek, fd, 0, seekSet)
	h.errno(eINVAL, nrGetdents64, fd, buf, 8)
	var again []string
	for {
		n := h.must(nrGetdents64, fd, buf, 24)
		if n == 0 {
			break
		}
		for _, e := range parseDirents(t, h.peek(buf, int(n))) {
			again = append(again, e.name)
		}
	}
	if !slices.Equal(again, names) {
		t.Errorf("one by one: %v", again)
	}
	h.errno(eNOTDIR, nrGetdents64, 1, buf, 4096)
	h.errno(eISDIR, nrRead, fd, buf, 10)
}

func TestPipeRoundTrip(t *testing.T) {
	h := newHarness(t, Config{})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, oCLOEXEC)
	r, w := uint64(le.Uint32(h.peek(fds, 4))), uint64(le.Uint32(h.peek(fds+4, 4)))
	if r != 3 || w != 4 {
		t.Fatalf("pipe fds %d %d", r, w)
	}
	if fl := h.must(nrFcntl, r, fGetFD); fl != fdCloexec {
		t.Errorf("F_GETFD = %d", fl)
	}
	buf := h.alloc(16)
	out := h.call(nrRead, r, buf, 16)
	if out.Ret != eAGAIN.Ret() {
		t.Fatalf("read of empty pipe = %d", int64(out.Ret))
	}
	pw, isPipe := out.Wait.(*PipeWait)
	if !isPipe || pw.Fd != 3 || pw.Write || pw.Pipe == 0 {
		t.Fatalf("Wait = %#v", out.Wait)
	}
	var events []uint64
	h.k.OnPipeEvent = func(p uint64) { events = append(events, p) }
	if n := h.must(nrWrite, w, h.str("hello"), 5); n != 5 {
		t.Fatalf("write = %d", n)
	}
	avail := h.alloc(4)
	h.must(nrIoctl, r, fionRead, avail)
	if n := le.Uint32(h.peek(avail, 4)); n != 5 {
		t.Errorf("FIONREAD = %d", n)
	}
	pfd := h.alloc(16)
	h.poke(pfd, []byte{3, 0, 0, 0, pollIn, 0, 0, 0, 4, 0, 0, 0, pollOut, 0, 0, 0})
	if n := h.must(nrPoll, pfd, 2, 0); n != 2 {
		t.Errorf("poll = %d", n)
	}
	if rev := le.Uint16(h.peek(pfd+6, 2)); rev != pollIn {
		t.Errorf("revents = %#x", rev)
	}
	h.events = nil
	if n := h.must(nrRead, r, buf, 3); n != 3 || string(h.peek(buf, 3)) != "hel" {
		t.Errorf("read 3 = %d", n)
	}
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, []access{{trace.KindKernelWrite, buf, 3}}) {
		t.Errorf("kernel writes %v", got)
	}
	if n := h.must(nrRead, r, buf, 16); n != 2 || string(h.peek(buf, 2)) != "lo" {
		t.Errorf("read rest = %d", n)
	}
	if !slices.Equal(events, []uint64{pw.Pipe, pw.Pipe, pw.Pipe}) {
		t.Errorf("pipe events %v, want write, read, read of %d", events, pw.Pipe)
	}
	// A full pipe takes what fits.
	big := h.alloc(70000)
	if n := h.must(nrWrite, w, big, 70000); n != pipeBufSize {
		t.Errorf("write to empty pipe = %d", n)
	}
	h.errno(eAGAIN, nrWrite, w, big, 1)
	h.errno(eSPIPE, nrLseek, r, 0, seekSet)
	h.must(nrClose, w)
	if n := h.must(nrRead, r, big, 70000); n != pipeBufSize {
		t.Errorf("drain = %d", n)
	}
	if n := h.must(nrRead, r, buf, 16); n != 0 {
		t.Errorf("read with no writer = %d", n)
	}
	// Writing with no reader: SIGPIPE, which kills by default; ignored, EPIPE.
	h.must(nrPipe2, fds, 0)
	r, w = uint64(le.Uint32(h.peek(fds, 4))), uint64(le.Uint32(h.peek(fds+4, 4)))
	h.must(nrClose, r)
	if out := h.call(nrWrite, w, buf, 1); out.Action != ExitGroup || out.Signal != sigPipe {
		t.Errorf("write with no reader: %+v, want death by SIGPIPE", out)
	}
	ign := h.alloc(32)
	h.poke(ign, []byte{sigIgn})
	h.must(13, sigPipe, ign, 0, 8)
	h.errno(ePIPE, nrWrite, w, buf, 1)
	// dup2 keeps the pipe open.
	h.must(nrDup2, w, 10)
	h.must(nrClose, w)
	h.must(nrFcntl, 10, fGetFL)
}

func TestPathOps(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir})
	h.must(nrMkdir, h.str("d"), 0o755)
	h.errno(eEXIST, nrMkdir, h.str("d"), 0o755)
	h.must(nrChdir, h.str("d"))
	buf := h.alloc(4096)
	n := h.must(nrGetcwd, buf, 4096)
	real, _ := filepath.EvalSymlinks(dir)
	if got := string(h.peek(buf, int(n)-1)); got != real+"/d" {
		t.Errorf("getcwd = %q, want %q", got, real+"/d")
	}
	h.errno(eRANGE, nrGetcwd, buf, 3)
	writeFile(t, filepath.Join(dir, "d", "g"), "y")
	h.must(nrRename, h.str("g"), h.str("../g2"))
	h.errno(eNOTEMPTY, nrRmdir, h.str("../d2"+"/..")) // ".." last
	h.must(nrChdir, h.str(".."))
	h.errno(eISDIR, nrUnlink, h.str("d"))
	h.must(nrMkdir, h.str("d/sub"), 0o700)
	h.errno(eNOTEMPTY, nrRmdir, h.str("d"))
	h.errno(eNOTDIR, nrRmdir, h.str("f"))
	h.must(nrRmdir, h.str("d/sub"))
	h.must(nrRmdir, h.str("d"))
	h.must(nrUnlink, h.str("g2"))
	h.errno(eNOENT, nrUnlink, h.str("g2"))
	h.must(nrSymlink, h.str("f"), h.str("lnk"))
	n = h.must(nrReadlink, h.str("lnk"), buf, 100)
	if string(h.peek(buf, int(n))) != "f" {
		t.Errorf("readlink %q", h.peek(buf, int(n)))
	}
	h.errno(eINVAL, nrReadlink, h.str("f"), buf, 100)
	h.must(nrAccess, h.str("lnk"), rOK)
	h.errno(eNOENT, nrAccess, h.str("nothere"), fOK)
	if _, err := os.Stat(filepath.Join(dir, "g2")); !os.IsNotExist(err) {
		t.Errorf("g2 still on host: %v", err)
	}
}

func TestSysrootSymlinks(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "lib", "real.so"), "ELF")
	if err := os.MkdirAll(filepath.Join(root, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An absolute link must resolve inside the sysroot, not on the host.
	if err := os.Symlink("/lib/real.so", filepath.Join(root, "lib64", "ld.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../lib", filepath.Join(root, "lib64", "up")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Sysroot: root, Cwd: filepath.Join(root, "lib64")})
	buf := h.alloc(16)
	for _, p := range []string{"/lib64/ld.so", "ld.so", "/lib64/up/real.so", "/../../lib/real.so", "/lib/../lib64/./ld.so"} {
		fd := h.must(nrOpen, h.str(p), oRDONLY)
		if n := h.must(nrRead, fd, buf, 16); n != 3 || string(h.peek(buf, 3)) != "ELF" {
			t.Errorf("%s: read %q", p, h.peek(buf, int(n)))
		}
		h.must(nrClose, fd)
	}
	n := h.must(nrGetcwd, buf, 16)
	if got := string(h.peek(buf, int(n)-1)); got != "/lib64" {
		t.Errorf("getcwd = %q", got)
	}
	// A link into /proc leads to the emulated tree, never the host's.
	if err := os.Symlink("/proc/self/mounts", filepath.Join(root, "mtab")); err != nil {
		t.Fatal(err)
	}
	h.errno(eNOENT, nrOpen, h.str("/mtab"), oRDONLY)
	if err := os.Symlink("../proc/self/maps", filepath.Join(root, "maps")); err != nil {
		t.Fatal(err)
	}
	fd := h.must(nrOpen, h.str("/maps"), oRDONLY)
	if n := h.must(nrRead, fd, buf, 8); n != 8 || string(h.peek(buf, 8)) != "10000000" {
		t.Errorf("maps through a link: %q", h.peek(buf, int(n)))
	}
}

func TestEmulatedFiles(t *testing.T) {
	h := newHarness(t, Config{CPUs: 4, ExePath: "/usr/bin/prog", Seed: 7})
	readAll := func(p string) string {
		t.Helper()
		fd := h.must(nrOpen, h.str(p), oRDONLY)
		defer h.must(nrClose, fd)
		buf := h.alloc(8192)
		n := h.must(nrRead, fd, buf, 8192)
		return string(h.peek(buf, int(n)))
	}
	if s := readAll("/sys/devices/system/cpu/online"); s != "0-3\n" {
		t.Errorf("online = %q", s)
	}
	if s := readAll("/proc/cpuinfo"); strings.Count(s, "processor\t:") != 4 {
		t.Errorf("cpuinfo has %d processors", strings.Count(s, "processor\t:"))
	}
	maps := readAll("/proc/self/maps")
	if !strings.HasPrefix(maps, "10000000-10100000 rw-p 00000000 00:00 0 \n") {
		t.Errorf("maps = %q", maps)
	}
	buf := h.alloc(256)
	n := h.must(nrReadlink, h.str("/proc/self/exe"), buf, 256)
	if got := string(h.peek(buf, int(n))); got != "/usr/bin/prog" {
		t.Errorf("/proc/self/exe -> %q", got)
	}
	n = h.must(nrReadlink, h.str("/proc/self/fd/1"), buf, 256)
	if got := string(h.peek(buf, int(n))); !strings.HasPrefix(got, "pipe:[") {
		t.Errorf("/proc/self/fd/1 -> %q", got)
	}
	if s := readAll("/dev/null"); s != "" {
		t.Errorf("/dev/null = %q", s)
	}
	fd := h.must(nrOpen, h.str("/dev/null"), oWRONLY)
	if n := h.must(nrWrite, fd, buf, 100); n != 100 {
		t.Errorf("write /dev/null = %d", n)
	}
	h.errno(eNOENT, nrOpen, h.str("/proc/self/environ"), oRDONLY)
	h.errno(eNOENT, nrOpen, h.str("/dev/sda"), oRDONLY)
	h.errno(eACCES, nrOpen, h.str("/proc/cpuinfo"), oWRONLY)
	h.errno(eNXIO, nrOpen, h.str("/dev/tty"), oRDWR)

	// /dev/urandom and getrandom draw from the seeded PRNG.
	other := newHarness(t, Config{Seed: 7})
	a, b := h.alloc(32), other.alloc(32)
	h.must(nrGetrandom, a, 32, 0)
	other.must(nrGetrandom, b, 32, 0)
	if !slices.Equal(h.peek(a, 32), other.peek(b, 32)) {
		t.Error("getrandom differs between kernels with the same seed")
	}
	if slices.Equal(h.peek(a, 32), make([]byte, 32)) {
		t.Error("getrandom returned zeros")
	}
	h.errno(eINVAL, nrGetrandom, a, 32, 0x100)

	// The directory /proc/self/fd lists the open descriptors.
	dfd := h.must(nrOpen, h.str("/proc/self/fd"), oRDONLY|oDIRECTORY)
	dbuf := h.alloc(1024)
	dn := h.must(nrGetdents64, dfd, dbuf, 1024)
	var names []string
	for _, e := range parseDirents(t, h.peek(dbuf, int(dn))) {
		names = append(names, e.name)
	}
	if !slices.Equal(names, []string{".", "..", "0", "1", "2", "3", "4"}) {
		t.Errorf("/proc/self/fd: %v", names)
	}
}

func TestFcntlDup(t *testing.T) {
	h := newHarness(t, Config{})
	if fd := h.must(nrFcntl, 1, fDupFDCloexec, 10); fd != 10 {
		t.Errorf("F_DUPFD_CLOEXEC = %d", fd)
	}
	if fl := h.must(nrFcntl, 10, fGetFD); fl != fdCloexec {
		t.Errorf("F_GETFD = %d", fl)
	}
	if fl := h.must(nrFcntl, 10, fGetFL); fl&oAccMode != oWRONLY {
		t.Errorf("F_GETFL = %#o", fl)
	}
	h.must(nrFcntl, 10, fSetFL, oNONBLOCK)
	if fl := h.must(nrFcntl, 1, fGetFL); fl&oNONBLOCK == 0 {
		t.Error("status flags not shared by dup")
	}
	if fd := h.must(32, 0); fd != 3 { // dup
		t.Errorf("dup = %d", fd)
	}
	h.errno(eBADF, nrFcntl, 99, fGetFD)
	h.errno(eINVAL, nrFcntl, 1, 9999)
	h.errno(eBADF, nrDup2, 1, 1<<20)
}

func TestProcSelfExe(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "bin", "inside"), "IN")
	writeFile(t, filepath.Join(elsewhere, "outside"), "OUT")
	for _, tc := range []struct{ exe, link, data string }{
		{filepath.Join(root, "bin", "inside"), "/bin/inside", "IN"},
		{filepath.Join(elsewhere, "outside"), filepath.Join(elsewhere, "outside"), "OUT"},
	} {
		h := newHarness(t, Config{Sysroot: root, ExePath: tc.exe})
		buf := h.alloc(4096)
		n := h.must(nrReadlink, h.str("/proc/self/exe"), buf, 4096)
		if got := string(h.peek(buf, int(n))); got != tc.link {
			t.Errorf("%s: readlink = %q, want %q", tc.exe, got, tc.link)
		}
		fd := h.must(nrOpen, h.str("/proc/self/exe"), oRDONLY)
		n = h.must(nrRead, fd, buf, 16)
		if got := string(h.peek(buf, int(n))); got != tc.data {
			t.Errorf("%s: contents %q", tc.exe, got)
		}
	}
}
