package mm

import "fmt"

// Pages past the end of a mapped file. Linux maps a file's pages, and an
// access to a page of a file mapping that lies wholly past the end of the
// file raises SIGBUS (BUS_ADRERR), whatever the mapping's protection: the
// file has no such page. The address space keeps those pages mapped but
// never backs them (as Map leaves a PROT_NONE area unbacked), so that the
// CPU faults there, and says which they are (PastEOF) for the fault to be
// SIGBUS instead of SIGSEGV, and for the kernel's own accesses to fail
// with EFAULT. Who maps the file says where its end is (MapFile); mm
// knows nothing of files.

// MapFile is Map for a file mapping whose pages from eof on (page-aligned,
// inside v) lie past the end of the file: they are mapped but not backed.
func (as *AddressSpace) MapFile(v VMA, eof uint64) error {
	return as.mapArea(v, eof)
}

// PastEOF reports whether the page containing addr is a mapped page past
// the end of its file.
func (as *AddressSpace) PastEOF(addr uint64) bool {
	i := as.eof.first(addr)
	return i < len(as.eof) && as.eof[i].lo <= addr
}

// PastEOFIn returns how many bytes from addr on, up to n, are not past the
// end of a file (the kernel's accesses stop there: EFAULT).
func (as *AddressSpace) PastEOFIn(addr, n uint64) uint64 {
	if len(as.eof) == 0 || addr+n < addr {
		return n
	}
	if c := as.eof.in(PageDown(addr), addr+n); len(c) > 0 {
		return max(c[0].lo, addr) - addr
	}
	return n
}

// holes returns the parts of [lo, hi) that are neither backed nor past
// the end of a file: those that making an area accessible must back.
func (as *AddressSpace) holes(lo, hi uint64) []span {
	var out []span
	for _, g := range as.backed.gaps(lo, hi) {
		out = append(out, as.eof.gaps(g.lo, g.hi)...)
	}
	return out
}

// moveEOF marks the pages at dst that correspond to the pages past the end
// of a file in [old, old+n), which mremap moved there: they are unbacked
// again.
func (as *AddressSpace) moveEOF(old, n, dst uint64) error {
	for _, c := range as.eof.in(old, old+n) {
		lo, hi := dst+(c.lo-old), dst+(c.hi-old)
		if err := as.unback(lo, hi); err != nil {
			return err
		}
		as.eof.add(lo, hi)
	}
	return nil
}

// SetFileEnd says where the file mapped at [start, end) (page-aligned)
// ends now, eof, an address (rounded up to a page; at or below start: all
// of it is past the end), after the file was truncated or grew: pages from
// eof on are past the end (their contents dropped, as Linux drops a
// truncated file's pages), pages below it that were past the end are
// backed, zero-filled, for the caller to fill with the file's bytes.
func (as *AddressSpace) SetFileEnd(start, end, eof uint64) error {
	eof = min(max(PageUp(eof), start), end)
	if err := as.unback(eof, end); err != nil {
		return err
	}
	for i := as.index(eof); i < len(as.vmas) && as.vmas[i].Start < end; i++ {
		v := as.vmas[i]
		as.eof.add(max(v.Start, eof), min(v.End, end)) // mapped pages only
	}
	for _, c := range as.eof.in(start, eof) {
		for i := as.index(c.lo); i < len(as.vmas) && as.vmas[i].Start < c.hi; i++ {
			v := as.vmas[i]
			lo, hi := max(v.Start, c.lo), min(v.End, c.hi)
			as.eof.remove(lo, hi)
			if v.Prot == ProtNone || v.NoReserve {
				continue
			}
			if !as.allows(hi - lo) {
				return fmt.Errorf("mm: file grew at %#x: more than the memory limit (%d bytes): %w", lo, as.limit, ErrNoMem)
			}
			if err := as.back(lo, hi, v.Prot, v.Shared); err != nil {
				return err
			}
		}
	}
	return nil
}
