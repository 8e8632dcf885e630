// Synchronous signals: the signal of a fault or CPU exception of the running
// thread, delivered at once.

package guest

import (
	"fmt"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/sched"
	"emuprof/syscalls"
)

// fault delivers the synchronous signal of a fault of the running thread
// to its handler (force_sig_fault); blocked, ignored or without a handler,
// the process dies of it.
func (p *Process) fault(t *sched.Thread, sig, code int, addr, trapno, errCode uint64, what string) *Result {
	if !p.catches(t, sig) {
		return p.crash(sig, what)
	}
	s := &p.threads[t.Tid].sig
	s.err, s.trapno = errCode, trapno
	if trapno == 14 {
		s.cr2 = addr
	}
	p.kernel.Send(t.Tid, syscalls.FaultInfo(sig, code, addr), false)
	return p.deliverSignals(t)
}

// catches reports whether thread t runs a handler for the synchronous
// signal sig: a blocked or ignored one kills the process.
func (p *Process) catches(t *sched.Thread, sig int) bool {
	act := p.kernel.Action(sig)
	return act.Handler != syscalls.SigDfl && act.Handler != syscalls.SigIgn &&
		p.kernel.SigMask(t.Tid)&(1<<(sig-1)) == 0
}

// memoryFault delivers SIGSEGV for a page fault (do_user_addr_fault):
// SEGV_MAPERR or SEGV_ACCERR, si_addr and cr2 the address, the error code
// user|write|fetch|protection; SIGBUS (BUS_ADRERR) for a page of a file
// mapping past the end of the file.
func (p *Process) memoryFault(t *sched.Thread, stop *cpu.Stop) *Result {
	sig, what, code, ec := sigSEGV, "unmapped", syscalls.SegvMaperr, uint64(4)
	if p.pastEOF(stop) {
		// A page of a file mapping past the end of the file (mm's
		// eof.go), the access allowed: SIGBUS, as do_sigbus.
		sig, what, code = sigBUS, "past-the-end-of-file", syscalls.BusAdrerr
	} else if stop.FaultProt {
		what, code = "protected", syscalls.SegvAccerr
		if v, ok := p.as.Find(stop.FaultAddr); ok && v.Prot != 0 {
			ec |= 1 // present: a PROT_NONE page has no page table entry
		}
	}
	switch stop.FaultAccess {
	case cpu.FaultWrite:
		ec |= 2
	case cpu.FaultFetch:
		ec |= 16
	}
	if stop.FaultAccess != cpu.FaultFetch && p.catches(t, sig) {
		// The handler sees the faulting instruction, not its block.
		var r cpu.Regs
		if err := p.cpu.ReadRegs(&r); err != nil {
			return p.internal(err)
		}
		if pc := p.faultPC(&r, stop.FaultAddr); pc != r.RIP {
			r.RIP = pc
			if err := p.cpu.WriteRegs(&r); err != nil {
				return p.internal(err)
			}
		}
	}
	return p.fault(t, sig, code, stop.FaultAddr, 14, ec,
		fmt.Sprintf("%s of %s address %#x", stop.FaultAccess, what, stop.FaultAddr))
}

// pastEOF says whether the fault stop is an access the mapping allows to a
// page past the end of its file (the engine sees an unbacked page, mapped
// or not in its memory): Linux checks the protection first (SIGSEGV), then
// finds no page of the file (SIGBUS).
func (p *Process) pastEOF(stop *cpu.Stop) bool {
	v, ok := p.as.Find(stop.FaultAddr)
	if !ok || !p.as.PastEOF(stop.FaultAddr) {
		return false
	}
	switch stop.FaultAccess {
	case cpu.FaultWrite:
		return v.Prot&mm.ProtWrite != 0
	case cpu.FaultFetch:
		return v.Prot&mm.ProtExec != 0
	}
	return v.Prot != mm.ProtNone // x86: writable or executable pages are readable
}

// exception delivers the signal of CPU exception vector intno (the traps
// of arch/x86/kernel/traps.c): divide error SIGFPE/FPE_INTDIV, int3
// SIGTRAP/SI_KERNEL, invalid opcode SIGILL/ILL_ILLOPN, others SIGSEGV.
func (p *Process) exception(t *sched.Thread, intno uint32) *Result {
	sig, what := intrSignal(intno)
	if intno == 0x80 {
		return p.crash(sig, what)
	}
	code, addr := syscalls.SIKernel, uint64(0)
	switch sig {
	case sigFPE:
		code, addr = syscalls.FpeIntdiv, p.cpu.PC()
	case sigILL:
		code, addr = syscalls.IllIllopn, p.cpu.PC()
	}
	return p.fault(t, sig, code, addr, uint64(intno), 0, what)
}
