package mm

import "fmt"

// RemapHow says where Remap may put the resized mapping (mremap's flags).
type RemapHow struct {
	// MayMove allows moving the mapping when it cannot grow in place
	// (MREMAP_MAYMOVE).
	MayMove bool
	// Fixed moves the mapping to NewAddr, replacing what is there
	// (MREMAP_FIXED; requires MayMove).
	Fixed   bool
	NewAddr uint64
}

// copyChunk bounds the scratch buffer used to move memory.
const copyChunk = 1 << 20

// Remap implements mremap(2) for [old, old+oldSize), which must lie inside
// a single mapped area: it shrinks, grows in place, or moves the mapping
// (copying its contents) and returns its new address. Pages added to a
// mapping are zero-filled, also for file mappings.
func (as *AddressSpace) Remap(old, oldSize, newSize uint64, how RemapHow) (uint64, error) {
	fail := func(err error) (uint64, error) {
		return 0, fmt.Errorf("mm: remap %#x+%#x to %#x bytes: %w", old, oldSize, newSize, err)
	}
	oldEnd, err := checkRange(old, oldSize)
	if err != nil || newSize == 0 || (how.Fixed && !how.MayMove) {
		return fail(ErrInvalid)
	}
	newLen := PageUp(newSize)
	if newLen == 0 || newLen > TaskSize {
		return fail(ErrInvalid)
	}
	oldLen := oldEnd - old
	v, ok := as.Find(old)
	if !ok || v.End < oldEnd {
		return fail(ErrFault)
	}
	if how.Fixed {
		dst := how.NewAddr
		if _, err := checkRange(dst, newLen); err != nil {
			return fail(ErrInvalid)
		}
		if dst < oldEnd && old < dst+newLen {
			return fail(ErrInvalid)
		}
		if err := as.Unmap(dst, newLen); err != nil {
			return 0, err
		}
		return as.move(v, old, oldLen, dst, newLen)
	}
	switch {
	case newLen == oldLen:
		return old, nil
	case newLen < oldLen:
		if err := as.Unmap(old+newLen, oldLen-newLen); err != nil {
			return 0, err
		}
		return old, nil
	}
	grow := newLen - oldLen
	if old+newLen <= TaskSize && old+newLen > old && !as.Overlaps(oldEnd, grow) {
		ext := VMA{Start: oldEnd, End: oldEnd + grow, Prot: v.Prot, Name: v.Name, Shared: v.Shared, File: v.File, NoReserve: v.NoReserve}
		if v.fileBacked() {
			ext.Offset = v.Offset + (oldEnd - v.Start)
		}
		if err := as.Map(ext); err != nil {
			return 0, err
		}
		return old, nil
	}
	if !how.MayMove {
		return fail(ErrNoMem)
	}
	dst, err := as.FindFree(newLen, 0)
	if err != nil {
		return 0, err
	}
	return as.move(v, old, oldLen, dst, newLen)
}

// move maps newLen bytes at dst like v, copies the old contents there and
// unmaps the old range.
func (as *AddressSpace) move(v VMA, old, oldLen, dst, newLen uint64) (uint64, error) {
	nv := VMA{Start: dst, End: dst + newLen, Prot: v.Prot, Name: v.Name, Shared: v.Shared, File: v.File, NoReserve: v.NoReserve}
	if v.fileBacked() {
		nv.Offset = v.Offset + (old - v.Start)
	}
	if err := as.Map(nv); err != nil {
		return 0, err
	}
	// Only backed pages have contents; a PROT_NONE area's backed pages
	// are backed at the destination too, so that they keep them.
	n := min(oldLen, newLen)
	buf := make([]byte, min(n, copyChunk))
	for _, c := range as.backed.in(old, old+n) {
		for _, g := range as.backed.gaps(dst+(c.lo-old), dst+(c.hi-old)) {
			if !as.allows(g.hi - g.lo) {
				_ = as.Unmap(dst, newLen)
				return 0, fmt.Errorf("mm: remap %#x+%#x: more than the memory limit: %w", old, oldLen, ErrNoMem)
			}
			if err := as.back(g.lo, g.hi, nv.Prot, nv.Shared); err != nil {
				return 0, err
			}
		}
		for a := c.lo; a < c.hi; {
			p := buf[:min(c.hi-a, uint64(len(buf)))]
			if err := as.b.ReadMem(a, p); err != nil {
				return 0, &BackendError{"read", a, uint64(len(p)), err}
			}
			if err := as.b.WriteMem(dst+(a-old), p); err != nil {
				return 0, &BackendError{"write", dst + (a - old), uint64(len(p)), err}
			}
			a += uint64(len(p))
		}
	}
	if err := as.moveEOF(old, n, dst); err != nil {
		return 0, err
	}
	if err := as.Unmap(old, oldLen); err != nil {
		return 0, err
	}
	return dst, nil
}
