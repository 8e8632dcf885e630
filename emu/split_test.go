package emu

import (
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
)

func TestSplitRegion(t *testing.T) {
	// mov rax, [0x30008]; syscall
	e := newEngine(t, Options{}, []byte{0x48, 0x8b, 0x04, 0x25, 0x08, 0x00, 0x03, 0x00, 0x0f, 0x05})
	if err := e.MapPages(0x30000, 0x10000, mm.ProtRead); err != nil {
		t.Fatal(err)
	}
	e.WriteMem(0x30008, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	if err := e.UnmapPages(0x34000, 0x2000); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(0x34000, 0x2000, mm.ProtRead|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	s := e.Run(codeAddr, 0)
	var r cpu.Regs
	e.ReadRegs(&r)
	if s.Reason != cpu.StopSyscall || r.RAX != 0x0807060504030201 {
		t.Fatalf("stop %+v rax %#x", s, r.RAX)
	}
}
