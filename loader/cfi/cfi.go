// Package cfi unwinds x86-64 stacks with the call frame information of an
// ELF object's .eh_frame section, as gdb and libgcc's unwinder do: for a pc
// it finds the FDE covering it, runs the CIE's initial instructions and the
// FDE's instructions up to the pc (the DW_CFA_* interpreter of DWARF 4
// section 6.4, "Call Frame Information", with the .eh_frame encoding of the
// Linux Standard Base: augmentation strings, DW_EH_PE pointer encodings),
// and applies the resulting row to the registers of one frame to recover
// the caller's (Step).
package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
const (
	RAX = 0
	RDX = 1
	RCX = 2
	RBX = 3
	RSI = 4
	RDI = 5
	RBP = 6
	RSP = 7
	R8  = 8
	R15 = 15
	RA  = 16 // the return address column (rip)
	// NumRegs is the number of registers a row describes.
	NumRegs = 17
)

// RuleKind says how a register of the caller is recovered.
type RuleKind uint8

// Register rules (DWARF 4 section 6.4.1).
const (
	SameValue     RuleKind = iota // unchanged (callee-saved, not saved)
	Undefined                     // not recoverable (the outermost frame's RA)
	Offset                        // saved at CFA+N
	ValOffset                     // is CFA+N
	Register                      // in register N
	Expression                    // saved at the address an expression computes
	ValExpression                 // is the value an expression computes
)

// Rule is one register's rule.
type Rule struct {
	Kind RuleKind
	N    int64  // offset, or register number
	Expr []byte // DWARF expression (Expression, ValExpression)
}

// Row is the unwinding rule for one pc: how to compute the CFA and the
// caller's registers.
type Row struct {
	CFAReg    int    // CFA = register + CFAOffset, unless CFAExpr is set
	CFAOffset int64  //
	CFAExpr   []byte // DW_CFA_def_cfa_expression
	Regs      [NumRegs]Rule
	Signal    bool // the frame is a signal trampoline ('S' augmentation)
}

// fde is one function's description.
type fde struct {
	lo, hi uint64 // pc range, link-time addresses
	cie    int    // index in Table.cies
	insns  []byte
}

// cie is a common information entry.
type cie struct {
	codeAlign uint64
	dataAlign int64
	ra        int
	enc       byte // FDE pointer encoding ('R')
	hasAug    bool // 'z': FDEs have augmentation data
	signal    bool // 'S'
	insns     []byte
}

// Table is the call frame information of one object.
type Table struct {
	addr uint64 // link-time address of .eh_frame
	fdes []fde  // sorted by lo
	cies []cie
}

// ErrNoFDE reports a pc that no FDE covers.
var ErrNoFDE = errors.New("cfi: no FDE covers the pc")

