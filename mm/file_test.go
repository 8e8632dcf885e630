package mm

import "testing"

// TestFileHandle: a VMA's File handle survives splits, growth and moves,
// and areas with different handles do not merge.
func TestFileHandle(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	h1, h2 := new(int), new(int)
	const base = 0x100000
	if err := as.Map(VMA{Start: base, End: base + 3*PageSize, Prot: rw, Name: "/f", Shared: true, File: h1}); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(base+PageSize, PageSize, ProtRead); err != nil {
		t.Fatal(err)
	}
	for _, v := range as.VMAs() {
		if v.File != h1 {
			t.Fatalf("split lost the handle: %+v", v)
		}
	}
	if err := as.Protect(base+PageSize, PageSize, rw); err != nil {
		t.Fatal(err)
	}
	// The same file at the next offset, through another handle.
	if err := as.Map(VMA{Start: base + 3*PageSize, End: base + 4*PageSize, Prot: rw, Name: "/f", Offset: 3 * PageSize, Shared: true, File: h2}); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if n := len(as.VMAs()); n != 2 {
		t.Fatalf("%d vmas, want 2 (one per handle): %+v", n, as.VMAs())
	}
	a, err := as.Remap(base, 3*PageSize, 5*PageSize, RemapHow{MayMove: true})
	if err != nil {
		t.Fatal(err)
	}
	// It moved (h2's area is in the way) and grew.
	v, _ := as.Find(a + 4*PageSize)
	if a == base || v.File != h1 || v.Start != a || v.End != a+5*PageSize || v.Offset != 0 {
		t.Errorf("moved vma %+v at %#x, want 5 pages with handle h1", v, a)
	}
	consistent(t, as, mb)
}
