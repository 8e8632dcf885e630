package guest

import (
	"encoding/binary"
	"fmt"

	"emuprof/cpu"
	"emuprof/loader/cfi"
	"emuprof/mm"
)

const maxFrames = 24

// backtrace symbolizes a thread's stack as gdb's bt does: frame 0 is the
// pc; callers come from the .eh_frame CFI of each object (loader.Unwind),
// named by their call instruction (the return address - 1), and the walk
// stops after main, like gdb's (backtrace past-main off). When the pc has
// no CFI (musl's libc is built without unwind tables), callers come from
// the saved frame-pointer chain when it is intact, and otherwise from a
// scan of the stack for return addresses (words that point into
// executable memory just after a call instruction).
func (p *Process) backtrace(r *cpu.Regs) []string {
	lines := []string{"  #0  " + p.syms.FormatLong(r.RIP)}
	pcs := p.syms.Unwind(dwarfRegs(r), p.readWord, maxFrames+1)
	if len(pcs) > 1 {
		for i, ret := range pcs[1:] {
			lines = append(lines, fmt.Sprintf("  #%-2d %s", i+1, p.syms.FormatCaller(ret)))
			if p.syms.Lookup(ret-1).Func == "main" {
				break
			}
		}
		return lines
	}
	for i, pc := range p.callers(r) {
		lines = append(lines, fmt.Sprintf("  #%-2d %s", i+1, p.syms.FormatCaller(pc)))
		if p.syms.Lookup(pc-1).Func == "main" {
			break
		}
	}
	return lines
}

// dwarfRegs gives a thread's registers by DWARF number.
func dwarfRegs(r *cpu.Regs) cfi.Regs {
	var d cfi.Regs
	for n, v := range [...]uint64{r.RAX, r.RDX, r.RCX, r.RBX, r.RSI, r.RDI, r.RBP, r.RSP,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.RIP} {
		d.R[n], d.Known[n] = v, true
	}
	return d
}

// readWord reads a word of the guest's memory for the unwinder.
func (p *Process) readWord(addr uint64) (uint64, bool) {
	var b [8]byte
	if p.cpu.ReadMem(addr, b[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

func (p *Process) callers(r *cpu.Regs) []uint64 {
	stack, ok := p.as.Find(r.RSP)
	if !ok {
		return nil
	}
	if pcs := p.frameChain(r.RBP, r.RSP, stack); len(pcs) > 1 {
		return pcs
	}
	return p.scanStack(r.RSP, stack)
}

func (p *Process) frameChain(rbp, rsp uint64, stack mm.VMA) []uint64 {
	var pcs []uint64
	var b [16]byte
	for len(pcs) < maxFrames && rbp >= rsp && rbp+16 <= stack.End && rbp%8 == 0 {
		if p.cpu.ReadMem(rbp, b[:]) != nil {
			break
		}
		next, ret := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
		if !p.isReturnAddress(ret) {
			break
		}
		pcs = append(pcs, ret)
		if next <= rbp {
			break
		}
		rbp = next
	}
	return pcs
}

func (p *Process) scanStack(rsp uint64, stack mm.VMA) []uint64 {
	end := min(stack.End, rsp+64<<10)
	buf := make([]byte, end-rsp)
	if p.cpu.ReadMem(rsp, buf) != nil {
		return nil
	}
	var pcs []uint64
	for off := 0; off+8 <= len(buf) && len(pcs) < maxFrames; off += 8 {
		v := binary.LittleEndian.Uint64(buf[off:])
		if p.isReturnAddress(v) {
			pcs = append(pcs, v)
		}
	}
	return pcs
}

// isReturnAddress: v is in executable memory and follows a call instruction
// (e8 rel32, or ff /2 with a 2-, 3-, 6- or 7-byte encoding).
func (p *Process) isReturnAddress(v uint64) bool {
	vma, ok := p.as.Find(v)
	if !ok || vma.Prot&mm.ProtExec == 0 || v-vma.Start < 7 {
		return false
	}
	var b [7]byte
	if p.cpu.ReadMem(v-7, b[:]) != nil {
		return false
	}
	if b[2] == 0xe8 {
		return true
	}
	for _, n := range []int{2, 3, 6, 7} {
		if b[7-n] == 0xff && (b[8-n]>>3)&7 == 2 {
			return true
		}
	}
	return false
}
