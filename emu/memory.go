// Guest memory accesses from Go (the kernel's side); hostmem.go maps it.

package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"emuprof/mm"
	"unsafe"
)

// ucProt converts a guest protection to Unicorn's. PROT_WRITE and
// PROT_EXEC imply reading, as x86-64 page tables make them without
// protection keys (Linux maps write-only and execute-only memory readable
// on such CPUs, and so does emuprof's virtual one).
func ucProt(p mm.Prot) C.uint32_t {
	var r C.uint32_t
	if p != 0 {
		r |= C.UC_PROT_READ
	}
	if p&mm.ProtWrite != 0 {
		r |= C.UC_PROT_WRITE
	}
	if p&mm.ProtExec != 0 {
		r |= C.UC_PROT_EXEC
	}
	return r
}

// ReadMem copies guest memory into p.
func (e *Engine) ReadMem(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return ucErrf(C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p))), "reading %d bytes at %#x", uint64(len(p)), addr)
}

// WriteMem copies p into guest memory, as the kernel does (a read(2) into
// a buffer, a signal frame). Code translated from the pages it changes is
// dropped: Unicorn does that for the guest's own stores, not for
// uc_mem_write, so a kernel write into code that already ran would
// otherwise leave the old translation running.
func (e *Engine) WriteMem(addr uint64, p []byte) error {
	if err := e.writeMem(addr, p); err != nil {
		return err
	}
	if len(e.codePages) > 0 {
		e.forgetCode(addr, uint64(len(p)))
	}
	return nil
}

// writeMem copies p into guest memory and nothing else: patch rewrites an
// instruction of the block being translated with it (and retranslates).
func (e *Engine) writeMem(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return ucErrf(C.uc_mem_write(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p))), "writing %d bytes at %#x", uint64(len(p)), addr)
}
