package emu

import (
	"encoding/binary"
	"math/big"
	"math/rand"
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
)

// fpremProgram runs fprem and fprem1 over a table at RSI of 32-byte cases
// (x at 0, y at 10, control word at 20, C0..C3 to preset at 22, flags at
// 24: 1 = free ST(1), 2 = free ST(0)), fnsave-ing the state after each into
// 224-byte records at RDI (fprem's at 0, fprem1's at 112); ECX cases.
//
//	one:  fninit; fldcw [rsi+20]; fld tbyte [rsi+10]; fld tbyte [rsi]
//	      (ffree st(1) / st(0) per the flags)
//	      fnstenv [rsp-32]; the status word's C bits from [rsi+22]; fldenv [rsp-32]
//	      fprem; fnsave [rdi]; again with fprem1; fnsave [rdi+112]
//	      next case; syscall
var fpremProgram = []byte{
	0x31, 0xd2, // xor edx, edx
	0xdb, 0xe3, // one: fninit
	0xd9, 0x6e, 0x14, // fldcw [rsi+0x14]
	0xdb, 0x6e, 0x0a, // fld tbyte [rsi+0xa]
	0xdb, 0x2e, // fld tbyte [rsi]
	0xf6, 0x46, 0x18, 0x01, // test byte [rsi+0x18], 1
	0x74, 0x02, // je +2
	0xdd, 0xc1, // ffree st(1)
	0xf6, 0x46, 0x18, 0x02, // test byte [rsi+0x18], 2
	0x74, 0x02, // je +2
	0xdd, 0xc0, // ffree st(0)
	0xd9, 0x74, 0x24, 0xe0, // fnstenv [rsp-0x20]
	0x66, 0x8b, 0x44, 0x24, 0xe4, // mov ax, [rsp-0x1c]
	0x66, 0x25, 0xff, 0xb8, // and ax, 0xb8ff
	0x66, 0x0b, 0x46, 0x16, // or ax, [rsi+0x16]
	0x66, 0x89, 0x44, 0x24, 0xe4, // mov [rsp-0x1c], ax
	0xd9, 0x64, 0x24, 0xe0, // fldenv [rsp-0x20]
	0x85, 0xd2, // test edx, edx
	0x75, 0x08, // jne fprem1
	0xd9, 0xf8, // fprem
	0xdd, 0x37, // fnsave [rdi]
	0xff, 0xc2, // inc edx
	0xeb, 0xc0, // jmp one
	0xd9, 0xf5, // fprem1
	0xdd, 0x77, 0x70, // fnsave [rdi+0x70]
	0x48, 0x83, 0xc6, 0x20, // add rsi, 0x20
	0x48, 0x81, 0xc7, 0xe0, 0x00, 0x00, 0x00, // add rdi, 0xe0
	0xff, 0xc9, // dec ecx
	0x75, 0xaa, // jne xor edx, edx
	0x0f, 0x05, // syscall
}

// fpremIn is one case of fpremProgram.
type fpremIn struct {
	x, y   f80
	cw, cc uint16
	flags  byte
}

// fpremOut is what fnsave shows after one instruction.
type fpremOut struct {
	st0    f80
	sw, tw uint16
}

const (
	fpremTable = 0x30000
	fpremOuts  = 0x40000
)

