// The guest CPU's registers: reads and writes, saved contexts, and the
// control state a Linux process starts with.

package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"emuprof/cpu"
	"unsafe"
)

// Registers, in the order of cpu.Regs' fields.
var regIDs = [...]C.int{
	C.UC_X86_REG_RAX, C.UC_X86_REG_RBX, C.UC_X86_REG_RCX, C.UC_X86_REG_RDX,
	C.UC_X86_REG_RSI, C.UC_X86_REG_RDI, C.UC_X86_REG_RBP, C.UC_X86_REG_RSP,
	C.UC_X86_REG_R8, C.UC_X86_REG_R9, C.UC_X86_REG_R10, C.UC_X86_REG_R11,
	C.UC_X86_REG_R12, C.UC_X86_REG_R13, C.UC_X86_REG_R14, C.UC_X86_REG_R15,
	C.UC_X86_REG_RIP, C.UC_X86_REG_EFLAGS, C.UC_X86_REG_FS_BASE, C.UC_X86_REG_GS_BASE,
}

// Control register bits Linux sets for every x86-64 process (arch/x86:
// cr4_init, fpu__init_cpu_generic).
const (
	cr0MP         = 1 << 1  // monitor coprocessor: wait/fwait honour TS
	cr0EM         = 1 << 2  // x87 emulation: must be clear or every x87 op traps
	cr0TS         = 1 << 3  // task switched: clear, the FPU state is live
	cr0NE         = 1 << 5  // native x87 error reporting
	cr4OSFXSR     = 1 << 9  // fxsave/fxrstor include XMM0-15 and MXCSR
	cr4OSXMMEXCPT = 1 << 10 // unmasked SSE exceptions raise #XM (SIGFPE), not #UD
)

// linuxControlRegisters gives the CPU the control state a Linux process
// runs under. Unicorn 2.0.1 resets CR4 to 0, and QEMU's fxsave/fxrstor then
// skip the XMM registers: glibc's lazy-binding trampoline
// (_dl_runtime_resolve_fxsave) would hand every first PLT call with a
// floating-point argument a zeroed xmm0 (issue 7). Its reset also tags all
// eight x87 registers valid, where a process starts with them empty (after
// finit): fxsave/fnstenv/fnsave would show a full stack.
func (e *Engine) linuxControlRegisters() error {
	cr0 := e.reg(C.UC_X86_REG_CR0)
	if err := e.setReg(C.UC_X86_REG_CR0, (cr0|cr0MP|cr0NE)&^(cr0EM|cr0TS)); err != nil {
		return err
	}
	cr4 := e.reg(C.UC_X86_REG_CR4)
	if err := e.setReg(C.UC_X86_REG_CR4, cr4|cr4OSFXSR|cr4OSXMMEXCPT); err != nil {
		return err
	}
	return e.setReg(C.UC_X86_REG_FPTAG, 0xffff) // 11 = empty, for each register
}

// ControlRegisters returns CR0 and CR4 (for tests of the CPU state).
func (e *Engine) ControlRegisters() (cr0, cr4 uint64) {
	return e.reg(C.UC_X86_REG_CR0), e.reg(C.UC_X86_REG_CR4)
}

// ReadRegs reads the general-purpose registers.
func (e *Engine) ReadRegs(r *cpu.Regs) error {
	var vals [len(regIDs)]C.uint64_t
	if err := ucErr("reading registers", C.emu_reg_read_batch(e.uc, &regIDs[0], &vals[0], C.int(len(regIDs)))); err != nil {
		return err
	}
	p := (*[len(regIDs)]uint64)(unsafe.Pointer(r))
	for i := range vals {
		p[i] = uint64(vals[i])
	}
	return nil
}

// WriteRegs writes the general-purpose registers.
func (e *Engine) WriteRegs(r *cpu.Regs) error {
	var vals [len(regIDs)]C.uint64_t
	p := (*[len(regIDs)]uint64)(unsafe.Pointer(r))
	for i := range vals {
		vals[i] = C.uint64_t(p[i])
	}
	return ucErr("writing registers", C.emu_reg_write_batch(e.uc, &regIDs[0], &vals[0], C.int(len(regIDs))))
}

// Reg reads one register by Unicorn id; used for RIP/RSP/FS base.
func (e *Engine) reg(id C.int) uint64 {
	var v C.uint64_t
	C.uc_reg_read(e.uc, id, unsafe.Pointer(&v))
	return uint64(v)
}

func (e *Engine) setReg(id C.int, v uint64) error {
	cv := C.uint64_t(v)
	return ucErr("writing register", C.uc_reg_write(e.uc, id, unsafe.Pointer(&cv)))
}

// PC returns RIP.
func (e *Engine) PC() uint64 { return e.reg(C.UC_X86_REG_RIP) }

// SP returns RSP.
func (e *Engine) SP() uint64 { return e.reg(C.UC_X86_REG_RSP) }

// SetFSBase sets the FS segment base (arch_prctl ARCH_SET_FS).
func (e *Engine) SetFSBase(v uint64) error { return e.setReg(C.UC_X86_REG_FS_BASE, v) }

// FSBase returns the FS segment base.
func (e *Engine) FSBase() uint64 { return e.reg(C.UC_X86_REG_FS_BASE) }

// context is a saved register state (including SSE and FS base).
type context struct{ c *C.uc_context }

// NewContext allocates a context; allocate one per thread and reuse it.
func (e *Engine) NewContext() (cpu.Context, error) {
	c := &context{}
	if err := ucErr("allocating context", C.uc_context_alloc(e.uc, &c.c)); err != nil {
		return nil, err
	}
	return c, nil
}

// Save stores the current registers into c.
func (e *Engine) Save(c cpu.Context) error {
	return ucErr("saving context", C.uc_context_save(e.uc, c.(*context).c))
}

// Restore loads the registers from c.
func (e *Engine) Restore(c cpu.Context) error {
	return ucErr("restoring context", C.uc_context_restore(e.uc, c.(*context).c))
}

// SetRDTSC sets the source of the guest's time stamp counter.
func (e *Engine) SetRDTSC(f func(uint64) uint64) { e.rdtsc = f }

// Free releases the context.
func (c *context) Free() {
	if c.c != nil {
		C.uc_context_free(c.c)
		c.c = nil
	}
}
