package mm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const tib = 1 << 40

// A PROT_NONE reservation of 1 TiB is bookkeeping only; the pieces made
// accessible are backed, keep their contents through PROT_NONE and back,
// and go away with munmap.
func TestReservationBackedWhenAccessible(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	base, err := as.FindFree(tib, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := as.Map(VMA{Start: base, End: base + tib}); err != nil {
		t.Fatalf("reserving 1 TiB: %v", err)
	}
	if len(mb.Calls) != 0 || as.Backed() != 0 {
		t.Fatalf("a reservation reached the backend: %v", mb.Calls)
	}
	mid := base + tib/2
	if err := as.Protect(mid, 3*PageSize, rw); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if want := []string{"map 0x" + hex(mid) + "+0x3000 rw-"}; strings.Join(mb.Calls, ";") != want[0] {
		t.Fatalf("calls %v, want %v", mb.Calls, want)
	}
	if err := as.Mem().WriteMem(mid+10, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(mid, 3*PageSize, ProtNone); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(mid, 2*PageSize, ProtRead); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	got := make([]byte, 5)
	if err := mb.ReadMem(mid+10, got); err != nil || string(got) != "hello" {
		t.Fatalf("contents after PROT_NONE and back: %q, %v", got, err)
	}
	if as.Backed() != 3*PageSize {
		t.Fatalf("backed %#x, want 3 pages", as.Backed())
	}
	// /proc/self/maps: the reservation with the readable piece inside,
	// the third page merged back into it, as Linux shows it.
	if n := len(as.VMAs()); n != 3 {
		t.Fatalf("%d areas: %+v", n, as.VMAs())
	}
	if err := as.Unmap(base, tib); err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if len(mb.pages) != 0 || as.Backed() != 0 {
		t.Fatalf("pages left after munmap: %d", len(mb.pages))
	}
}

func hex(a uint64) string { return strings.TrimPrefix(strings.ToLower(formatHex(a)), "0x") }

func formatHex(a uint64) string {
	const digits = "0123456789abcdef"
	if a == 0 {
		return "0"
	}
	var b []byte
	for ; a > 0; a >>= 4 {
		b = append([]byte{digits[a&15]}, b...)
	}
	return string(b)
}

// The kernel's view (Mem) reads unbacked pages as zeros and backs them
// only to store something that is not zero.
func TestMemBacksOnNonZeroWrite(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	if err := as.Map(VMA{Start: 0x100000, End: 0x200000}); err != nil {
		t.Fatal(err)
	}
	m := as.Mem()
	buf := []byte{1, 2, 3}
	if err := m.ReadMem(0x100ffe, buf); err != nil || !bytes.Equal(buf, []byte{0, 0, 0}) {
		t.Fatalf("read of unbacked pages: %v %v", buf, err)
	}
	if err := m.WriteMem(0x100000, make([]byte, 3*PageSize)); err != nil || as.Backed() != 0 {
		t.Fatalf("zeros backed pages: %v, backed %#x", err, as.Backed())
	}
	if err := m.WriteMem(0x100ffe, []byte{7, 8, 9}); err != nil {
		t.Fatal(err)
	}
	if as.Backed() != 2*PageSize {
		t.Fatalf("backed %#x, want the two pages written", as.Backed())
	}
	consistent(t, as, mb)
	got := make([]byte, 5)
	if err := m.ReadMem(0x100ffd, got); err != nil || !bytes.Equal(got, []byte{0, 7, 8, 9, 0}) {
		t.Fatalf("read back %v %v", got, err)
	}
	if err := m.ReadMem(0x200000, got); err == nil {
		t.Fatal("read past the mapping succeeded")
	}
}

// The limit on backed memory makes mmap, mprotect and brk fail with
// ErrNoMem and change nothing; reservations are free.
func TestLimit(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	as.SetLimit(16 * PageSize)
	if err := as.Map(VMA{Start: 0x100000, End: 0x100000 + tib}); err != nil {
		t.Fatalf("reservation under a limit: %v", err)
	}
	if err := as.Map(VMA{Start: 0x10000, End: 0x10000 + 17*PageSize, Prot: rw}); !errors.Is(err, ErrNoMem) {
		t.Fatalf("map over the limit: %v", err)
	}
	if err := as.Map(VMA{Start: 0x10000, End: 0x10000 + 10*PageSize, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x100000, 7*PageSize, rw); !errors.Is(err, ErrNoMem) {
		t.Fatalf("mprotect over the limit: %v", err)
	}
	consistent(t, as, mb)
	if err := as.Protect(0x100000, 6*PageSize, rw); err != nil {
		t.Fatal(err)
	}
	// Replacing backed memory frees what it replaces.
	if err := as.Map(VMA{Start: 0x10000, End: 0x10000 + 10*PageSize, Prot: ProtRead}); err != nil {
		t.Fatalf("replacing within the limit: %v", err)
	}
	as.SetBrk(0x80000)
	if got := as.Brk(0x80000 + PageSize); got != 0x80000 {
		t.Fatalf("brk past the limit moved to %#x", got)
	}
	consistent(t, as, mb)
}

// Fork copies backed pages only; the child's reservations stay unbacked.
func TestForkLazy(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	if err := as.Map(VMA{Start: 0x100000, End: 0x100000 + tib}); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x200000, PageSize, rw); err != nil {
		t.Fatal(err)
	}
	if err := as.Mem().WriteMem(0x200010, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x200000, PageSize, ProtNone); err != nil {
		t.Fatal(err)
	}
	cb := NewMemBackend()
	child, copied, err := as.Fork(cb)
	if err != nil {
		t.Fatal(err)
	}
	consistent(t, child, cb)
	if copied != PageSize || child.Backed() != PageSize || child.Limit() != as.Limit() {
		t.Fatalf("copied %#x, backed %#x", copied, child.Backed())
	}
	b := make([]byte, 1)
	if err := cb.ReadMem(0x200010, b); err != nil || b[0] != 'x' {
		t.Fatalf("child's copy %q %v", b, err)
	}
}

// mremap moves the backed pages of a PROT_NONE area with their contents.
func TestRemapKeepsBackedPages(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	if err := as.Map(VMA{Start: 0x100000, End: 0x200000}); err != nil {
		t.Fatal(err)
	}
	if err := as.Map(VMA{Start: 0x200000, End: 0x201000, Prot: ProtRead}); err != nil {
		t.Fatal(err) // in the way of growing in place
	}
	if err := as.Protect(0x180000, PageSize, rw); err != nil {
		t.Fatal(err)
	}
	if err := as.Mem().WriteMem(0x180000, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x180000, PageSize, ProtNone); err != nil {
		t.Fatal(err)
	}
	dst, err := as.Remap(0x100000, 0x100000, 0x200000, RemapHow{MayMove: true})
	if err != nil {
		t.Fatal(err)
	}
	consistent(t, as, mb)
	if as.Backed() != 2*PageSize {
		t.Fatalf("backed %#x: want the moved page and the blocker", as.Backed())
	}
	b := make([]byte, 4)
	if err := mb.ReadMem(dst+0x80000, b); err != nil || string(b) != "kept" {
		t.Fatalf("moved contents %q %v", b, err)
	}
}

// spans agrees with a page bitmap under random adds and removes.
func TestSpansModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s spans
	var model [64]bool
	for step := 0; step < 5000; step++ {
		lo := r.Uint64N(64)
		hi := lo + r.Uint64N(64-lo) + 1
		add := r.IntN(2) == 0
		if add {
			s.add(lo, hi)
		} else {
			s.remove(lo, hi)
		}
		for i := lo; i < hi; i++ {
			model[i] = add
		}
		for i := uint64(0); i < 64; i++ {
			if (s.covered(i, i+1) == 1) != model[i] {
				t.Fatalf("step %d: page %d covered %v, model %v (spans %v)", step, i, !model[i], model[i], s)
			}
		}
		for i := range s {
			if s[i].lo >= s[i].hi || (i > 0 && s[i-1].hi >= s[i].lo) {
				t.Fatalf("step %d: bad spans %v", step, s)
			}
		}
	}
}

// A read-write MAP_NORESERVE area is backed a chunk at a time as it is
// touched, within the limit.
func TestNoReserveTouch(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	as.SetLimit(2 * touchChunk)
	base := uint64(0x10000000)
	if err := as.Map(VMA{Start: base, End: base + tib, Prot: rw, NoReserve: true}); err != nil {
		t.Fatalf("1 TiB read-write NORESERVE: %v", err)
	}
	if as.Backed() != 0 {
		t.Fatalf("backed %#x at mmap", as.Backed())
	}
	if ok, err := as.Touch(base+tib/2+5, 1); !ok || err != nil {
		t.Fatalf("touch: %v %v", ok, err)
	}
	if ok, _ := as.Touch(base+tib/2+7, 4); ok {
		t.Fatal("a backed page touched again")
	}
	if as.Backed() != touchChunk || !as.IsBacked(base+tib/2) || !as.IsBacked(base+tib/2+touchChunk-1) {
		t.Fatalf("backed %#x", as.Backed())
	}
	consistent(t, as, mb)
	if ok, err := as.Touch(base, 8); !ok || err != nil {
		t.Fatal(err)
	}
	if _, err := as.Touch(base+3*touchChunk, 1); !errors.Is(err, ErrNoMem) {
		t.Fatalf("touch past the limit: %v", err)
	}
	// mprotect does not back it; the areas keep NoReserve apart.
	if err := as.Protect(base+tib-touchChunk, touchChunk, ProtRead); err != nil || as.Backed() != 2*touchChunk {
		t.Fatalf("mprotect: %v, backed %#x", err, as.Backed())
	}
	consistent(t, as, mb)
}

// zeroer is a MemBackend with ZeroPages (PageZeroer), recording its calls.
type zeroer struct {
	*MemBackend
	zeroed []string
}

func (z *zeroer) ZeroPages(addr, size uint64) error {
	z.zeroed = append(z.zeroed, fmt.Sprintf("%#x+%#x", addr, size))
	return z.MemBackend.WriteMem(addr, make([]byte, size))
}

// Mem's ZeroPages (MADV_DONTNEED) zeroes the pages of the range, the end
// rounded up to a page, in an ordinary area, a PROT_NONE one with a
// backed part and a MAP_NORESERVE one partly touched: the Backend's
// ZeroPages (or written zeros) for the backed parts only, the rest read as
// zeros already. What is backed and the backed bytes do not change.
func TestZeroPages(t *testing.T) {
	for _, fast := range []bool{false, true} {
		mb := NewMemBackend()
		var b Backend = mb
		z := &zeroer{MemBackend: mb}
		if fast {
			b = z
		}
		as := New(b)
		const base = 0x10000000
		// [base, +64K) read-write; [+64K, +128K) PROT_NONE, its second
		// quarter made read-write then PROT_NONE again (backed, kept);
		// [+128K, +1M) read-write MAP_NORESERVE, one page touched.
		if err := as.Map(VMA{Start: base, End: base + 64<<10, Prot: rw}); err != nil {
			t.Fatal(err)
		}
		if err := as.Map(VMA{Start: base + 64<<10, End: base + 128<<10, Prot: ProtNone}); err != nil {
			t.Fatal(err)
		}
		if err := as.Protect(base+80<<10, 16<<10, rw); err != nil {
			t.Fatal(err)
		}
		if err := as.Map(VMA{Start: base + 128<<10, End: base + 1<<20, Prot: rw, NoReserve: true}); err != nil {
			t.Fatal(err)
		}
		if ok, err := as.Touch(base+200<<10, 1); !ok || err != nil {
			t.Fatalf("touch: %v %v", ok, err)
		}
		mem := as.Mem()
		pattern := make([]byte, 1<<20)
		for i := range pattern {
			pattern[i] = byte(i%251 + 1)
		}
		// Store the pattern where it is backed (the kernel's writes
		// would back the rest).
		for _, s := range as.backed.in(base, base+1<<20) {
			if err := mem.WriteMem(s.lo, pattern[s.lo-base:s.hi-base]); err != nil {
				t.Fatal(err)
			}
		}
		if err := as.Protect(base+80<<10, 16<<10, ProtNone); err != nil {
			t.Fatal(err)
		}
		backed, spans := as.Backed(), append(spans{}, as.backed...)
		want := make([]byte, 1<<20)
		if err := mem.ReadMem(base, want); err != nil {
			t.Fatal(err)
		}
		// From the second page to 5 bytes into the page at +208K: up to +212K.
		lo, hi := uint64(base+4096), uint64(base+208<<10+5)
		if err := mem.(PageZeroer).ZeroPages(lo, hi-lo); err != nil {
			t.Fatal(err)
		}
		clear(want[lo-base : PageUp(hi)-base])
		got := make([]byte, 1<<20)
		if err := mem.ReadMem(base, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("fast %v: byte at +%#x is %d, want %d", fast, i, got[i], want[i])
		}
		if as.Backed() != backed || !slices.Equal(as.backed, spans) {
			t.Fatalf("fast %v: backed %#x %v, was %#x %v", fast, as.Backed(), as.backed, backed, spans)
		}
		// The Backend zeroed the backed parts only.
		if w := "0x10001000+0xf000 0x10014000+0x4000 0x10030000+0x5000"; fast && strings.Join(z.zeroed, " ") != w {
			t.Fatalf("ZeroPages calls %q, want %q", z.zeroed, w)
		}
		consistent(t, as, mb)
		if err := mem.(PageZeroer).ZeroPages(base+1<<20-4096, 8192); !errors.Is(err, ErrNoMem) {
			t.Fatalf("zeroing past the mapping: %v", err)
		}
		if err := mem.(PageZeroer).ZeroPages(base+1, 4096); !errors.Is(err, ErrInvalid) {
			t.Fatalf("zeroing from an unaligned address: %v", err)
		}
	}
}

// forker is a MemBackend with ForkPages (PageForker): it records the
// ranges asked for and maps them with the parent's bytes, or declines.
type forker struct {
	*MemBackend
	decline bool
	asked   []Range
}

func (f *forker) ForkPages(from Backend, rs []Range) (uint64, error) {
	if f.decline {
		return 0, fmt.Errorf("no: %w", errors.ErrUnsupported)
	}
	f.asked = append(f.asked, rs...)
	for _, r := range rs {
		p := make([]byte, r.Size)
		if err := from.ReadMem(r.Addr, p); err != nil {
			return 0, err
		}
		if err := f.MapPages(r.Addr, r.Size, r.Prot); err != nil {
			return 0, err
		}
		if err := f.WriteMem(r.Addr, p); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Fork hands the backed ranges of private areas, with their protections,
// to a PageForker, and copies nothing itself; when it declines, Fork
// copies the pages holding a non-zero byte as without one.
func TestForkUsesPageForker(t *testing.T) {
	mb := NewMemBackend()
	as := New(mb)
	if err := as.Map(VMA{Start: 0x100000, End: 0x110000, Prot: rw}); err != nil {
		t.Fatal(err)
	}
	if err := as.Map(VMA{Start: 0x200000, End: 0x100000 + tib}); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(0x300000, 2*PageSize, ProtRead); err != nil {
		t.Fatal(err)
	}
	if err := as.Mem().WriteMem(0x100010, []byte("x")); err != nil {
		t.Fatal(err)
	}
	cb := &forker{MemBackend: NewMemBackend()}
	child, copied, err := as.Fork(cb)
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{{0x100000, 0x10000, rw}, {0x300000, 2 * PageSize, ProtRead}}
	if !slices.Equal(cb.asked, want) || copied != 0 {
		t.Fatalf("asked %v, copied %d; want %v, 0", cb.asked, copied, want)
	}
	consistent(t, child, cb.MemBackend)
	if child.Backed() != as.Backed() {
		t.Errorf("child backs %#x, parent %#x", child.Backed(), as.Backed())
	}
	db := &forker{MemBackend: NewMemBackend(), decline: true}
	child, copied, err = as.Fork(db)
	if err != nil || copied != PageSize {
		t.Fatalf("declined: copied %d, %v; want one page", copied, err)
	}
	consistent(t, child, db.MemBackend)
	b := make([]byte, 1)
	if err := db.ReadMem(0x100010, b); err != nil || b[0] != 'x' {
		t.Fatalf("child's copy %q %v", b, err)
	}
}
