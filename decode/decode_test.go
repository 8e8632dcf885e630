package decode

import (
	"fmt"
	"testing"

	"emuprof/trace"
)

func TestBlock(t *testing.T) {
	cases := []struct {
		name  string
		code  []byte
		insns uint32
		end   trace.End
		last  uint32
		tsc   int
		x87   []uint32
	}{
		// push rbp; mov rbp,rsp; call rel32
		{"call", []byte{0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0}, 3, trace.EndCall, 4, 0, nil},
		// pop rbp; ret
		{"ret", []byte{0x5d, 0xc3}, 2, trace.EndRet, 1, 0, nil},
		// xor eax,eax; jmp rel8
		{"jmp", []byte{0x31, 0xc0, 0xeb, 0x10}, 2, trace.EndJump, 2, 0, nil},
		// cmp eax,1; jne rel8
		{"jcc", []byte{0x83, 0xf8, 0x01, 0x75, 0xf0}, 2, trace.EndCond, 3, 0, nil},
		// mov eax,60; syscall
		{"syscall", []byte{0xb8, 60, 0, 0, 0, 0x0f, 0x05}, 2, trace.EndSyscall, 5, 0, nil},
		// rdtsc; shl rdx,32; nop
		{"rdtsc", []byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x90}, 3, trace.EndOther, 6, 1, nil},
		// call *%rax
		{"indirect call", []byte{0xff, 0xd0}, 1, trace.EndCall, 0, 0, nil},
		// nop; then popcnt cut after its opcode (f3 48 0f b8), as the
		// engine translates an instruction it refuses
		{"truncated", []byte{0x90, 0xf3, 0x48, 0x0f, 0xb8}, 2, trace.EndOther, 1, 0, nil},
		// fld st(1); fprem; fnstsw ax; fprem1; a prefixed fprem (left
		// to the engine); fstp st(1)
		{"fprem", []byte{0xd9, 0xc1, 0xd9, 0xf8, 0xdf, 0xe0, 0xd9, 0xf5, 0x66, 0xd9, 0xf8, 0xdd, 0xd9}, 6, trace.EndOther, 11, 0, []uint32{2, 6}},
		// fldl2t; fldpi; fscale; fsin
		{"fscale", []byte{0xd9, 0xe9, 0xd9, 0xeb, 0xd9, 0xfd, 0xd9, 0xfe}, 4, trace.EndOther, 6, 0, []uint32{0, 4}},
	}
	for _, c := range cases {
		got := Block(c.code)
		if got.Insns != c.insns || got.End != c.end || got.Last != c.last || len(got.RDTSC) != c.tsc ||
			fmt.Sprint(got.X87) != fmt.Sprint(c.x87) {
			t.Errorf("%s: got %+v, want insns %d end %d last %d rdtsc %d x87 %v", c.name, got, c.insns, c.end, c.last, c.tsc, c.x87)
		}
	}
}

func TestBlockUndecodable(t *testing.T) {
	// nop; then a VEX-encoded vzeroupper (c5 f8 77) x86asm does not know.
	got := Block([]byte{0x90, 0xc5, 0xf8, 0x77})
	if got.Insns != 2 || got.End != trace.EndOther {
		t.Errorf("got %+v, want 2 instructions ending in other", got)
	}
}
