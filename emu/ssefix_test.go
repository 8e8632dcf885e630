package emu

import (
	"encoding/binary"
	"math/rand"
	"runtime"
	"testing"

	"emuprof/cpu"
)

// sseOp is an SSE integer instruction ssefix.c computes: its opcode after
// 66 0F (a register operand), or its 71/72/73 group and /digit (an
// immediate count), and what it computes on one lane of w bytes.
type sseOp struct {
	name     string
	opcode   byte
	group    byte // 0x71..0x73 for the immediate form, with digit
	digit    byte
	w        int                         // lane width in bytes
	lane     func(a, b, w uint64) uint64 // elementwise: d's lane, s's lane
	shift    func(a, n, w uint64) uint64 // shifts: d's lane, the 64-bit count
	unsigned bool
}

func sext(v, w uint64) int64 { return int64(v<<(64-8*w)) >> (64 - 8*w) }

func clamp(v int64, lo, hi int64) uint64 {
	return uint64(min(max(v, lo), hi))
}

func signedSat(f func(a, b int64) int64) func(a, b, w uint64) uint64 {
	return func(a, b, w uint64) uint64 {
		lim := int64(1) << (8*w - 1)
		return clamp(f(sext(a, w), sext(b, w)), -lim, lim-1)
	}
}

func unsignedSat(f func(a, b int64) int64) func(a, b, w uint64) uint64 {
	return func(a, b, w uint64) uint64 { return clamp(f(int64(a), int64(b)), 0, int64(1)<<(8*w)-1) }
}

func mask(c bool) uint64 {
	if c {
		return ^uint64(0)
	}
	return 0
}

var (
	add   = func(a, b, w uint64) uint64 { return a + b }
	sub   = func(a, b, w uint64) uint64 { return a - b }
	srl   = func(a, n, w uint64) uint64 { return a >> n & ^mask(n >= 8*w) } // Go: a >> 64 is 0
	sll   = func(a, n, w uint64) uint64 { return a << n & ^mask(n >= 8*w) & (^uint64(0) >> (64 - 8*w)) }
	sra   = func(a, n, w uint64) uint64 { return uint64(sext(a, w) >> min(n, 8*w-1)) }
	addsS = signedSat(func(a, b int64) int64 { return a + b })
	subsS = signedSat(func(a, b int64) int64 { return a - b })
	addsU = unsignedSat(func(a, b int64) int64 { return a + b })
	subsU = unsignedSat(func(a, b int64) int64 { return a - b })
)

