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
// translated). Undecodable bytes (x86asm knows no VEX/EVEX encodings; the
// emulated CPU does not advertise AVX, so guests do not select such code)
// count as one instruction covering the rest of the block. So does a
// truncated instruction: a block that ends in an instruction the engine
// refuses holds only its prefix and opcode bytes (x86asm would return the
// first prefix alone as an instruction, with no error).
func Block(code []byte) Info {
	var info Info
	off := 0
	for off < len(code) {
		inst, err := x86asm.Decode(code[off:], 64)
		info.Insns++
		info.Last = uint32(off)
		if err != nil || inst.Len == 0 || inst.Op == 0 {
			info.End = trace.EndOther
			return info
		}
		info.End = classify(inst.Op)
		switch inst.Op {
		case x86asm.RDTSC, x86asm.RDTSCP:
			info.RDTSC = append(info.RDTSC, uint32(off))
		case x86asm.FPREM, x86asm.FPREM1, x86asm.FSCALE, x86asm.FLDL2T:
			if inst.Len == 2 && code[off] == 0xd9 {
				info.X87 = append(info.X87, uint32(off))
			}
		}
		off += inst.Len
	}
	return info
}

// Starts appends to dst the offset of each instruction of a block, the
// instructions Block counts (an undecodable rest is one instruction).
func Starts(code []byte, dst []uint32) []uint32 {
	off := 0
	for off < len(code) {
		dst = append(dst, uint32(off))
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 || inst.Op == 0 {
			return dst
		}
		off += inst.Len
	}
	return dst
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
