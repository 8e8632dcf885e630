package mm

import (
	"errors"
	"fmt"
	"slices"
)

// Backing. Linux gives an area pages only when they are touched, so a
// process may reserve far more address space than the machine has memory
// (a PROT_NONE or MAP_NORESERVE reservation of 1 TiB is granted). The
// Backend is not that lazy: every page it maps costs host memory, and
// changing the protection of part of one of its mappings copies the whole
// mapping (Unicorn's split_region). So the address space backs pages in
// the Backend only when they become accessible: an area mapped PROT_NONE
// is bookkeeping only until mprotect makes some of it readable, writable
// or executable, and then only that part is mapped in the Backend. Pages
// once backed stay backed (with their contents) while they are mapped,
// whatever their protection becomes; unmapping them unbacks them.
//
// Private anonymous MAP_NORESERVE areas are lazier still: their pages are
// backed when the guest first touches them (Touch, called on the CPU's
// fault), a chunk at a time, so a read-write reservation of 1 TiB costs
// nothing either.
//
// Invariant: every mapped page whose protection is not PROT_NONE is
// backed, except in NoReserve areas and file pages past the end of their
// file (eof.go), and every backed page is mapped; no page past the end of
// its file is backed.
//
// The number of backed bytes is what the guest's memory costs; it is
// limited (SetLimit, emuprof's --max-memory) so that a guest allocating
// without bound gets ENOMEM, as from a kernel refusing to commit more
// memory, instead of growing the emulator until the host kills it.

// span is a half-open address range [lo, hi).
type span struct{ lo, hi uint64 }

// spans is a sorted list of disjoint, non-adjacent ranges.
type spans []span

// first returns the index of the first span ending above a.
func (s spans) first(a uint64) int {
	i, _ := slices.BinarySearchFunc(s, a, func(x span, a uint64) int {
		if x.hi <= a {
			return -1
		}
		return 1
	})
	return i
}

// in returns the parts of [lo, hi) the spans cover, in order.
func (s spans) in(lo, hi uint64) []span {
	var out []span
	for i := s.first(lo); i < len(s) && s[i].lo < hi; i++ {
		out = append(out, span{max(s[i].lo, lo), min(s[i].hi, hi)})
	}
	return out
}

// gaps returns the parts of [lo, hi) the spans do not cover, in order.
func (s spans) gaps(lo, hi uint64) []span {
	var out []span
	cur := lo
	for _, c := range s.in(lo, hi) {
		if c.lo > cur {
			out = append(out, span{cur, c.lo})
		}
		cur = c.hi
	}
	if cur < hi {
		out = append(out, span{cur, hi})
	}
	return out
}

// covered returns how many bytes of [lo, hi) the spans cover.
func (s spans) covered(lo, hi uint64) uint64 {
	var n uint64
	for _, c := range s.in(lo, hi) {
		n += c.hi - c.lo
	}
	return n
}

// add covers [lo, hi), merging with overlapping and adjacent spans.
func (s *spans) add(lo, hi uint64) {
	if lo >= hi {
		return
	}
	i := s.first(lo)
	if i > 0 && (*s)[i-1].hi == lo {
		i--
	}
	j := i
	for j < len(*s) && (*s)[j].lo <= hi {
		lo, hi = min(lo, (*s)[j].lo), max(hi, (*s)[j].hi)
		j++
	}
	*s = slices.Replace(*s, i, j, span{lo, hi})
}

// remove uncovers [lo, hi).
func (s *spans) remove(lo, hi uint64) {
	if lo >= hi {
		return
	}
	i := s.first(lo)
	j := i
	var keep []span
	for j < len(*s) && (*s)[j].lo < hi {
		c := (*s)[j]
		if c.lo < lo {
			keep = append(keep, span{c.lo, lo})
		}
		if c.hi > hi {
			keep = append(keep, span{hi, c.hi})
		}
		j++
	}
	*s = slices.Replace(*s, i, j, keep...)
}

// DefaultLimit is the default limit on a process's backed memory (see
// SetLimit): 8 GiB, a fixed figure so that runs behave alike on every host.
const DefaultLimit = 8 << 30

// SetLimit sets how many bytes of the address space may be backed in the
// Backend (0: no limit). Mapping, mprotect, brk or mremap that would back
// more fail with ErrNoMem.
func (as *AddressSpace) SetLimit(n uint64) { as.limit = n }

// Limit returns the limit set by SetLimit.
func (as *AddressSpace) Limit() uint64 { return as.limit }

// Backed returns how many bytes are backed in the Backend.
func (as *AddressSpace) Backed() uint64 { return as.nbacked }