var sseOps = []sseOp{
	{name: "paddb", opcode: 0xfc, w: 1, lane: add},
	{name: "paddw", opcode: 0xfd, w: 2, lane: add},
	{name: "paddd", opcode: 0xfe, w: 4, lane: add},
	{name: "paddq", opcode: 0xd4, w: 8, lane: add},
	{name: "psubb", opcode: 0xf8, w: 1, lane: sub},
	{name: "psubw", opcode: 0xf9, w: 2, lane: sub},
	{name: "psubd", opcode: 0xfa, w: 4, lane: sub},
	{name: "psubq", opcode: 0xfb, w: 8, lane: sub},
	{name: "paddusb", opcode: 0xdc, w: 1, lane: addsU},
	{name: "paddsb", opcode: 0xec, w: 1, lane: addsS},
	{name: "psubusb", opcode: 0xd8, w: 1, lane: subsU},
	{name: "psubsb", opcode: 0xe8, w: 1, lane: subsS},
	{name: "paddusw", opcode: 0xdd, w: 2, lane: addsU},
	{name: "paddsw", opcode: 0xed, w: 2, lane: addsS},
	{name: "psubusw", opcode: 0xd9, w: 2, lane: subsU},
	{name: "psubsw", opcode: 0xe9, w: 2, lane: subsS},
	{name: "pminub", opcode: 0xda, w: 1, lane: func(a, b, w uint64) uint64 { return min(a, b) }},
	{name: "pmaxub", opcode: 0xde, w: 1, lane: func(a, b, w uint64) uint64 { return max(a, b) }},
	{name: "pminsw", opcode: 0xea, w: 2, lane: func(a, b, w uint64) uint64 { return uint64(min(sext(a, w), sext(b, w))) }},
	{name: "pmaxsw", opcode: 0xee, w: 2, lane: func(a, b, w uint64) uint64 { return uint64(max(sext(a, w), sext(b, w))) }},
	{name: "pand", opcode: 0xdb, w: 8, lane: func(a, b, w uint64) uint64 { return a & b }},
	{name: "pandn", opcode: 0xdf, w: 8, lane: func(a, b, w uint64) uint64 { return ^a & b }},
	{name: "por", opcode: 0xeb, w: 8, lane: func(a, b, w uint64) uint64 { return a | b }},
	{name: "pxor", opcode: 0xef, w: 8, lane: func(a, b, w uint64) uint64 { return a ^ b }},
	{name: "pcmpgtb", opcode: 0x64, w: 1, lane: func(a, b, w uint64) uint64 { return mask(sext(a, w) > sext(b, w)) }},
	{name: "pcmpgtw", opcode: 0x65, w: 2, lane: func(a, b, w uint64) uint64 { return mask(sext(a, w) > sext(b, w)) }},
	{name: "pcmpgtd", opcode: 0x66, w: 4, lane: func(a, b, w uint64) uint64 { return mask(sext(a, w) > sext(b, w)) }},
	{name: "pcmpeqb", opcode: 0x74, w: 1, lane: func(a, b, w uint64) uint64 { return mask(a == b) }},
	{name: "pcmpeqw", opcode: 0x75, w: 2, lane: func(a, b, w uint64) uint64 { return mask(a == b) }},
	{name: "pcmpeqd", opcode: 0x76, w: 4, lane: func(a, b, w uint64) uint64 { return mask(a == b) }},
	{name: "pavgb", opcode: 0xe0, w: 1, lane: func(a, b, w uint64) uint64 { return (a + b + 1) >> 1 }},
	{name: "pavgw", opcode: 0xe3, w: 2, lane: func(a, b, w uint64) uint64 { return (a + b + 1) >> 1 }},
	{name: "psrlw", opcode: 0xd1, group: 0x71, digit: 2, w: 2, shift: srl},
	{name: "psraw", opcode: 0xe1, group: 0x71, digit: 4, w: 2, shift: sra},
	{name: "psllw", opcode: 0xf1, group: 0x71, digit: 6, w: 2, shift: sll},
	{name: "psrld", opcode: 0xd2, group: 0x72, digit: 2, w: 4, shift: srl},
	{name: "psrad", opcode: 0xe2, group: 0x72, digit: 4, w: 4, shift: sra},
	{name: "pslld", opcode: 0xf2, group: 0x72, digit: 6, w: 4, shift: sll},
	{name: "psrlq", opcode: 0xd3, group: 0x73, digit: 2, w: 8, shift: srl},
	{name: "psllq", opcode: 0xf3, group: 0x73, digit: 6, w: 8, shift: sll},
}

