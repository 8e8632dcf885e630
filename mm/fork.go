package mm

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// Fork returns a copy of the address space over the backend b (a new, empty
// CPU memory): every area is mapped there with its protection and its
// contents are copied, as fork(2) gives the child a copy of the parent's
// memory; MAP_SHARED areas are shared instead, when both Backends are
// PageSharers (the child maps the parent's memory there). Only backed
// pages are mapped in b (the child's reservations stay bookkeeping, like
// the parent's: backed.go); the limit is the parent's. When b is a
// PageForker, the private pages are copied on write (ForkPages); else,
// or when it declines, the copy is at page granularity: only pages
// holding a non-zero byte are written (fresh pages are zero), in runs of
// consecutive pages, so a fork costs one copy of the pages the parent
// touched. It returns how many bytes were copied. File handles (VMA.File)
// are carried along as they are: the caller accounts for them.
func (as *AddressSpace) Fork(b Backend) (*AddressSpace, uint64, error) {
	child := &AddressSpace{b: b, brkStart: as.brkStart, brk: as.brk, limit: as.limit}
	child.vmas, child.eof = slices.Clone(as.vmas), slices.Clone(as.eof)
	share, canShare := b.(PageSharer)
	if _, ok := as.b.(PageSharer); !ok {
		canShare = false
	}
	var private []Range
	for _, v := range as.vmas {
		for _, c := range as.backed.in(v.Start, v.End) {
			if !v.Shared || !canShare {
				private = append(private, Range{c.lo, c.hi - c.lo, v.Prot})
				continue
			}
			if err := share.SharePages(c.lo, c.hi-c.lo, v.Prot, as.b); err != nil {
				return nil, 0, backendErr("share", c.lo, c.hi-c.lo, err)
			}
			child.backed.add(c.lo, c.hi)
			child.nbacked += c.hi - c.lo
		}
	}
	if f, ok := b.(PageForker); ok && len(private) > 0 {
		copied, err := f.ForkPages(as.b, private)
		if err == nil {
			for _, r := range private {
				child.backed.add(r.Addr, r.Addr+r.Size)
				child.nbacked += r.Size
			}
			return child, copied, nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return nil, copied, backendErr("fork", private[0].Addr, private[0].Size, err)
		}
	}
	var copied uint64
	buf := make([]byte, forkChunk)
	for _, r := range private {
		n, err := as.copyPages(child, r, buf)
		copied += n
		if err != nil {
			return nil, copied, err
		}
	}
	return child, copied, nil
}

// forkChunk is how much of the parent's memory an eager fork reads at once.
const forkChunk = 1 << 20

// copyPages backs r in child and copies into it the pages of r that hold
// a non-zero byte; it returns how many bytes it wrote.
func (as *AddressSpace) copyPages(child *AddressSpace, r Range, buf []byte) (uint64, error) {
	var copied uint64
	lo, hi := r.Addr, r.Addr+r.Size
	if err := child.back(lo, hi, r.Prot, false); err != nil {
		return 0, err
	}
	b := child.b
	for a := lo; a < hi; a += forkChunk {
		n := min(hi-a, forkChunk)
		p := buf[:n]
		// Pages never written are not read (PageResident).
		var res []bool
		if r, ok := as.b.(PageResident); ok {
			if res, _ = r.Resident(a, n); res != nil && !slices.Contains(res, true) {
				continue
			}
		}
		if err := as.b.ReadMem(a, p); err != nil {
			return copied, fmt.Errorf("mm: fork: reading %#x+%#x: %w", a, n, err)
		}
		// Write each run of non-zero pages with one call.
		for off := uint64(0); off < n; {
			if res != nil && !res[off/PageSize] || allZero(p[off:off+PageSize]) {
				off += PageSize
				continue
			}
			end := off + PageSize
			for end < n && (res == nil || res[end/PageSize]) && !allZero(p[end:end+PageSize]) {
				end += PageSize
			}
			if err := b.WriteMem(a+off, p[off:end]); err != nil {
				return copied, fmt.Errorf("mm: fork: writing %#x+%#x: %w", a+off, end-off, err)
			}
			copied += end - off
			off = end
		}
	}
	return copied, nil
}

// zeros is a page of zero bytes to compare with.
var zeros = make([]byte, PageSize)

// allZero reports whether p holds only zero bytes.
func allZero(p []byte) bool {
	for len(p) > 0 {
		n := min(len(p), len(zeros))
		if !bytes.Equal(p[:n], zeros[:n]) {
			return false
		}
		p = p[n:]
	}
	return true
}

// Vfork returns the address space of a vfork child over the backend b,
// which runs in the parent's memory until it execs or exits, as Linux's
// vfork child does: every backed page is mapped in b onto the parent's
// own memory (PageSharer.SharePages), so nothing is copied and the
// parent sees the child's stores (posix_spawn's child reports a failed
// exec through them). Pages the child backs afterwards (first stores to
// unbacked or MAP_NORESERVE pages, new mappings) are its own. It reports
// false, and returns a copy (Fork), when a Backend cannot share.
func (as *AddressSpace) Vfork(b Backend) (*AddressSpace, bool, error) {
	share, ok := b.(PageSharer)
	if _, ok2 := as.b.(PageSharer); !ok || !ok2 {
		child, _, err := as.Fork(b)
		return child, false, err
	}
	child := &AddressSpace{b: b, brkStart: as.brkStart, brk: as.brk, limit: as.limit}
	child.vmas, child.eof = slices.Clone(as.vmas), slices.Clone(as.eof)
	for _, v := range as.vmas {
		for _, c := range as.backed.in(v.Start, v.End) {
			if err := share.SharePages(c.lo, c.hi-c.lo, v.Prot, as.b); err != nil {
				return nil, false, backendErr("share", c.lo, c.hi-c.lo, err)
			}
			child.backed.add(c.lo, c.hi)
			child.nbacked += c.hi - c.lo
		}
	}
	return child, true, nil
}
