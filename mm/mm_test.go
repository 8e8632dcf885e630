package mm

import (
	"bytes"
	"errors"
	"testing"
)

const rw = ProtRead | ProtWrite

// consistent checks that the backend holds exactly the backed pages of the
// VMAs, with their protections, that every accessible page is backed
// (backed.go), and that the VMAs are sorted, disjoint and merged.
func consistent(t *testing.T, as *AddressSpace, mb *MemBackend) {
	t.Helper()
	n := 0
	for i, v := range as.VMAs() {
		if v.Start >= v.End || v.Start%PageSize != 0 || v.End%PageSize != 0 {
			t.Fatalf("bad vma %d: %+v", i, v)
		}
		if i > 0 {
			p := as.vmas[i-1]
			if p.End > v.Start {
				t.Fatalf("overlapping vmas %+v %+v", p, v)
			}
			if mergeable(p, v) {
				t.Fatalf("unmerged vmas %+v %+v", p, v)
			}
		}
		if v.Prot == ProtNone || v.NoReserve {
			continue // its backed pages are checked below
		}
		for a := v.Start; a < v.End; a += PageSize {
			prot, ok := mb.PageProt(a)
			if as.PastEOF(a) {
				if ok || as.IsBacked(a) {
					t.Fatalf("page %#x past the end of its file is backed", a)
				}
				continue
			}
			if !ok || !as.IsBacked(a) || prot != v.Prot {
				t.Fatalf("page %#x: in backend %v (prot %v), backed %v, vma %+v", a, ok, prot, as.IsBacked(a), v)
			}
		}
	}
	for a, pg := range mb.pages {
		v, ok := as.Find(a)
		if !ok || !as.IsBacked(a) || pg.prot != v.Prot {
			t.Fatalf("backend page %#x (prot %v): vma %+v %v, backed %v", a, pg.prot, v, ok, as.IsBacked(a))
		}
		n++
	}
	if n != len(mb.pages) || uint64(n)*PageSize != as.Backed() {
		t.Fatalf("backend has %d pages, vmas have %d backed, Backed() %#x", len(mb.pages), n, as.Backed())
	}
}

func newAS() (*AddressSpace, *MemBackend) {
	mb := NewMemBackend()
	return New(mb), mb
}

