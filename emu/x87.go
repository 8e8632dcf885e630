package emu

import (
	"fmt"
	"math/bits"
)

// x87 instructions Unicorn 2.0.1 computes wrongly, computed here exactly as
// the hardware does (measured on the AMD host the tests run on, which the
// guest's cpuid also names). This file is plain Go: fpu.go reads and writes
// the registers, emu.go patches the instructions into syscalls and Run
// answers them.
//
//   - fprem/fprem1: QEMU 5.0 goes through host doubles, so remainders lose
//     all but 53 bits (glibc's and musl's fmodl and remainderl, musl's
//     strtod) and the partial-remainder steps use a different chunk size.
//   - fscale: QEMU rounds the result to the precision control (the
//     hardware keeps all 64 bits), sets no flags and truncates huge scales
//     wrongly.
//   - fldl2t: QEMU ignores the rounding control.

// f80 is an x87 double-extended value as a register holds it.
type f80 struct {
	m  uint64 // significand, explicit integer bit 63
	se uint16 // sign (bit 15), biased exponent
}

const f80Bias = 16383

func (x f80) String() string { return fmt.Sprintf("%04x.%016x", x.se, x.m) }

// FPU status word bits.
const (
	swIE = 1 << 0 // invalid operation
	swDE = 1 << 1 // denormal operand
	swOE = 1 << 3 // overflow
	swUE = 1 << 4 // underflow
	swPE = 1 << 5 // precision (inexact)
	swSF = 1 << 6 // stack fault
	swES = 1 << 7 // exception summary (an unmasked exception is pending)
	swC0 = 1 << 8
	swC1 = 1 << 9
	swC2 = 1 << 10
	swC3 = 1 << 14
	swB  = 1 << 15

	swCC = swC0 | swC1 | swC2 | swC3
)

// defaultNaN is the "real indefinite" QNaN a masked invalid operation
// returns.
var defaultNaN = f80{m: 0xc000_0000_0000_0000, se: 0xffff}

type f80Class uint8

const (
	clZero     f80Class = iota
	clDenormal          // exponent 0, nonzero significand (pseudo-denormals too)
	clNormal
	clInf
	clQNaN
	clSNaN
	clUnsupported // unnormals, pseudo-infinities, pseudo-NaNs: invalid operands
)

func (x f80) class() f80Class {
	switch e := x.se & 0x7fff; {
	case e == 0:
		if x.m == 0 {
			return clZero
		}
		return clDenormal
	case x.m>>63 == 0:
		return clUnsupported
	case e == 0x7fff:
		switch {
		case x.m<<1 == 0:
			return clInf
		case x.m>>62&1 == 1:
			return clQNaN
		}
		return clSNaN
	}
	return clNormal
}

func (x f80) neg() bool { return x.se&0x8000 != 0 }

// unpack returns a finite nonzero x as ±m·2^e with m normalized (bit 63 set).
func (x f80) unpack() (m uint64, e int) {
	e = int(x.se & 0x7fff)
	if e == 0 {
		e = 1 // denormals and pseudo-denormals
	}
	n := bits.LeadingZeros64(x.m)
	return x.m << n, e - f80Bias - 63 - n
}

// packExact encodes ±m·2^e, which the caller knows to be representable
// (possibly as a denormal) without rounding.
func packExact(neg bool, m uint64, e int) f80 {
	var s uint16
	if neg {
		s = 0x8000
	}
	if m == 0 {
		return f80{se: s}
	}
	n := bits.LeadingZeros64(m)
	m <<= n
	be := e - n + f80Bias + 63
	if be <= 0 {
		m >>= uint(1 - be)
		be = 0
	}
	return f80{m: m, se: s | uint16(be)}
}

// propagateNaN is the x87 rule for an operation on two operands of which
// at least one is a NaN: a QNaN beats an SNaN, of two of the same kind the
// larger significand wins (the positive one on a tie), and the result is
// quiet.
func propagateNaN(a, b f80) f80 {
	ca, cb := a.class(), b.class()
	an, bn := ca == clQNaN || ca == clSNaN, cb == clQNaN || cb == clSNaN
	r := a
	switch {
	case !an:
		r = b
	case !bn:
	case ca != cb:
		if cb == clQNaN {
			r = b
		}
	case b.m > a.m || b.m == a.m && !b.neg():
		r = b
	}
	r.m |= 1 << 62
	return r
}

