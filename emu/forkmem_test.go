package emu

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
// the engines closing; a snapshot's pages no engine maps are given back,
// and after the last engine no snapshot is open.
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
	// A snapshot's page no engine maps any more is given back: the first
	// snapshot's page 5, once the parent maps the second's there and the
	// first child and its child, which mapped the first's, are gone.
	first := a.mem.pieces[a.mem.pieceFirst(base+100*page)].snap
	b.Close()
	if got := read(d, base+3*page, 5); string(got) != "child" {
		t.Errorf("grandchild reads %q after its parent closed", got)
	}
	d.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(first.fd), &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 != size-page {
		t.Errorf("first snapshot holds %d bytes, want all but one page (%d)", st.Blocks*512, size-page)
	}
	a.Close()
	if string(read(c, base+5*page, 6)) != "parent" || !bytes.Equal(read(c, base+8*page, page), want[8*page:9*page]) {
		t.Errorf("second child's memory changed when the others closed")
	}
	if snapshotFiles(t) == files {
		t.Errorf("no snapshot open while a child maps them")
	}
	c.Close()
	if n := snapshotFiles(t); n != files {
		t.Errorf("%d snapshots open after every engine closed, want %d", n, files)
	}
}

// A parent forking again and again (a pre-forking server's), storing
// between two forks into pages far apart, keeps each child's view its
// own, while its snapshots, and so its open files and host mappings,
// stay bounded (maxSnapshots: then one fork writes all of it afresh).
func TestForkManyTimes(t *testing.T) {
	const base, size, page, forks = 0x50000000, 4 << 20, mm.PageSize, 3 * maxSnapshots
	rw := mm.ProtRead | mm.ProtWrite
	files := snapshotFiles(t)
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	as := mm.New(a)
	if err := as.Map(mm.VMA{Start: base, End: base + size, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	fill := make([]byte, size)
	for i := range fill {
		fill[i] = byte(i/page + 1)
	}
	if err := as.Mem().WriteMem(base, fill); err != nil {
		t.Fatal(err)
	}
	at := func(j int) uint64 { return base + uint64(j*37%(size/page))*page }
	var kids []*Engine
	for k := range forks {
		e, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := as.Fork(e); err != nil {
			t.Fatal(err)
		}
		kids = append(kids, e)
		if err := e.WriteMem(at(k)+1, []byte{0xee}); err != nil {
			t.Fatal(err)
		}
		if err := a.WriteMem(at(k), []byte{byte(200 + k)}); err != nil {
			t.Fatal(err)
		}
		seen := map[*snapshot]bool{}
		for _, p := range a.mem.pieces {
			seen[p.snap] = true
		}
		if len(seen) > maxSnapshots+1 {
			t.Fatalf("fork %d: the parent maps %d snapshots", k, len(seen))
		}
	}
	b := make([]byte, 2)
	for k, e := range kids {
		for j := range forks {
			if err := e.ReadMem(at(j), b); err != nil {
				t.Fatal(err)
			}
			want := [2]byte{fill[at(j)-base], fill[at(j)-base+1]}
			if j < k {
				want[0] = byte(200 + j)
			}
			if j == k {
				want[1] = 0xee
			}
			if b[0] != want[0] || b[1] != want[1] {
				t.Fatalf("child %d reads %v at the parent's store %d, want %v", k, b, j, want)
			}
		}
		e.Close()
	}
	for j := range forks {
		if err := a.ReadMem(at(j), b); err != nil || b[0] != byte(200+j) || b[1] != fill[at(j)-base+1] {
			t.Fatalf("parent reads %v at its store %d (%v)", b, j, err)
		}
	}
	a.Close()
	if n := snapshotFiles(t); n != files {
		t.Errorf("%d snapshots open after every engine closed, want %d", n, files)
	}
}

// When a child exits, the pages its parent wrote since the fork are given
// back from the snapshot (only the parent maps it, and it has its own
// copies), and the parent and a later child read what they should.
func TestForkGivesBackWhenTheChildGoes(t *testing.T) {
	const base, size, page = 0x60000000, 1 << 20, mm.PageSize
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	as := mm.New(a)
	if err := as.Map(mm.VMA{Start: base, End: base + size, Prot: mm.ProtRead | mm.ProtWrite}); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{7}, size)
	if err := as.Mem().WriteMem(base, want); err != nil {
		t.Fatal(err)
	}
	b, _ := New(Options{})
	if _, _, err := as.Fork(b); err != nil {
		t.Fatal(err)
	}
	snap := a.mem.pieces[0].snap
	copy(want[2*page:4*page], bytes.Repeat([]byte{9}, 2*page))
	if err := a.WriteMem(base+2*page, want[2*page:4*page]); err != nil {
		t.Fatal(err)
	}
	blocks := func() int64 {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(snap.fd), &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	if n := blocks(); n != size {
		t.Errorf("snapshot holds %d bytes while the child lives, want %d", n, size)
	}
	b.Close()
	if n := blocks(); n != size-2*page {
		t.Errorf("snapshot holds %d bytes after the child exited, want %d", n, size-2*page)
	}
	got := make([]byte, size)
	if err := a.ReadMem(base, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("parent reads other bytes after its child exited (%v)", err)
	}
	c, _ := New(Options{})
	defer c.Close()
	if _, _, err := as.Fork(c); err != nil {
		t.Fatal(err)
	}
	if err := c.ReadMem(base, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a later child reads other bytes (%v)", err)
	}
}

// A vfork child's memory is its parent's (borrowed): a fork of it is
// declined (errors.ErrUnsupported, nothing mapped) and mm copies instead.
func TestForkOfBorrowedMemoryCopies(t *testing.T) {
	const base, size = 0x70000000, 64 << 10
	rw := mm.ProtRead | mm.ProtWrite
	p, _ := New(Options{})
	defer p.Close()
	v, _ := New(Options{})
	defer v.Close()
	if err := p.MapPages(base, size, rw); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteMem(base+100, []byte("lent")); err != nil {
		t.Fatal(err)
	}
	if err := v.SharePages(base, size, rw, p); err != nil {
		t.Fatal(err)
	}
	c, _ := New(Options{})
	defer c.Close()
	if _, err := c.ForkPages(v, []mm.Range{{Addr: base, Size: size, Prot: rw}}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("fork of borrowed memory: %v, want declined", err)
	}
	if c.Regions() != 0 {
		t.Errorf("declined fork mapped %d regions", c.Regions())
	}
}
