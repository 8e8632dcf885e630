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

// fpremTableBytes lays out cases for fpremProgram and x87Program.
func fpremTableBytes(cases []fpremIn) []byte {
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
	return tab
}

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
	if err := e.WriteMem(fpremTable, fpremTableBytes(cases)); err != nil {
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

// x87Program runs fscale, or fldl2t, over cases laid out as fpremProgram's
// (flags 4: six more values pushed first, so that fldl2t overflows the
// stack; 8: fldl2t instead of fscale), fnsave-ing the state after each
// into 112-byte records at RDI.
var x87Program = []byte{
	0xdb, 0xe3, // fninit
	0xd9, 0x6e, 0x14, // fldcw [rsi+0x14]
	0xf6, 0x46, 0x18, 0x04, // test byte [rsi+0x18], 4
	0x74, 0x0c, // je +12
	0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xe8, // fld1 x6
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
	0xf6, 0x46, 0x18, 0x08, // test byte [rsi+0x18], 8
	0x75, 0x04, // jne fldl2t
	0xd9, 0xfd, // fscale
	0xeb, 0x02, // jmp +2
	0xd9, 0xe9, // fldl2t
	0xdd, 0x37, // fnsave [rdi]
	0x48, 0x83, 0xc6, 0x20, // add rsi, 0x20
	0x48, 0x83, 0xc7, 0x70, // add rdi, 0x70
	0xff, 0xc9, // dec ecx
	0x75, 0xa0, // jne fninit
	0x0f, 0x05, // syscall
}

// runX87 runs x87Program over cases.
func runX87(t *testing.T, cases []fpremIn) []fpremOut {
	t.Helper()
	if len(cases) > 1500 {
		t.Fatal("too many cases for the table and results")
	}
	e := newEngine(t, Options{}, x87Program)
	if err := e.MapPages(fpremTable, 0x70000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(fpremTable, fpremTableBytes(cases)); err != nil {
		t.Fatal(err)
	}
	regs := cpu.Regs{RIP: codeAddr, RSP: 0x21000, RSI: fpremTable, RDI: fpremOuts, RCX: uint64(len(cases))}
	if err := e.WriteRegs(&regs); err != nil {
		t.Fatal(err)
	}
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || e.PC() != codeAddr+uint64(len(x87Program)) {
		t.Fatalf("stop %+v at %#x, want the final syscall", s, e.PC())
	}
	// Per case: 25 instructions, one fewer for fldl2t (no jmp), six more
	// fld1 and one ffree per flag; then the syscall.
	want := uint64(1)
	for _, c := range cases {
		want += 25
		if c.flags&8 != 0 {
			want--
		}
		if c.flags&4 != 0 {
			want += 6
		}
		want += uint64(c.flags&1 + c.flags>>1&1)
	}
	if s.Insns != want {
		t.Errorf("counted %d instructions, want %d", s.Insns, want)
	}
	raw := make([]byte, 112*len(cases))
	if err := e.ReadMem(fpremOuts, raw); err != nil {
		t.Fatal(err)
	}
	outs := make([]fpremOut, len(cases))
	for i := range cases {
		b := raw[112*i:]
		outs[i] = fpremOut{
			st0: f80{m: binary.LittleEndian.Uint64(b[28:]), se: binary.LittleEndian.Uint16(b[36:])},
			sw:  binary.LittleEndian.Uint16(b[4:]),
			tw:  binary.LittleEndian.Uint16(b[8:]),
		}
	}
	return outs
}

// x87Hardware lists cases with the results of x87Program run natively on
// the AMD EPYC host (as fpremHardware): fscale, then fldl2t (flags 8).
var x87Hardware = []struct {
	note   string
	x, y   f80
	cw, cc uint16
	flags  byte
	want   fpremOut
}{
	{"1.5 * 2^3", f80{0xc000000000000000, 0x3fff}, f80{0xc000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0x4002}, 0x3000, 0x0fff}},
	{"all 64 bits kept at 24-bit precision control", f80{0x8000000000000001, 0x3fff}, f80{0xa000000000000000, 0xc001}, 0x07f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x3ffa}, 0x3000, 0x0fff}},
	{"all 64 bits kept at 53-bit precision control, rounding up", f80{0xffffffffffffffff, 0x3fff}, f80{0xc800000000000000, 0x4005}, 0xa7f, 0x4700, 0, fpremOut{f80{0xffffffffffffffff, 0x4063}, 0x7500, 0x0fff}},
	{"scale truncated toward zero: 2.9", f80{0x8000000000000001, 0x3fff}, f80{0xb99999999999999a, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x4001}, 0x3000, 0x0fff}},
	{"scale truncated toward zero: -2.9", f80{0x8000000000000001, 0x3fff}, f80{0xb99999999999999a, 0xc000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x3ffd}, 0x3000, 0x0fff}},
	{"scale below 1: no change", f80{0x8000000000000001, 0x3fff}, f80{0xffffffffffffffff, 0x3ffe}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x3fff}, 0x3000, 0x0fff}},
	{"denormal scale: DE, no change", f80{0x8000000000000001, 0x3fff}, f80{0x0000000000000123, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x3fff}, 0x3002, 0x8fff}},
	{"to the largest normal", f80{0xffffffffffffffff, 0x3fff}, f80{0xfffc000000000000, 0x400c}, 0x37f, 0x0000, 0, fpremOut{f80{0xffffffffffffffff, 0x7ffe}, 0x3000, 0x0fff}},
	{"overflow, nearest: inf", f80{0xffffffffffffffff, 0x3fff}, f80{0x8000000000000000, 0x400d}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x7fff}, 0x3228, 0x2fff}},
	{"overflow, toward zero: max", f80{0xffffffffffffffff, 0x3fff}, f80{0x8000000000000000, 0x400d}, 0xf7f, 0x4700, 0, fpremOut{f80{0xffffffffffffffff, 0x7ffe}, 0x7528, 0x0fff}},
	{"overflow, down, positive: max", f80{0xffffffffffffffff, 0x3fff}, f80{0x8000000000000000, 0x400d}, 0x77f, 0x0000, 0, fpremOut{f80{0xffffffffffffffff, 0x7ffe}, 0x3028, 0x0fff}},
	{"overflow, down, negative: -inf", f80{0xc000000000000000, 0xbfff}, f80{0x9c40000000000000, 0x400d}, 0x77f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0xffff}, 0x3228, 0x2fff}},
	{"overflow, up, negative: -max", f80{0xc000000000000000, 0xbfff}, f80{0x9c40000000000000, 0x400d}, 0xb7f, 0x0000, 0, fpremOut{f80{0xffffffffffffffff, 0xfffe}, 0x3028, 0x0fff}},
	{"overflow at 24-bit precision control: inf", f80{0xffffffffffffffff, 0x3fff}, f80{0x8000000000000000, 0x400d}, 0x07f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x7fff}, 0x3228, 0x2fff}},
	{"huge scale", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x7ffe}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x7fff}, 0x3228, 0x2fff}},
	{"huge negative scale", f80{0x8000000000000000, 0xbfff}, f80{0x8000000000000000, 0xfffe}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3030, 0x1fff}},
	{"to the smallest normal", f80{0x8000000000000000, 0x3fff}, f80{0xfff8000000000000, 0xc00c}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x0001}, 0x3000, 0x0fff}},
	{"exact denormal", f80{0x8000000000000000, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x37f, 0x0000, 0, fpremOut{f80{0x4000000000000000, 0x0000}, 0x3000, 0x2fff}},
	{"denormal, tie to even (down)", f80{0x8000000000000001, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x37f, 0x0000, 0, fpremOut{f80{0x4000000000000000, 0x0000}, 0x3030, 0x2fff}},
	{"denormal, rounded up", f80{0x8000000000000001, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0xb7f, 0x0000, 0, fpremOut{f80{0x4000000000000001, 0x0000}, 0x3230, 0x2fff}},
	{"denormal, tie to even (up)", f80{0x8000000000000003, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x37f, 0x0000, 0, fpremOut{f80{0x4000000000000002, 0x0000}, 0x3230, 0x2fff}},
	{"denormal, at 24-bit precision control", f80{0x8000000000000003, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x07f, 0x0000, 0, fpremOut{f80{0x4000000000000002, 0x0000}, 0x3230, 0x2fff}},
	{"rounds up to the smallest normal", f80{0xffffffffffffffff, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x0001}, 0x3230, 0x0fff}},
	{"the smallest denormal", f80{0x8000000000000000, 0x3fff}, f80{0x807a000000000000, 0xc00d}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000001, 0x0000}, 0x3000, 0x2fff}},
	{"below half the smallest denormal: 0", f80{0x8000000000000000, 0x3fff}, f80{0x807e000000000000, 0xc00d}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3030, 0x1fff}},
	{"below half the smallest denormal, up: the smallest", f80{0x8000000000000000, 0x3fff}, f80{0x807e000000000000, 0xc00d}, 0xb7f, 0x0000, 0, fpremOut{f80{0x0000000000000001, 0x0000}, 0x3230, 0x2fff}},
	{"half the smallest denormal, tie: 0", f80{0x8000000000000000, 0x3fff}, f80{0x807c000000000000, 0xc00d}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x3030, 0x1fff}},
	{"above half the smallest denormal: the smallest", f80{0x8000000000000001, 0x3fff}, f80{0x807c000000000000, 0xc00d}, 0x37f, 0x4700, 0, fpremOut{f80{0x0000000000000001, 0x0000}, 0x7730, 0x2fff}},
	{"negative denormal, down", f80{0x8000000000000001, 0xbfff}, f80{0xfffc000000000000, 0xc00c}, 0x77f, 0x0000, 0, fpremOut{f80{0x4000000000000001, 0x8000}, 0x3230, 0x2fff}},
	{"denormal operand scaled up to normal", f80{0x0000000000000003, 0x0000}, f80{0xc800000000000000, 0x4005}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0x0027}, 0x3002, 0x0fff}},
	{"pseudo-denormal operand", f80{0x8000000000000003, 0x0000}, f80{0x0000000000000000, 0x0000}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000003, 0x0001}, 0x3002, 0x4fff}},
	{"+0 * 2^100", f80{0x0000000000000000, 0x0000}, f80{0xc800000000000000, 0x4005}, 0x37f, 0x4700, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0x7500, 0x1fff}},
	{"-0 * 2^-inf", f80{0x0000000000000000, 0x8000}, f80{0x8000000000000000, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x9fff}},
	{"0 * 2^+inf: invalid", f80{0x0000000000000000, 0x0000}, f80{0x8000000000000000, 0x7fff}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7501, 0xafff}},
	{"-3 * 2^+inf: -inf", f80{0xc000000000000000, 0xc000}, f80{0x8000000000000000, 0x7fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0xffff}, 0x3000, 0xafff}},
	{"-3 * 2^-inf: -0", f80{0xc000000000000000, 0xc000}, f80{0x8000000000000000, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0x3000, 0x9fff}},
	{"inf * 2^-inf: invalid", f80{0x8000000000000000, 0x7fff}, f80{0x8000000000000000, 0xffff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0xafff}},
	{"-inf * 2^5", f80{0x8000000000000000, 0xffff}, f80{0xa000000000000000, 0x4001}, 0x37f, 0x4700, 0, fpremOut{f80{0x8000000000000000, 0xffff}, 0x7500, 0x2fff}},
	{"-inf * 2^+inf", f80{0x8000000000000000, 0xffff}, f80{0x8000000000000000, 0x7fff}, 0x37f, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0xffff}, 0x3000, 0xafff}},
	{"QNaN scale", f80{0x8000000000000000, 0x3fff}, f80{0xc000000000001111, 0x7fff}, 0x37f, 0x4700, 0, fpremOut{f80{0xc000000000001111, 0x7fff}, 0x7500, 0xafff}},
	{"SNaN operand", f80{0x8000000000002222, 0x7fff}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000002222, 0x7fff}, 0x3001, 0x2fff}},
	{"unnormal scale: invalid", f80{0x8000000000000000, 0x3fff}, f80{0x4000000000000000, 0x4000}, 0x37f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0xffff}, 0x3001, 0xafff}},
	{"empty ST(1)", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4700, 1, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7541, 0xefff}},
	{"unmasked overflow: scaled by 2^-24576", f80{0xffffffffffffffff, 0x3fff}, f80{0x8000000000000000, 0x400d}, 0x377, 0x4700, 0, fpremOut{f80{0xffffffffffffffff, 0x1fff}, 0xf588, 0x0fff}},
	{"unmasked overflow, still too large: inf", f80{0x8000000000000000, 0x3fff}, f80{0xc350000000000000, 0x400e}, 0x377, 0x0000, 0, fpremOut{f80{0x8000000000000000, 0x7fff}, 0xb2a8, 0x2fff}},
	{"unmasked underflow: scaled by 2^24576", f80{0x8000000000000001, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x36f, 0x0000, 0, fpremOut{f80{0x8000000000000001, 0x6000}, 0xb090, 0x0fff}},
	{"unmasked underflow, exact: UE all the same", f80{0x0000000000000003, 0x0000}, f80{0x8000000000000000, 0x3fff}, 0x36f, 0x0000, 0, fpremOut{f80{0xc000000000000000, 0x5fc4}, 0xb092, 0x0fff}},
	{"unmasked underflow, still too small: 0", f80{0x8000000000000000, 0xbfff}, f80{0xc350000000000000, 0xc00e}, 0x76f, 0x0000, 0, fpremOut{f80{0x0000000000000000, 0x8000}, 0xb0b0, 0x1fff}},
	{"unmasked invalid", f80{0x0000000000000000, 0x0000}, f80{0x8000000000000000, 0x7fff}, 0x37e, 0x4700, 0, fpremOut{f80{0x0000000000000000, 0x0000}, 0xf581, 0x9fff}},
	{"unmasked denormal", f80{0x0000000000000003, 0x0000}, f80{0x8000000000000000, 0x3fff}, 0x37d, 0x4700, 0, fpremOut{f80{0x0000000000000003, 0x0000}, 0xf582, 0x2fff}},
	{"unmasked precision: stored", f80{0x8000000000000001, 0x3fff}, f80{0xfffc000000000000, 0xc00c}, 0x35f, 0x0000, 0, fpremOut{f80{0x4000000000000000, 0x0000}, 0xb0b0, 0x2fff}},
	{"fldl2t, nearest", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4700, 8, fpremOut{f80{0xd49a784bcd1b8afe, 0x4000}, 0x6d00, 0x03ff}},
	{"fldl2t, down", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0x77f, 0x0000, 8, fpremOut{f80{0xd49a784bcd1b8afe, 0x4000}, 0x2800, 0x03ff}},
	{"fldl2t, up: one ulp more", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0xb7f, 0x0000, 8, fpremOut{f80{0xd49a784bcd1b8aff, 0x4000}, 0x2800, 0x03ff}},
	{"fldl2t, toward zero", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0xf7f, 0x4700, 8, fpremOut{f80{0xd49a784bcd1b8afe, 0x4000}, 0x6d00, 0x03ff}},
	{"fldl2t, up at 24-bit precision control", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0x8bf, 0x0000, 8, fpremOut{f80{0xd49a784bcd1b8aff, 0x4000}, 0x2800, 0x03ff}},
	{"fldl2t, stack overflow", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0x37f, 0x4500, 12, fpremOut{f80{0xc000000000000000, 0xffff}, 0x7f41, 0x8000}},
	{"fldl2t, unmasked stack overflow", f80{0x8000000000000000, 0x3fff}, f80{0x8000000000000000, 0x3fff}, 0xb7e, 0x4500, 12, fpremOut{f80{0x8000000000000000, 0x3fff}, 0xc7c1, 0x0000}},
}

