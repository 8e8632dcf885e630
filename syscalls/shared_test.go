package syscalls

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"emuprof/mm"
)

// sharedSetup opens a fresh file of size bytes ('a', 'b', ... per 512
// bytes) read-write in a harness.
func sharedSetup(t *testing.T, size int) (*harness, string, uint64) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := range size {
		b.WriteByte(byte('a' + i/512%26))
	}
	path := filepath.Join(dir, "f.dat")
	writeFile(t, path, b.String())
	h := newHarness(t, Config{Cwd: dir})
	fd := h.must(nrOpen, h.str("f.dat"), oRDWR)
	return h, path, fd
}

func hostBytes(t *testing.T, path string, off, n int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off+n > len(b) {
		t.Fatalf("%s has %d bytes, want at least %d", path, len(b), off+n)
	}
	return string(b[off : off+n])
}

const (
	nrPwrite64 = 18
	nrMsync    = 26
	nrTruncate = 76
)

// TestSharedMappingCoherence: stores through a MAP_SHARED mapping are seen
// by pread, a second open file, and reach the file at munmap; pwrite shows
// in the mapping.
func TestSharedMappingCoherence(t *testing.T) {
	h, path, fd := sharedSetup(t, 3*mm.PageSize)
	a := h.must(nrMmap, 0, 3*mm.PageSize, protRW, mapShared, fd, 0)
	h.poke(a+mm.PageSize+10, []byte("STORE"))
	buf := h.alloc(16)
	h.must(nrPread64, fd, buf, 5, mm.PageSize+10)
	if got := string(h.peek(buf, 5)); got != "STORE" {
		t.Errorf("pread after a store = %q", got)
	}
	fd2 := h.must(nrOpen, h.str("f.dat"), oRDONLY)
	h.must(nrPread64, fd2, buf, 7, mm.PageSize+9)
	if got := string(h.peek(buf, 7)); got != "iSTOREi" {
		t.Errorf("pread through another open file = %q", got)
	}
	h.poke(buf, []byte("PW"))
	h.errno(eBADF, nrPwrite64, fd2, buf, 2, 2*mm.PageSize+1)
	h.must(nrPwrite64, fd, buf, 2, 2*mm.PageSize+1)
	if got := string(h.peek(a+2*mm.PageSize, 4)); got != "qPWq" {
		t.Errorf("mapping after pwrite = %q", got)
	}
	h.poke(a+5, []byte("LAST"))
	h.must(nrMunmap, a, 3*mm.PageSize)
	if got := hostBytes(t, path, 0, 10); got != "aaaaaLASTa" {
		t.Errorf("file after munmap = %q", got)
	}
	if got := hostBytes(t, path, mm.PageSize+8, 8); got != "iiSTOREi" {
		t.Errorf("file after munmap = %q", got)
	}
	if len(h.k.shared) != 0 {
		t.Errorf("%d shared handles left after munmap", len(h.k.shared))
	}
}

// TestSharedMappingAtExit: a dirty mapping whose descriptor was closed is
// written back when the kernel closes (the process ends), not past EOF.
func TestSharedMappingAtExit(t *testing.T) {
	h, path, fd := sharedSetup(t, mm.PageSize+100)
	a := h.must(nrMmap, 0, 2*mm.PageSize, protRW, mapShared, fd, 0)
	h.must(nrClose, fd)
	h.poke(a+mm.PageSize+90, []byte("0123456789ABCDEF")) // crosses EOF
	if err := h.k.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if len(b) != mm.PageSize+100 || string(b[mm.PageSize+88:]) != "ii0123456789" {
		t.Errorf("file after exit: %d bytes, tail %q", len(b), b[len(b)-12:])
	}
}

// TestSharedMappingTruncate: the mapping reads zeros past a new, smaller
// end of file, also after the file grows again.
func TestSharedMappingTruncate(t *testing.T) {
	h, path, fd := sharedSetup(t, 2*mm.PageSize)
	a := h.must(nrMmap, 0, 2*mm.PageSize, protRW, mapShared, fd, 0)
	h.poke(a+mm.PageSize+50, []byte("X"))
	h.must(nrFtruncate, fd, mm.PageSize+10)
	if got := h.peek(a+mm.PageSize+8, 4); !bytes.Equal(got, []byte("ii\x00\x00")) {
		t.Errorf("mapping after shrink = %q", got)
	}
	h.must(nrTruncate, h.str(path), 2*mm.PageSize)
	h.must(nrMunmap, a, 2*mm.PageSize)
	if got := hostBytes(t, path, mm.PageSize+8, 50); got != "ii"+strings.Repeat("\x00", 48) {
		t.Errorf("file after grow and munmap = %q", got)
	}
}

// TestSharedMappingKeepsOthers: private mappings stay private, mappings of
// read-only files cannot become writable, aliases see each other's stores
// once one is synced.
func TestSharedMappingKeepsOthers(t *testing.T) {
	h, path, fd := sharedSetup(t, mm.PageSize)
	p := h.must(nrMmap, 0, mm.PageSize, protRW, mapPrivate, fd, 0)
	h.poke(p, []byte("PRIV"))
	h.must(nrMunmap, p, mm.PageSize)
	h.must(nrClose, fd)
	if got := hostBytes(t, path, 0, 4); got != "aaaa" {
		t.Errorf("private store reached the file: %q", got)
	}
	ro := h.must(nrOpen, h.str("f.dat"), oRDONLY)
	r := h.must(nrMmap, 0, mm.PageSize, protRead, mapShared, ro, 0)
	h.errno(eACCES, nrMprotect, r, mm.PageSize, protRW)
	rw := h.must(nrOpen, h.str("f.dat"), oRDWR)
	if w := h.k.Warnings(); len(w) != 0 {
		t.Errorf("warnings before aliasing: %q", w)
	}
	// The read-only mapping r cannot store, but sees w1's stores late.
	w1 := h.must(nrMmap, 0, mm.PageSize, protRW, mapShared, rw, 0)
	w2 := h.must(nrMmap, 0, mm.PageSize, protRW, mapShared, rw, 0)
	if w := h.k.Warnings(); len(w) != 1 || !strings.Contains(w[0], "f.dat is mapped MAP_SHARED twice") {
		t.Errorf("warnings after aliasing: %q", w)
	}
	h.poke(w1+1, []byte("ONE"))
	h.poke(w2+100, []byte("TWO"))
	h.must(nrMsync, w1, mm.PageSize, msSync)
	h.must(nrMsync, w2, mm.PageSize, msSync)
	for _, m := range []uint64{r, w1, w2} {
		if got := string(h.peek(m, 4)) + string(h.peek(m+100, 3)); got != "aONETWO" {
			t.Errorf("mapping at %#x after msync: %q", m, got)
		}
	}
	if got := hostBytes(t, path, 0, 4) + hostBytes(t, path, 100, 3); got != "aONETWO" {
		t.Errorf("file after msync: %q", got)
	}
}