// IsBacked reports whether the page containing addr is backed.
func (as *AddressSpace) IsBacked(addr uint64) bool {
	i := as.backed.first(addr)
	return i < len(as.backed) && as.backed[i].lo <= addr
}

// toBack is how many bytes of [lo, hi) mprotect must back to make them
// accessible: the pages not backed yet, outside NoReserve areas.
func (as *AddressSpace) toBack(lo, hi uint64) uint64 {
	var n uint64
	for i := as.index(lo); i < len(as.vmas) && as.vmas[i].Start < hi; i++ {
		if v := as.vmas[i]; !v.NoReserve {
			a, b := max(v.Start, lo), min(v.End, hi)
			n += b - a - as.backed.covered(a, b) - as.eof.covered(a, b)
		}
	}
	return n
}

// touchChunk is how much of a NoReserve area Touch backs at once.
const touchChunk = 64 << 10

// Touch backs the pages of an access of size bytes at addr that lie in an
// accessible NoReserve area and are not backed yet (with the
// touchChunk-aligned chunk around them, within the area and what is not
// backed): the CPU faulted there and the access can be made again. It
// reports whether it backed anything; past the limit it backs nothing
// more and returns ErrNoMem.
func (as *AddressSpace) Touch(addr, size uint64) (bool, error) {
	a, err := as.touch(addr)
	if err != nil || size <= 1 || PageDown(addr+size-1) == PageDown(addr) {
		return a, err
	}
	b, err := as.touch(addr + size - 1)
	return a || b, err
}