// Parse reads an .eh_frame section: data is its contents, addr its
// link-time address (for pc-relative pointers). Malformed entries end the
// walk; what was read before is kept.
func Parse(data []byte, addr uint64) *Table {
	t := &Table{addr: addr}
	cieAt := map[int]int{} // section offset -> index in cies
	for off := 0; off+8 <= len(data); {
		length := uint64(binary.LittleEndian.Uint32(data[off:]))
		hdr := 4
		if length == 0 {
			break
		}
		if length == 0xffffffff {
			if off+12 > len(data) {
				break
			}
			length, hdr = binary.LittleEndian.Uint64(data[off+4:]), 12
		}
		end := off + hdr + int(length)
		if length > uint64(len(data)) || end > len(data) || end < off+hdr+4 {
			break
		}
		idOff := off + hdr
		id := binary.LittleEndian.Uint32(data[idOff:])
		body := data[idOff+4 : end]
		if id == 0 {
			if c, ok := parseCIE(body); ok {
				cieAt[off] = len(t.cies)
				t.cies = append(t.cies, c)
			}
		} else if ci, ok := cieAt[idOff-int(id)]; ok {
			c := t.cies[ci]
			start, n := readEncoded(body, c.enc, addr+uint64(idOff+4))
			if n > 0 {
				size, m := readEncoded(body[n:], c.enc&0x0f, 0)
				i := n + m
				if m > 0 && c.hasAug {
					l, k := uleb(body[i:])
					i += k + int(l)
					if k == 0 {
						i = len(body) + 1
					}
				}
				if m > 0 && size > 0 && i <= len(body) {
					t.fdes = append(t.fdes, fde{lo: start, hi: start + size, cie: ci, insns: body[i:]})
				}
			}
		}
		off = end
	}
	slices.SortStableFunc(t.fdes, func(a, b fde) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	return t
}

// parseCIE reads a CIE body (after the CIE id).
func parseCIE(b []byte) (cie, bool) {
	var c cie
	if len(b) < 4 {
		return c, false
	}
	version := b[0]
	i := 1
	augStart := i
	for i < len(b) && b[i] != 0 {
		i++
	}
	aug := string(b[augStart:i])
	i++
	if len(aug) >= 2 && aug[:2] == "eh" {
		i += 8
	}
	if i >= len(b) {
		return c, false
	}
	var n int
	c.codeAlign, n = uleb(b[i:])
	i += n
	c.dataAlign, n = sleb(b[i:])
	i += n
	if version == 1 {
		if i >= len(b) {
			return c, false
		}
		c.ra = int(b[i])
		i++
	} else {
		var r uint64
		r, n = uleb(b[i:])
		c.ra = int(r)
		i += n
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.hasAug = true
		l, n := uleb(b[i:])
		i += n
		augEnd := i + int(l)
		for _, ch := range aug[1:] {
			if i > len(b) {
				return c, false
			}
			switch ch {
			case 'R', 'L', 'P':
				if i >= len(b) { // each needs a byte: a truncated CIE
					return c, false
				}
			}
			switch ch {
			case 'R':
				c.enc = b[i]
				i++
			case 'L':
				i++
			case 'P':
				enc := b[i]
				_, k := readEncoded(b[i+1:], enc&0x0f, 0)
				i += 1 + k
			case 'S':
				c.signal = true
			}
		}
		i = augEnd
	}
	if i > len(b) || c.ra < 0 || c.ra >= NumRegs {
		return c, false
	}
	c.insns = b[i:]
	return c, true
}

// Covers reports whether some FDE covers the link-time address pc.
func (t *Table) Covers(pc uint64) bool { _, ok := t.find(pc); return ok }

func (t *Table) find(pc uint64) (*fde, bool) {
	i, _ := slices.BinarySearchFunc(t.fdes, pc, func(f fde, pc uint64) int {
		if f.lo <= pc {
			return -1
		}
		return 1
	})
	// fdes[i-1] is the last with lo <= pc; an earlier, longer one may
	// cover it too (rare), so look back a little.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if f := &t.fdes[j]; f.lo <= pc && pc < f.hi {
			return f, true
		}
	}
	return nil, false
}

// RowAt returns the unwinding row for the link-time address pc.
func (t *Table) RowAt(pc uint64) (Row, error) {
	f, ok := t.find(pc)
	if !ok {
		return Row{}, ErrNoFDE
	}
	c := &t.cies[f.cie]
	var r Row
	r.Signal = c.signal
	// Registers default to "same value" (what gcc's unwinder assumes for
	// callee-saved registers); the CIE sets the CFA and the RA.
	in := interp{c: c, fdeLo: f.lo, target: pc, tableAddr: t.addr}
	if err := in.run(c.insns, &r, nil); err != nil {
		return Row{}, err
	}
	initial := r
	in.loc = f.lo
	if err := in.run(f.insns, &r, &initial); err != nil {
		return Row{}, err
	}
	return r, nil
}

// interp runs CFA instructions.
type interp struct {
	c         *cie
	fdeLo     uint64
	loc       uint64
	target    uint64
	tableAddr uint64
	stack     []Row
}

// errPast stops the instructions once the location passes the target.
var errPast = errors.New("past the target")

func (in *interp) advance(delta uint64) error {
	in.loc += delta * in.c.codeAlign
	if in.loc > in.target {
		return errPast
	}
	return nil
}

