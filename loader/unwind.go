package loader

import "emuprof/loader/cfi"

// cfiTable returns the object's call frame information (nil: none).
func (o *symObject) cfiTable() *cfi.Table {
	o.cfiOnce.Do(func() {
		if o.file == nil {
			return
		}
		sec := o.file.Section(".eh_frame")
		if sec == nil || sec.Type == 8 /* SHT_NOBITS */ {
			return
		}
		data, err := sec.Data()
		if err != nil {
			return
		}
		o.cfi = cfi.Parse(data, sec.Addr)
	})
	return o.cfi
}

// Unwind walks the stack of a thread whose registers are regs (frame 0,
// regs.R[cfi.RA] its pc) with the .eh_frame CFI of the objects the pcs lie
// in, as gdb does, and returns the pc of each frame: frame 0's pc, then
// the callers' return addresses. It stops at the outermost frame (a
// return address the CFI says is undefined, as in _start), at a pc no FDE
// covers, or after max frames. read reads the guest's memory.
func (t *SymbolTable) Unwind(regs cfi.Regs, read cfi.ReadFunc, max int) []uint64 {
	pcs := []uint64{regs.R[cfi.RA]}
	for len(pcs) < max {
		pc := pcs[len(pcs)-1]
		look := pc
		if len(pcs) > 1 {
			look = pc - 1 // a caller's frame is where its call is
		}
		o := t.object(look)
		if o == nil {
			break
		}
		tab := o.cfiTable()
		if tab == nil {
			break
		}
		row, err := tab.RowAt(look - o.bias)
		if err != nil {
			break
		}
		next, err := cfi.Step(row, regs, read)
		if err != nil || next.R[cfi.RA] == 0 || next.R[cfi.RSP] <= regs.R[cfi.RSP] {
			break
		}
		regs = next
		pcs = append(pcs, regs.R[cfi.RA])
	}
	return pcs
}

// FormatCaller is FormatLong for a return address: the function and line
// of the call, the instruction before ret (a call at the end of a function
// that does not return is followed by the next function), as gdb shows a
// caller's frame. The offset is still ret's.
func (t *SymbolTable) FormatCaller(ret uint64) string {
	loc := t.lookup(ret-1, true)
	if loc.Known && loc.Func != "" {
		loc.Offset++
	}
	return formatLoc(loc, ret)
}