// runFPREM runs fpremProgram over cases and returns fprem's and fprem1's
// results for each.
func runFPREM(t *testing.T, cases []fpremIn) [][2]fpremOut {
	t.Helper()
	if len(cases) > 1500 {
		t.Fatal("too many cases for the table and results")
	}
	e := newEngine(t, Options{}, fpremProgram)
	if err := e.MapPages(fpremTable, 0x70000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	tab := make([]byte, 32*len(cases))
	for i, c := range cases {
		b := tab[32*i:]
		binary.LittleEndian.PutUint64(b[0:], c.x.m)
		binary.LittleEndian.PutUint16(b[8:], c.x.se)
		binary.LittleEndian.PutUint64(b[10:], c.y.m)
		binary.LittleEndian.PutUint16(b[18:], c.y.se)
		binary.LittleEndian.PutUint16(b[20:], c.cw)
		binary.LittleEndian.PutUint16(b[22:], c.cc)
		b[24] = c.flags
	}
	if err := e.WriteMem(fpremTable, tab); err != nil {
		t.Fatal(err)
	}
	regs := cpu.Regs{RIP: codeAddr, RSP: 0x21000, RSI: fpremTable, RDI: fpremOuts, RCX: uint64(len(cases))}
	if err := e.WriteRegs(&regs); err != nil {
		t.Fatal(err)
	}
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || e.PC() != codeAddr+uint64(len(fpremProgram)) {
		t.Fatalf("stop %+v at %#x, want the final syscall", s, e.PC())
	}
	// Per case: xor, 20 instructions up to fprem's inc and jmp, 16 up to
	// fprem1, 6 after it (and an ffree per pass when flagged); then the
	// syscall.
	want := uint64(1)
	for _, c := range cases {
		want += 1 + 20 + 16 + 6
		if c.flags&1 != 0 {
			want += 2
		}
		if c.flags&2 != 0 {
			want += 2
		}
	}
	if s.Insns != want {
		t.Errorf("counted %d instructions, want %d", s.Insns, want)
	}
	raw := make([]byte, 224*len(cases))
	if err := e.ReadMem(fpremOuts, raw); err != nil {
		t.Fatal(err)
	}
	outs := make([][2]fpremOut, len(cases))
	for i := range cases {
		for j := 0; j < 2; j++ {
			b := raw[224*i+112*j:]
			outs[i][j] = fpremOut{
				st0: f80{m: binary.LittleEndian.Uint64(b[28:]), se: binary.LittleEndian.Uint16(b[36:])},
				sw:  binary.LittleEndian.Uint16(b[4:]),
				tw:  binary.LittleEndian.Uint16(b[8:]),
			}
		}
	}
	return outs
}

// fpremHardware lists cases with the results of fpremProgram run natively
// (with ret for syscall) on the AMD EPYC host the tests were written on:
// note, x, y, control word, preset C bits, flags, then fnsave's ST(0),
// status and tag words after fprem and after fprem1.
var fpremHardware = []struct {
	note       string
	x, y       f80
	cw, cc     uint16
	flags      byte
	prem, rem1 fpremOut
}{
	{"7 rem 2", f80{0xe000000000000000, 0x4001}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x3fff}, 0x7200, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xbfff}, 0x3100, 0x0fff}},
	{"-7 rem 2", f80{0xe000000000000000, 0xc001}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0xbfff}, 0x7200, 0x0fff}, fpremOut{f80{0x8000000000000000, 0x3fff}, 0x3100, 0x0fff}},
	{"7 rem -2", f80{0xe000000000000000, 0x4001}, f80{0x8000000000000000, 0xc000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x3fff}, 0x7200, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xbfff}, 0x3100, 0x0fff}},
	{"6 rem 4: fprem1 ties to even 2", f80{0xc000000000000000, 0x4001}, f80{0x8000000000000000, 0x4001}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x4000}, 0x3200, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xc000}, 0x7000, 0x0fff}},
	{"10 rem 4: fprem1 ties to even 2", f80{0xa000000000000000, 0x4002}, f80{0x8000000000000000, 0x4001}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x4000}, 0x7000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0x4000}, 0x7000, 0x0fff}},
	{"-10 rem 4", f80{0xa000000000000000, 0xc002}, f80{0x8000000000000000, 0x4001}, 0x37f, 0x4700, 0, fpremOut{f80{0x8000000000000000, 0xc000}, 0x7000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xc000}, 0x7000, 0x0fff}},
	{"15 rem 1: quotient bits 111", f80{0xf000000000000000, 0x4002}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x7300, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x0000}, 0x7300, 0x1fff}},
	{"8 rem 1: zero remainder, quotient bits 000", f80{0x8000000000000000, 0x4002}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4700, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3000, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3000, 0x1fff}},
	{"-8 rem 1: zero keeps the dividend's sign", f80{0x8000000000000000, 0xc002}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x1fff}},
	{"0.75 rem 1: fprem1 rounds the quotient up to 1", f80{0xc000000000000000, 0x3ffe}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0x3ffe}, 0x3000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xbffd}, 0x3200, 0x0fff}},
	{"0.5 rem 1: tie to quotient 0", f80{0x8000000000000000, 0x3ffe}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4700, 0, fpremOut{f80{0x8000000000000000, 0x3ffe}, 0x3000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0x3ffe}, 0x3000, 0x0fff}},
	{"0.25 rem 1", f80{0x8000000000000000, 0x3ffd}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x3ffd}, 0x3000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0x3ffd}, 0x3000, 0x0fff}},
	{"full 64-bit significands", f80{0xfedcba9876543211, 0x4005}, f80{0x8000000000000001, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xdcba987654320f04, 0x3ffd}, 0x7300, 0x0fff}, fpremOut{f80{0xdcba987654320f04, 0x3ffd}, 0x7300, 0x0fff}},
	{"pi rem 1: 1 mod pi/2-ish", f80{0xc90fdaa22168c235, 0x4000}, f80{0xc90fdaa22168c235, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x7000, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x0000}, 0x7000, 0x1fff}},
	{"exponent difference 63", f80{0xffffffffffffffff, 0x403e}, f80{0x8000000000000001, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0x3fc1}, 0x3300, 0x0fff}, fpremOut{f80{0xc000000000000000, 0x3fc1}, 0x3300, 0x0fff}},
	{"difference 64: partial", f80{0xffffffffffffffff, 0x403f}, f80{0x8000000000000001, 0x3fff}, 0x37f, 0x4700, 0, fpremOut{f80{0xfffffffa00000002, 0x401e}, 0x3400, 0x0fff}, fpremOut{f80{0xfffffffa00000002, 0x401e}, 0x3400, 0x0fff}},
	{"difference 95: partial", f80{0xabcdef0123456789, 0x405e}, f80{0x9876543210fedcbb, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x92cc7c3de969622b, 0x401f}, 0x3400, 0x0fff}, fpremOut{f80{0x92cc7c3de969622b, 0x401f}, 0x3400, 0x0fff}},
	{"difference 96: partial", f80{0xabcdef0123456789, 0x405f}, f80{0x9876543210fedcbb, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xd0d660b7f8c40f60, 0x403c}, 0x3400, 0x0fff}, fpremOut{f80{0xd0d660b7f8c40f60, 0x403c}, 0x3400, 0x0fff}},
	{"difference 100: partial", f80{0xc000000000000000, 0x4063}, f80{0x8000000000000001, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xffffffd000000002, 0x403e}, 0x3400, 0x0fff}, fpremOut{f80{0xffffffd000000002, 0x403e}, 0x3400, 0x0fff}},
	{"difference 1000: partial", f80{0xd1b71758e219652b, 0x43e7}, f80{0xb504f333f9de6484, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xdfc2314d5e7cd6e0, 0x43bc}, 0x3400, 0x0fff}, fpremOut{f80{0xdfc2314d5e7cd6e0, 0x43bc}, 0x3400, 0x0fff}},
	{"max rem min normal: partial", f80{0xffffffffffffffff, 0x7ffe}, f80{0xc000000000000001, 0x0001}, 0x37f, 0x0000, 0, fpremOut{f80{0xd555555555555558, 0x7fbf}, 0x3400, 0x0fff}, fpremOut{f80{0xd555555555555558, 0x7fbf}, 0x3400, 0x0fff}},
	{"max rem min denormal: partial", f80{0xffffffffffffffff, 0x7ffe}, f80{0x0000000000000001, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0xe000000000000000, 0x7fc1}, 0x3402, 0x8fff}, fpremOut{f80{0xe000000000000000, 0x7fc1}, 0x3402, 0x8fff}},
	{"1 rem denormal 3: partial", f80{0x8000000000000000, 0x3fff}, f80{0x0000000000000003, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x3fc3}, 0x3402, 0x8fff}, fpremOut{f80{0x8000000000000000, 0x3fc3}, 0x3402, 0x8fff}},
	{"denormal divisor, full", f80{0x8000000000000123, 0x0040}, f80{0x00000000abcdef01, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x14af40cd00000000, 0x0000}, 0x3402, 0xafff}, fpremOut{f80{0x14af40cd00000000, 0x0000}, 0x3402, 0xafff}},
	{"denormal dividend", f80{0x0000000000abcdef, 0x0000}, f80{0x0000000000001235, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000bf4, 0x0000}, 0x7302, 0xafff}, fpremOut{f80{0x0000000000000641, 0x8000}, 0x3002, 0xafff}},
	{"denormal dividend below the divisor", f80{0x0000000000012345, 0x8000}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000012345, 0x8000}, 0x3002, 0x2fff}, fpremOut{f80{0x0000000000012345, 0x8000}, 0x3002, 0x2fff}},
	{"pseudo-denormal dividend comes back normalized", f80{0x8000000000000005, 0x0000}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000005, 0x0001}, 0x3002, 0x0fff}, fpremOut{f80{0x8000000000000005, 0x0001}, 0x3002, 0x0fff}},
	{"pseudo-denormal divisor", f80{0x8000000000000000, 0x0001}, f80{0x8000000000000005, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x0001}, 0x3002, 0x8fff}, fpremOut{f80{0x0000000000000005, 0x8000}, 0x3202, 0xafff}},
	{"remainder becomes denormal", f80{0x8000000000000001, 0x0002}, f80{0x8000000000000000, 0x0001}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000002, 0x0000}, 0x7000, 0x2fff}, fpremOut{f80{0x0000000000000002, 0x0000}, 0x7000, 0x2fff}},
	{"fprem1 negative remainder", f80{0xe000000000000000, 0x4000}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x3ffe}, 0x7200, 0x0fff}, fpremOut{f80{0x8000000000000000, 0xbffe}, 0x3100, 0x0fff}},
	{"divisor larger", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x4005}, 0x37f, 0x4700, 0, fpremOut{f80{0x8000000000000000, 0x3fff}, 0x3000, 0x0fff}, fpremOut{f80{0x8000000000000000, 0x3fff}, 0x3000, 0x0fff}},
	{"+0 dividend", f80{0x0000000000000000, 0x0000}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x4700, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3000, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3000, 0x1fff}},
	{"-0 dividend", f80{0x0000000000000000, 0x8000}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x4700, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x1fff}, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x1fff}},
	{"-0 rem denormal: DE", f80{0x0000000000000000, 0x8000}, f80{0x0000000000000007, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3002, 0x9fff}, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3002, 0x9fff}},
	{"finite rem inf", f80{0xa000000000000000, 0xc000}, f80{0x8000000000000000, 0x7fff}, 0x37f, 0x4700, 0, fpremOut{f80{0xa000000000000000, 0xc000}, 0x3000, 0x8fff}, fpremOut{f80{0xa000000000000000, 0xc000}, 0x3000, 0x8fff}},
	{"denormal rem -inf", f80{0x0000000000001234, 0x0000}, f80{0x8000000000000000, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000001234, 0x0000}, 0x3002, 0xafff}, fpremOut{f80{0x0000000000001234, 0x0000}, 0x3002, 0xafff}},
	{"inf dividend: invalid", f80{0x8000000000000000, 0x7fff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x2fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x2fff}},
	{"inf dividend, C0/C3 clear", f80{0x8000000000000000, 0xffff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x2fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x2fff}},
	{"zero divisor: invalid", f80{0x8000000000000000, 0x4000}, f80{0x0000000000000000, 0x0000}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x6fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x6fff}},
	{"zero rem zero", f80{0x0000000000000000, 0x8000}, f80{0x0000000000000000, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x6fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x6fff}},
	{"denormal rem zero: IE without DE", f80{0x0000000000000005, 0x0000}, f80{0x0000000000000000, 0x8000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x6fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x6fff}},
	{"QNaN dividend", f80{0xc000000000001111, 0x7fff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000001111, 0x7fff}, 0x7100, 0x2fff}, fpremOut{f80{0xc000000000001111, 0x7fff}, 0x7100, 0x2fff}},
	{"QNaN divisor", f80{0x8000000000000000, 0x4000}, f80{0xc000000000001111, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000001111, 0xffff}, 0x3000, 0xafff}, fpremOut{f80{0xc000000000001111, 0xffff}, 0x3000, 0xafff}},
	{"SNaN dividend: quieted, IE", f80{0x8000000000002222, 0x7fff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000002222, 0x7fff}, 0x3001, 0x2fff}, fpremOut{f80{0xc000000000002222, 0x7fff}, 0x3001, 0x2fff}},
	{"SNaN divisor with inf dividend", f80{0x8000000000000000, 0x7fff}, f80{0x8000000000002222, 0x7fff}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000002222, 0x7fff}, 0x7101, 0xafff}, fpremOut{f80{0xc000000000002222, 0x7fff}, 0x7101, 0xafff}},
	{"SNaN and QNaN: the QNaN", f80{0x8000000000002222, 0x7fff}, f80{0xc000000000001111, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000001111, 0xffff}, 0x3001, 0xafff}, fpremOut{f80{0xc000000000001111, 0xffff}, 0x3001, 0xafff}},
	{"two SNaNs: the larger significand", f80{0x8000000000000001, 0x7fff}, f80{0x8000000000000003, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000003, 0xffff}, 0x3001, 0xafff}, fpremOut{f80{0xc000000000000003, 0xffff}, 0x3001, 0xafff}},
	{"two QNaNs, equal significands: the positive", f80{0xc000000000001111, 0xffff}, f80{0xc000000000001111, 0x7fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000001111, 0x7fff}, 0x3000, 0xafff}, fpremOut{f80{0xc000000000001111, 0x7fff}, 0x3000, 0xafff}},
	{"unnormal dividend: invalid", f80{0x4000000000000000, 0x3fff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x2fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7101, 0x2fff}},
	{"pseudo-infinity divisor: invalid even with a NaN", f80{0xc000000000001111, 0x7fff}, f80{0x0000000000000000, 0x7fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0xafff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0xafff}},
	{"pseudo-NaN dividend", f80{0x4000000000000001, 0x7fff}, f80{0x8000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x2fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0x2fff}},
	{"empty ST(1): stack underflow", f80{0x8000000000000000, 0x4000}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4700, 1, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7141, 0xefff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7141, 0xefff}},
	{"empty ST(0): stack underflow", f80{0x8000000000000000, 0x4000}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 2, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3041, 0x2fff}, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3041, 0x2fff}},
	{"unmasked invalid: no store, ES and B", f80{0x8000000000000000, 0x7fff}, f80{0x8000000000000000, 0x4000}, 0x37e, 0x4700, 0, fpremOut{f80{0x8000000000000000, 0x7fff}, 0xf181, 0x2fff}, fpremOut{f80{0x8000000000000000, 0x7fff}, 0xf181, 0x2fff}},
	{"unmasked denormal", f80{0x0000000000012345, 0x0000}, f80{0x8000000000000000, 0x4000}, 0x37d, 0x4700, 0, fpremOut{f80{0x0000000000012345, 0x0000}, 0xf182, 0x2fff}, fpremOut{f80{0x0000000000012345, 0x0000}, 0xf182, 0x2fff}},
	{"unmasked stack underflow", f80{0x8000000000000000, 0x4000}, f80{0x8000000000000000, 0x3fff}, 0x37e, 0x4700, 1, fpremOut{f80{0x8000000000000000, 0x4000}, 0xf1c1, 0xcfff}, fpremOut{f80{0x8000000000000000, 0x4000}, 0xf1c1, 0xcfff}},
	{"precision control does not apply", f80{0xfedcba9876543211, 0x4005}, f80{0x8000000000000001, 0x3fff}, 0x07f, 0x0000, 0, fpremOut{f80{0xdcba987654320f04, 0x3ffd}, 0x7300, 0x0fff}, fpremOut{f80{0xdcba987654320f04, 0x3ffd}, 0x7300, 0x0fff}},
	{"rounding control does not apply", f80{0xfedcba9876543211, 0x4005}, f80{0xc000000000000001, 0x3fff}, 0xb7f, 0x0000, 0, fpremOut{f80{0xb72ea61d950c83ec, 0x3fff}, 0x3100, 0x0fff}, fpremOut{f80{0x8d159e26af37c150, 0xbffb}, 0x3300, 0x0fff}},
	{"1e4932 rem 1e9 (musl's strtod steps)", f80{0xd1b71758e219652c, 0x7ffe}, f80{0xee6b280000000000, 0x401c}, 0x37f, 0x0000, 0, fpremOut{f80{0xae64b2c000000000, 0x7fda}, 0x3400, 0x0fff}, fpremOut{f80{0xae64b2c000000000, 0x7fda}, 0x3400, 0x0fff}},
	{"2^100+1 rem 1e9", f80{0x8000000000000001, 0x4063}, f80{0xee6b280000000000, 0x401c}, 0x37f, 0x0000, 0, fpremOut{f80{0xa83d910000000000, 0x403b}, 0x3400, 0x0fff}, fpremOut{f80{0xa83d910000000000, 0x403b}, 0x3400, 0x0fff}},
}

