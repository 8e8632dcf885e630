package syscalls

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"emuprof/mm"
)

// System calls used only here.
const (
	nrPwrite64Rule = 18
	nrPreadvRule   = 295
	nrPwritevRule  = 296
)

// TestStatxTimesDistinct: statx's atime, ctime and mtime sit at offsets
// 64, 96 and 112 (struct statx, include/uapi/linux/stat.h), shown on a
// file whose three times differ.
func TestStatxTimesDistinct(t *testing.T) {
	const epoch = 1_767_225_600_000_000_000
	h := newHarness(t, Config{Cwd: t.TempDir(), EpochNanos: epoch})
	h.now = 1e9
	h.must(nrOpenat, atFDCWDArg, h.str("f"), oRDWR|oCREAT, 0o644)
	h.now = 7e9 // ctime: the utimensat below
	ts := h.alloc(32)
	h.poke(ts, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 100), 5), 200), 9))
	h.must(nrUtimensat, atFDCWDArg, h.str("f"), ts, 0)
	sx := h.alloc(statxSize)
	h.must(nrStatx, atFDCWDArg, h.str("f"), 0, statxBasicStats, sx)
	b := h.peek(sx, statxSize)
	xt := func(off int) int64 { return int64(le.Uint64(b[off:]))*1e9 + int64(le.Uint32(b[off+8:])) }
	if a, c, m := xt(64), xt(96), xt(112); a != 100e9+5 || m != 200e9+9 || c != epoch+7e9 {
		t.Errorf("statx atime %d ctime %d mtime %d, want %d %d %d", a, c, m, int64(100e9+5), int64(epoch+7e9), int64(200e9+9))
	}
}

// TestSeekDataHole: a file without holes (Linux's generic rule, which
// every file system without hole tracking follows): SEEK_DATA at an offset
// inside the file returns the offset, SEEK_HOLE returns the end of the
// file (the implicit hole there) and moves the position to it; at or past
// the end both fail with ENXIO.
func TestSeekDataHole(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat([]byte("x"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("f"), oRDONLY)
	if got := h.ret(nrLseek, fd, 10, seekData); got != 10 {
		t.Errorf("SEEK_DATA 10 = %d, want 10", got)
	}
	if got := h.ret(nrLseek, fd, 10, seekHole); got != 100 {
		t.Errorf("SEEK_HOLE 10 = %d, want 100", got)
	}
	buf := h.alloc(16)
	if got := h.ret(nrRead, fd, buf, 16); got != 0 {
		t.Errorf("read after SEEK_HOLE = %d, want 0 (at the end)", got)
	}
	if got := h.ret(nrLseek, fd, 99, seekData); got != 99 {
		t.Errorf("SEEK_DATA 99 = %d, want 99", got)
	}
	h.errno(eNXIO, nrLseek, fd, 100, seekData)
	h.errno(eNXIO, nrLseek, fd, 100, seekHole)
	h.errno(eNXIO, nrLseek, fd, negOne, seekHole)
}

// bigBase is guest memory for transfers larger than the kernel's 1 MiB
// chunk.
const (
	bigBase = 0x20000000
	bigSize = 4 << 20
)

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/251)
	}
	return p
}

// TestBigTransfers: reads and writes of more than 1 MiB (several of the
// kernel's chunks) move every byte from the right file offset: read,
// pread, preadv into guest memory and write, pwrite, pwritev from it,
// compared with the host file's bytes.
func TestBigTransfers(t *testing.T) {
	dir := t.TempDir()
	data := pattern(3<<20 + 123)
	if err := os.WriteFile(filepath.Join(dir, "in"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir})
	if err := h.as.MapFixed(bigBase, bigSize, mm.ProtRead|mm.ProtWrite, "", 0); err != nil {
		t.Fatal(err)
	}
	in := h.must(nrOpen, h.str("in"), oRDONLY)
	check := func(what string, got []byte, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: %d bytes, want %d; first difference at %d", what, len(got), len(want), i)
		}
	}

	n := len(data) - 1000
	if got := h.ret(nrRead, in, bigBase, uint64(n)); got != int64(n) {
		t.Fatalf("read of %d bytes = %d", n, got)
	}
	check("read", h.peek(bigBase, n), data[:n])
	if got := h.ret(nrLseek, in, 0, seekCur); got != int64(n) {
		t.Errorf("position after read %d, want %d", got, n)
	}

	const off = 5000
	n = 2<<20 + 77
	if got := h.ret(nrPread64, in, bigBase, uint64(n), off); got != int64(n) {
		t.Fatalf("pread of %d bytes = %d", n, got)
	}
	check("pread", h.peek(bigBase, n), data[off:off+n])

	// preadv: a small buffer, then one larger than a chunk.
	iov := h.alloc(32)
	h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, bigBase), 100), bigBase+4096), 1<<20+500))
	if got := h.ret(nrPreadvRule, in, iov, 2, off); got != 100+1<<20+500 {
		t.Fatalf("preadv = %d", got)
	}
	check("preadv buffer 1", h.peek(bigBase, 100), data[off:off+100])
	check("preadv buffer 2", h.peek(bigBase+4096, 1<<20+500), data[off+100:off+100+1<<20+500])

	// Writes: the guest memory holds data's first 3 MiB.
	h.poke(bigBase, data[:3<<20])
	out := h.must(nrOpenat, atFDCWDArg, h.str("out"), oRDWR|oCREAT, 0o644)
	n = 2<<20 + 999
	if got := h.ret(nrWrite, out, bigBase, uint64(n)); got != int64(n) {
		t.Fatalf("write of %d bytes = %d", n, got)
	}
	if got := h.ret(nrPwrite64Rule, out, bigBase+1, uint64(n), off); got != int64(n) {
		t.Fatalf("pwrite of %d bytes = %d", n, got)
	}
	want := append(append([]byte{}, data[:off]...), data[1:1+n]...)
	got, _ := os.ReadFile(filepath.Join(dir, "out"))
	check("write then pwrite", got, want)

	pv := h.must(nrOpenat, atFDCWDArg, h.str("outv"), oRDWR|oCREAT, 0o644)
	h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, bigBase), 10), bigBase+1<<20), 1<<20+300))
	if got := h.ret(nrPwritevRule, pv, iov, 2, off); got != 10+1<<20+300 {
		t.Fatalf("pwritev = %d", got)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "outv"))
	want = append(append(make([]byte, off), data[:10]...), data[1<<20:1<<20+1<<20+300]...)
	check("pwritev", got, want)
}