// fprem computes fprem (nearest false) or fprem1 (nearest true) of
// x = ST(0) and y = ST(1): the new ST(0), whether to store it (not after an
// unmasked invalid-operation or denormal exception), and the new status
// word from the old one sw and the control word cw (its mask bits).
func fprem(x, y f80, nearest bool, sw, cw uint16) (f80, bool, uint16) {
	cx, cy := x.class(), y.class()
	isNaN := func(c f80Class) bool { return c == clQNaN || c == clSNaN }
	switch {
	case cx == clUnsupported || cy == clUnsupported:
		return finishX87(defaultNaN, swIE, sw&(swC0|swC3), swC0|swC3, sw, cw)
	case isNaN(cx) || isNaN(cy):
		var exc uint16
		if cx == clSNaN || cy == clSNaN {
			exc = swIE
		}
		return finishX87(propagateNaN(x, y), exc, sw&(swC0|swC3), swC0|swC3, sw, cw)
	case cx == clInf || cy == clZero:
		return finishX87(defaultNaN, swIE, sw&(swC0|swC3), swC0|swC3, sw, cw)
	}
	var exc uint16
	if cx == clDenormal || cy == clDenormal {
		exc = swDE
	}
	switch {
	case cx == clZero:
		return finishX87(x, exc, 0, swC0|swC3, sw, cw)
	case cy == clInf:
		m, e := x.unpack()
		return finishX87(packExact(x.neg(), m, e), exc, 0, swC0|swC3, sw, cw)
	}
	r, cc := remainder(x, y, nearest)
	return finishX87(r, exc, cc, swC0|swC3, sw, cw)
}

// remainder is fprem/fprem1 of finite nonzero operands: the new ST(0) and
// the condition codes (C2 for an incomplete reduction, else the quotient's
// three low bits in C0, C3, C1).
func remainder(x, y f80, nearest bool) (f80, uint16) {
	mx, ex := x.unpack()
	my, ey := y.unpack()
	d := ex - ey
	neg := x.neg()
	switch {
	case d >= 64:
		// Partial: x mod (y·2^(d-n)) = ((mx·2^n) mod my)·2^(ex-n),
		// truncated whatever the instruction. The SDM leaves n (N) to
		// the implementation, "between 32 and 63"; AMD's is 32 + d%32
		// (measured; Bochs models Intel's the same way), leaving an
		// exponent difference in [32, 63].
		n := 32 + d%32
		_, r := bits.Div64(mx>>(64-n), mx<<n, my)
		return packExact(neg, r, ex-n), swC2
	case d >= 0:
		// x/y = (mx·2^d)/my: a quotient below 2^64 (mx·2^d < 2^63·my·2),
		// the remainder r·2^ey exact.
		var hi, lo uint64
		if d > 0 {
			hi, lo = mx>>(64-d), mx<<d
		} else {
			lo = mx
		}
		q, r := bits.Div64(hi, lo, my)
		if nearest && (r > my-r || r == my-r && q&1 == 1) {
			q++
			r = my - r
			neg = !neg
		}
		return packExact(neg, r, ey), quotientCC(q)
	case d == -1 && nearest && mx > my:
		// x/y = mx/(2·my) in (1/2, 1): the quotient rounds to 1 and
		// x - y = -(2·my - mx)·2^ex.
		return packExact(!neg, my-(mx-my), ex), quotientCC(1)
	}
	return packExact(neg, mx, ex), 0
}

// quotientCC puts a quotient's bits 2, 1, 0 in C0, C3, C1.
func quotientCC(q uint64) uint16 {
	var cc uint16
	if q&4 != 0 {
		cc |= swC0
	}
	if q&2 != 0 {
		cc |= swC3
	}
	if q&1 != 0 {
		cc |= swC1
	}
	return cc
}

// finishX87 merges an operation's exceptions and condition codes into the
// status word (cc replaces C0..C3). An unmasked exception sets ES and B
// (the CPU raises #MF at the next waiting x87 instruction; Unicorn only at
// an explicit fwait). An unmasked invalid-operation or denormal exception
// is detected before computing: the store is suppressed and of the
// condition codes only those in held keep their values.
func finishX87(r f80, exc, cc, held, sw, cw uint16) (f80, bool, uint16) {
	unmasked := exc &^ cw & 0x3f
	if unmasked&(swIE|swDE) != 0 {
		return r, false, sw&^swCC | sw&held | exc | swES | swB
	}
	sw = sw&^swCC | exc | cc
	if unmasked != 0 {
		sw |= swES | swB
	}
	return r, true, sw
}