// fprem and fprem1 compute what the hardware does: exact remainders,
// partial reduction (C2) for exponent differences of 64 or more, the
// quotient bits, special operands, denormals, the stack fault, unmasked
// exceptions. Unicorn computes them through host doubles.
func TestFPREMHardware(t *testing.T) {
	cases := make([]fpremIn, len(fpremHardware))
	for i, h := range fpremHardware {
		cases[i] = fpremIn{h.x, h.y, h.cw, h.cc, h.flags}
	}
	outs := runFPREM(t, cases)
	for i, h := range fpremHardware {
		for j, want := range [2]fpremOut{h.prem, h.rem1} {
			if got := outs[i][j]; got != want {
				t.Errorf("%s: %s gave %s sw %#04x tags %#04x; hardware %s sw %#04x tags %#04x",
					h.note, [2]string{"fprem", "fprem1"}[j], got.st0, got.sw, got.tw, want.st0, want.sw, want.tw)
			}
		}
	}
}

// f80Value is x (finite) as an exact big.Float.
func f80Value(x f80) *big.Float {
	e := int(x.se & 0x7fff)
	if e == 0 {
		e = 1
	}
	v := new(big.Float).SetPrec(64).SetMantExp(new(big.Float).SetUint64(x.m), e-16383-63)
	if x.neg() {
		v.Neg(v)
	}
	return v
}

