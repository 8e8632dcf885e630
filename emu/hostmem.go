package emu

/*
#include <stdint.h>
#include <sys/mman.h>
#include <unicorn/unicorn.h>
#include "hooks.h"

// Host memory behind guest pages: reserved address space without memory
// (MAP_NORESERVE, PROT_NONE), committed as fresh zero pages when the guest
// maps them and given back when it unmaps them.
static void *emu_reserve(size_t n) {
	void *p = mmap(0, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? 0 : p;
}
static int emu_commit(uintptr_t p, size_t n) {
	return mmap((void *)p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0;
}
static int emu_release(uintptr_t p, size_t n) {
	return mmap((void *)p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0;
}
static void emu_unreserve(uintptr_t p, size_t n) { munmap((void *)p, n); }
// Host memory of a shared area: zero pages, committed as touched.
static void *emu_alloc(size_t n) {
	void *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? 0 : p;
}
// The engine's own committed pages read as zeros again: the host frees
// them and zero-fills them when next touched (its private anonymous
// memory, not the guest's system call).
static int emu_zero(uintptr_t p, size_t n) { return madvise((void *)p, n, MADV_DONTNEED); }
static uc_err emu_map_ptr(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms, uintptr_t host) {
	return emu_mem_map_ptr(uc, addr, n, perms, (void *)host);
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"slices"
	"sync/atomic"

	"emuprof/mm"
)

// Guest memory lives in host memory the engine owns (uc_mem_map_ptr), not
// in memory Unicorn allocates (uc_mem_map), for two reasons:
//
//   - Unicorn splits a region when part of it is unmapped or protected; a
//     region it allocated is split by copying all of it (split_region's
//     copy_region), one it was given is split in place. mprotect of a
//     page of a large mapping cost a copy of the whole mapping.
//   - Unicorn (QEMU's physical memory map) holds at most 4096 sections:
//     a process with more regions aborted the emulator. Regions given by
//     pointer can be merged when they are adjacent in host memory too, so
//     neighbouring mappings with one protection become one region, as
//     Linux merges neighbouring areas.
//
// Each guest slot of slotSize bytes (aligned) is mirrored by a host
// reservation of the same size, taken the first time a page of the slot is
// mapped: guest address a lives at host slotBase + a%slotSize, so regions
// within a slot are host-contiguous whenever they are guest-contiguous.
// The reservation costs no memory: pages are committed when mapped and
// given back when unmapped.
const (
	slotShift = 36 // 64 GiB slots
	slotSize  = 1 << slotShift
	// maxRegions keeps the number of Unicorn regions below QEMU's limit on
	// memory sections (4096, with a few sections of its own); beyond it,
	// mapping fails like Linux past vm.max_map_count (ENOMEM). Unicorn's
	// cost per mapping grows with the number of regions: 1000 regions that
	// cannot merge take about 1 s of mapping, 4000 over a minute.
	maxRegions = 4000
)

// region is one Unicorn memory region [lo, hi) with its permissions.
// A region of shared memory (MAP_SHARED, mm.PageSharer) lives in a
// segment, at host address host, instead of in its slot: the engines of
// a forked parent and child map the same host memory there, so each
// sees the other's stores. Such regions are not merged with others.
type region struct {
	lo, hi uint64
	perms  C.uint32_t
	seg    *segment
	lender *Engine // borrowed: host memory of lender's slots (vfork)
	host   uint64
}

// segment is host memory for shared areas, mapped by regions of one or
// more engines; it is given back when no region maps it any more.
type segment struct {
	base, size uint64
	refs       atomic.Int64 // regions mapping part of it, in every engine
}

// drop forgets one region mapping s.
func (s *segment) drop() {
	if s.refs.Add(-1) == 0 {
		C.emu_unreserve(C.uintptr_t(s.base), C.size_t(s.size))
	}
}

// hostMem is the engine's record of its regions and host reservations.
type hostMem struct {
	inHook  bool              // mapping from inside the engine (emuTouch)
	later   []region          // ranges to coalesce once the engine has stopped
	regions []region          // sorted, disjoint: what Unicorn has mapped
	slots   map[uint64]uint64 // guest slot number -> host address of its reservation
	max     int               // most regions (0: maxRegions; tests set less)
	// loans counts the regions of other engines (vfork children) mapping
	// this engine's slot memory: while there are some, host memory is
	// not given back (released or unreserved), so that those engines
	// never map freed host memory; closed: the engine is closed and its
	// slots are unreserved when the last loan ends.
	loans  int
	closed bool
	// pieces are the parts of the slots mapping fork snapshots, sorted
	// (forkmem.go); the rest of the slots is anonymous host memory.
	pieces []piece
}

// full reports whether n more regions would be too many; the error wraps
// mm.ErrNoMem, which the guest sees as ENOMEM.
func (h *hostMem) full(n int) error {
	limit := h.max
	if limit == 0 {
		limit = maxRegions
	}
	if len(h.regions)+n > limit {
		return fmt.Errorf("emu: more than %d memory regions: %w", limit, mm.ErrNoMem)
	}
	return nil
}

// host returns the host address of guest address a, reserving its slot.
func (e *Engine) host(a uint64) (uint64, error) {
	if e.mem.slots == nil {
		e.mem.slots = map[uint64]uint64{}
	}
	s := a >> slotShift
	base, ok := e.mem.slots[s]
	if !ok {
		p := C.emu_reserve(slotSize)
		if p == nil {
			return 0, fmt.Errorf("emu: reserving host memory for %#x: %w", a, mm.ErrNoMem)
		}
		base = uint64(uintptr(p))
		e.mem.slots[s] = base
	}
	return base + a&(slotSize-1), nil
}

// releaseHost gives the host memory of [lo, hi) back, unless another
// engine may map it (loans).
func (e *Engine) releaseHost(lo, hi uint64) {
	if e.lent() {
		return
	}
	for a := lo; a < hi; {
		end := min(hi, (a|(slotSize-1))+1)
		if base, ok := e.mem.slots[a>>slotShift]; ok {
			C.emu_release(C.uintptr_t(base+a&(slotSize-1)), C.size_t(end-a))
		}
		a = end
	}
	e.mem.dropPieces(lo, hi)
}

// freeHost releases every host reservation (the engine is closed).
func (e *Engine) freeHost() {
	for _, r := range e.mem.regions {
		r.drop()
	}
	e.mem.regions = nil
	e.loanMu.Lock()
	defer e.loanMu.Unlock()
	e.mem.closed = true
	if e.mem.loans == 0 {
		e.unreserve()
	}
}

func (e *Engine) unreserve() {
	for _, base := range e.mem.slots {
		C.emu_unreserve(C.uintptr_t(base), slotSize)
	}
	e.mem.slots = nil
	e.mem.dropAllPieces()
}

// lent reports whether other engines map some of e's slot memory.
func (e *Engine) lent() bool {
	e.loanMu.Lock()
	defer e.loanMu.Unlock()
	return e.mem.loans > 0
}

// lend counts one more region of another engine mapping e's memory.
func (e *Engine) lend() {
	e.loanMu.Lock()
	e.mem.loans++
	e.loanMu.Unlock()
}

// unlend ends one loan; the last one frees a closed engine's memory.
func (e *Engine) unlend() {
	e.loanMu.Lock()
	defer e.loanMu.Unlock()
	if e.mem.loans--; e.mem.loans == 0 && e.mem.closed {
		e.unreserve()
	}
}

// drop forgets the host memory of region r as it is unmapped: a
// segment's or a lender's reference.
func (r region) drop() {
	switch {
	case r.seg != nil:
		r.seg.drop()
	case r.lender != nil:
		r.lender.unlend()
	}
}

// keep counts a new region mapping r's host memory (r was split).
func (r region) keep() {
	switch {
	case r.seg != nil:
		r.seg.refs.Add(1)
	case r.lender != nil:
		r.lender.lend()
	}
}

// foreign reports whether r's host memory is not in e's slots.
func (r region) foreign() bool { return r.seg != nil || r.lender != nil }

// first returns the index of the first region ending above a.
func (h *hostMem) first(a uint64) int {
	return firstEndingAbove(h.regions, a, func(r region) uint64 { return r.hi })
}

// firstEndingAbove returns the index of the first of xs (sorted, disjoint
// ranges) whose end is above a.
func firstEndingAbove[T any](xs []T, a uint64, end func(T) uint64) int {
	i, _ := slices.BinarySearchFunc(xs, a, func(x T, a uint64) int {
		if end(x) <= a {
			return -1
		}
		return 1
	})
	return i
}

// cut splits the regions at a, as Unicorn splits them.
func (h *hostMem) cut(a uint64) {
	i := h.first(a)
	if i < len(h.regions) && h.regions[i].lo < a {
		r := h.regions[i]
		hi := region{a, r.hi, r.perms, r.seg, r.lender, 0}
		if r.foreign() {
			hi.host = r.host + (a - r.lo)
			r.keep()
		}
		h.regions = slices.Insert(h.regions, i+1, hi)
		h.regions[i].hi = a
	}
}

// mapPtr maps [lo, hi), inside one slot, at its host memory.
func (e *Engine) mapPtr(lo, hi uint64, perms C.uint32_t) error {
	ha, err := e.host(lo)
	if err != nil {
		return err
	}
	if err := ucErrf(C.emu_map_ptr(e.uc, C.uint64_t(lo), C.size_t(hi-lo), perms, C.uintptr_t(ha)), "mapping %#x+%#x", lo, hi-lo); err != nil {
		return err
	}
	i := e.mem.first(lo)
	e.mem.regions = slices.Insert(e.mem.regions, i, region{lo: lo, hi: hi, perms: perms})
	return nil
}

// MapSharedPages maps zeroed, page-aligned memory that SharePages can
// map into another engine (mm.PageSharer).
func (e *Engine) MapSharedPages(addr, size uint64, prot mm.Prot) error {
	if err := e.mem.full(1); err != nil {
		return err
	}
	p := C.emu_alloc(C.size_t(size))
	if p == nil {
		return fmt.Errorf("emu: allocating host memory for %#x+%#x: %w", addr, size, mm.ErrNoMem)
	}
	s := &segment{base: uint64(uintptr(p)), size: size}
	return e.mapForeign(region{lo: addr, hi: addr + size, perms: ucProt(prot), seg: s, host: s.base})
}

// SharePages maps at [addr, addr+size) the memory that from (an Engine,
// maybe wrapped: Unwrap) maps there (mm.PageSharer): shared memory, or,
// borrowed, from's own (for a vfork child, which runs in its parent's
// memory).
func (e *Engine) SharePages(addr, size uint64, prot mm.Prot, from mm.Backend) error {
	for {
		w, ok := from.(interface{ Unwrap() mm.Backend })
		if !ok {
			break
		}
		from = w.Unwrap()
	}
	f, ok := from.(*Engine)
	end := addr + size
	if !ok || !f.mem.covers(addr, end) {
		return fmt.Errorf("emu: sharing %#x+%#x: not mapped in the other engine", addr, size)
	}
	var parts []region
	for i := f.mem.first(addr); i < len(f.mem.regions) && f.mem.regions[i].lo < end; i++ {
		r := f.mem.regions[i]
		if !r.foreign() {
			r.lender, r.host = f, f.mem.slots[r.lo>>slotShift]+r.lo&(slotSize-1)
		}
		lo, hi := max(r.lo, addr), min(r.hi, end)
		r.lo, r.hi, r.host = lo, hi, r.host+(lo-r.lo)
		parts = append(parts, r)
	}
	if err := e.mem.full(len(parts)); err != nil {
		return err
	}
	for _, p := range parts {
		p.perms = ucProt(prot)
		if err := e.mapForeign(p); err != nil {
			return err
		}
	}
	return nil
}

// mapForeign maps r, whose host memory is a segment's or a lender's.
func (e *Engine) mapForeign(r region) error {
	r.keep()
	if err := ucErrf(C.emu_map_ptr(e.uc, C.uint64_t(r.lo), C.size_t(r.hi-r.lo), r.perms, C.uintptr_t(r.host)), "mapping %#x+%#x", r.lo, r.hi-r.lo); err != nil {
		r.drop()
		return err
	}
	i := e.mem.first(r.lo)
	e.mem.regions = slices.Insert(e.mem.regions, i, r)
	return nil
}

// coalesce merges runs of adjacent regions with the same permissions in
// one slot around [lo, hi) into one region each (no data moves: they are
// adjacent in host memory too).
func (e *Engine) coalesce(lo, hi uint64) error {
	rs := &e.mem.regions
	i := e.mem.first(lo)
	if i > 0 {
		i--
	}
	for i < len(*rs) && (*rs)[i].lo <= hi {
		j := i + 1
		for !(*rs)[i].foreign() && j < len(*rs) && !(*rs)[j].foreign() &&
			(*rs)[j].lo == (*rs)[j-1].hi && (*rs)[j].perms == (*rs)[i].perms &&
			(*rs)[j].lo>>slotShift == (*rs)[i].lo>>slotShift {
			j++
		}
		if j-i > 1 {
			m := region{lo: (*rs)[i].lo, hi: (*rs)[j-1].hi, perms: (*rs)[i].perms}
			for _, r := range (*rs)[i:j] {
				if err := ucErrf(C.emu_mem_unmap(e.uc, C.uint64_t(r.lo), C.size_t(r.hi-r.lo)), "unmapping %#x+%#x", r.lo, r.hi-r.lo); err != nil {
					return err
				}
			}
			*rs = slices.Delete(*rs, i, j)
			if err := e.mapPtr(m.lo, m.hi, m.perms); err != nil {
				return err
			}
		}
		i++
	}
	return nil
}

// MapPages maps zeroed, page-aligned memory.
func (e *Engine) MapPages(addr, size uint64, prot mm.Prot) error {
	end := addr + size
	if err := e.mem.full(int((end-1)>>slotShift-addr>>slotShift) + 1); err != nil {
		return err
	}
	perms := ucProt(prot)
	for a := addr; a < end; {
		hi := min(end, (a|(slotSize-1))+1)
		ha, err := e.host(a)
		if err != nil {
			return err
		}
		if C.emu_commit(C.uintptr_t(ha), C.size_t(hi-a)) != 0 {
			return fmt.Errorf("emu: committing host memory for %#x+%#x: %w", a, hi-a, mm.ErrNoMem)
		}
		e.mem.dropPieces(a, hi)
		if err := e.mapPtr(a, hi, perms); err != nil {
			e.releaseHost(a, hi)
			return err
		}
		a = hi
	}
	if e.mem.inHook {
		// Regions are not unmapped under the running engine: they are
		// merged when it stops (Run).
		e.mem.later = append(e.mem.later, region{lo: addr, hi: end})
		return nil
	}
	return e.coalesce(addr, end)
}

// coalesceLater merges the regions mapped from inside the engine.
func (e *Engine) coalesceLater() error {
	for _, r := range e.mem.later {
		if err := e.coalesce(r.lo, r.hi); err != nil {
			return err
		}
	}
	e.mem.later = e.mem.later[:0]
	return nil
}

// UnmapPages unmaps page-aligned memory.
func (e *Engine) UnmapPages(addr, size uint64) error {
	if err := e.mem.full(1); err != nil {
		return err
	}
	e.forgetCode(addr, size)
	if err := ucErrf(C.emu_mem_unmap(e.uc, C.uint64_t(addr), C.size_t(size)), "unmapping %#x+%#x", addr, size); err != nil {
		return err
	}
	end := addr + size
	e.mem.cut(addr)
	e.mem.cut(end)
	i := e.mem.first(addr)
	j := i
	for j < len(e.mem.regions) && e.mem.regions[j].lo < end {
		e.mem.regions[j].drop()
		j++
	}
	e.mem.regions = slices.Delete(e.mem.regions, i, j)
	e.releaseHost(addr, end)
	return nil
}

// ProtectPages changes the protection of page-aligned memory.
func (e *Engine) ProtectPages(addr, size uint64, prot mm.Prot) error {
	if err := e.mem.full(2); err != nil {
		return err
	}
	if prot&mm.ProtExec == 0 {
		e.forgetCode(addr, size)
	}
	perms := ucProt(prot)
	if err := ucErrf(C.emu_mem_protect(e.uc, C.uint64_t(addr), C.size_t(size), perms), "protecting %#x+%#x", addr, size); err != nil {
		return err
	}
	end := addr + size
	e.mem.cut(addr)
	e.mem.cut(end)
	for i := e.mem.first(addr); i < len(e.mem.regions) && e.mem.regions[i].lo < end; i++ {
		e.mem.regions[i].perms = perms
	}
	return e.coalesce(addr, end)
}

// ZeroPages makes mapped, page-aligned memory read as zeros without
// writing it (mm.PageZeroer, for the guest's MADV_DONTNEED): the host
// frees the engine's pages behind it, which read as zeros when next
// touched, and what was learnt about code there (translations, decoded
// blocks, patched instructions) is dropped, so that code written there
// again (a JIT's) is translated again. The region stays mapped, with its
// protection. Ends of the range inside a host page (a host with pages
// larger than the guest's) are written with zeros.
func (e *Engine) ZeroPages(addr, size uint64) error {
	end := addr + size
	if addr%mm.PageSize != 0 || size%mm.PageSize != 0 || end < addr {
		return fmt.Errorf("emu: zeroing %#x+%#x: %w", addr, size, mm.ErrInvalid)
	}
	if !e.mem.covers(addr, end) {
		return fmt.Errorf("emu: zeroing %#x+%#x: not mapped", addr, size)
	}
	e.forgetCode(addr, size)
	for i := e.mem.first(addr); i < len(e.mem.regions) && e.mem.regions[i].lo < end; i++ {
		if e.mem.regions[i].foreign() {
			// Shared memory is another engine's too: written, not freed.
			return e.writeZeros(addr, size)
		}
	}
	hp := uint64(os.Getpagesize())
	for a := addr; a < end; {
		hi := min(end, (a|(slotSize-1))+1)
		base := e.mem.slots[a>>slotShift] // mapped: reserved
		lo, top := base+a&(slotSize-1), base+(hi-1)&(slotSize-1)+1
		in, out := (lo+hp-1)&^(hp-1), top&^(hp-1)
		if in >= out {
			in, out = top, top // no whole host page: all written
		}
		if in > lo {
			if err := e.writeZeros(a, in-lo); err != nil {
				return err
			}
		}
		if ga := a + (in - lo); out > in && e.mem.inPieces(ga, ga+(out-in)) {
			// A snapshot's pages would show again: fresh memory instead.
			if C.emu_commit(C.uintptr_t(in), C.size_t(out-in)) != 0 {
				return fmt.Errorf("emu: zeroing host memory of %#x+%#x: %w", ga, out-in, mm.ErrNoMem)
			}
			e.mem.dropPieces(ga, ga+(out-in))
		} else if out > in {
			if r, err := C.emu_zero(C.uintptr_t(in), C.size_t(out-in)); r != 0 {
				return fmt.Errorf("emu: freeing host memory of %#x+%#x: %w", ga, out-in, err)
			}
		}
		if top > out {
			if err := e.writeZeros(a+(out-lo), top-out); err != nil {
				return err
			}
		}
		a = hi
	}
	return nil
}

// writeZeros stores n zeros at guest address a.
func (e *Engine) writeZeros(a, n uint64) error {
	z := make([]byte, min(n, 1<<20))
	for done := uint64(0); done < n; done += uint64(len(z)) {
		if err := e.WriteMem(a+done, z[:min(n-done, uint64(len(z)))]); err != nil {
			return err
		}
	}
	return nil
}

// covers reports whether the regions cover [lo, hi) without a gap.
func (h *hostMem) covers(lo, hi uint64) bool {
	for i := h.first(lo); lo < hi; i++ {
		if i >= len(h.regions) || h.regions[i].lo > lo {
			return false
		}
		lo = h.regions[i].hi
	}
	return true
}

// SetTouch installs f, asked from inside the engine when the guest reads
// or writes an unmapped address: f may map the page (the address space
// backs MAP_NORESERVE memory on first touch) and reports whether it did;
// the engine then makes the access again. nil: every such access faults.
func (e *Engine) SetTouch(f func(addr, size uint64) bool) {
	e.touch = f
	e.st.want_touch = 0
	if f != nil {
		e.st.want_touch = 1
	}
}

//export emuTouch
func emuTouch(h C.uintptr_t, addr C.uint64_t, size C.int) C.bool {
	e := cgo.Handle(h).Value().(*Engine)
	if e.touch == nil {
		return false
	}
	e.mem.inHook = true
	defer func() { e.mem.inHook = false }()
	return C.bool(e.touch(uint64(addr), uint64(max(size, 1))))
}

// Regions returns how many Unicorn regions the engine has (for tests).
func (e *Engine) Regions() int { return len(e.mem.regions) }

// Resident reports, for each guest page of the mapped range [addr,
// addr+size), whether its host page may hold data: present in memory or
// swapped out (/proc/self/pagemap, a query of emuprof's own memory). A
// page never touched reads as zeros, so a fork need not read it
// (mm.PageResident). Hosts without pagemap: an error, and the caller
// reads everything.
func (e *Engine) Resident(addr, size uint64) ([]bool, error) {
	end := addr + size
	if addr%mm.PageSize != 0 || size%mm.PageSize != 0 || !e.mem.covers(addr, end) {
		return nil, fmt.Errorf("emu: resident %#x+%#x: not mapped pages", addr, size)
	}
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil, fmt.Errorf("emu: resident pages: %w", err)
	}
	defer f.Close()
	hp := uint64(os.Getpagesize())
	out := make([]bool, size/mm.PageSize)
	var ent []byte
	for i := e.mem.first(addr); i < len(e.mem.regions) && e.mem.regions[i].lo < end; i++ {
		r := e.mem.regions[i]
		lo, hi := max(r.lo, addr), min(r.hi, end)
		host := r.host + (lo - r.lo)
		if !r.foreign() {
			host = e.mem.slots[lo>>slotShift] + lo&(slotSize-1)
		}
		first, last := host/hp, (host+(hi-lo)-1)/hp
		n := int(last-first+1) * 8
		if cap(ent) < n {
			ent = make([]byte, n)
		}
		ent = ent[:n]
		if _, err := f.ReadAt(ent, int64(first*8)); err != nil {
			return nil, fmt.Errorf("emu: resident pages: %w", err)
		}
		for a := lo; a < hi; a += mm.PageSize {
			k := ((host + (a - lo)) / hp) - first
			// Bit 63: present; bit 62: swapped. A fork snapshot's page
			// holds its data in the file, present or not.
			out[(a-addr)/mm.PageSize] = ent[k*8+7]&0xc0 != 0 || !r.foreign() && e.mem.inPieces(a, a+mm.PageSize)
		}
	}
	return out, nil
}