func (as *AddressSpace) touch(addr uint64) (bool, error) {
	v, ok := as.Find(addr)
	if !ok || !v.NoReserve || v.Prot == ProtNone || as.IsBacked(addr) {
		return false, nil
	}
	lo := max(v.Start, addr&^(touchChunk-1))
	hi := min(v.End, lo+touchChunk)
	for _, g := range as.backed.gaps(lo, hi) {
		if g.lo <= addr && addr < g.hi {
			if !as.allows(g.hi - g.lo) {
				return false, fmt.Errorf("mm: touching %#x: more than the memory limit (%d bytes): %w", addr, as.limit, ErrNoMem)
			}
			if err := as.back(g.lo, g.hi, v.Prot, false); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	return false, nil
}

// allows reports whether n more bytes may be backed.
func (as *AddressSpace) allows(n uint64) bool {
	return as.limit == 0 || as.nbacked+n <= as.limit
}

// back maps [lo, hi), which must be mapped and unbacked, in the Backend;
// shared: pages of a MAP_SHARED area, which a fork will share
// (PageSharer).
func (as *AddressSpace) back(lo, hi uint64, prot Prot, shared bool) error {
	mapPages := as.b.MapPages
	if s, ok := as.b.(PageSharer); ok && shared {
		mapPages = s.MapSharedPages
	}
	if err := mapPages(lo, hi-lo, prot); err != nil {
		return backendErr("map", lo, hi-lo, err)
	}
	as.backed.add(lo, hi)
	as.nbacked += hi - lo
	return nil
}

// unback unmaps the backed parts of [lo, hi) from the Backend.
func (as *AddressSpace) unback(lo, hi uint64) error {
	for _, c := range as.backed.in(lo, hi) {
		if err := as.b.UnmapPages(c.lo, c.hi-c.lo); err != nil {
			return backendErr("unmap", c.lo, c.hi-c.lo, err)
		}
		as.backed.remove(c.lo, c.hi)
		as.nbacked -= c.hi - c.lo
	}
	return nil
}

// backendErr wraps a failure of the Backend: a *BackendError, except when
// the Backend ran out of memory or regions (its error wraps ErrNoMem),
// which the guest sees as ENOMEM, as from Linux past its memory or
// vm.max_map_count.
func backendErr(op string, addr, size uint64, err error) error {
	if errors.Is(err, ErrNoMem) {
		return fmt.Errorf("mm: %s %#x+%#x: %w", op, addr, size, err)
	}
	return &BackendError{op, addr, size, err}
}

// Mem returns the guest memory as the kernel sees it: a Backend whose
// reads and writes also reach mapped pages that are not backed (they read
// as zeros; a write of non-zero bytes backs them first, with their area's
// protection). Its page operations are the Backend's.
func (as *AddressSpace) Mem() Backend { return lazyMem{as} }

type lazyMem struct{ as *AddressSpace }

func (m lazyMem) MapPages(addr, size uint64, prot Prot) error {
	return m.as.b.MapPages(addr, size, prot)
}
func (m lazyMem) UnmapPages(addr, size uint64) error { return m.as.b.UnmapPages(addr, size) }
func (m lazyMem) ProtectPages(addr, size uint64, prot Prot) error {
	return m.as.b.ProtectPages(addr, size, prot)
}

// ZeroPages makes the pages of [addr, addr+size) (addr page-aligned, the
// end rounded up to a page; every page mapped) read as zeros: the backed
// ones are zeroed in the Backend, by its ZeroPages when it has one
// (PageZeroer), else by writing zeros; unbacked ones read as zeros
// already. What is backed does not change, nor the backed bytes counted
// against the limit: Linux's MADV_DONTNEED frees the pages but keeps a
// private mapping's commit charge, and the pages of an area that is not
// NoReserve stay backed while they are accessible (the invariant above).
func (m lazyMem) ZeroPages(addr, size uint64) error {
	as := m.as
	end := PageUp(addr + size)
	if addr%PageSize != 0 || addr+size < addr || end < addr {
		return fmt.Errorf("mm: zero %#x+%#x: %w", addr, size, ErrInvalid)
	}
	if size == 0 {
		return nil
	}
	if !as.Mapped(addr, end-addr) {
		return fmt.Errorf("mm: zero %#x+%#x: %w", addr, size, ErrNoMem)
	}
	z, fast := as.b.(PageZeroer)
	var buf []byte
	for _, c := range as.backed.in(addr, end) {
		if fast {
			if err := z.ZeroPages(c.lo, c.hi-c.lo); err != nil {
				return backendErr("zero", c.lo, c.hi-c.lo, err)
			}
			continue
		}
		if buf == nil {
			buf = make([]byte, min(end-c.lo, zeroChunk))
		}
		for a := c.lo; a < c.hi; a += uint64(len(buf)) {
			n := min(c.hi-a, uint64(len(buf)))
			if err := as.b.WriteMem(a, buf[:n]); err != nil {
				return backendErr("write", a, n, err)
			}
		}
	}
	return nil
}

// zeroChunk is the most zeros ZeroPages writes at once into a Backend
// without ZeroPages of its own.
const zeroChunk = 1 << 20

// ReadMem reads guest memory; unbacked mapped pages read as zeros.
func (m lazyMem) ReadMem(addr uint64, p []byte) error {
	as := m.as
	end := addr + uint64(len(p))
	if end < addr {
		return fmt.Errorf("mm: read %#x+%#x: wraps", addr, len(p))
	}
	if len(p) == 0 || as.backed.covered(addr, end) == uint64(len(p)) {
		return as.b.ReadMem(addr, p)
	}
	if !as.Mapped(addr, uint64(len(p))) {
		return fmt.Errorf("mm: read %#x+%#x: %w", addr, len(p), ErrNoMem)
	}
	clear(p)
	for _, c := range as.backed.in(addr, end) {
		if err := as.b.ReadMem(c.lo, p[c.lo-addr:c.hi-addr]); err != nil {
			return err
		}
	}
	return nil
}

// WriteMem writes guest memory, backing the unbacked mapped pages it
// stores non-zero bytes into (zeros are what they hold already).
func (m lazyMem) WriteMem(addr uint64, p []byte) error {
	as := m.as
	end := addr + uint64(len(p))
	if end < addr {
		return fmt.Errorf("mm: write %#x+%#x: wraps", addr, len(p))
	}
	if len(p) == 0 || as.backed.covered(addr, end) == uint64(len(p)) {
		return as.b.WriteMem(addr, p)
	}
	if !as.Mapped(addr, uint64(len(p))) {
		return fmt.Errorf("mm: write %#x+%#x: %w", addr, len(p), ErrNoMem)
	}
	for _, g := range as.backed.gaps(PageDown(addr), PageUp(end)) {
		lo, hi := max(g.lo, addr), min(g.hi, end)
		if allZero(p[lo-addr : hi-addr]) {
			continue
		}
		if !as.allows(g.hi - g.lo) {
			return fmt.Errorf("mm: write %#x+%#x: backing %#x-%#x: %w", addr, len(p), g.lo, g.hi, ErrNoMem)
		}
		// One Backend mapping per area, with the area's protection.
		for i := as.index(g.lo); i < len(as.vmas) && as.vmas[i].Start < g.hi; i++ {
			v := as.vmas[i]
			if err := as.back(max(v.Start, g.lo), min(v.End, g.hi), v.Prot, v.Shared); err != nil {
				return err
			}
		}
	}
	for _, c := range as.backed.in(addr, end) {
		if err := as.b.WriteMem(c.lo, p[c.lo-addr:c.hi-addr]); err != nil {
			return err
		}
	}
	return nil
}
