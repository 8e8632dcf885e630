package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Regs are the registers of one frame, by DWARF number (RA is the pc).
// Known says which hold a recovered value.
type Regs struct {
	R     [NumRegs]uint64
	Known [NumRegs]bool
}

// ReadFunc reads the 8-byte word at addr of the guest's memory.
type ReadFunc func(addr uint64) (uint64, bool)

// ErrOutermost reports a frame whose return address is undefined: the
// outermost frame (_start, a thread's start routine's caller).
var ErrOutermost = errors.New("cfi: outermost frame")

// Step applies row to the registers of a frame and returns the caller's:
// its CFA becomes the caller's RSP, its RA the caller's pc (RA).
func Step(row Row, cur Regs, read ReadFunc) (Regs, error) {
	var cfa uint64
	if row.CFAExpr != nil {
		v, err := eval(row.CFAExpr, cur, read, nil)
		if err != nil {
			return Regs{}, err
		}
		cfa = v
	} else {
		if row.CFAReg < 0 || row.CFAReg >= NumRegs || !cur.Known[row.CFAReg] {
			return Regs{}, fmt.Errorf("cfi: CFA register %d unknown", row.CFAReg)
		}
		cfa = cur.R[row.CFAReg] + uint64(row.CFAOffset)
	}
	var next Regs
	for n := 0; n < NumRegs; n++ {
		rule := row.Regs[n]
		switch rule.Kind {
		case SameValue:
			next.R[n], next.Known[n] = cur.R[n], cur.Known[n]
		case Undefined:
		case Offset:
			next.R[n], next.Known[n] = read(cfa + uint64(rule.N))
		case ValOffset:
			next.R[n], next.Known[n] = cfa+uint64(rule.N), true
		case Register:
			if rule.N >= 0 && rule.N < NumRegs {
				next.R[n], next.Known[n] = cur.R[rule.N], cur.Known[rule.N]
			}
		case Expression, ValExpression:
			v, err := eval(rule.Expr, cur, read, &cfa)
			if err != nil {
				continue
			}
			if rule.Kind == Expression {
				next.R[n], next.Known[n] = read(v)
			} else {
				next.R[n], next.Known[n] = v, true
			}
		}
	}
	if row.Regs[RA].Kind == Undefined {
		return Regs{}, ErrOutermost
	}
	if row.Regs[RA].Kind == SameValue {
		return Regs{}, errors.New("cfi: no rule for the return address")
	}
	if !next.Known[RA] {
		return Regs{}, errors.New("cfi: return address unreadable")
	}
	// The CFA is the caller's stack pointer (System V psABI 3.7: the
	// value of rsp at the call site, before the call pushed the RA).
	next.R[RSP], next.Known[RSP] = cfa, true
	return next, nil
}

// eval runs a DWARF expression (DWARF 4 section 2.5) over the frame's
// registers; cfa, when not nil, is pushed first (register rules). It knows
// the operations compilers put in .eh_frame: constants, breg, arithmetic,
// comparisons and deref.
func eval(expr []byte, cur Regs, read ReadFunc, cfa *uint64) (uint64, error) {
	var st []uint64
	if cfa != nil {
		st = append(st, *cfa)
	}
	pop := func() (uint64, error) {
		if len(st) == 0 {
			return 0, errors.New("cfi: expression stack underflow")
		}
		v := st[len(st)-1]
		st = st[:len(st)-1]
		return v, nil
	}
	b := expr
	for len(b) > 0 {
		op := b[0]
		b = b[1:]
		switch {
		case op >= 0x30 && op <= 0x4f: // lit0..lit31
			st = append(st, uint64(op-0x30))
			continue
		case op >= 0x70 && op <= 0x8f: // breg0..breg31
			off, n := sleb(b)
			if n == 0 {
				return 0, errors.New("cfi: truncated breg")
			}
			b = b[n:]
			r := int(op - 0x70)
			if r >= NumRegs || !cur.Known[r] {
				return 0, fmt.Errorf("cfi: register %d unknown", r)
			}
			st = append(st, cur.R[r]+uint64(off))
			continue
		}
		switch op {
		case 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f: // const1u..const8s
			w := 1 << ((op - 0x08) / 2)
			if len(b) < w {
				return 0, errors.New("cfi: truncated constant")
			}
			var v uint64
			signed := (op-0x08)%2 == 1
			switch w {
			case 1:
				v = uint64(b[0])
				if signed {
					v = uint64(int64(int8(b[0])))
				}
			case 2:
				v = uint64(binary.LittleEndian.Uint16(b))
				if signed {
					v = uint64(int64(int16(v)))
				}
			case 4:
				v = uint64(binary.LittleEndian.Uint32(b))
				if signed {
					v = uint64(int64(int32(v)))
				}
			default:
				v = binary.LittleEndian.Uint64(b)
			}
			b = b[w:]
			st = append(st, v)
		case 0x10: // constu
			v, n := uleb(b)
			if n == 0 {
				return 0, errors.New("cfi: truncated constu")
			}
			b = b[n:]
			st = append(st, v)
		case 0x11: // consts
			v, n := sleb(b)
			if n == 0 {
				return 0, errors.New("cfi: truncated consts")
			}
			b = b[n:]
			st = append(st, uint64(v))
		case 0x12: // dup
			if len(st) == 0 {
				return 0, errors.New("cfi: dup of an empty stack")
			}
			st = append(st, st[len(st)-1])
		case 0x13: // drop
			if _, err := pop(); err != nil {
				return 0, err
			}
		case 0x14: // over
			if len(st) < 2 {
				return 0, errors.New("cfi: over needs two values")
			}
			st = append(st, st[len(st)-2])
		case 0x16: // swap
			if len(st) < 2 {
				return 0, errors.New("cfi: swap needs two values")
			}
			st[len(st)-1], st[len(st)-2] = st[len(st)-2], st[len(st)-1]
		case 0x06: // deref
			a, err := pop()
			if err != nil {
				return 0, err
			}
			v, ok := read(a)
			if !ok {
				return 0, fmt.Errorf("cfi: cannot read %#x", a)
			}
			st = append(st, v)
		case 0x23: // plus_uconst
			v, n := uleb(b)
			if n == 0 {
				return 0, errors.New("cfi: truncated plus_uconst")
			}
			b = b[n:]
			a, err := pop()
			if err != nil {
				return 0, err
			}
			st = append(st, a+v)
		case 0x1a, 0x1c, 0x1e, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e:
			y, err := pop()
			if err != nil {
				return 0, err
			}
			x, err := pop()
			if err != nil {
				return 0, err
			}
			st = append(st, binop(op, x, y))
		default:
			return 0, fmt.Errorf("cfi: unsupported expression operation %#x", op)
		}
	}
	return pop()
}

func binop(op byte, x, y uint64) uint64 {
	b := func(c bool) uint64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case 0x1a:
		return x & y
	case 0x1c:
		return x - y
	case 0x1e:
		return x * y
	case 0x21:
		return x | y
	case 0x22:
		return x + y
	case 0x24:
		return x << (y & 63)
	case 0x25:
		return x >> (y & 63)
	case 0x26:
		return uint64(int64(x) >> (y & 63))
	case 0x27:
		return x ^ y
	case 0x29:
		return b(x == y)
	case 0x2a:
		return b(int64(x) >= int64(y))
	case 0x2b:
		return b(int64(x) > int64(y))
	case 0x2c:
		return b(int64(x) <= int64(y))
	case 0x2d:
		return b(int64(x) < int64(y))
	default: // 0x2e
		return b(x != y)
	}
}
