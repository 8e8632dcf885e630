// Package mm models the guest's virtual address space: the list of mapped
// areas (VMAs) with their protections and names, the program break, and the
// placement of new mappings. It keeps the CPU's memory (a Backend, in practice
// the Unicorn engine) in step with that list, so that the syscall layer can
// implement mmap, munmap, mprotect, mremap and brk with Linux semantics and
// render /proc/self/maps.
//
// All addresses and sizes handed to the Backend are page aligned and only
// cover pages that are mapped (for unmap and protect) or free (for map),
// which is what Unicorn requires.
package mm

import (
	"errors"
	"fmt"
	"slices"
)

// Prot is a page protection, with the Linux PROT_* values.
type Prot int

// Page protections.
const (
	ProtNone  Prot = 0
	ProtRead  Prot = 1
	ProtWrite Prot = 2
	ProtExec  Prot = 4
)

// String renders p like the first three columns of /proc/self/maps ("r-x").
func (p Prot) String() string {
	b := []byte("---")
	if p&ProtRead != 0 {
		b[0] = 'r'
	}
	if p&ProtWrite != 0 {
		b[1] = 'w'
	}
	if p&ProtExec != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Layout constants of the emulated x86-64 address space (Linux without ASLR).
const (
	// PageSize is the size of a guest page.
	PageSize = 4096
	// MmapBase is the top of the area where mappings without a usable hint
	// are placed, growing downward.
	MmapBase = 0x7ffff7fff000
	// MmapMin is the lowest address a mapping may use (vm.mmap_min_addr).
	MmapMin = 0x10000
	// TaskSize is the end of the user address space.
	TaskSize = 0x7ffffffff000
)

// Errors reported for guest-caused failures. Callers translate them to
// errno values; errors wrapping a *BackendError are emulator failures.
var (
	// ErrInvalid reports an unaligned address, a zero or overflowing size.
	ErrInvalid = errors.New("invalid address range")
	// ErrNoMem reports a range that is not fully mapped, or no free space.
	ErrNoMem = errors.New("range not mapped or no free space")
	// ErrFault reports an mremap source that is not one mapped area.
	ErrFault = errors.New("bad address")
)

// BackendError is a failure of the CPU's memory, not of the guest.
type BackendError struct {
	Op         string
	Addr, Size uint64
	Err        error
}

// Error describes the failed backend operation.
func (e *BackendError) Error() string {
	return fmt.Sprintf("mm: backend %s %#x+%#x: %v", e.Op, e.Addr, e.Size, e.Err)
}

// Unwrap returns the backend's error.
func (e *BackendError) Unwrap() error { return e.Err }

// Backend is the CPU's memory. All operations are page aligned.
type Backend interface {
	MapPages(addr, size uint64, prot Prot) error
	UnmapPages(addr, size uint64) error
	ProtectPages(addr, size uint64, prot Prot) error
	ReadMem(addr uint64, p []byte) error
	WriteMem(addr uint64, p []byte) error
}

// PageZeroer is an optional interface of a Backend: ZeroPages makes mapped,
// page-aligned memory read as zeros without writing it, as Linux's
// MADV_DONTNEED drops private anonymous pages. The Unicorn engine gives
// its host pages back (emu/hostmem.go), so zeroing megabytes (glibc drops
// each exiting thread's stack) costs neither a copy nor host memory.
// AddressSpace.Mem's Backend always has it; over a Backend without it,
// it writes zeros.
type PageZeroer interface {
	ZeroPages(addr, size uint64) error
}

// PageSharer is an optional interface of a Backend, for the memory of
// MAP_SHARED areas, which a forked child shares with its parent as Linux
// shares it (their stores are each other's). MapSharedPages maps zeroed
// pages like MapPages, in memory SharePages can share; SharePages maps at
// [addr, addr+size) of this Backend the very memory mapped there in from
// (a Backend of the same kind, where that range was mapped by
// MapSharedPages or SharePages), with protection prot. The memory lives
// while a Backend maps part of it.
type PageSharer interface {
	MapSharedPages(addr, size uint64, prot Prot) error
	SharePages(addr, size uint64, prot Prot, from Backend) error
}

// PageResident is an optional interface of a Backend: Resident reports,
// for each page of the mapped range [addr, addr+size), whether it may hold
// a non-zero byte (false: it was never written, it reads as zeros), so
// that a fork reads only those pages. An error: unknown, read them all.
type PageResident interface {
	Resident(addr, size uint64) ([]bool, error)
}

// PageForker is an optional interface of a Backend, for fork(2):
// ForkPages maps in this (empty) Backend, at each range, a private copy of
// what from (a Backend of the same kind) maps there, with the range's
// protection, copied page by page when either side first writes it
// (copy-on-write) instead of now. It returns how many bytes it copied
// now. An error wrapping errors.ErrUnsupported means it mapped nothing:
// the caller copies (Fork's eager copy).
type PageForker interface {
	ForkPages(from Backend, rs []Range) (uint64, error)
}

// Range is a page-aligned range of guest memory with its protection.
type Range struct {
	Addr, Size uint64
	Prot       Prot
}

// VMA is one mapped area [Start, End).
type VMA struct {
	Start, End uint64
	Prot       Prot
	// Name is the guest path of a mapped file, "[heap]", "[stack]", ... or
	// "" for anonymous memory.
	Name string
	// Offset is the file offset of Start for file mappings.
	Offset uint64
	// Shared is true for MAP_SHARED mappings.
	Shared bool
	// NoReserve marks a private anonymous MAP_NORESERVE area: its pages
	// are backed when first touched (Touch), even when accessible, and
	// count against the limit only then (backed.go). Areas with and
	// without it do not merge, as Linux's VM_NORESERVE areas do not.
	NoReserve bool
	// File is the caller's handle on the open file behind a mapping (nil:
	// none; otherwise a pointer, as it is compared). mm only carries it
	// along through splits, moves and growth; areas with different handles
	// never merge.
	File any
}

// Size returns End-Start.
func (v VMA) Size() uint64 { return v.End - v.Start }

// fileBacked reports whether v maps a file (its Offset is meaningful).
func (v VMA) fileBacked() bool {
	return v.Name != "" && v.Name[0] != '['
}

// AddressSpace is the guest's address space.
type AddressSpace struct {
	b        Backend
	vmas     []VMA // sorted by Start, disjoint
	brkStart uint64
	brk      uint64
	backed   spans  // the pages mapped in b (backed.go)
	eof      spans  // mapped file pages past the end of their file, never backed (eof.go)
	nbacked  uint64 // bytes in backed
	limit    uint64 // most bytes backed (0: no limit)
}

// New returns an empty address space over b, with the default limit on
// its backed memory (DefaultLimit; see SetLimit).
func New(b Backend) *AddressSpace {
	return &AddressSpace{b: b, limit: DefaultLimit}
}

// Backend returns the guest memory as the kernel sees it (Mem): the CPU's
// memory, where mapped pages that are not backed read as zeros.
func (as *AddressSpace) Backend() Backend { return as.Mem() }

// PageUp rounds x up to a page boundary (saturating at the top).
func PageUp(x uint64) uint64 {
	if x > ^uint64(0)-(PageSize-1) {
		return ^uint64(0) &^ (PageSize - 1)
	}
	return (x + PageSize - 1) &^ (PageSize - 1)
}

// PageDown rounds x down to a page boundary.
func PageDown(x uint64) uint64 { return x &^ (PageSize - 1) }

// checkRange validates an aligned start and returns the page-rounded end.
func checkRange(addr, size uint64) (uint64, error) {
	if addr%PageSize != 0 || size == 0 {
		return 0, ErrInvalid
	}
	end := PageUp(addr + size)
	if addr+size < addr || end <= addr || end > TaskSize {
		return 0, ErrInvalid
	}
	return end, nil
}

// VMAs returns a copy of the mapped areas, sorted by address.
func (as *AddressSpace) VMAs() []VMA { return slices.Clone(as.vmas) }

// index returns the index of the first VMA whose End is above addr.
func (as *AddressSpace) index(addr uint64) int {
	i, _ := slices.BinarySearchFunc(as.vmas, addr, func(v VMA, a uint64) int {
		if v.End <= a {
			return -1
		}
		return 1
	})
	return i
}

// Find returns the VMA containing addr.
func (as *AddressSpace) Find(addr uint64) (VMA, bool) {
	i := as.index(addr)
	if i < len(as.vmas) && as.vmas[i].Start <= addr {
		return as.vmas[i], true
	}
	return VMA{}, false
}

// Overlaps reports whether any page of [addr, addr+size) is mapped.
func (as *AddressSpace) Overlaps(addr, size uint64) bool {
	end := PageUp(addr + size)
	i := as.index(addr)
	return i < len(as.vmas) && as.vmas[i].Start < end
}

// Mapped reports whether every page of [addr, addr+size) is mapped.
func (as *AddressSpace) Mapped(addr, size uint64) bool {
	start, end := PageDown(addr), PageUp(addr+size)
	for i := as.index(start); i < len(as.vmas) && start < end; i++ {
		v := as.vmas[i]
		if v.Start > start {
			return false
		}
		start = v.End
	}
	return start >= end
}

// split makes at a VMA boundary if it falls strictly inside one.
func (as *AddressSpace) split(at uint64) {
	i := as.index(at)
	if i >= len(as.vmas) || as.vmas[i].Start >= at {
		return
	}
	lo, hi := as.vmas[i], as.vmas[i]
	lo.End = at
	hi.Start = at
	if hi.fileBacked() {
		hi.Offset += at - lo.Start
	}
	as.vmas[i] = lo
	as.vmas = slices.Insert(as.vmas, i+1, hi)
}

// mergeable reports whether b can extend a (a directly below b).
func mergeable(a, b VMA) bool {
	if a.End != b.Start || a.Prot != b.Prot || a.Name != b.Name || a.Shared != b.Shared || a.File != b.File || a.NoReserve != b.NoReserve {
		return false
	}
	return !a.fileBacked() || a.Offset+a.Size() == b.Offset
}

// merge joins compatible neighbours in [lo, hi] (indices, clamped).
func (as *AddressSpace) merge(lo, hi int) {
	lo = max(lo, 1)
	hi = min(hi, len(as.vmas)-1)
	for i := hi; i >= lo; i-- {
		if i < len(as.vmas) && mergeable(as.vmas[i-1], as.vmas[i]) {
			as.vmas[i-1].End = as.vmas[i].End
			as.vmas = slices.Delete(as.vmas, i, i+1)
		}
	}
}

// MapFixed maps [addr, addr+size) with prot, replacing whatever was mapped
// there. name and off describe the area (see VMA).
func (as *AddressSpace) MapFixed(addr, size uint64, prot Prot, name string, off uint64) error {
	return as.Map(VMA{Start: addr, End: addr + size, Prot: prot, Name: name, Offset: off})
}

// Map maps the area v (End is rounded up to a page), replacing whatever was
// mapped there. The new pages are zero-filled; they are backed unless v is
// PROT_NONE (backed.go). Backing more than the limit fails with ErrNoMem,
// and nothing changes.
func (as *AddressSpace) Map(v VMA) error { return as.mapArea(v, PageDown(^uint64(0))) }

// mapArea is Map, and MapFile with its pages from eof on past the end of
// the file.
func (as *AddressSpace) mapArea(v VMA, eof uint64) error {
	end, err := checkRange(v.Start, v.End-v.Start)
	if v.End <= v.Start || err != nil || eof%PageSize != 0 {
		return fmt.Errorf("mm: map %#x-%#x: %w", v.Start, v.End, ErrInvalid)
	}
	v.End = end
	eof = min(max(eof, v.Start), v.End)
	eager := v.Prot != ProtNone && !v.NoReserve
	if eager && !as.allows(eof-v.Start-as.backed.covered(v.Start, eof)) {
		return fmt.Errorf("mm: map %#x-%#x: more than the memory limit (%d bytes): %w", v.Start, v.End, as.limit, ErrNoMem)
	}
	if err := as.Unmap(v.Start, v.Size()); err != nil {
		return err
	}
	if eager && v.Start < eof {
		if err := as.back(v.Start, eof, v.Prot, v.Shared); err != nil {
			return err
		}
	}
	as.eof.add(eof, v.End)
	i := as.index(v.Start)
	as.vmas = slices.Insert(as.vmas, i, v)
	as.merge(i, i+1)
	return nil
}

// Unmap removes every mapping in [addr, addr+size), splitting areas that
// straddle the boundaries. Holes in the range are fine.
func (as *AddressSpace) Unmap(addr, size uint64) error {
	end, err := checkRange(addr, size)
	if err != nil {
		return fmt.Errorf("mm: unmap %#x+%#x: %w", addr, size, err)
	}
	as.split(addr)
	as.split(end)
	i := as.index(addr)
	j := i
	for j < len(as.vmas) && as.vmas[j].Start < end {
		j++
	}
	err = as.unback(addr, end)
	as.eof.remove(addr, end)
	as.vmas = slices.Delete(as.vmas, i, j)
	return err
}

// Protect changes the protection of [addr, addr+size), which must be fully
// mapped (ErrNoMem otherwise, and nothing changes). Unbacked pages made
// accessible are backed (zero-filled); backing more than the limit fails
// with ErrNoMem, and nothing changes.
func (as *AddressSpace) Protect(addr, size uint64, prot Prot) error {
	end, err := checkRange(addr, size)
	if err != nil {
		return fmt.Errorf("mm: protect %#x+%#x: %w", addr, size, err)
	}
	if !as.Mapped(addr, end-addr) {
		return fmt.Errorf("mm: protect %#x-%#x: %w", addr, end, ErrNoMem)
	}
	if prot != ProtNone && !as.allows(as.toBack(addr, end)) {
		return fmt.Errorf("mm: protect %#x-%#x: more than the memory limit (%d bytes): %w", addr, end, as.limit, ErrNoMem)
	}
	as.split(addr)
	as.split(end)
	i := as.index(addr)
	j := i
	for ; j < len(as.vmas) && as.vmas[j].Start < end; j++ {
		v := &as.vmas[j]
		if v.Prot == prot {
			continue
		}
		for _, c := range as.backed.in(v.Start, v.End) {
			if err := as.b.ProtectPages(c.lo, c.hi-c.lo, prot); err != nil {
				return backendErr("protect", c.lo, c.hi-c.lo, err)
			}
		}
		if prot != ProtNone && !v.NoReserve {
			for _, g := range as.holes(v.Start, v.End) {
				if err := as.back(g.lo, g.hi, prot, v.Shared); err != nil {
					return err
				}
			}
		}
		v.Prot = prot
	}
	as.merge(i, j)
	return nil
}

// FindFree returns the address of a free, page-aligned range of size bytes.
// A non-zero hint is used (rounded down to a page) when the range there is
// free; otherwise the highest free range below MmapBase is chosen, as Linux
// does with a top-down layout.
func (as *AddressSpace) FindFree(size, hint uint64) (uint64, error) {
	size = PageUp(size)
	if size == 0 || size > TaskSize {
		return 0, fmt.Errorf("mm: find free %#x bytes: %w", size, ErrInvalid)
	}
	if hint != 0 {
		h := PageDown(hint)
		if h >= MmapMin && h+size <= TaskSize && h+size > h && !as.Overlaps(h, size) {
			return h, nil
		}
	}
	return as.FindFreeIn(size, MmapMin, MmapBase)
}

// FindFreeIn returns the highest free, page-aligned range of size bytes
// inside [lo, hi).
func (as *AddressSpace) FindFreeIn(size, lo, hi uint64) (uint64, error) {
	size = PageUp(size)
	top := PageDown(hi)
	j := as.index(top)
	if j < len(as.vmas) && as.vmas[j].Start < top {
		top = as.vmas[j].Start
	}
	for i := j - 1; ; i-- {
		// The gap is [gapLo, top).
		gapLo := lo
		if i >= 0 {
			gapLo = max(as.vmas[i].End, lo)
		}
		if top >= gapLo && top-gapLo >= size {
			return top - size, nil
		}
		if i < 0 || as.vmas[i].Start <= lo {
			break
		}
		top = as.vmas[i].Start
	}
	return 0, fmt.Errorf("mm: no free range of %#x bytes in %#x-%#x: %w", size, lo, hi, ErrNoMem)
}

// SetBrk sets the start of the program break (the end of the executable's
// data); the break starts there.
func (as *AddressSpace) SetBrk(start uint64) {
	as.brkStart, as.brk = start, start
}

// Brk implements brk(2): it moves the program break to newBrk, growing or
// shrinking the "[heap]" area, and returns the resulting break. A request
// below the start of the break, over other mappings, or that the backend
// refuses leaves the break where it was.
func (as *AddressSpace) Brk(newBrk uint64) uint64 {
	if newBrk < as.brkStart || newBrk > TaskSize {
		return as.brk
	}
	oldEnd, newEnd := PageUp(as.brk), PageUp(newBrk)
	switch {
	case newEnd > oldEnd:
		if as.Overlaps(oldEnd, newEnd-oldEnd) {
			return as.brk
		}
		if as.Map(VMA{Start: oldEnd, End: newEnd, Prot: ProtRead | ProtWrite, Name: "[heap]"}) != nil {
			return as.brk
		}
	case newEnd < oldEnd:
		if as.Unmap(newEnd, oldEnd-newEnd) != nil {
			return as.brk
		}
	}
	as.brk = newBrk
	return as.brk
}

// BrkStart returns the start of the program break.
func (as *AddressSpace) BrkStart() uint64 { return as.brkStart }
