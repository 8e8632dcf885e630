package emu

import (
	"runtime"
	"testing"

	"emuprof/cpu"
)

// Every guest store reaches QEMU's page-collection lock on Unicorn 2.0.1:
// libunicorn must call storefix.c's allocation-free one, not its own.
func TestStoresUseStorefixPageCollection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("storefix.c replaces Debian's Unicorn 2.0.1 code on Linux only")
	}
	e := newEngine(t, Options{}, loopCode)
	before := pageCollections()
	if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	// loopCode adds to [0x20000] 1000 times.
	if got := pageCollections() - before; got < 1000 {
		t.Fatalf("libunicorn called storefix.c's page_collection_lock %d times for 1000 stores: its own ran (is the executable linked with -rdynamic?)", got)
	}
	var b [4]byte
	if err := e.ReadMem(0x20000, b[:]); err != nil {
		t.Fatal(err)
	}
	if got := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16; got != 500500 {
		t.Fatalf("sum %d, want 500500", got)
	}
}
