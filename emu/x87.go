package emu

import (
	"fmt"
	"math/bits"
)

// x87 instructions Unicorn 2.0.1 computes wrongly, computed here exactly as
// the hardware does (measured on the AMD host the tests run on, which the
// guest's cpuid also names). This file is plain Go: emu.go reads and writes
// the registers.
//
//   - fprem/fprem1: QEMU 5.0 goes through host doubles, so remainders lose
//     all but 53 bits (glibc's and musl's fmodl and remainderl, musl's
//     strtod) and the partial-remainder steps use a different chunk size.

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
// unmasked exception), and the new status word from the old one sw and the
// control word cw (its mask bits).
func fprem(x, y f80, nearest bool, sw, cw uint16) (f80, bool, uint16) {
	cx, cy := x.class(), y.class()
	isNaN := func(c f80Class) bool { return c == clQNaN || c == clSNaN }
	switch {
	case cx == clUnsupported || cy == clUnsupported:
		return finishX87(defaultNaN, swIE, sw&(swC0|swC3), sw, cw)
	case isNaN(cx) || isNaN(cy):
		var exc uint16
		if cx == clSNaN || cy == clSNaN {
			exc = swIE
		}
		return finishX87(propagateNaN(x, y), exc, sw&(swC0|swC3), sw, cw)
	case cx == clInf || cy == clZero:
		return finishX87(defaultNaN, swIE, sw&(swC0|swC3), sw, cw)
	}
	var exc uint16
	if cx == clDenormal || cy == clDenormal {
		exc = swDE
	}
	switch {
	case cx == clZero:
		return finishX87(x, exc, 0, sw, cw)
	case cy == clInf:
		m, e := x.unpack()
		return finishX87(packExact(x.neg(), m, e), exc, 0, sw, cw)
	}
	r, cc := remainder(x, y, nearest)
	return finishX87(r, exc, cc, sw, cw)
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
		// (measured), leaving an exponent difference in [32, 63].
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
// status word (cc replaces C0..C3). An exception the control word leaves
// unmasked suppresses the store and sets ES and B, clearing C1 and C2 (the
// CPU raises #MF at the next waiting x87 instruction; Unicorn only at an
// explicit fwait).
func finishX87(r f80, exc, cc, sw, cw uint16) (f80, bool, uint16) {
	if exc&^cw&0x3f != 0 {
		return r, false, sw&^(swC1|swC2) | exc | swES | swB
	}
	return r, true, sw&^swCC | exc | cc
}
