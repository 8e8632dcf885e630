// Package decode decodes guest basic blocks once each: how many instructions
// a block holds (the emulator reports only its length in bytes) and what kind
// of instruction ends it (call, ret, jump...), which is how call tracking
// derives calls and returns without a per-instruction hook.
package decode

import (
	"golang.org/x/arch/x86/x86asm"

	"emuprof/trace"
)

// Info describes one decoded block.
type Info struct {
	Insns uint32    // instruction count
	End   trace.End // kind of the last instruction
	// Last is the offset of the last instruction from the block start.
	Last uint32
	// RDTSC lists the offsets of rdtsc/rdtscp instructions in the block;
	// the emulator must make them return virtual time.
	RDTSC []uint32
	// X87 lists the offsets of the x87 instructions the emulator computes
	// itself because the engine gets them wrong (fprem, fprem1, fscale,
	// fldl2t), in their plain two-byte form (d9 xx, no prefix).
	X87 []uint32
}

// Block decodes the code of one block (exactly the bytes the emulator
// translated). Undecodable bytes (what x86asm does not decode) count as
// one instruction covering the rest of the block. So does a truncated
// instruction: a block that ends in an instruction the engine refuses
// holds only its prefix and opcode bytes (x86asm would return the first
// prefix alone as an instruction, with no error).
func Block(code []byte) Info { return (*Decoder)(nil).Block(code) }

// Starts appends to dst the offset of each instruction of a block, the
// instructions Block counts (an undecodable rest is one instruction).
func Starts(code []byte, dst []uint32) []uint32 { return (*Decoder)(nil).Starts(code, dst) }

// A Decoder decodes blocks as Block and Starts do, remembering each
// instruction's length and operation by its leading bytes, so that the
// same instruction met again in other blocks is not decoded again:
// x86asm takes about 700 ns per instruction (it builds every operand),
// and a run meets tens of thousands of new blocks. One goroutine uses a
// Decoder; the nil Decoder remembers nothing.
type Decoder struct {
	// memo is direct-mapped by a hash of the key: a real program has
	// 5,000-15,000 keys, and a lost entry costs only a decoding.
	memo [memoSize]memoInsn
}

type memoInsn struct {
	key [2]uint64 // headKey's; its count byte is never 0 in a used entry
	len uint8
	op  x86asm.Op
}

const memoBits = 13
const memoSize = 1 << memoBits

// NewDecoder returns a Decoder with an empty memo.
func NewDecoder() *Decoder { return new(Decoder) }

// Block decodes one block, as the function Block.
func (d *Decoder) Block(code []byte) Info {
	var info Info
	off := 0
	for off < len(code) {
		n, op := d.next(code[off:])
		info.Insns++
		info.Last = uint32(off)
		if n == 0 {
			info.End = trace.EndOther
			return info
		}
		info.End = classify(op)
		switch op {
		case x86asm.RDTSC, x86asm.RDTSCP:
			info.RDTSC = append(info.RDTSC, uint32(off))
		case x86asm.FPREM, x86asm.FPREM1, x86asm.FSCALE, x86asm.FLDL2T:
			if n == 2 && code[off] == 0xd9 {
				info.X87 = append(info.X87, uint32(off))
			}
		}
		off += n
	}
	return info
}

// Starts appends instruction offsets, as the function Starts.
func (d *Decoder) Starts(code []byte, dst []uint32) []uint32 {
	off := 0
	for off < len(code) {
		dst = append(dst, uint32(off))
		n, _ := d.next(code[off:])
		if n == 0 {
			return dst
		}
		off += n
	}
	return dst
}

// next returns the length and operation of the instruction code starts
// with, length 0 when Block counts the rest as one instruction.
func (d *Decoder) next(code []byte) (int, x86asm.Op) {
	var key [2]uint64
	memo := false
	if d != nil {
		if key, memo = headKey(code); memo {
			m := &d.memo[memoSlot(key)]
			if m.key == key && int(m.len) <= len(code) {
				return int(m.len), m.op
			}
		}
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.Len == 0 || inst.Op == 0 {
		return 0, 0
	}
	if memo {
		d.memo[memoSlot(key)] = memoInsn{key, uint8(inst.Len), inst.Op}
	}
	return inst.Len, inst.Op
}

// headKey is the memo's key for the instruction code starts with: its
// legacy prefixes, REX, opcode bytes (one, 0f xx, 0f 38 xx or 0f 3a xx)
// and the byte after them (ModRM if it has one) and the next one when
// that ModRM would have a SIB, with their count. x86asm (decode1)
// branches only on bytes of these (in 64-bit mode): it reads
// displacements and immediates without looking at them, and a decoding
// that succeeds reads nothing past its length, so every instruction with
// this head has one length and operation (TestDecoderMemo checks it).
// VEX and EVEX encodings (c4, c5, 62 first) and more than four legacy
// prefixes have no key.
func headKey(code []byte) (key [2]uint64, ok bool) {
	if len(code) > 0 && (code[0] == 0xc4 || code[0] == 0xc5 || code[0] == 0x62) {
		return key, false
	}
	i := 0
	for ; i < len(code) && isLegacyPrefix(code[i]); i++ {
		if i == 4 {
			return key, false
		}
	}
	if i < len(code) && code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if i < len(code) && code[i] == 0x0f {
		i++
		if i < len(code) && (code[i] == 0x38 || code[i] == 0x3a) {
			i++
		}
	}
	n := i + 2 // the opcode byte and ModRM
	if n <= len(code) && code[i+1] < 0xc0 && code[i+1]&7 == 4 {
		n++ // SIB
	}
	n = min(n, len(code))
	var b [16]byte
	copy(b[:], code[:n])
	b[15] = byte(n)
	for j := range 8 {
		key[0] |= uint64(b[j]) << (8 * j)
		key[1] |= uint64(b[8+j]) << (8 * j)
	}
	return key, true
}

func memoSlot(key [2]uint64) uint64 {
	return (key[0]*0x9e3779b97f4a7c15 ^ key[1]*0xc2b2ae3d27d4eb4f) >> (64 - memoBits)
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65:
		return true
	}
	return false
}

func classify(op x86asm.Op) trace.End {
	switch op {
	case x86asm.CALL:
		return trace.EndCall
	case x86asm.RET, x86asm.LRET:
		return trace.EndRet
	case x86asm.JMP, x86asm.LJMP:
		return trace.EndJump
	case x86asm.SYSCALL:
		return trace.EndSyscall
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
		x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS, x86asm.JCXZ, x86asm.JECXZ,
		x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return trace.EndCond
	}
	return trace.EndOther
}
