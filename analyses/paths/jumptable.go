package paths

import (
	"encoding/binary"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// maxTable bounds the entries of a jump table read.
const maxTable = 4096

// jumpWindow is how many instructions before an indirect jump the
// jump-table recognizer looks at.
const jumpWindow = 24

// sval is what the jump-table recognizer knows about a register: a linear
// function c + scale·I of the switch index I, or an entry loaded from a
// table indexed by I (plus a constant), or nothing.
type sval struct {
	k      uint8  // svUnknown, svLinear, svEntry
	c      uint64 // linear: constant part; entry: table address
	scale  uint64 // linear: multiplier of I (0: a constant)
	esize  int    // entry: 4 or 8 bytes
	signed bool   // entry of 4 bytes: sign-extended
	add    uint64 // entry: constant added to it
}

const (
	svUnknown = iota
	svLinear
	svEntry
	svSym // the value register c held when the window starts
)

func konst(c uint64) sval { return sval{k: svLinear, c: c} }

// jumpTable resolves an indirect jump through a jump table, of the forms
// gcc emits for a switch at -O0 and -O2, with or without PIC (spec §1.1:
// "resolved indirect jumps (jump tables)"):
//
//	cmp $N, %idx ; ja default ; jmp *TABLE(,%idx,8)                    (absolute)
//	cmp $N, %idx ; ja default ; lea TABLE(%rip), %t ;
//	    movslq (%t,%idx,4), %r ; add %t, %r ; jmp *%r                   (relative)
//	cmpl $N, slot ; ja default ; mov slot, %eax ; lea 0(,%rax,4), %rdx ;
//	    lea TABLE(%rip), %rax ; mov (%rdx,%rax), %eax ; cltq ;
//	    lea TABLE(%rip), %rdx ; add %rdx, %rax ; jmp *%rax              (-O0)
//	lea TABLE(%rip), %t ; and $2^k-1, %idx ; movslq (%t,%idx,4), ...    (masked)
//
// It evaluates the straight-line code before the jump symbolically: the
// index I is what a cmp/ja (N+1 entries), cmp/jae (N) or and with 2^k-1
// (2^k) bounds; registers hold c + s·I, or a table entry at c + esize·I.
// Every target must lie inside the routine. Anything else stays
// unresolved: the run supplies the targets it takes.
func (r *recoverer) jumpTable(j *insn) ([]uint64, bool) {
	// The window: instructions falling through to the jump.
	var win []*insn
	for p := r.prev(j); p != nil && len(win) < jumpWindow; p = r.prev(p) {
		if p.kind != kPlain && p.kind != kJcc {
			break
		}
		win = append(win, p)
	}
	slices.Reverse(win)
	regs := map[x86asm.Reg]sval{}
	var slot *x86asm.Mem // a memory operand holding I
	bound := -1
	var cmpLoc x86asm.Arg // operand of the last cmp with an immediate
	var cmpImm int64
	var iSym uint64 // the window-start register holding I (+1), 0: none
	var lowI x86asm.Reg
	val := func(r x86asm.Reg) sval {
		v, ok := regs[r]
		if !ok {
			v = sval{k: svSym, c: uint64(r)}
		}
		if v.k == svSym && v.c+1 == iSym {
			return sval{k: svLinear, scale: 1}
		}
		return v
	}
	get := func(a x86asm.Arg) sval {
		switch a := a.(type) {
		case x86asm.Reg:
			return val(canon(a))
		case x86asm.Imm:
			return konst(uint64(a))
		}
		return sval{}
	}
	addr := func(m x86asm.Mem, next uint64) sval {
		if m.Segment != 0 {
			return sval{}
		}
		v := konst(uint64(m.Disp))
		if m.Base == x86asm.RIP {
			v.c += next
		} else if m.Base != 0 {
			b := val(canon(m.Base))
			if b.k != svLinear {
				return sval{}
			}
			v.c += b.c
			v.scale += b.scale
		}
		if m.Index != 0 {
			x := val(canon(m.Index))
			if x.k != svLinear {
				return sval{}
			}
			v.c += x.c * uint64(m.Scale)
			v.scale += x.scale * uint64(m.Scale)
		}
		return v
	}
	load := func(m x86asm.Mem, size int, signed bool, next uint64) sval {
		if slot != nil && m == *slot {
			return sval{k: svLinear, scale: 1}
		}
		a := addr(m, next)
		if a.k == svLinear && a.scale == uint64(size) {
			return sval{k: svEntry, c: a.c, esize: size, signed: signed}
		}
		return sval{}
	}
	for _, p := range win {
		in := p.inst
		next := p.addr + uint64(p.len)
		dst, dstReg := in.Args[0].(x86asm.Reg)
		d := canon(dst)
		switch in.Op {
		case x86asm.CMP:
			cmpLoc, cmpImm = nil, 0
			if imm, ok := in.Args[1].(x86asm.Imm); ok && imm >= 0 {
				cmpLoc, cmpImm = in.Args[0], int64(imm)
			}
			continue
		case x86asm.JA, x86asm.JAE:
			if cmpLoc != nil {
				bound = int(cmpImm)
				if in.Op == x86asm.JA {
					bound++
				}
				switch l := cmpLoc.(type) {
				case x86asm.Reg:
					r := canon(l)
					if l >= x86asm.AL && l <= x86asm.R15W && !(l >= x86asm.EAX) {
						// An 8- or 16-bit compare bounds the low part:
						// I is what movzx reads from it.
						lowI = r
						break
					}
					if v := val(r); v.k == svSym {
						iSym = v.c + 1 // copies made before the compare hold I too
					}
					regs[r] = sval{k: svLinear, scale: 1}
					slot = nil
				case x86asm.Mem:
					m := l
					slot = &m
				}
			}
			continue
		case x86asm.TEST:
			continue
		case x86asm.CDQE: // cltq: rax = sign-extended eax
			v := val(x86asm.RAX)
			if v.k == svEntry && v.esize == 4 {
				v.signed = true
			} else if v.k != svLinear || v.scale != 0 {
				v = sval{}
			}
			regs[x86asm.RAX] = v
			continue
		}
		if in.Op == 0 || p.kind == kJcc {
			continue
		}
		if !dstReg || d == 0 {
			if m, ok := in.Args[0].(x86asm.Mem); ok && slot != nil && m == *slot {
				slot = nil // the index's memory slot is overwritten
			}
			continue
		}
		var v sval
		if d == lowI && in.Op != x86asm.MOVZX {
			lowI = 0
		}
		switch in.Op {
		case x86asm.MOVZX:
			switch src := in.Args[1].(type) {
			case x86asm.Reg:
				if lowI != 0 && canon(src) == lowI {
					v = sval{k: svLinear, scale: 1}
				}
			case x86asm.Mem: // cmpb $N, mem ; ja ; movzbl mem, %eax (sqlite3GetToken)
				if slot != nil && src == *slot {
					v = sval{k: svLinear, scale: 1}
				}
			}
		case x86asm.MOV:
			switch src := in.Args[1].(type) {
			case x86asm.Mem:
				size := 8
				if dst >= x86asm.EAX && dst <= x86asm.R15L {
					size = 4
				}
				v = load(src, size, false, next)
			default:
				v = get(src)
			}
		case x86asm.MOVSXD:
			switch src := in.Args[1].(type) {
			case x86asm.Mem:
				v = load(src, 4, true, next)
			case x86asm.Reg:
				v = val(canon(src))
				if v.k == svEntry && v.esize == 4 {
					v.signed = true
				}
			}
		case x86asm.LEA:
			if m, ok := in.Args[1].(x86asm.Mem); ok {
				v = addr(m, next)
			}
		case x86asm.ADD:
			a, b := val(d), get(in.Args[1])
			switch {
			case a.k == svLinear && b.k == svLinear:
				v = sval{k: svLinear, c: a.c + b.c, scale: a.scale + b.scale}
			case a.k == svEntry && b.k == svLinear && b.scale == 0:
				v = a
				v.add += b.c
			case b.k == svEntry && a.k == svLinear && a.scale == 0:
				v = b
				v.add += a.c
			}
		case x86asm.SHL:
			a := val(d)
			if imm, ok := in.Args[1].(x86asm.Imm); ok && a.k == svLinear && imm < 8 {
				v = sval{k: svLinear, c: a.c << uint(imm), scale: a.scale << uint(imm)}
			}
		case x86asm.AND:
			if imm, ok := in.Args[1].(x86asm.Imm); ok && imm > 0 && imm&(imm+1) == 0 && imm < maxTable {
				bound = int(imm) + 1
				v = sval{k: svLinear, scale: 1}
			}
		}
		regs[d] = v
	}
	var e sval
	switch a := j.inst.Args[0].(type) {
	case x86asm.Reg:
		e = val(canon(a))
	case x86asm.Mem:
		e = load(a, 8, false, j.addr+uint64(j.len))
	}
	if e.k != svEntry || bound <= 0 || bound > maxTable || r.in.Code == nil {
		return nil, false
	}
	data := r.in.Code.Read(e.c, bound*e.esize)
	if len(data) < bound*e.esize {
		return nil, false
	}
	var ts []uint64
	for i := 0; i < bound; i++ {
		var t uint64
		if e.esize == 8 {
			t = binary.LittleEndian.Uint64(data[i*8:])
		} else if e.signed {
			t = uint64(int64(int32(binary.LittleEndian.Uint32(data[i*4:]))))
		} else {
			t = uint64(binary.LittleEndian.Uint32(data[i*4:]))
		}
		t += e.add
		if !r.inRange(t) {
			return nil, false
		}
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return slices.Compact(ts), true
}