// want computes op on d and s (s's low 8 bytes the count of a shift).
func (op sseOp) want(d, s [16]byte) [16]byte {
	var r [16]byte
	w := op.w
	lane := func(b [16]byte, i int) uint64 {
		var v [8]byte
		copy(v[:], b[i*w:i*w+w])
		return binary.LittleEndian.Uint64(v[:])
	}
	n := binary.LittleEndian.Uint64(s[:8])
	for i := 0; i < 16/w; i++ {
		var v uint64
		if op.shift != nil {
			v = op.shift(lane(d, i), n, uint64(w))
		} else {
			v = op.lane(lane(d, i), lane(s, i), uint64(w))
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		copy(r[i*w:], b[:w])
	}
	return r
}

// sseProgram loads xmm0 from 0x20000 and xmm1 from 0x20010, runs insn,
// stores xmm0 at 0x20020 and stops.
func sseProgram(insn ...byte) []byte {
	code := []byte{0xf3, 0x0f, 0x6f, 0x04, 0x25, 0x00, 0x00, 0x02, 0x00}      // movdqu xmm0, [0x20000]
	code = append(code, 0xf3, 0x0f, 0x6f, 0x0c, 0x25, 0x10, 0x00, 0x02, 0x00) // movdqu xmm1, [0x20010]
	code = append(code, 0x66, 0x0f, 0x6f, 0xd0)                               // movdqa xmm2, xmm0: two 8-byte stores
	code = append(code, 0x66, 0x0f, 0xef, 0xc0)                               // pxor xmm0, xmm0
	code = append(code, 0x66, 0x0f, 0x6f, 0xc2)                               // movdqa xmm0, xmm2
	code = append(code, insn...)
	code = append(code, 0xf3, 0x0f, 0x7f, 0x04, 0x25, 0x20, 0x00, 0x02, 0x00) // movdqu [0x20020], xmm0
	return append(code, 0x0f, 0x05)                                           // syscall
}

// The SSE helpers ssefix.c replaces compute what the instructions do: each
// in its register form on random operands and on interesting shift
// counts (above the width, high bits set), with both operands the same
// register, and the shifts in their immediate form (the count written in
// 4-byte halves). On Unicorn 2.0.1, libunicorn must have called them.
func TestSSEHelpers(t *testing.T) {
	rng := rand.New(rand.NewSource(26))
	counts := []uint64{0, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 1 << 32, 1<<32 | 3, 1 << 63}
	run := func(e *Engine, op sseOp, form string, d, s [16]byte, want [16]byte) {
		t.Helper()
		if err := e.WriteMem(0x20000, append(d[:], s[:]...)); err != nil {
			t.Fatal(err)
		}
		if st := e.Run(codeAddr, 0); st.Reason != cpu.StopSyscall {
			t.Fatalf("%s %s: stop %+v", op.name, form, st)
		}
		var got [16]byte
		if err := e.ReadMem(0x20020, got[:]); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s %s of %x, %x: got %x, want %x", op.name, form, d, s, got, want)
		}
	}
	random := func() (b [16]byte) {
		rng.Read(b[:])
		// Lanes near the saturation and comparison edges as well.
		if rng.Intn(3) == 0 {
			for i := range b {
				b[i] = []byte{0, 0x7f, 0x80, 0xff, 1}[rng.Intn(5)]
			}
		}
		return
	}
	for _, op := range sseOps {
		e := newEngine(t, Options{}, sseProgram(0x66, 0x0f, op.opcode, 0xc1)) // op xmm0, xmm1
		for i := 0; i < 40; i++ {
			d, s := random(), random()
			if op.shift != nil {
				binary.LittleEndian.PutUint64(s[:8], counts[i%len(counts)])
			}
			run(e, op, "xmm0, xmm1", d, s, op.want(d, s))
		}
		e = newEngine(t, Options{}, sseProgram(0x66, 0x0f, op.opcode, 0xc0)) // op xmm0, xmm0
		for i := 0; i < 8; i++ {
			d := random()
			run(e, op, "xmm0, xmm0", d, [16]byte{}, op.want(d, d))
		}
		if op.group == 0 {
			continue
		}
		for _, n := range []byte{0, 1, 5, 15, 16, 31, 32, 63, 64, 200, 255} {
			e = newEngine(t, Options{}, sseProgram(0x66, 0x0f, op.group, 0xc0|op.digit<<3, n)) // op xmm0, n
			var s [16]byte
			s[0] = n
			d := random()
			run(e, op, "xmm0, imm", d, s, op.want(d, s))
		}
	}
	if major, minor := unicornVersion(); runtime.GOOS == "linux" && runtime.GOARCH == "amd64" && major == 2 && minor == 0 && !sseReplaced() {
		t.Error("libunicorn ran its own SSE helpers, not ssefix.c's (is the executable linked with -rdynamic?)")
	}
}
