package emu

import (
	"errors"
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
)

// Adjacent mappings with one protection become one Unicorn region; a
// protection change splits in place (contents kept) and merges back.
func TestRegionsCoalesce(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const base, page = 0x10000000, 0x1000
	rw := mm.ProtRead | mm.ProtWrite
	for i := uint64(0); i < 8; i++ {
		if err := e.MapPages(base+i*page, page, rw); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.Regions(); n != 1 {
		t.Fatalf("8 adjacent pages: %d regions", n)
	}
	if err := e.WriteMem(base+3*page, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := e.ProtectPages(base+3*page, page, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	if n := e.Regions(); n != 3 {
		t.Fatalf("after mprotect of a page: %d regions", n)
	}
	if err := e.ProtectPages(base+3*page, page, rw); err != nil {
		t.Fatal(err)
	}
	if n := e.Regions(); n != 1 {
		t.Fatalf("after mprotect back: %d regions", n)
	}
	b := make([]byte, 4)
	if err := e.ReadMem(base+3*page, b); err != nil || string(b) != "kept" {
		t.Fatalf("contents %q %v", b, err)
	}
	if err := e.UnmapPages(base+2*page, 2*page); err != nil {
		t.Fatal(err)
	}
	if n := e.Regions(); n != 2 {
		t.Fatalf("after unmapping a hole: %d regions", n)
	}
	// A remapped page is fresh (zero), not what the host memory held.
	if err := e.MapPages(base+3*page, page, rw); err != nil {
		t.Fatal(err)
	}
	if err := e.ReadMem(base+3*page, b); err != nil || string(b) != "\x00\x00\x00\x00" {
		t.Fatalf("remapped page %q %v", b, err)
	}
}

// Past the most regions (maxRegions), mapping fails with an error wrapping mm.ErrNoMem (the
// guest's ENOMEM) instead of QEMU's assertion.
func TestTooManyRegions(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.mem.max = 64 // Unicorn's mapping gets slow with thousands of regions
	var i uint64
	for ; i < 64+10; i++ {
		prot := mm.ProtRead
		if i%2 == 1 {
			prot |= mm.ProtWrite
		}
		if err = e.MapPages(0x10000000+i*0x1000, 0x1000, prot); err != nil {
			break
		}
	}
	if !errors.Is(err, mm.ErrNoMem) || i != 64 {
		t.Fatalf("after %d regions: %v", i, err)
	}
}

// SetTouch's function maps the page a store faults on, from inside the
// engine: the store is made again and the run goes on to the syscall.
func TestTouchMapsInsideTheEngine(t *testing.T) {
	const lazy = 0x40000000
	// movabs rdx, lazy; mov qword [rdx+8], 0x2a; mov rax, [rdx+8]; syscall
	code := []byte{0x48, 0xba, 0, 0, 0, 0x40, 0, 0, 0, 0,
		0x48, 0xc7, 0x42, 0x08, 0x2a, 0, 0, 0,
		0x48, 0x8b, 0x42, 0x08,
		0x0f, 0x05}
	e := newEngine(t, Options{Blocks: true}, code)
	var asked []uint64
	e.SetTouch(func(addr, size uint64) bool {
		asked = append(asked, addr)
		return addr>>12 == lazy>>12 && e.MapPages(lazy, 0x1000, mm.ProtRead|mm.ProtWrite) == nil
	})
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || s.Err != nil {
		t.Fatalf("stop = %+v", s)
	}
	var r cpu.Regs
	if err := e.ReadRegs(&r); err != nil || r.RAX != 0x2a {
		t.Fatalf("rax %#x (%v), want 0x2a", r.RAX, err)
	}
	if len(asked) != 1 || asked[0] != lazy+8 {
		t.Fatalf("touch asked for %#x", asked)
	}
}

// A touch function that maps nothing leaves the fault a fault.
func TestTouchDeclined(t *testing.T) {
	// mov rax, [0x50000000]
	e := newEngine(t, Options{}, []byte{0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0x50})
	e.SetTouch(func(uint64, uint64) bool { return false })
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopFault || s.FaultAddr != 0x50000000 {
		t.Fatalf("stop = %+v, want a read fault", s)
	}
}

// ZeroPages zeroes without writing: the data reads as zeros, the regions
// and their protections stay, and translated code from the range is
// dropped even when the range starts on a page that is not executable
// (the code page's old block would otherwise run again instead of the
// zeros now there).
func TestZeroPages(t *testing.T) {
	e, err := New(Options{Blocks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const data, code, ro = 0x30000, 0x32000, 0x33000
	if err := e.MapPages(data, 0x2000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(code, 0x1000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(ro, 0x1000, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	pattern := make([]byte, 0x4000)
	for i := range pattern {
		pattern[i] = byte(i*7 + 1)
	}
	if err := e.WriteMem(data, pattern[:0x2000]); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(ro, pattern[:0x1000]); err != nil {
		t.Fatal(err)
	}
	// mov eax, 1; syscall
	if err := e.WriteMem(code, []byte{0xb8, 1, 0, 0, 0, 0x0f, 0x05}); err != nil {
		t.Fatal(err)
	}
	var r cpu.Regs
	if s := e.Run(code, 0); s.Reason != cpu.StopSyscall || s.Err != nil {
		t.Fatalf("first run: %+v", s)
	}
	if err := e.ReadRegs(&r); err != nil || r.RAX != 1 {
		t.Fatalf("rax %#x (%v)", r.RAX, err)
	}
	regions := e.Regions()
	// The second data page and the code page; the first data page and
	// the read-only page keep their bytes.
	if err := e.ZeroPages(data+0x1000, 0x2000); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0x4000)
	if err := e.ReadMem(data, got); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte{}, pattern[:0x1000]...), make([]byte, 0x2000)...), pattern[:0x1000]...)
	if string(got) != string(want) {
		t.Fatalf("after ZeroPages: bytes differ from the pattern with zeros in the middle")
	}
	if n := e.Regions(); n != regions {
		t.Fatalf("regions %d, want %d", n, regions)
	}
	// The code page now holds zeros: add [rax], al with rax = 1 faults at 1.
	r.RAX = 1
	if err := e.WriteRegs(&r); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(code, 0); s.Reason != cpu.StopFault || s.FaultAddr != 1 {
		t.Fatalf("running the zeroed code page: %+v (the old translation ran?)", s)
	}
	// Pages zeroed are zero-filled again when written, and still mapped.
	if err := e.WriteMem(data+0x1ffc, []byte("abcd")); err != nil {
		t.Fatal(err)
	}
	if err := e.ReadMem(data+0x1ffa, got[:6]); err != nil || string(got[:6]) != "\x00\x00abcd" {
		t.Fatalf("written after zeroing: %q %v", got[:6], err)
	}
	if err := e.ZeroPages(ro+0x1000, 0x1000); err == nil {
		t.Fatal("zeroing unmapped memory succeeded")
	}
}

// A write through WriteMem (the kernel's: read(2) into a buffer) into code
// that already ran is what runs next: its translation is dropped, which
// Unicorn's uc_mem_write alone does not do.
func TestWriteMemRetranslates(t *testing.T) {
	// mov eax, 1; syscall
	e := newEngine(t, Options{Blocks: true}, []byte{0xb8, 1, 0, 0, 0, 0x0f, 0x05})
	var r cpu.Regs
	for _, want := range []byte{1, 2, 3} {
		if want > 1 {
			if err := e.WriteMem(codeAddr+1, []byte{want}); err != nil {
				t.Fatal(err)
			}
		}
		if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall || s.Err != nil {
			t.Fatalf("run: %+v", s)
		}
		if err := e.ReadRegs(&r); err != nil || r.RAX != uint64(want) {
			t.Fatalf("rax %#x (%v), want %d: the old translation ran", r.RAX, err, want)
		}
	}
}

// Code made non-executable by a range that starts on a page without code
// is forgotten too: written again by the kernel and made executable, the
// new code runs, not the old translation (Unicorn's removal of
// translations looks a range up through its first page).
func TestProtectForgetsCodeAfterItsFirstPage(t *testing.T) {
	e := newEngine(t, Options{Blocks: true}, nil)
	const data, code = 0x40000, 0x41000
	if err := e.MapPages(data, 0x1000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(code, 0x1000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	run := func(imm byte) uint64 {
		t.Helper()
		// mov eax, imm; syscall
		if err := e.WriteMem(code, []byte{0xb8, imm, 0, 0, 0, 0x0f, 0x05}); err != nil {
			t.Fatal(err)
		}
		if s := e.Run(code, 0); s.Reason != cpu.StopSyscall || s.Err != nil {
			t.Fatalf("run: %+v", s)
		}
		var r cpu.Regs
		if err := e.ReadRegs(&r); err != nil {
			t.Fatal(err)
		}
		return r.RAX
	}
	if got := run(1); got != 1 {
		t.Fatalf("rax %d, want 1", got)
	}
	if err := e.ProtectPages(data, 0x2000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.ProtectPages(code, 0x1000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if got := run(2); got != 2 {
		t.Errorf("rax %d, want 2: the old translation ran", got)
	}
}

// Shared memory (MapSharedPages) mapped into a second engine
// (SharePages) is one memory: each engine sees the other's stores, also
// after the area is split by mprotect and partly unmapped, and it lives
// while one engine maps part of it, whichever closes first. An engine's
// own memory lent to a vfork child's engine stays valid for the child
// after the lender unmaps it and closes.
func TestSharePages(t *testing.T) {
	newEngine := func() *Engine {
		e, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	const base, page = 0x20000000, 0x1000
	rw := mm.ProtRead | mm.ProtWrite
	read := func(e *Engine, a uint64) string {
		b := make([]byte, 4)
		if err := e.ReadMem(a, b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := newEngine(), newEngine()
	defer b.Close()
	if err := a.MapSharedPages(base, 4*page, rw); err != nil {
		t.Fatal(err)
	}
	if err := b.SharePages(base, 4*page, rw, a); err != nil {
		t.Fatal(err)
	}
	if err := b.ProtectPages(base+page, page, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteMem(base+2*page, []byte("from")); err != nil {
		t.Fatal(err)
	}
	if got := read(a, base+2*page); got != "from" {
		t.Fatalf("a reads %q where b stored", got)
	}
	if err := a.WriteMem(base+3*page, []byte("back")); err != nil {
		t.Fatal(err)
	}
	if err := a.UnmapPages(base, page); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := read(b, base+3*page); got != "back" {
		t.Fatalf("b reads %q where a stored, a closed", got)
	}

	// Lent memory: the lender unmaps and closes, the borrower reads on.
	l, c := newEngine(), newEngine()
	defer c.Close()
	if err := l.MapPages(base, 2*page, rw); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteMem(base+page, []byte("lent")); err != nil {
		t.Fatal(err)
	}
	if err := c.SharePages(base, 2*page, rw, l); err != nil {
		t.Fatal(err)
	}
	if err := l.UnmapPages(base, 2*page); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := read(c, base+page); got != "lent" {
		t.Fatalf("borrower reads %q", got)
	}
	if err := c.UnmapPages(base, 2*page); err != nil {
		t.Fatal(err)
	}
}

// Resident tells the pages written from those never touched, which a
// fork does not read.
func TestResident(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const base, page = 0x30000000, 0x1000
	if err := e.MapPages(base, 64*page, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(base+5*page+7, []byte{1}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resident(base, 64*page)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r != (i == 5) {
			t.Errorf("page %d: resident %v", i, r)
		}
	}
}