// run executes insns into r; initial is the CIE's row (for restore), nil
// while running the CIE's own instructions.
func (in *interp) run(insns []byte, r *Row, initial *Row) error {
	b := insns
	u := func() (uint64, error) {
		v, n := uleb(b)
		if n == 0 {
			return 0, errors.New("cfi: truncated ULEB128")
		}
		b = b[n:]
		return v, nil
	}
	s := func() (int64, error) {
		v, n := sleb(b)
		if n == 0 {
			return 0, errors.New("cfi: truncated SLEB128")
		}
		b = b[n:]
		return v, nil
	}
	// offset reads an offset operand: SLEB128 in the _sf forms (always
	// factored), else ULEB128, factored by the data alignment if factored.
	offset := func(sf, factored bool) (int64, error) {
		var v int64
		var err error
		if sf {
			v, err = s()
		} else {
			var x uint64
			x, err = u()
			v = int64(x)
		}
		if sf || factored {
			v *= in.c.dataAlign
		}
		return v, err
	}
	reg := func() (int, error) {
		v, err := u()
		if err != nil {
			return 0, err
		}
		if v >= NumRegs {
			return -1, nil // a register unwinding does not use (xmm...)
		}
		return int(v), nil
	}
	block := func() ([]byte, error) {
		l, err := u()
		if err != nil || l > uint64(len(b)) {
			return nil, errors.New("cfi: truncated expression")
		}
		e := b[:l]
		b = b[l:]
		return e, nil
	}
	set := func(n int, rule Rule) {
		if n >= 0 {
			r.Regs[n] = rule
		}
	}
	restore := func(n int) {
		if n >= 0 {
			if initial != nil {
				r.Regs[n] = initial.Regs[n]
			} else {
				r.Regs[n] = Rule{}
			}
		}
	}
	for len(b) > 0 {
		op := b[0]
		b = b[1:]
		switch op >> 6 {
		case 1: // DW_CFA_advance_loc
			if err := in.advance(uint64(op & 0x3f)); err != nil {
				return nil
			}
			continue
		case 2: // DW_CFA_offset
			off, err := offset(false, true)
			if err != nil {
				return err
			}
			set(int(op&0x3f), Rule{Kind: Offset, N: off})
			continue
		case 3: // DW_CFA_restore
			restore(int(op & 0x3f))
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x01: // set_loc
			v, n := readEncoded(b, in.c.enc, 0)
			if n == 0 {
				return errors.New("cfi: bad set_loc")
			}
			b = b[n:]
			in.loc = v
			if in.loc > in.target {
				return nil
			}
		case 0x02, 0x03, 0x04: // advance_loc1, 2, 4
			w := 1 << (op - 2)
			if len(b) < w {
				return errors.New("cfi: truncated advance")
			}
			var d uint64
			switch w {
			case 1:
				d = uint64(b[0])
			case 2:
				d = uint64(binary.LittleEndian.Uint16(b))
			default:
				d = uint64(binary.LittleEndian.Uint32(b))
			}
			b = b[w:]
			if in.advance(d) != nil {
				return nil
			}
		case 0x05, 0x11, 0x14, 0x15, 0x2f: // offset_extended(_sf), val_offset(_sf), GNU_negative_offset_extended
			n, err := reg()
			if err != nil {
				return err
			}
			off, err := offset(op == 0x11 || op == 0x15, true)
			if err != nil {
				return err
			}
			if op == 0x2f {
				off = -off
			}
			kind := Offset
			if op == 0x14 || op == 0x15 {
				kind = ValOffset
			}
			set(n, Rule{Kind: kind, N: off})
		case 0x06: // restore_extended
			n, err := reg()
			if err != nil {
				return err
			}
			restore(n)
		case 0x07, 0x08: // undefined, same_value
			n, err := reg()
			if err != nil {
				return err
			}
			kind := Undefined
			if op == 0x08 {
				kind = SameValue
			}
			set(n, Rule{Kind: kind})
		case 0x09: // register
			n, err := reg()
			if err != nil {
				return err
			}
			m, err := reg()
			if err != nil {
				return err
			}
			set(n, Rule{Kind: Register, N: int64(m)})
		case 0x0a: // remember_state
			in.stack = append(in.stack, *r)
		case 0x0b: // restore_state
			if len(in.stack) == 0 {
				return errors.New("cfi: restore_state without remember_state")
			}
			// The whole row, CFA rule included (DWARF 4, 6.4.2.4).
			*r = in.stack[len(in.stack)-1]
			in.stack = in.stack[:len(in.stack)-1]
		case 0x0c, 0x12: // def_cfa, def_cfa_sf
			n, err := reg()
			if err != nil {
				return err
			}
			off, err := offset(op == 0x12, false)
			if err != nil {
				return err
			}
			r.CFAReg, r.CFAOffset, r.CFAExpr = n, off, nil
		case 0x0d: // def_cfa_register
			n, err := reg()
			if err != nil {
				return err
			}
			r.CFAReg, r.CFAExpr = n, nil
		case 0x0e, 0x13: // def_cfa_offset, def_cfa_offset_sf
			off, err := offset(op == 0x13, false)
			if err != nil {
				return err
			}
			r.CFAOffset = off
		case 0x0f: // def_cfa_expression
			e, err := block()
			if err != nil {
				return err
			}
			r.CFAExpr = e
		case 0x10, 0x16: // expression, val_expression
			n, err := reg()
			if err != nil {
				return err
			}
			e, err := block()
			if err != nil {
				return err
			}
			kind := Expression
			if op == 0x16 {
				kind = ValExpression
			}
			set(n, Rule{Kind: kind, Expr: e})
		case 0x2e: // GNU_args_size
			if _, err := u(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("cfi: unknown instruction %#x", op)
		}
	}
	return nil
}

// CIEEncoding returns the pointer encoding of the FDEs of the CIE whose
// body (after the CIE id) is b (augmentation 'R'), absptr (0) when it has
// none or names none before it is malformed.
func CIEEncoding(b []byte) byte {
	c, _ := parseCIE(b)
	return c.enc
}

// ReadEncoded reads a DW_EH_PE-encoded pointer at the start of b, whose
// address is at (for pc-relative encodings). It returns the value and the
// bytes read, 0 if b is too short or the encoding is omitted or unknown.
func ReadEncoded(b []byte, enc byte, at uint64) (uint64, int) { return readEncoded(b, enc, at) }

// ULEB128 reads an unsigned LEB128 number; n is 0 if it does not end in b.
func ULEB128(b []byte) (v uint64, n int) { return uleb(b) }

// readEncoded reads a DW_EH_PE-encoded pointer whose address is at.
func readEncoded(b []byte, enc byte, at uint64) (uint64, int) {
	if enc == 0xff { // DW_EH_PE_omit
		return 0, 0
	}
	var v uint64
	var n int
	need := func(k int) bool { return len(b) >= k }
	switch enc & 0x0f {
	case 0x00, 0x04, 0x0c: // absptr, udata8, sdata8
		if !need(8) {
			return 0, 0
		}
		v, n = binary.LittleEndian.Uint64(b), 8
	case 0x02:
		if !need(2) {
			return 0, 0
		}
		v, n = uint64(binary.LittleEndian.Uint16(b)), 2
	case 0x0a:
		if !need(2) {
			return 0, 0
		}
		v, n = uint64(int64(int16(binary.LittleEndian.Uint16(b)))), 2
	case 0x03:
		if !need(4) {
			return 0, 0
		}
		v, n = uint64(binary.LittleEndian.Uint32(b)), 4
	case 0x0b:
		if !need(4) {
			return 0, 0
		}
		v, n = uint64(int64(int32(binary.LittleEndian.Uint32(b)))), 4
	case 0x01:
		v, n = uleb(b)
	case 0x09:
		var sv int64
		sv, n = sleb(b)
		v = uint64(sv)
	default:
		return 0, 0
	}
	if n == 0 {
		return 0, 0
	}
	switch enc & 0x70 {
	case 0x00:
	case 0x10: // pcrel
		v += at
	default:
		return 0, 0
	}
	return v, n
}

func uleb(b []byte) (v uint64, n int) {
	var shift uint
	for i, c := range b {
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

func sleb(b []byte) (v int64, n int) {
	var shift uint
	for i, c := range b {
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}