// roundX87 rounds ±m·2^e (m normalized: bit 63 set) to double-extended
// under the control word's rounding control (not its precision control:
// the instructions here ignore it). It returns the value, the exceptions
// (OE, UE, PE) and whether the magnitude was rounded up (C1). A masked
// overflow gives infinity or the largest finite value as the rounding
// control says; a masked underflow a denormal (UE only if inexact). An
// unmasked overflow or underflow returns the exact result scaled by
// 2^∓24576, as the SDM prescribes for the exception handler.
func roundX87(neg bool, m uint64, e int, cw uint16) (f80, uint16, bool) {
	var s uint16
	if neg {
		s = 0x8000
	}
	be := e + 63 + f80Bias
	switch {
	case be >= 0x7fff && cw&swOE == 0:
		be -= 24576
		if be < 0x7fff {
			return f80{m: m, se: s | uint16(be)}, swOE, false
		}
		return f80{m: 1 << 63, se: s | 0x7fff}, swOE | swPE, true
	case be >= 0x7fff:
		if roundsAway(neg, cw) {
			return f80{m: 1 << 63, se: s | 0x7fff}, swOE | swPE, true
		}
		return f80{m: ^uint64(0), se: s | 0x7ffe}, swOE | swPE, false
	case be > 0:
		return f80{m: m, se: s | uint16(be)}, 0, false
	case cw&swUE == 0:
		be += 24576
		if be > 0 {
			return f80{m: m, se: s | uint16(be)}, swUE, false
		}
		return f80{se: s}, swUE | swPE, false
	}
	// A denormal: keep the bits above 2^(1-16383-63).
	shift := uint(1 - be)
	var mant, rest uint64
	var half bool // the first bit shifted out
	if shift < 64 {
		mant, rest = m>>shift, m<<(64-shift)
		half = rest>>63 == 1
		rest <<= 1
	} else {
		half = shift == 64 && m>>63 == 1
		rest = m
		if shift == 64 {
			rest = m << 1
		}
	}
	if !half && rest == 0 {
		return f80{m: mant, se: s}, 0, false
	}
	up := false
	switch cw >> 10 & 3 {
	case 0: // nearest, ties to even
		up = half && (rest != 0 || mant&1 == 1)
	case 1: // down
		up = neg
	case 2: // up
		up = !neg
	}
	if up {
		mant++
	}
	r := f80{m: mant, se: s}
	if mant == 1<<63 {
		r.se |= 1 // rounded up to the smallest normal
	}
	return r, swUE | swPE, up
}

// roundsAway reports whether the rounding control rounds an overflow of
// this sign to infinity (else to the largest finite value).
func roundsAway(neg bool, cw uint16) bool {
	switch cw >> 10 & 3 {
	case 0:
		return true
	case 1:
		return neg
	case 2:
		return !neg
	}
	return false
}

// fscale computes ST(0)·2^trunc(ST(1)): the new ST(0), whether to store it
// and the new status word. Unicorn rounds the result to the precision
// control; the hardware rounds only denormal and overflowing results, to
// 64 bits and the rounding control.
func fscale(x, y f80, sw, cw uint16) (f80, bool, uint16) {
	cx, cy := x.class(), y.class()
	keep := sw & (swC0 | swC2 | swC3) // C1 is "rounded up"
	isNaN := func(c f80Class) bool { return c == clQNaN || c == clSNaN }
	switch {
	case cx == clUnsupported || cy == clUnsupported:
		return finishX87(defaultNaN, swIE, keep, swC0|swC2|swC3, sw, cw)
	case isNaN(cx) || isNaN(cy):
		var exc uint16
		if cx == clSNaN || cy == clSNaN {
			exc = swIE
		}
		return finishX87(propagateNaN(x, y), exc, keep, swC0|swC2|swC3, sw, cw)
	}
	var exc uint16
	if cx == clDenormal || cy == clDenormal {
		exc = swDE
	}
	sign := x.se & 0x8000
	switch {
	case cy == clInf && !y.neg(): // x·2^+inf
		if cx == clZero {
			return finishX87(defaultNaN, swIE, keep, swC0|swC2|swC3, sw, cw)
		}
		return finishX87(f80{m: 1 << 63, se: sign | 0x7fff}, exc, keep, swC0|swC2|swC3, sw, cw)
	case cy == clInf: // x·2^-inf
		if cx == clInf {
			return finishX87(defaultNaN, swIE, keep, swC0|swC2|swC3, sw, cw)
		}
		return finishX87(f80{se: sign}, exc, keep, swC0|swC2|swC3, sw, cw)
	case cx == clZero || cx == clInf:
		return finishX87(x, exc, keep, swC0|swC2|swC3, sw, cw)
	}
	if exc&^cw&swDE != 0 {
		return finishX87(x, exc, keep, swC0|swC2|swC3, sw, cw)
	}
	m, e := x.unpack()
	r, rexc, up := roundX87(x.neg(), m, e+truncScale(y), cw)
	if up {
		keep |= swC1
	}
	return finishX87(r, exc|rexc, keep, swC0|swC2|swC3, sw, cw)
}

// truncScale is a finite y truncated to an integer, clamped where any
// larger magnitude gives the same fscale result.
func truncScale(y f80) int {
	if y.class() == clZero {
		return 0
	}
	m, e := y.unpack()
	var n int
	switch {
	case e <= -64:
		n = 0
	case e >= -32:
		n = 1 << 31 // |y| >= 2^31
	default:
		n = int(m >> uint(-e))
	}
	if y.neg() {
		n = -n
	}
	return n
}

// l2t is what fldl2t loads: log2(10) = 0xd.49a784bcd1b8afe49...p-2
// rounded to 64 bits, one ulp up when the rounding control is up (AMD:
// measured; down and toward zero give the nearest value as well). Unicorn
// always loads the nearest value. The other constants (fldpi, fldl2e,
// fldlg2, fldln2) round up to nearest, and AMD ignores the rounding
// control for them, as Unicorn does.
func l2t(cw uint16) f80 {
	r := f80{m: 0xd49a_784b_cd1b_8afe, se: 0x4000}
	if cw>>10&3 == 2 {
		r.m++
	}
	return r
}
