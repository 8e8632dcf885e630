package timemodel

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Instruction classes of the table.
type class uint8

const (
	cInt class = iota
	cMul
	cDiv
	cFP
	cSIMD
	cFPDiv
	cString
	cAtomic
	cSerial
	cPause
	nClasses
)

// classOf classifies one decoded instruction.
func classOf(in *x86asm.Inst) class {
	for _, p := range in.Prefix {
		if p&0xff == x86asm.PrefixLOCK {
			return cAtomic
		}
	}
	switch in.Op {
	case x86asm.IMUL, x86asm.MUL, x86asm.MULX:
		return cMul
	case x86asm.DIV, x86asm.IDIV:
		return cDiv
	case x86asm.XCHG:
		// xchg with a memory operand is locked implicitly.
		for _, a := range in.Args {
			if _, ok := a.(x86asm.Mem); ok {
				return cAtomic
			}
		}
		return cInt
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ, x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ, x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ:
		return cString // (x86asm names the SSE movsd and cmpsd MOVSD_XMM, CMPSD_XMM)
	case x86asm.CPUID, x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE, x86asm.RDTSC, x86asm.RDTSCP, x86asm.XGETBV, x86asm.RDRAND:
		return cSerial
	case x86asm.PAUSE:
		return cPause
	case x86asm.DIVSS, x86asm.DIVSD, x86asm.DIVPS, x86asm.DIVPD, x86asm.SQRTSS, x86asm.SQRTSD, x86asm.SQRTPS, x86asm.SQRTPD,
		x86asm.FDIV, x86asm.FDIVR, x86asm.FDIVP, x86asm.FDIVRP, x86asm.FIDIV, x86asm.FIDIVR, x86asm.FSQRT, x86asm.FPREM, x86asm.FPREM1,
		x86asm.FSIN, x86asm.FCOS, x86asm.FSINCOS, x86asm.FPTAN, x86asm.FPATAN, x86asm.F2XM1, x86asm.FYL2X, x86asm.FYL2XP1:
		return cFPDiv
	}
	name := in.Op.String()
	switch {
	case isSIMD(name):
		return cSIMD
	case isFP(name):
		return cFP
	}
	return cInt
}

// isSIMD says whether an opcode name is a SIMD integer, move, shuffle or
// logic instruction: one cycle of latency, several per cycle.
func isSIMD(name string) bool {
	switch {
	case strings.HasPrefix(name, "PUSH"), strings.HasPrefix(name, "POP"), name == "PAUSE":
		return false
	case name[0] == 'P', strings.HasPrefix(name, "MOVDQ"), strings.HasPrefix(name, "MOVAP"), strings.HasPrefix(name, "MOVUP"),
		strings.HasPrefix(name, "MOVQ"), name == "MOVD", strings.HasPrefix(name, "UNPCK"), strings.HasPrefix(name, "SHUFP"),
		strings.HasPrefix(name, "XORP"), strings.HasPrefix(name, "ANDP"), strings.HasPrefix(name, "ANDNP"), strings.HasPrefix(name, "ORP"),
		strings.HasPrefix(name, "MOVS") && strings.HasSuffix(name, "_XMM"), name == "MOVLPD", name == "MOVHPD", name == "MOVLPS", name == "MOVHPS":
		return true
	}
	return false
}

// isFP says whether an opcode name is an x87 or SSE arithmetic
// instruction: x87 names start with F, SSE scalar and packed ones end in
// SS/SD/PS/PD, conversions start with CVT.
func isFP(name string) bool {
	switch {
	case name[0] == 'F', strings.HasPrefix(name, "CVT"), strings.HasPrefix(name, "UCOMIS"), strings.HasPrefix(name, "COMIS"):
		return true
	}
	for _, s := range []string{"SS", "SD", "PS", "PD"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// decoded is what a translated block costs without its memory accesses
// and branch outcome.
type decoded struct {
	ps       int64  // picoseconds
	insns    uint32 // instructions
	last     uint32 // offset of the last instruction
	indirect bool   // the last instruction is a jump or call through a register or memory
	atomics  uint8  // locked instructions (coherence.locked)
	fence    bool   // a locked or serializing instruction
	fused    uint32 // flag-writer + jcc pairs priced as one op
}

// fusable says whether in, followed by a conditional jump, fuses with it
// into one macro-op (fuse.cmp, fuse.alu): CMP/TEST, and the ALU ops that
// write a register, whose operands are registers, an immediate and at
// most one memory operand without an immediate.
func (t *Table) fusable(in *x86asm.Inst) bool {
	var cmp bool
	switch in.Op {
	case x86asm.CMP, x86asm.TEST:
		if !t.FuseCmp {
			return false
		}
		cmp = true
	case x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.INC, x86asm.DEC:
		if !t.FuseALU {
			return false
		}
	default:
		return false
	}
	var mem, imm bool
	for i, a := range in.Args {
		switch a.(type) {
		case x86asm.Mem:
			if i == 0 && !cmp {
				return false // a read-modify-write of memory
			}
			mem = true
		case x86asm.Imm:
			imm = true
		}
	}
	return !(mem && imm)
}

// isJcc says whether op is a conditional jump on the flags.
func isJcc(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE,
		x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		return true
	}
	return false
}

func (t *Table) decodeBlock(code []byte) decoded {
	var d decoded
	var sum int64
	cost := [nClasses]int64{t.Int, t.Mul, t.Div, t.FP, t.SIMD, t.FPDiv, t.String, t.Atomic, t.Serial, t.Pause}
	fuse := false // the previous instruction fuses with a following jcc
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], 64)
		d.insns++
		d.last = uint32(off)
		if err != nil || in.Len == 0 || in.Op == 0 {
			sum += cost[cInt] // as decode.Block: the rest is one instruction
			break
		}
		cl := classOf(&in)
		if fuse && isJcc(in.Op) {
			d.fused++ // the pair is one op: the flag-writer's cost
		} else {
			sum += cost[cl]
		}
		fuse = cl == cInt && t.fusable(&in)
		if cl == cAtomic && d.atomics < 255 {
			d.atomics++
		}
		d.fence = d.fence || cl == cAtomic || cl == cSerial
		d.indirect = false
		if in.Op == x86asm.JMP || in.Op == x86asm.CALL {
			_, rel := in.Args[0].(x86asm.Rel)
			d.indirect = !rel
		}
		off += in.Len
	}
	d.ps = t.ps(sum)
	return d
}