func TestMapFixedReplaces(t *testing.T) {
	as, mb := newAS()
	if err := as.MapFixed(0x10000, 0x4000, rw, "", 0); err != nil {
		t.Fatal(err)
	}
	if err := mb.WriteMem(0x11000, []byte("old")); err != nil {
		t.Fatal(err)
	}
	// Replace the middle two pages with a file mapping.
	if err := as.MapFixed(0x11000, 0x2000, ProtRead, "/lib/x.so", 0x3000); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	got := as.VMAs()
	want := []VMA{
		{Start: 0x10000, End: 0x11000, Prot: rw},
		{Start: 0x11000, End: 0x13000, Prot: ProtRead, Name: "/lib/x.so", Offset: 0x3000},
		{Start: 0x13000, End: 0x14000, Prot: rw},
	}
	if len(got) != len(want) {
		t.Fatalf("vmas %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("vma %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	b := make([]byte, 3)
	_ = mb.ReadMem(0x11000, b)
	if string(b) != "\x00\x00\x00" {
		t.Errorf("replaced page not zeroed: %q", b)
	}
	if v, ok := as.Find(0x12fff); !ok || v.Name != "/lib/x.so" {
		t.Errorf("Find = %+v %v", v, ok)
	}
	if _, ok := as.Find(0x14000); ok {
		t.Error("Find past end succeeded")
	}
}

func TestUnmapSplitsAndHoles(t *testing.T) {
	as, mb := newAS()
	if err := as.MapFixed(0x100000, 0x10000, rw, "/f", 0); err != nil {
		t.Fatal(err)
	}
	if err := as.Unmap(0x104000, 0x2000); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	v := as.VMAs()
	if len(v) != 2 || v[0].End != 0x104000 || v[1].Start != 0x106000 || v[1].Offset != 0x6000 {
		t.Fatalf("after split: %+v", v)
	}
	// Unmapping across the hole and beyond is fine.
	if err := as.Unmap(0x0ff000, 0x8000); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	v = as.VMAs()
	if len(v) != 1 || v[0].Start != 0x107000 || v[0].Offset != 0x7000 {
		t.Fatalf("after hole unmap: %+v", v)
	}
	if err := as.Unmap(0x100001, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("unaligned unmap: %v", err)
	}
	// Unmapping nothing maps nothing in the backend.
	calls := len(mb.Calls)
	if err := as.Unmap(0x200000, 0x1000); err != nil || len(mb.Calls) != calls {
		t.Errorf("unmap of hole: %v, calls %v", err, mb.Calls[calls:])
	}
}

func TestProtect(t *testing.T) {
	as, mb := newAS()
	if err := as.MapFixed(0x400000, 0x5000, rw, "", 0); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x401000, 0x1000, ProtRead); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if n := len(as.VMAs()); n != 3 {
		t.Fatalf("want 3 vmas, got %+v", as.VMAs())
	}
	// Restoring the protection merges the areas again.
	if err := as.Protect(0x401000, 0x1000, rw); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if n := len(as.VMAs()); n != 1 {
		t.Fatalf("want 1 vma, got %+v", as.VMAs())
	}
	// A range that is not fully mapped fails and changes nothing.
	if err := as.Protect(0x404000, 0x2000, ProtRead); !errors.Is(err, ErrNoMem) {
		t.Fatalf("protect past end: %v", err)
	}
	consistent(t, as, mb)
	if v := as.VMAs(); v[0].Prot != rw {
		t.Errorf("failed protect changed %+v", v)
	}
}

func TestFindFree(t *testing.T) {
	as, mb := newAS()
	a, err := as.FindFree(0x3000, 0)
	if err != nil || a != MmapBase-0x3000 {
		t.Fatalf("first = %#x, %v", a, err)
	}
	if err := as.MapFixed(a, 0x3000, rw, "", 0); err != nil {
		t.Fatal(err)
	}
	b, _ := as.FindFree(0x1000, 0)
	if b != a-0x1000 {
		t.Errorf("second = %#x, want %#x", b, a-0x1000)
	}
	// A hole big enough is reused, top-down.
	if err := as.MapFixed(b, 0x1000, rw, "x", 0); err != nil {
		t.Fatal(err)
	}
	if err := as.Unmap(a+0x1000, 0x1000); err != nil {
		t.Fatal(err)
	}
	c, _ := as.FindFree(0x1000, 0)
	if c != a+0x1000 {
		t.Errorf("hole = %#x, want %#x", c, a+0x1000)
	}
	d, _ := as.FindFree(0x2000, 0)
	if d != b-0x2000 {
		t.Errorf("too big for hole = %#x, want %#x", d, b-0x2000)
	}
	// Hints are honoured when free, rounded down to a page.
	if h, _ := as.FindFree(0x1000, 0x600000123); h != 0x600000000 {
		t.Errorf("hint = %#x", h)
	}
	if h, _ := as.FindFree(0x1000, a); h == a {
		t.Errorf("occupied hint used")
	}
	consistent(t, as, mb)
}

func TestBrk(t *testing.T) {
	as, mb := newAS()
	if err := as.MapFixed(0x400000, 0x2000, rw, "/bin/p", 0); err != nil {
		t.Fatal(err)
	}
	as.SetBrk(0x401800)
	if got := as.Brk(0); got != 0x401800 {
		t.Fatalf("brk(0) = %#x", got)
	}
	if got := as.Brk(0x401900); got != 0x401900 {
		t.Fatalf("brk within page = %#x", got)
	}
	if got := as.Brk(0x405010); got != 0x405010 {
		t.Fatalf("brk grow = %#x", got)
	}
	consistent(t, as, mb)
	h, ok := as.Find(0x404000)
	if !ok || h.Name != "[heap]" || h.Start != 0x402000 || h.End != 0x406000 {
		t.Fatalf("heap = %+v", h)
	}
	if got := as.Brk(0x400000); got != 0x405010 {
		t.Errorf("brk below start = %#x", got)
	}
	// Growing into another mapping fails and keeps the old break.
	if err := as.MapFixed(0x408000, 0x1000, rw, "", 0); err != nil {
		t.Fatal(err)
	}
	if got := as.Brk(0x409000); got != 0x405010 {
		t.Errorf("brk over mapping = %#x", got)
	}
	if got := as.Brk(0x403000); got != 0x403000 {
		t.Errorf("brk shrink = %#x", got)
	}
	consistent(t, as, mb)
	if h, _ := as.Find(0x402000); h.End != 0x403000 {
		t.Errorf("heap after shrink = %+v", h)
	}
	if _, ok := as.Find(0x403000); ok {
		t.Error("page above shrunk break still mapped")
	}
}

func TestRemap(t *testing.T) {
	as, mb := newAS()
	if err := as.MapFixed(0x500000, 0x2000, rw, "", 0); err != nil {
		t.Fatal(err)
	}
	_ = mb.WriteMem(0x500ff0, []byte("contents across pages"))
	// Grow in place.
	a, err := as.Remap(0x500000, 0x2000, 0x3000, RemapHow{})
	if err != nil || a != 0x500000 {
		t.Fatalf("grow in place = %#x, %v", a, err)
	}
	consistent(t, as, mb)
	// Blocked: without MayMove it fails.
	if err := as.MapFixed(0x503000, 0x1000, ProtRead, "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := as.Remap(0x500000, 0x3000, 0x5000, RemapHow{}); !errors.Is(err, ErrNoMem) {
		t.Fatalf("blocked grow: %v", err)
	}
	// With MayMove the contents move.
	a, err = as.Remap(0x500000, 0x3000, 0x5000, RemapHow{MayMove: true})
	if err != nil || a == 0x500000 {
		t.Fatalf("move = %#x, %v", a, err)
	}
	consistent(t, as, mb)
	got := make([]byte, 21)
	if err := mb.ReadMem(a+0xff0, got); err != nil || string(got) != "contents across pages" {
		t.Fatalf("moved contents %q, %v", got, err)
	}
	if _, ok := as.Find(0x500000); ok {
		t.Error("old range still mapped")
	}
	// Shrink.
	if b, err := as.Remap(a, 0x5000, 0x1000, RemapHow{}); err != nil || b != a {
		t.Fatalf("shrink = %#x, %v", b, err)
	}
	consistent(t, as, mb)
	// Fixed.
	b, err := as.Remap(a, 0x1000, 0x1000, RemapHow{MayMove: true, Fixed: true, NewAddr: 0x700000})
	if err != nil || b != 0x700000 {
		t.Fatalf("fixed = %#x, %v", b, err)
	}
	consistent(t, as, mb)
	_ = mb.ReadMem(0x700ff0, got[:8])
	if !bytes.Equal(got[:8], []byte("contents")) {
		t.Errorf("fixed contents %q", got[:8])
	}
	// A source spanning two areas is a fault.
	if _, err := as.Remap(0x700000, 0x2000, 0x3000, RemapHow{MayMove: true}); !errors.Is(err, ErrFault) {
		t.Errorf("spanning remap: %v", err)
	}
}
