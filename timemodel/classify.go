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
}

func (t *Table) decodeBlock(code []byte) decoded {
	var d decoded
	var sum int64
	cost := [nClasses]int64{t.Int, t.Mul, t.Div, t.FP, t.SIMD, t.FPDiv, t.String, t.Atomic, t.Serial, t.Pause}
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], 64)
		d.insns++
		d.last = uint32(off)
		if err != nil || in.Len == 0 || in.Op == 0 {
			sum += cost[cInt] // as decode.Block: the rest is one instruction
			break
		}
		cl := classOf(&in)
		sum += cost[cl]
		if cl == cAtomic && d.atomics < 255 {
			d.atomics++
		}
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