// fscale keeps all 64 bits whatever the precision control, rounds only
// denormal and overflowing results (to the rounding control, with C1 for
// rounded up, UE/OE/PE), scales by 2^∓24576 under unmasked overflow and
// underflow, and handles infinite scales; fldl2t rounds up under the
// rounding control up and overflows the stack like any push. Unicorn gets
// the precision, the flags, huge scales and fldl2t's rounding wrong.
func TestX87Hardware(t *testing.T) {
	cases := make([]fpremIn, len(x87Hardware))
	for i, h := range x87Hardware {
		cases[i] = fpremIn{h.x, h.y, h.cw, h.cc, h.flags}
	}
	outs := runX87(t, cases)
	for i, h := range x87Hardware {
		if got := outs[i]; got != h.want {
			t.Errorf("%s: got %s sw %#04x tags %#04x; hardware %s sw %#04x tags %#04x",
				h.note, got.st0, got.sw, got.tw, h.want.st0, h.want.sw, h.want.tw)
		}
	}
}

// refScale is x·2^trunc(y) for finite nonzero x and finite y, rounded
// with big.Float to 64 bits, or to a multiple of the smallest denormal
// below 2^-16382, under rounding control rc, with all exceptions masked:
// the value (nil on overflow), whether it was rounded up in magnitude,
// and whether it was inexact.
func refScale(x, y f80, rc uint16) (*big.Float, bool, bool) {
	n, _ := f80Value(y).Int(nil)
	if n.CmpAbs(big.NewInt(1<<20)) > 0 {
		n.SetInt64(int64(n.Sign()) << 20)
	}
	exact := new(big.Float).SetMantExp(f80Value(x), int(n.Int64()))
	mode := [4]big.RoundingMode{big.ToNearestEven, big.ToNegativeInf, big.ToPositiveInf, big.ToZero}[rc]
	var r *big.Float
	if exact.MantExp(nil) > -16382 { // |exact| >= 2^-16382: 64 bits
		r = new(big.Float).SetPrec(64).SetMode(mode).Set(exact)
	} else { // a multiple of 2^-16445
		q := new(big.Float).SetMantExp(exact, 16445)
		bits := q.MantExp(nil)
		switch {
		case bits > 0:
			q = new(big.Float).SetPrec(uint(bits)).SetMode(mode).Set(q)
		default: // |q| < 1: 0 or 1 (in magnitude)
			up := mode == big.ToPositiveInf && q.Sign() > 0 || mode == big.ToNegativeInf && q.Sign() < 0 ||
				mode == big.ToNearestEven && cmpAbs(q, big.NewFloat(0.5)) > 0
			if up {
				q = big.NewFloat(float64(q.Sign()))
			} else {
				q = new(big.Float)
			}
		}
		r = new(big.Float).SetMantExp(q, -16445)
	}
	if r.MantExp(nil) > 16384 {
		return nil, false, true
	}
	return r, cmpAbs(r, exact) > 0, r.Cmp(exact) != 0
}