// TestOPathDescriptorNoIO: a descriptor opened with O_PATH names the file
// but allows no I/O: lseek, read and write fail with EBADF (Linux's
// empty_fops), while fstat works.
func TestOPathDescriptorNoIO(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("f"), oPATH)
	buf := h.alloc(statSize)
	h.errno(eBADF, nrLseek, fd, 0, seekSet)
	h.errno(eBADF, nrLseek, fd, 0, seekEnd)
	h.errno(eBADF, nrRead, fd, buf, 4)
	h.errno(eBADF, nrWrite, fd, buf, 4)
	h.must(nrFstat, fd, buf)
	if size := le.Uint64(h.peek(buf+48, 8)); size != 4 {
		t.Errorf("fstat of the O_PATH descriptor: size %d, want 4", size)
	}
	// readlinkat with an empty path reads the symbolic link an O_PATH
	// descriptor opened with O_NOFOLLOW names; another file is ENOENT.
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	lfd := h.must(nrOpen, h.str("link"), oPATH|oNOFOLLOW)
	if n := h.must(nrReadlinkat, lfd, h.str(""), buf, 64); n != 1 || string(h.peek(buf, 1)) != "f" {
		t.Errorf("readlinkat(link O_PATH, \"\") = %d %q, want 1 \"f\"", n, h.peek(buf, int(n)))
	}
	h.errno(eNOENT, nrReadlinkat, fd, h.str(""), buf, 64)
	h.errno(eNOENT, nrReadlinkat, atFDCWDArg, h.str(""), buf, 64)
}

// TestVectorAndOffsetErrnos: the errors Linux checks before moving a
// byte: a negative offset for pread, pwrite, preadv and pwritev is
// EINVAL; an iovec with a negative length is EINVAL and one whose buffer
// lies outside user space EFAULT, even after a valid one; readv on a
// write-only descriptor and writev on a read-only one are EBADF, even
// with a bad iovec. None of them moves the file position.
func TestVectorAndOffsetErrnos(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Cwd: dir})
	rd := h.must(nrOpen, h.str("f"), oRDONLY)
	wr := h.must(nrOpen, h.str("f"), oWRONLY)
	buf := h.alloc(16)
	iov := h.alloc(32)
	setIov := func(len2, base2 uint64) {
		h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, buf), 4), base2), len2))
	}
	setIov(4, buf+8)
	h.errno(eINVAL, nrPread64, rd, buf, 4, negOne)
	h.errno(eINVAL, nrPwrite64Rule, wr, buf, 4, 1<<63)
	h.errno(eINVAL, nrPreadvRule, rd, iov, 2, negOne)
	h.errno(eINVAL, nrPwritevRule, wr, iov, 2, negOne)
	h.errno(eBADF, nrReadv, wr, iov, 2)
	h.errno(eBADF, nrWritev, rd, iov, 2)
	setIov(1<<63, buf+8)
	h.errno(eINVAL, nrReadv, rd, iov, 2)
	h.errno(eINVAL, nrWritev, wr, iov, 2)
	setIov(4, 0xffff_8000_0000_0000)
	h.errno(eFAULT, nrReadv, rd, iov, 2)
	h.errno(eFAULT, nrWritev, wr, iov, 2)
	// The access mode is checked first (vfs_readv, vfs_writev), before the
	// iovec array is read.
	h.errno(eBADF, nrReadv, wr, iov, 2)
	h.errno(eBADF, nrWritev, rd, iov, 2)
	if pos := h.ret(nrLseek, rd, 0, seekCur); pos != 0 {
		t.Errorf("position %d after failed reads, want 0", pos)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != "0123456789" {
		t.Errorf("file %q after failed writes", got)
	}
}
