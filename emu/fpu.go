package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"
)

// The x87 state as Run sees it between two uc_emu_start calls, for the
// instructions x87.go computes. Unicorn gives ST(i) relative to TOP (10
// bytes, little-endian significand then sign/exponent), FPSW with TOP in
// bits 11-13, and FPTAG as two bits per physical register (3 = empty; it
// only keeps empty/not empty and derives the rest from the value).

var stIDs = [8]C.int{C.UC_X86_REG_ST0, C.UC_X86_REG_ST1, C.UC_X86_REG_ST2, C.UC_X86_REG_ST3,
	C.UC_X86_REG_ST4, C.UC_X86_REG_ST5, C.UC_X86_REG_ST6, C.UC_X86_REG_ST7}

func (e *Engine) readST(i int) f80 {
	var b [16]byte
	C.uc_reg_read(e.uc, stIDs[i], unsafe.Pointer(&b[0]))
	return f80{m: binary.LittleEndian.Uint64(b[:8]), se: binary.LittleEndian.Uint16(b[8:10])}
}

func (e *Engine) writeST(i int, v f80) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], v.m)
	binary.LittleEndian.PutUint16(b[8:10], v.se)
	C.uc_reg_write(e.uc, stIDs[i], unsafe.Pointer(&b[0]))
}

// fpuState is what an x87 instruction reads besides its operands.
type fpuState struct {
	sw, cw, tags uint16
}

func (e *Engine) readFPU() fpuState {
	return fpuState{sw: uint16(e.reg(C.UC_X86_REG_FPSW)), cw: uint16(e.reg(C.UC_X86_REG_FPCW)),
		tags: uint16(e.reg(C.UC_X86_REG_FPTAG))}
}

// empty reports whether ST(i) is empty (i = -1: the register a push
// would use).
func (f fpuState) empty(i int) bool {
	phys := (int(f.sw>>11) + i) & 7
	return f.tags>>(2*phys)&3 == 3
}

// fill marks ST(i) as holding a value.
func (e *Engine) fill(f fpuState, i int) {
	phys := (int(f.sw>>11) + i) & 7
	_ = e.setReg(C.UC_X86_REG_FPTAG, uint64(f.tags&^(3<<(2*phys))))
}

// stackUnderflow is the response to an empty source register (a stack
// fault, C1 = 0 for underflow; masked, the default NaN in ST(0)); held
// are the condition codes the instruction leaves alone. It reports whether
// the operation stops there.
func (e *Engine) stackUnderflow(f fpuState, held uint16, regs ...int) bool {
	for _, i := range regs {
		if f.empty(i) {
			r, store, sw := finishX87(defaultNaN, swIE|swSF, f.sw&held, held, f.sw, f.cw)
			if store {
				e.writeST(0, r)
				e.fill(f, 0)
			}
			_ = e.setReg(C.UC_X86_REG_FPSW, uint64(sw))
			return true
		}
	}
	return false
}

// answerFPREM executes fprem (fprem1 if nearest) on ST(0) and ST(1).
func (e *Engine) answerFPREM(nearest bool) {
	f := e.readFPU()
	if e.stackUnderflow(f, swC0|swC3, 0, 1) {
		return
	}
	r, store, sw := fprem(e.readST(0), e.readST(1), nearest, f.sw, f.cw)
	if store {
		e.writeST(0, r)
	}
	_ = e.setReg(C.UC_X86_REG_FPSW, uint64(sw))
}

// answerFSCALE executes fscale on ST(0) and ST(1).
func (e *Engine) answerFSCALE() {
	f := e.readFPU()
	if e.stackUnderflow(f, swC0|swC2|swC3, 0, 1) {
		return
	}
	r, store, sw := fscale(e.readST(0), e.readST(1), f.sw, f.cw)
	if store {
		e.writeST(0, r)
	}
	_ = e.setReg(C.UC_X86_REG_FPSW, uint64(sw))
}

// answerFLDL2T executes fldl2t: a push (C1 = 0), or a stack overflow
// when the register below the top is not empty (IE, SF, C1 = 1; masked,
// the default NaN is pushed; unmasked, nothing).
func (e *Engine) answerFLDL2T() {
	f := e.readFPU()
	sw, v := f.sw&^swC1, l2t(f.cw)
	if !f.empty(-1) {
		sw |= swIE | swSF | swC1
		if f.cw&swIE == 0 {
			_ = e.setReg(C.UC_X86_REG_FPSW, uint64(sw|swES|swB))
			return
		}
		v = defaultNaN
	}
	f.sw = sw&^(7<<11) | (sw>>11-1)&7<<11
	_ = e.setReg(C.UC_X86_REG_FPSW, uint64(f.sw))
	e.writeST(0, v)
	e.fill(f, 0)
}
