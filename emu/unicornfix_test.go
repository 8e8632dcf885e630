package emu

import (
	"fmt"
	"runtime"
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/trace"
)

// Stores to a page that may hold translated code (here RWX) reach QEMU's
// page-collection lock and Unicorn's memory_mapping on Unicorn 2.0.1:
// libunicorn must call unicornfix.c's allocation-free lock and cached
// lookup, not its own.
func TestStoresUseUnicornfix(t *testing.T) {
	skipUnlessUnicorn201(t)
	e := newEngine(t, Options{}, loopCode)
	if err := e.ProtectPages(0x20000, 0x1000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	before, hits := pageCollections(), mappingHits()
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	// loopCode adds to [0x20000] 1000 times.
	if got := pageCollections() - before; got < 1000 {
		t.Fatalf("libunicorn called unicornfix.c's page_collection_lock %d times for 1000 stores: its own ran (is the executable linked with -rdynamic?)", got)
	}
	if got := mappingHits() - hits; got < 900 {
		t.Fatalf("memory_mapping's cache found %d regions for 1000 stores to one page", got)
	}
	if got := loopSum(t, e); got != 500500 {
		t.Fatalf("sum %d, want 500500", got)
	}
}

// Stores to a writable page that is not executable take the generated
// code's fast path (no store helper, so no page-collection lock), and
// the page's protection still holds after it changes: read-only, the
// same store faults; writable again, it works; executable too, its
// stores take the slow path again.
func TestStoresTakeFastPath(t *testing.T) {
	skipUnlessUnicorn201(t)
	e := newEngine(t, Options{}, loopCode)
	before, fills := pageCollections(), cleanedFills()
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	if got := pageCollections() - before; got != 0 {
		t.Fatalf("%d of 1000 stores to a writable, non-executable page took the store helper's not-dirty path", got)
	}
	if cleanedFills() == fills {
		t.Fatal("no TLB fill was made clean")
	}
	if err := e.ProtectPages(0x20000, 0x1000, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopFault {
		t.Fatalf("store to the page made read-only: stop %+v, want a fault", s)
	}
	if err := e.ProtectPages(0x20000, 0x1000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("run with the page writable again: stop %+v", s)
	}
	// Executable, the page may hold translations: its stores check them.
	// (The whole mapping: Unicorn then changes the region in place.)
	if err := e.ProtectPages(0x20000, 0x2000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	before = pageCollections()
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("run with the page executable: stop %+v", s)
	}
	if got := pageCollections() - before; got < 1000 {
		t.Fatalf("%d of 1000 stores to a page made executable checked for translations", got)
	}
	if got := loopSum(t, e); got != 3*500500 {
		t.Fatalf("sum %d after three loops, want %d", got, 3*500500)
	}
}

// A program that uses more memory at a time than the TLB's first 256
// entries cover (here 1024 pages, stored to 100 times each) makes QEMU
// grow the TLB (unicornfix.c's flush every FILLS_PER_FLUSH fills): most of
// its 102,400 stores hit it, and without growth every one misses.
func TestTLBGrows(t *testing.T) {
	skipUnlessUnicorn201(t)
	e := newEngine(t, Options{}, []byte{
		0xba, 100, 0, 0, 0, // mov edx, 100
		0x48, 0xc7, 0xc0, 0, 0, 0, 0x01, // outer: mov rax, 0x1000000
		0xb9, 0x00, 0x04, 0, 0, // mov ecx, 1024
		0x88, 0x10, // inner: mov [rax], dl
		0x48, 0x05, 0x00, 0x10, 0, 0, // add rax, 0x1000
		0xff, 0xc9, // dec ecx
		0x75, 0xf4, // jnz inner
		0xff, 0xca, // dec edx
		0x75, 0xe4, // jnz outer
		0x0f, 0x05, // syscall
	})
	if err := e.MapPages(0x1000000, 1024*0x1000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	fills := cleanedFills()
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	if got := cleanedFills() - fills; got > 102400/2 {
		t.Fatalf("%d TLB fills for 100 rounds of stores to 1024 pages: the TLB did not grow", got)
	}
	var b [1]byte
	if err := e.ReadMem(0x1000000+1023*0x1000, b[:]); err != nil || b[0] != 1 {
		t.Fatalf("last page holds %d (%v), want 1 (the last round's)", b[0], err)
	}
}

func skipUnlessUnicorn201(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("unicornfix.c replaces Debian's Unicorn 2.0.1 code on Linux only")
	}
	if major, minor := unicornVersion(); major != 2 || minor != 0 {
		t.Skipf("Unicorn %d.%d: the slow paths unicornfix.c removes are 2.0's (later versions fixed them)", major, minor)
	}
}

// memory_mapping's cache must not outlive a change of the mappings:
// unmapping the page a loop stored to, then mapping it again elsewhere in
// the address space and back, faults and then works as Unicorn alone does.
func TestMappingCacheFollowsChanges(t *testing.T) {
	e := newEngine(t, Options{}, loopCode)
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("first run: stop %+v", s)
	}
	if err := e.UnmapPages(0x20000, 0x1000); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopFault {
		t.Fatalf("run with the page unmapped: stop %+v, want a fault", s)
	}
	if err := e.MapPages(0x20000, 0x1000, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopFault {
		t.Fatalf("run with the page read-only: stop %+v, want a fault", s)
	}
	if err := e.ProtectPages(0x20000, 0x1000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("run with the page writable again: stop %+v", s)
	}
	if got := loopSum(t, e); got != 500500 {
		t.Fatalf("sum %d on the new page, want 500500", got)
	}
}

// collideCode alternates indirect jumps to A (0x10400) and B (0x10608),
// two PCs on one index of Unicorn's jump cache, 1000 times: A adds
// imm8 (at 0x10407) to [0x20000], B adds 1 to [0x20004]. When patch is
// set, B stores 2 into A's imm8 once, when ecx is 500: A runs 501 times
// adding 1, then 499 times adding 2 (its translation must go).
func collideCode(patch bool) []byte {
	code := make([]byte, 0x680)
	for i := range code {
		code[i] = 0xf4 // hlt
	}
	put := func(at int, b ...byte) int { copy(code[at:], b); return at + len(b) }
	rel := func(from, to int) []byte {
		d := uint32(int32(to - from))
		return []byte{byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24)}
	}
	const loop, done, a, b = 0x11, 0x14, 0x400, 0x608
	at := put(0, 0xb9, 0xe8, 0x03, 0, 0)                                     // mov ecx, 1000
	at = put(at, 0x41, 0xb8, 0x00, 0x04, 0x01, 0x00)                         // mov r8d, 0x10400
	at = put(at, 0x41, 0xb9, 0x08, 0x06, 0x01, 0x00)                         // mov r9d, 0x10608
	put(at, 0x41, 0xff, 0xe0, 0x0f, 0x05)                                    // loop: jmp r8; done: syscall
	put(a, 0x83, 0x04, 0x25, 0x00, 0x00, 0x02, 0x00, 0x01, 0x41, 0xff, 0xe1) // add dword [0x20000], 1; jmp r9
	at = put(b, 0x83, 0x04, 0x25, 0x04, 0x00, 0x02, 0x00, 0x01)              // add dword [0x20004], 1
	if patch {
		at = put(at, 0x81, 0xf9, 0xf4, 0x01, 0, 0, 0x75, 0x08)       // cmp ecx, 500; jne +8
		at = put(at, 0xc6, 0x04, 0x25, 0x07, 0x04, 0x01, 0x00, 0x02) // mov byte [0x10407], 2
	}
	at = put(at, 0xff, 0xc9, 0x0f, 0x85) // dec ecx; jnz loop
	at = put(at, rel(at+4, loop)...)
	at = put(at, 0xe9)
	put(at, rel(at+4, done)...)
	return code
}

// Two hot targets of indirect jumps that share an index of Unicorn's
// jump cache are found in unicornfix.c's second cache (on 2.0.1), not in
// the global table; and a block that a store into code removes is not
// found there any more: the patched instruction runs.
func TestTBCacheBehindJumpCache(t *testing.T) {
	skipUnlessUnicorn201(t)
	for _, patch := range []bool{false, true} {
		e := newEngine(t, Options{}, collideCode(patch))
		if patch {
			if err := e.ProtectPages(codeAddr, 0x1000, mm.ProtRead|mm.ProtWrite|mm.ProtExec); err != nil {
				t.Fatal(err)
			}
		}
		hits := tbCacheHits()
		if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
			t.Fatalf("patch %v: stop %+v", patch, s)
		}
		if got := tbCacheHits() - hits; got < 1800 {
			t.Errorf("patch %v: the cache behind the jump cache answered %d of about 2000 lookups of two colliding PCs", patch, got)
		}
		var m [8]byte
		if err := e.ReadMem(0x20000, m[:]); err != nil {
			t.Fatal(err)
		}
		a, b := int(m[0])|int(m[1])<<8, int(m[4])|int(m[5])<<8
		wantA := 1000
		if patch {
			wantA = 501 + 2*499
		}
		if a != wantA || b != 1000 {
			t.Errorf("patch %v: sums %d and %d, want %d and 1000", patch, a, b, wantA)
		}
	}
}

