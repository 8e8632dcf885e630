package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"unsafe"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/cpu"
	"emuprof/trace"
)

// Instructions the guest's CPU has (its cpuid, answered in faults.c, says so)
// but Unicorn 2.0.1 refuses with #UD: popcnt. Unicorn's translator checks
// POPCNT in its own CPU model's feature words, which lack it whatever model
// uc_ctl_set_cpu_model selects (measured: every model gives #UD), so a guest
// that asks cpuid and then counts bits natively would die of SIGILL. Run
// executes such an instruction here and resumes after it.

// gprIDs are the general-purpose registers in encoding order (x86asm's
// AX..R15W, EAX..R15L and RAX..R15 follow it).
var gprIDs = [16]C.int{
	C.UC_X86_REG_RAX, C.UC_X86_REG_RCX, C.UC_X86_REG_RDX, C.UC_X86_REG_RBX,
	C.UC_X86_REG_RSP, C.UC_X86_REG_RBP, C.UC_X86_REG_RSI, C.UC_X86_REG_RDI,
	C.UC_X86_REG_R8, C.UC_X86_REG_R9, C.UC_X86_REG_R10, C.UC_X86_REG_R11,
	C.UC_X86_REG_R12, C.UC_X86_REG_R13, C.UC_X86_REG_R14, C.UC_X86_REG_R15,
}

// gpr maps an x86asm register to its Unicorn id and width in bytes.
func gpr(r x86asm.Reg) (C.int, int, bool) {
	switch {
	case r >= x86asm.AX && r <= x86asm.R15W:
		return gprIDs[r-x86asm.AX], 2, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return gprIDs[r-x86asm.EAX], 4, true
	case r >= x86asm.RAX && r <= x86asm.R15:
		return gprIDs[r-x86asm.RAX], 8, true
	}
	return 0, 0, false
}

func widthMask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}

// fetchInsn reads up to 15 bytes of code at pc (fewer at the end of the
// mapped memory).
func (e *Engine) fetchInsn(pc uint64) []byte {
	var buf [15]byte
	n := 0
	for n < len(buf) {
		// Read up to the end of the page at once; the next page may be unmapped.
		chunk := min(len(buf)-n, int(0x1000-(pc+uint64(n))&0xfff))
		if C.uc_mem_read(e.uc, C.uint64_t(pc+uint64(n)), unsafe.Pointer(&buf[n]), C.size_t(chunk)) != C.UC_ERR_OK {
			break
		}
		n += chunk
	}
	return buf[:n]
}

// effectiveAddr computes a memory operand's linear address (FS and GS
// overrides add their bases; RIP-relative counts from the next instruction).
func (e *Engine) effectiveAddr(m x86asm.Mem, next uint64, addrSize int) (uint64, bool) {
	value := func(r x86asm.Reg) (uint64, bool) {
		switch r {
		case 0:
			return 0, true
		case x86asm.RIP, x86asm.EIP:
			return next, true
		}
		id, n, ok := gpr(r)
		if !ok {
			return 0, false
		}
		return e.reg(id) & widthMask(n), true
	}
	base, ok1 := value(m.Base)
	index, ok2 := value(m.Index)
	if !ok1 || !ok2 {
		return 0, false
	}
	addr := base + index*uint64(m.Scale) + uint64(m.Disp)
	if addrSize == 32 {
		addr &= 0xffffffff
	}
	switch m.Segment {
	case x86asm.FS:
		addr += e.reg(C.UC_X86_REG_FS_BASE)
	case x86asm.GS:
		addr += e.reg(C.UC_X86_REG_GS_BASE)
	}
	return addr, true
}

// pushRead records a memory read the engine's hooks did not see, stamped
// like theirs.
func (e *Engine) pushRead(addr uint64, size int) {
	if !e.memEvents {
		return
	}
	e.Emit(trace.Event{Addr: addr, Time: int64(e.st.cur_time), Size: uint32(size), Tid: uint32(e.st.tid), Kind: trace.KindRead})
}

// Flags popcnt defines: ZF from the source, the others cleared.
const (
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagAF = 1 << 4
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagOF = 1 << 11
)

// emulateMissing executes the instruction at RIP if it is one the engine
// refuses but the advertised CPU has. It returns false if it is not (the
// guest then gets SIGILL as before), or a fault stop if its memory operand
// is not readable.
func (e *Engine) emulateMissing() (done bool, fault *cpu.Stop) {
	pc := e.PC()
	inst, err := x86asm.Decode(e.fetchInsn(pc), 64)
	if err != nil || inst.Op != x86asm.POPCNT {
		return false, nil
	}
	next := pc + uint64(inst.Len)
	dst, width, ok := gpr(inst.Args[0].(x86asm.Reg))
	if !ok {
		return false, nil
	}
	var src uint64
	switch a := inst.Args[1].(type) {
	case x86asm.Reg:
		id, _, ok := gpr(a)
		if !ok {
			return false, nil
		}
		src = e.reg(id)
	case x86asm.Mem:
		addr, ok := e.effectiveAddr(a, next, inst.AddrSize)
		if !ok {
			return false, nil
		}
		var b [8]byte
		if C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&b[0]), C.size_t(width)) != C.UC_ERR_OK {
			return true, &cpu.Stop{Reason: cpu.StopFault, FaultAddr: addr, FaultAccess: cpu.FaultRead}
		}
		e.pushRead(addr, width)
		for i := width - 1; i >= 0; i-- {
			src = src<<8 | uint64(b[i])
		}
	default:
		return false, nil
	}
	src &= widthMask(width)
	count := uint64(0)
	for v := src; v != 0; v &= v - 1 {
		count++
	}
	result := count
	if width == 2 { // a 16-bit destination keeps its upper bits
		result = e.reg(dst)&^0xffff | count
	}
	flags := e.reg(C.UC_X86_REG_EFLAGS) &^ (flagCF | flagPF | flagAF | flagZF | flagSF | flagOF)
	if src == 0 {
		flags |= flagZF
	}
	for _, w := range []struct {
		id C.int
		v  uint64
	}{{dst, result}, {C.UC_X86_REG_EFLAGS, flags}, {C.UC_X86_REG_RIP, next}} {
		if err := e.setReg(w.id, w.v); err != nil {
			return false, nil
		}
	}
	return true, nil
}
