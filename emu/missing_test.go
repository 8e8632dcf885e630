package emu

import (
	"encoding/binary"
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
)

// popcnt is advertised by the guest's cpuid but refused by Unicorn's
// translator; Run executes it: register and memory operands (absolute,
// RIP-relative, FS-based with index), 16/32/64-bit forms, ZF.
func TestPopcnt(t *testing.T) {
	code := []byte{
		0xf3, 0x48, 0x0f, 0xb8, 0xc3, // popcnt rax, rbx
		0xf3, 0x0f, 0xb8, 0x0c, 0x25, 0x08, 0x00, 0x02, 0x00, // popcnt ecx, dword [0x20008]
		0x66, 0xf3, 0x0f, 0xb8, 0x15, 0x20, 0x00, 0x00, 0x00, // popcnt dx, word [rip+0x20] (codeAddr+0x37)
		0x64, 0xf3, 0x4d, 0x0f, 0xb8, 0x4c, 0xb0, 0x08, // popcnt r9, qword fs:[r8+rsi*4+8]
		0x0f, 0x05, // syscall
	}
	code = append(code, make([]byte, 0x37-len(code))...)
	code = append(code, 0x01, 0x81) // the word at codeAddr+0x37: 3 bits
	e := newEngine(t, Options{Memory: true}, code)
	regs := cpu.Regs{RIP: codeAddr, RSP: 0x21000, RBX: 0xf0f0_0000_0000_f0f1, RCX: ^uint64(0), RDX: ^uint64(0),
		R8: 0x10, RSI: 2, R9: 77, RFLAGS: 0x2 | 0x1 | 0x80 | 0x800}
	if err := e.WriteRegs(&regs); err != nil {
		t.Fatal(err)
	}
	if err := e.SetFSBase(0x20000); err != nil {
		t.Fatal(err)
	}
	var m [0x28]byte
	binary.LittleEndian.PutUint32(m[8:], 0xffff_fffe) // 31 bits; [0x20020] stays 0
	if err := e.WriteMem(0x20000, m[:]); err != nil {
		t.Fatal(err)
	}
	var reads []uint64
	e.SetSink(func(b []trace.Event) {
		for _, ev := range b {
			if ev.Kind == trace.KindRead {
				reads = append(reads, ev.Addr)
			}
		}
	})
	s := e.Run(codeAddr, 0)
	e.Drain()
	if s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v, want the syscall after four popcnts", s)
	}
	if s.Insns != 5 {
		t.Errorf("counted %d instructions, want 5", s.Insns)
	}
	var r cpu.Regs
	if err := e.ReadRegs(&r); err != nil {
		t.Fatal(err)
	}
	if r.RAX != 17 || r.RCX != 31 || r.RDX != 0xffff_ffff_ffff_0003 || r.R9 != 0 {
		t.Errorf("rax %d rcx %#x rdx %#x r9 %d; want 17, 31 (zero-extended), 0xffffffffffff0003, 0", r.RAX, r.RCX, r.RDX, r.R9)
	}
	if r.RFLAGS&0x8d5 != 0x40 { // ZF only: CF, PF, AF, SF, OF cleared
		t.Errorf("flags %#x after popcnt of 0: want ZF set and CF/PF/AF/SF/OF clear", r.RFLAGS)
	}
	want := []uint64{0x20008, codeAddr + 0x37, 0x20020}
	if len(reads) != len(want) {
		t.Fatalf("read events %#x, want %#x", reads, want)
	}
	for i := range want {
		if reads[i] != want[i] {
			t.Errorf("read events %#x, want %#x", reads, want)
			break
		}
	}
}

// A popcnt whose memory operand is unmapped faults like a load would.
func TestPopcntFault(t *testing.T) {
	// popcnt rax, qword [0x50000]
	e := newEngine(t, Options{}, []byte{0xf3, 0x48, 0x0f, 0xb8, 0x04, 0x25, 0x00, 0x00, 0x05, 0x00})
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopFault || s.FaultAddr != 0x50000 || s.FaultAccess != cpu.FaultRead {
		t.Fatalf("stop %+v, want a read fault at 0x50000", s)
	}
	if pc := e.PC(); pc != codeAddr {
		t.Errorf("pc %#x, want the popcnt at %#x", pc, codeAddr)
	}
}