// loopSum reads the sum loopCode leaves at 0x20000.
func loopSum(t *testing.T, e *Engine) uint32 {
	t.Helper()
	var b [4]byte
	if err := e.ReadMem(0x20000, b[:]); err != nil {
		t.Fatal(err)
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// On Unicorn 2.0.1 the block hook reads the guest's RSP where the engine
// keeps it (emu_rsp_slot), not through uc_reg_read: every Block event's Aux
// must still be RSP at the block's start.
func TestBlockEventsReadRSPDirectly(t *testing.T) {
	// push rax; jmp a; a: push rax; jmp b; b: pop rax; syscall
	code := []byte{0x50, 0xeb, 0x00, 0x50, 0xeb, 0x00, 0x58, 0x0f, 0x05}
	e := newEngine(t, Options{Blocks: true, StackPointer: true}, code)
	if runtime.GOOS == "linux" && unicornVersionFull()>>8 == 0x020001 && e.st.rsp == nil {
		t.Fatal("Unicorn 2.0.1, and emu_rsp_slot did not find RSP: the block hook reads it with uc_reg_read")
	}
	var got []uint64
	e.SetSink(func(b []trace.Event) {
		for _, ev := range b {
			if ev.Kind == trace.KindBlock {
				got = append(got, ev.Aux)
			}
		}
	})
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	e.Drain()
	want := []uint64{0x21000, 0x20ff8, 0x20ff0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Block events' stack pointers %#x, want %#x", got, want)
	}
}
