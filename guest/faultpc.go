package guest

import (
	"golang.org/x/arch/x86/x86asm"

	"emuprof/cpu"
)

// faultPC returns the address of the instruction that made the memory
// access fault at addr. Without memory hooks the engine reports a fault
// with RIP at the start of the translated block (the registers are
// precise: QEMU syncs them before every access that may fault); a handler
// that fixes the instruction up, or a runtime that turns the fault into a
// call (Go's sigpanic), needs the instruction itself. The registers hold
// the faulting instruction's inputs, so it is the first instruction of the
// block whose memory operand, computed from them, covers addr. It returns
// r.RIP when none does.
func (p *Process) faultPC(r *cpu.Regs, addr uint64) uint64 {
	var code [256]byte
	n := len(code)
	for n > 0 && p.cpu.ReadMem(r.RIP, code[:n]) != nil {
		n -= 16
	}
	pc := r.RIP
	for off := 0; off < n; {
		in, err := x86asm.Decode(code[off:n], 64)
		if err != nil {
			break
		}
		next := pc + uint64(off+in.Len)
		if touches(&in, r, next, addr) {
			return pc + uint64(off)
		}
		if endsBlock(in.Op) {
			break
		}
		off += in.Len
	}
	return r.RIP
}

// touches reports whether instruction in (next: the address after it)
// accesses addr, its operands computed from r.
func touches(in *x86asm.Inst, r *cpu.Regs, next, addr uint64) bool {
	within := func(ea, size uint64) bool { return addr-ea < size }
	size := uint64(max(in.MemBytes, 1))
	for _, a := range in.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		ea := uint64(m.Disp)
		if m.Base == x86asm.RIP {
			ea += next
		} else if m.Base != 0 {
			ea += regValue(r, m.Base)
		}
		if m.Index != 0 {
			ea += regValue(r, m.Index) * uint64(m.Scale)
		}
		switch m.Segment {
		case x86asm.FS:
			ea += r.FSBase
		case x86asm.GS:
			ea += r.GSBase
		}
		if within(ea, size) || within(ea, 64) && size > 64 {
			return true
		}
	}
	switch in.Op {
	case x86asm.PUSH, x86asm.CALL, x86asm.PUSHFQ:
		return within(r.RSP-8, 8)
	case x86asm.POP, x86asm.RET, x86asm.POPFQ:
		return within(r.RSP, 8)
	case x86asm.LEAVE:
		return within(r.RBP, 8)
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ, x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ,
		x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ, x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ:
		return within(r.RDI&^4095, 8192) || within(r.RSI&^4095, 8192)
	}
	return false
}

// endsBlock reports whether op ends a translated block.
func endsBlock(op x86asm.Op) bool {
	switch op {
	case x86asm.JMP, x86asm.CALL, x86asm.RET, x86asm.SYSCALL, x86asm.INT, x86asm.HLT, x86asm.UD2,
		x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE,
		x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS, x86asm.JRCXZ,
		x86asm.JECXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return true
	}
	return false
}

// regValue returns the value of a general-purpose register operand
// (any width: the address computation uses the 64-bit register).
func regValue(r *cpu.Regs, reg x86asm.Reg) uint64 {
	var full x86asm.Reg
	switch {
	case reg >= x86asm.RAX && reg <= x86asm.R15:
		full = reg
	case reg >= x86asm.EAX && reg <= x86asm.R15L:
		full = reg - x86asm.EAX + x86asm.RAX
	default:
		return 0
	}
	v := [...]uint64{r.RAX, r.RCX, r.RDX, r.RBX, r.RSP, r.RBP, r.RSI, r.RDI,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15}[full-x86asm.RAX]
	if reg >= x86asm.EAX && reg <= x86asm.R15L {
		v &= 0xffffffff
	}
	return v
}