func cmpAbs(a, b *big.Float) int {
	return new(big.Float).Abs(a).Cmp(new(big.Float).Abs(b))
}

// Random fscale operands and control words (all exceptions masked)
// against refScale: the value, C1 and the underflow/precision flags; the
// overflows against the rounding control's choice of infinity or the
// largest finite value.
func TestFSCALEReference(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	cases := make([]fpremIn, 1500)
	for i := range cases {
		x := f80{m: r.Uint64() | 1<<63, se: uint16(r.Intn(2))<<15 | uint16(1+r.Intn(0x7ffe))}
		if r.Intn(5) == 0 {
			x = f80{m: r.Uint64()>>uint(r.Intn(64)) | 1, se: x.se & 0x8000}
		}
		n := (r.Intn(2*0x7fff) - 0x7fff)
		if r.Intn(3) == 0 { // near the denormal boundary
			n = -int(x.se&0x7fff) + r.Intn(130) - 64
		}
		y := f80{m: uint64(max(n, -n)) << 40, se: 0x3fff + 23}
		if n == 0 {
			y = f80{}
		} else {
			for y.m>>63 == 0 {
				y.m <<= 1
				y.se--
			}
			if n < 0 {
				y.se |= 0x8000
			}
			y.m |= r.Uint64() >> (y.se&0x7fff - 0x3fff + 1) // a fraction to truncate
		}
		cases[i] = fpremIn{x: x, y: y, cw: uint16(r.Intn(4))<<10 | uint16(r.Intn(4))<<8 | 0x7f}
	}
	outs := runX87(t, cases)
	bad := 0
	var over, tiny, rounded int
	for i, c := range cases {
		got := outs[i]
		rc := c.cw >> 10 & 3
		want, up, inexact := refScale(c.x, c.y, rc)
		var wantSW uint16
		var value f80
		switch {
		case want == nil: // overflow
			wantSW = swOE | swPE
			value = f80{m: ^uint64(0), se: c.x.se&0x8000 | 0x7ffe}
			if roundsAway(c.x.neg(), c.cw) {
				value, wantSW = f80{m: 1 << 63, se: c.x.se&0x8000 | 0x7fff}, wantSW|swC1
			}
		case inexact:
			wantSW = swUE | swPE
		}
		if up {
			wantSW |= swC1
		}
		if c.x.class() == clDenormal {
			wantSW |= swDE
		}
		sw := got.sw & (swC1 | 0x3f)
		ok := sw == wantSW
		if want == nil {
			ok = ok && got.st0 == value
		} else {
			ok = ok && got.st0.class() != clInf && f80Value(got.st0).Cmp(want) == 0
		}
		if !ok {
			if bad++; bad <= 10 {
				t.Errorf("%s scale %s cw %#04x: got %s sw %#04x, want %v sw %#04x", c.x, c.y, c.cw, got.st0, sw, want, wantSW)
			}
		}
		if want == nil {
			over++
		} else if got.st0.se&0x7fff == 0 {
			tiny++
		}
		if up {
			rounded++
		}
	}
	t.Logf("%d overflows, %d denormal or zero results, %d rounded up", over, tiny, rounded)
	if over < 100 || tiny < 100 || rounded < 100 {
		t.Errorf("%d overflows, %d denormal or zero results, %d rounded up: the sample misses cases", over, tiny, rounded)
	}
}
