package mm

import "testing"

// A file mapping's pages past the end of the file stay unbacked whatever
// is done to them (mprotect, fork, mremap), until unmapped: the CPU
// faults there (SIGBUS), and the kernel's accesses stop before them.
func TestPastEOFNeverBacked(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	const base, eof, end = 0x100000, 0x102000, 0x105000
	v := VMA{Start: base, End: end, Prot: ProtRead, Name: "/f", File: new(int)}
	if err := as.MapFile(v, eof); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if as.Backed() != eof-base || !as.PastEOF(eof) || !as.PastEOF(end-1) || as.PastEOF(eof-1) {
		t.Fatalf("backed %#x; past EOF at %#x: %v", as.Backed(), eof, as.PastEOF(eof))
	}
	if n := len(as.VMAs()); n != 1 {
		t.Fatalf("%d areas, want the one mapping: %+v", n, as.VMAs())
	}
	if got := as.PastEOFIn(eof-10, 100); got != 10 {
		t.Fatalf("PastEOFIn: %d bytes before the end of the file, want 10", got)
	}
	if err := as.Protect(base, end-base, rw); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if as.Backed() != eof-base {
		t.Fatalf("mprotect backed pages past the end of the file: %#x", as.Backed())
	}
	child, _, err := as.Fork(NewMemBackend())
	if err != nil {
		t.Fatal(err)
	}
	if !child.PastEOF(eof) || child.Backed() != eof-base {
		t.Fatalf("child: past EOF %v, backed %#x", child.PastEOF(eof), child.Backed())
	}
	// Moved by mremap, they are past the end at their new place only.
	if err := as.Map(VMA{Start: end, End: end + PageSize, Prot: ProtRead}); err != nil {
		t.Fatal(err) // in the way of growing in place
	}
	dst, err := as.Remap(base, end-base, end-base+PageSize, RemapHow{MayMove: true})
	if err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if as.PastEOF(eof) || !as.PastEOF(dst+eof-base) || !as.PastEOF(dst+end-base-1) || as.PastEOF(dst+eof-base-1) {
		t.Fatalf("after mremap to %#x: past EOF at the old place %v, at the new %v", dst, as.PastEOF(eof), as.PastEOF(dst+eof-base))
	}
	if err := as.Unmap(dst, end-base+PageSize); err != nil {
		t.Fatal(err)
	}
	if as.PastEOF(dst + eof - base) {
		t.Fatal("unmapped pages still past the end of a file")
	}
	// A new mapping there is backed as any other.
	if err := as.Map(VMA{Start: dst, End: dst + end - base, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
}

// A mapped file that grows has its pages back below its new end (zeros,
// for the kernel to fill); one truncated loses those past it.
func TestSetFileEnd(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	const base, end = 0x100000, 0x104000
	if err := as.MapFile(VMA{Start: base, End: end, Prot: rw, Name: "/f", Shared: true, File: new(int)}, base+PageSize); err != nil {
		t.Fatal(err)
	}
	if err := as.Mem().WriteMem(base, []byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := as.SetFileEnd(base, end, base+2*PageSize+1); err != nil { // grew into its third page
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if as.PastEOF(base+2*PageSize) != false || !as.PastEOF(base+3*PageSize) || as.Backed() != 3*PageSize {
		t.Fatalf("grown: past EOF %v %v, backed %#x", as.PastEOF(base+2*PageSize), as.PastEOF(base+3*PageSize), as.Backed())
	}
	if err := as.SetFileEnd(base, end, base); err != nil { // truncated to nothing
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if !as.PastEOF(base) || as.Backed() != 0 {
		t.Fatalf("truncated: past EOF %v, backed %#x", as.PastEOF(base), as.Backed())
	}
	if err := as.SetFileEnd(base, end, end); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if err := as.Mem().ReadMem(base, b); err != nil || string(b) != "\x00\x00\x00\x00" {
		t.Fatalf("after truncation and growth: %q %v, want zeros", b, err)
	}
}
