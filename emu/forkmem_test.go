package emu

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"emuprof/mm"
)

// present counts the host pages behind e's guest pages [lo, hi) that are
// in memory: what the engine's copy of them costs the host.
func present(t *testing.T, e *Engine, lo, hi uint64) int {
	t.Helper()
	pm, err := pagemap(e.mem.slots[lo>>slotShift]+lo&(slotSize-1), hi-lo)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range pm {
		if x&pmPresent != 0 {
			n++
		}
	}
	return n
}

// snapshotFiles counts emuprof's open fork snapshots.
func snapshotFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.Contains(l, "emuprof-fork") {
			n++
		}
	}
	return n
}

// A fork costs the host what parent and child write afterwards, not a
// copy of the parent's memory: right after mm.AddressSpace.Fork, none of
// the child's 8 MiB is in host memory (the eager copy had all 2048
// pages), and each side's stores stay its own, through a second fork
// (which writes only the page the parent wrote since the first into its
// snapshot), a fork of the child, MADV_DONTNEED (ZeroPages), munmap and
// the engines closing in any order, after which no snapshot is open.
func TestForkCopiesOnWrite(t *testing.T) {
	const base, size, page = 0x40000000, 8 << 20, mm.PageSize
	rw := mm.ProtRead | mm.ProtWrite
	newEngine := func() *Engine {
		e, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	files := snapshotFiles(t)
	a := newEngine()
	as := mm.New(a)
	if err := as.Map(mm.VMA{Start: base, End: base + size, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i/page*7 + i%251)
	}
	if err := as.Mem().WriteMem(base, want); err != nil {
		t.Fatal(err)
	}
	read := func(e *Engine, addr uint64, n int) []byte {
		t.Helper()
		b := make([]byte, n)
		if err := e.ReadMem(addr, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	fork := func(as *mm.AddressSpace) (*Engine, *mm.AddressSpace, uint64) {
		t.Helper()
		e := newEngine()
		child, copied, err := as.Fork(e)
		if err != nil {
			t.Fatal(err)
		}
		return e, child, copied
	}
	b, bs, copied := fork(as)
	if n := present(t, b, base, base+size); n != 0 {
		t.Errorf("child has %d of %d pages in host memory right after the fork, want 0", n, size/page)
	}
	if copied != size || bs.Backed() != size {
		t.Errorf("first fork: %d bytes written into the snapshot, child backs %d; want %d", copied, bs.Backed(), size)
	}
	if !bytes.Equal(read(b, base, size), want) || !bytes.Equal(read(a, base, size), want) {
		t.Fatal("parent or child reads other bytes than the parent's before the fork")
	}
	if n := present(t, b, base, base+size); n != size/page {
		t.Errorf("child has %d pages in host memory after reading them all, want %d", n, size/page)
	}
	if err := b.WriteMem(base+3*page, []byte("child")); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteMem(base+5*page, []byte("parent")); err != nil {
		t.Fatal(err)
	}
	if got := read(a, base+3*page, 5); !bytes.Equal(got, want[3*page:3*page+5]) {
		t.Errorf("parent reads %q where the child stored", got)
	}
	if got := read(b, base+5*page, 6); !bytes.Equal(got, want[5*page:5*page+6]) {
		t.Errorf("child reads %q where the parent stored", got)
	}

	// A second fork: the page written since the first is all it writes.
	c, _, copied := fork(as)
	if copied != page {
		t.Errorf("second fork wrote %d bytes into its snapshot, want one page (%d)", copied, page)
	}
	if got := read(c, base+5*page, 6); string(got) != "parent" {
		t.Errorf("second child reads %q where the parent stored before it", got)
	}
	if got := read(c, base+3*page, 5); !bytes.Equal(got, want[3*page:3*page+5]) {
		t.Errorf("second child reads %q where the first child stored", got)
	}
	// A fork of the child sees the child's store.
	d, _, _ := fork(bs)
	if got := read(d, base+3*page, 5); string(got) != "child" {
		t.Errorf("grandchild reads %q where its parent stored", got)
	}
	if err := d.WriteMem(base+7*page, []byte("grandchild")); err != nil {
		t.Fatal(err)
	}
	if got := read(b, base+7*page, 10); !bytes.Equal(got, want[7*page:7*page+10]) {
		t.Errorf("child reads %q where the grandchild stored", got)
	}

	// MADV_DONTNEED: zeros, not the snapshot's bytes again.
	if err := a.ZeroPages(base+4*page, 4*page); err != nil {
		t.Fatal(err)
	}
	if got := read(a, base+4*page, 4*page); !bytes.Equal(got, make([]byte, 4*page)) {
		t.Errorf("parent reads non-zero bytes after ZeroPages")
	}
	if got := read(c, base+5*page, 6); string(got) != "parent" {
		t.Errorf("second child reads %q after the parent's ZeroPages", got)
	}
	// munmap and mmap again: fresh zeros.
	if err := as.Unmap(base, 2*page); err != nil {
		t.Fatal(err)
	}
	if err := as.Map(mm.VMA{Start: base, End: base + 2*page, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	if got := read(a, base, 2*page); !bytes.Equal(got, make([]byte, 2*page)) {
		t.Errorf("parent reads non-zero bytes in a new mapping")
	}
	a.Close()
	if !bytes.Equal(read(b, base, 3*page), want[:3*page]) || string(read(c, base+5*page, 6)) != "parent" {
		t.Errorf("children's memory changed when the parent closed")
	}
	if snapshotFiles(t) == files {
		t.Errorf("no snapshot open while children map them")
	}
	b.Close()
	c.Close()
	if got := read(d, base+3*page, 5); string(got) != "child" {
		t.Errorf("grandchild reads %q after the others closed", got)
	}
	d.Close()
	if n := snapshotFiles(t); n != files {
		t.Errorf("%d snapshots open after every engine closed, want %d", n, files)
	}
}