// refRemainder is the SDM's definition of fprem/fprem1 in exact integer
// arithmetic: with D the difference of the operands' exponents (as the
// values have them, denormals included), a complete step if D < 64 with
// the quotient truncated (fprem) or rounded to nearest even (fprem1), else
// a partial step by y·2^(D-N) with the truncated quotient, N = 32 + D%32
// (what AMD hardware does). It returns the remainder, the quotient's low
// bits and whether the step was partial.
func refRemainder(x, y f80, nearest bool) (*big.Float, uint64, bool) {
	xv, yv := f80Value(x), f80Value(y)
	d := xv.MantExp(nil) - yv.MantExp(nil)
	k := 0
	partial := d >= 64
	if partial {
		k = d - (32 + d%32)
	}
	// |x| = X·2^c, |y|·2^k = Y·2^c with integers X, Y.
	c := -16445 - 64
	X, _ := new(big.Float).SetMantExp(new(big.Float).Abs(xv), -c).Int(nil)
	Y, _ := new(big.Float).SetMantExp(new(big.Float).Abs(yv), k-c).Int(nil)
	q, r := new(big.Int).QuoRem(X, Y, new(big.Int))
	neg := x.neg()
	if nearest && !partial {
		twice := new(big.Int).Lsh(r, 1)
		if c := twice.Cmp(Y); c > 0 || c == 0 && q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
			r.Sub(Y, r)
			neg = !neg
		}
	}
	res := new(big.Float).SetPrec(0).SetMantExp(new(big.Float).SetInt(r), c)
	if neg {
		res.Neg(res)
	}
	return res, q.Uint64() & 7, partial
}

