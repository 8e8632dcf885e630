package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"emuprof/cpu"
)

// The x87/SSE state as an fxsave64 image (Intel SDM vol. 1, 10.5.1,
// "FXSAVE Area"), for signal frames: Linux's fpstate on a CPU without
// XSAVE is exactly this 512-byte area (struct _fpstate_64 in
// arch/x86/include/uapi/asm/sigcontext.h).
//
//	0   FCW (u16)      2  FSW (u16)      4  abridged FTW (u8)   6 FOP (u16)
//	8   FIP (u64)      16 FDP (u64)      24 MXCSR (u32)        28 MXCSR_MASK (u32)
//	32  ST(0)..ST(7), 16 bytes each (10 used)
//	160 XMM0..XMM15, 16 bytes each
//	416 reserved (464..511: software bytes, left zero: no XSAVE)

var xmmIDs = [16]C.int{C.UC_X86_REG_XMM0, C.UC_X86_REG_XMM1, C.UC_X86_REG_XMM2, C.UC_X86_REG_XMM3,
	C.UC_X86_REG_XMM4, C.UC_X86_REG_XMM5, C.UC_X86_REG_XMM6, C.UC_X86_REG_XMM7,
	C.UC_X86_REG_XMM8, C.UC_X86_REG_XMM9, C.UC_X86_REG_XMM10, C.UC_X86_REG_XMM11,
	C.UC_X86_REG_XMM12, C.UC_X86_REG_XMM13, C.UC_X86_REG_XMM14, C.UC_X86_REG_XMM15}

// mxcsrMask is the MXCSR_MASK an fxsave stores (every bit but the
// reserved ones, DAZ included), as QEMU's fxsave does.
const mxcsrMask = 0xffff

// ReadFPState stores the x87 and SSE registers in b as fxsave64 would.
func (e *Engine) ReadFPState(b *[cpu.FPStateSize]byte) error {
	clear(b[:])
	le := binary.LittleEndian
	f := e.readFPU()
	le.PutUint16(b[0:], f.cw)
	le.PutUint16(b[2:], f.sw)
	var ftw byte
	for phys := 0; phys < 8; phys++ {
		if f.tags>>(2*phys)&3 != 3 {
			ftw |= 1 << phys
		}
	}
	b[4] = ftw
	le.PutUint16(b[6:], uint16(e.reg(C.UC_X86_REG_FOP)))
	le.PutUint64(b[8:], e.reg(C.UC_X86_REG_FIP))
	le.PutUint64(b[16:], e.reg(C.UC_X86_REG_FDP))
	le.PutUint32(b[24:], uint32(e.reg(C.UC_X86_REG_MXCSR)))
	le.PutUint32(b[28:], mxcsrMask)
	for i := 0; i < 8; i++ {
		v := e.readST(i)
		le.PutUint64(b[32+16*i:], v.m)
		le.PutUint16(b[32+16*i+8:], v.se)
	}
	for i, id := range xmmIDs {
		var x [16]byte
		if err := ucErr("reading xmm", C.uc_reg_read(e.uc, id, unsafe.Pointer(&x[0]))); err != nil {
			return err
		}
		copy(b[160+16*i:], x[:])
	}
	return nil
}

// WriteFPState loads the x87 and SSE registers from an fxsave64 image, as
// fxrstor64 would (MXCSR's reserved bits are the caller's to clear).
func (e *Engine) WriteFPState(b *[cpu.FPStateSize]byte) error {
	le := binary.LittleEndian
	if err := e.setReg(C.UC_X86_REG_FPCW, uint64(le.Uint16(b[0:]))); err != nil {
		return err
	}
	if err := e.setReg(C.UC_X86_REG_FPSW, uint64(le.Uint16(b[2:]))); err != nil {
		return err
	}
	var tags uint64
	for phys := 0; phys < 8; phys++ {
		if b[4]>>phys&1 == 0 {
			tags |= 3 << (2 * phys)
		}
	}
	if err := e.setReg(C.UC_X86_REG_FPTAG, tags); err != nil {
		return err
	}
	_ = e.setReg(C.UC_X86_REG_FOP, uint64(le.Uint16(b[6:])))
	_ = e.setReg(C.UC_X86_REG_FIP, le.Uint64(b[8:]))
	_ = e.setReg(C.UC_X86_REG_FDP, le.Uint64(b[16:]))
	if err := e.setReg(C.UC_X86_REG_MXCSR, uint64(le.Uint32(b[24:])&mxcsrMask)); err != nil {
		return err
	}
	for i := 0; i < 8; i++ {
		e.writeST(i, f80{m: le.Uint64(b[32+16*i:]), se: le.Uint16(b[32+16*i+8:])})
	}
	for i, id := range xmmIDs {
		var x [16]byte
		copy(x[:], b[160+16*i:])
		if err := ucErr("writing xmm", C.uc_reg_write(e.uc, id, unsafe.Pointer(&x[0]))); err != nil {
			return err
		}
	}
	return nil
}