// Random finite operands (close and far exponents, denormals) against
// refRemainder: the remainder exactly, zero's sign, the condition codes.
func TestFPREMReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	operand := func() f80 {
		s := uint16(r.Intn(2)) << 15
		switch r.Intn(8) {
		case 0: // denormal
			return f80{m: r.Uint64()>>uint(r.Intn(64)) | 1, se: s}
		case 1: // anywhere
			return f80{m: r.Uint64() | 1<<63, se: s | uint16(1+r.Intn(0x7ffe))}
		case 2: // few significant bits: exact quotients, zero remainders
			return f80{m: (r.Uint64() | 1<<63) &^ (1<<60 - 1), se: s | uint16(0x3fff+r.Intn(16))}
		}
		return f80{m: r.Uint64() | 1<<63, se: s | uint16(0x3fff-40+r.Intn(180))}
	}
	cases := make([]fpremIn, 1500)
	for i := range cases {
		cases[i] = fpremIn{x: operand(), y: operand(), cw: 0x37f}
	}
	outs := runFPREM(t, cases)
	bad := 0
	for i, c := range cases {
		for j, nearest := range []bool{false, true} {
			got := outs[i][j]
			want, q, partial := refRemainder(c.x, c.y, nearest)
			cc := got.sw & (swC0 | swC1 | swC2 | swC3)
			wantCC := uint16(swC2)
			if !partial {
				wantCC = quotientCC(q)
			}
			gotSign := got.st0.neg()
			if got.st0.class() == clZero && want.Sign() == 0 {
				// a zero remainder has the dividend's sign
				if gotSign != c.x.neg() {
					want.SetInf(true) // force a mismatch
				}
			}
			if f80Value(got.st0).Cmp(want) != 0 || cc != wantCC {
				if bad++; bad <= 10 {
					t.Errorf("%s rem %s (%s): got %s cc %#04x, want %s cc %#04x", c.x, c.y,
						[2]string{"fprem", "fprem1"}[j], got.st0, cc, want.Text('p', 0), wantCC)
				}
			}
		}
	}
}

// A patched fprem is forgotten with its code: a real syscall later mapped
// at its address is the guest's.
func TestFPREMPatchForgotten(t *testing.T) {
	// fld1; fld1; fprem; syscall
	e := newEngine(t, Options{}, []byte{0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xf8, 0x0f, 0x05})
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || e.PC() != codeAddr+8 || s.Insns != 4 {
		t.Fatalf("stop %+v at %#x, want the syscall after 4 instructions", s, e.PC())
	}
	if got := e.readST(0); got != (f80{}) {
		t.Errorf("1 rem 1 = %s, want +0", got)
	}
	if err := e.UnmapPages(codeAddr, 0x1000); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(codeAddr, 0x1000, mm.ProtRead|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	// nop x4; syscall (where the fprem was)
	if err := e.WriteMem(codeAddr, []byte{0x90, 0x90, 0x90, 0x90, 0x0f, 0x05}); err != nil {
		t.Fatal(err)
	}
	s = e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || e.PC() != codeAddr+6 {
		t.Fatalf("stop %+v at %#x, want the guest's syscall at %#x", s, e.PC(), codeAddr+4)
	}
}
