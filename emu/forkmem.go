package emu

/*
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // fallocate
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

// A snapshot: an empty memory file as large as the guest's address space
// (its offsets are guest addresses); -1 where there are no memory files
// (macOS: the fork copies instead).
static int emu_snapshot(uint64_t size) {
#if defined(__linux__) && defined(SYS_memfd_create)
	int fd = syscall(SYS_memfd_create, "emuprof-fork", 1); // MFD_CLOEXEC
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		return -1;
	}
	return fd;
#else
	return -1;
#endif
}
// Host memory p becomes a private mapping of the snapshot at offset off:
// its pages are the file's until written (the host kernel copies them).
static int emu_map_snapshot(uintptr_t p, size_t n, int fd, uint64_t off) {
	return mmap((void *)p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd, (off_t)off) == MAP_FAILED ? errno : 0;
}
static int emu_pwrite(int fd, uintptr_t p, size_t n, uint64_t off) {
	while (n > 0) {
		ssize_t w = pwrite(fd, (void *)p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w, n -= w, off += w;
	}
	return 0;
}
static void emu_close_fd(int fd) { close(fd); }
// The snapshot's pages at [off, off+n) are given back (read as zeros).
static int emu_punch(int fd, uint64_t off, uint64_t n) {
#if defined(__linux__) && defined(FALLOC_FL_PUNCH_HOLE)
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n) ? errno : 0;
#else
	return 0;
#endif
}
// Whether the page at p holds only zeros (the host's zero page, after a
// read): it need not be written into a snapshot, whose holes are zeros.
static int emu_zero_page(uintptr_t p, size_t n) {
	const uint64_t *q = (const uint64_t *)p;
	for (size_t i = 0; i < n / 8; i++)
		if (q[i])
			return 0;
	return 1;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"emuprof/mm"
)

// Copy-on-write fork (mm.PageForker). A forked child's private memory is
// a copy of its parent's; copying it when forking cost the parent's whole
// touched memory per child. Instead, at a fork the parent's pages are put
// in a snapshot, a memory file nobody writes any more (memfd; its offsets
// are guest addresses), and parent and child both map it privately
// (MAP_PRIVATE | MAP_FIXED, at the host addresses their slots already
// have, so Unicorn's regions and TLB stay valid): the host kernel copies
// a page when one of them first writes it. Only pages the parent wrote
// since it last forked (anonymous ones: /proc/self/pagemap) are written
// into the new snapshot; pages still the file's of an earlier snapshot
// stay mapped from it, so host memory is what the processes write, not
// what they have. docs/MEMORY.md has the measurements.
//
// pieces record which parts of an engine's slot memory map which
// snapshot; the rest is anonymous memory (fresh pages, or pages written
// since). A snapshot's pages no engine maps any more are punched out of
// its file, and the file is closed when no piece of any engine maps it.
// The engines' memory changes one engine at a time (the processes run
// one at a time), so one engine may read another's pieces.

// snapshot is one fork's memory file.
type snapshot struct {
	fd   C.int
	refs atomic.Int64 // pieces mapping it, in every engine, and forks making it
	mu   sync.Mutex
	// users are the engines with pieces of it: where none maps a range
	// any more, its pages are given back (punch).
	users map[*hostMem]int
}

// ref counts one more piece of s in h.
func (h *hostMem) ref(s *snapshot) {
	s.refs.Add(1)
	s.mu.Lock()
	s.users[h]++
	s.mu.Unlock()
}

// unref forgets one piece of s in h; the last closes s's file. When h
// had its last piece of s and one engine is left mapping it (a parent
// whose child exited or exec'd), the pages that engine wrote since are
// given back from the file: its own copies are what it reads there.
func (h *hostMem) unref(s *snapshot) {
	s.mu.Lock()
	var last *hostMem
	if s.users[h]--; s.users[h] == 0 {
		delete(s.users, h)
		if len(s.users) == 1 {
			for u := range s.users {
				last = u
			}
		}
	}
	s.mu.Unlock()
	if last != nil && s.refs.Load() > 1 {
		last.releaseWritten(s)
	}
	s.drop()
}

// releaseWritten punches out of s the pages h maps from it but has
// written since (anonymous in the page map): h is the only engine
// mapping s, and its private copies stay. Best effort: a failure leaves
// the pages in the file.
func (h *hostMem) releaseWritten(s *snapshot) {
	for _, p := range h.pieces {
		if p.snap != s {
			continue
		}
		base, ok := h.slots[p.lo>>slotShift]
		if !ok {
			continue
		}
		pm, err := pagemap(base+p.lo&(slotSize-1), p.hi-p.lo)
		if err != nil {
			return
		}
		for i := 0; i < len(pm); {
			if !written(pm[i]) {
				i++
				continue
			}
			j := i
			for j < len(pm) && written(pm[j]) {
				j++
			}
			C.emu_punch(s.fd, C.uint64_t(p.lo+uint64(i)*mm.PageSize), C.uint64_t(uint64(j-i)*mm.PageSize))
			i = j
		}
	}
}

// written reports whether a page map entry is of a page of the engine's
// own (anonymous: present or swapped, not a file's).
func written(pm uint64) bool { return pm&(pmPresent|pmSwapped) != 0 && pm&pmFile == 0 }

func (s *snapshot) drop() {
	if s.refs.Add(-1) == 0 {
		C.emu_close_fd(s.fd)
	}
}

// release gives back the pages of s at [lo, hi), which h no longer
// maps, where no other engine maps them either: a page the parent wrote
// since and the children never had, or whose children are gone, would
// otherwise stay in the file as long as the rest of it is mapped. The
// engines run one at a time, so the others' pieces do not change
// meanwhile. A failure only leaves the pages in the file.
func (s *snapshot) release(h *hostMem, lo, hi uint64) {
	if s.refs.Load() <= 1 {
		return // the file goes with this piece
	}
	s.mu.Lock()
	holes := []piece{{lo: lo, hi: hi}}
	for u := range s.users {
		if u == h {
			continue
		}
		var rest []piece
		for _, g := range holes {
			cur := g.lo
			for i := u.pieceFirst(g.lo); i < len(u.pieces) && u.pieces[i].lo < g.hi; i++ {
				if p := u.pieces[i]; p.snap == s {
					if p.lo > cur {
						rest = append(rest, piece{lo: cur, hi: p.lo})
					}
					cur = max(cur, p.hi)
				}
			}
			if cur < g.hi {
				rest = append(rest, piece{lo: cur, hi: g.hi})
			}
		}
		holes = rest
	}
	s.mu.Unlock()
	for _, g := range holes {
		C.emu_punch(s.fd, C.uint64_t(g.lo), C.uint64_t(g.hi-g.lo))
	}
}

// piece is guest memory [lo, hi) of an engine's slots mapped from snap
// (at file offset lo).
type piece struct {
	lo, hi uint64
	snap   *snapshot
}

// pieceFirst returns the index of the first piece ending above a.
func (h *hostMem) pieceFirst(a uint64) int {
	return firstEndingAbove(h.pieces, a, func(p piece) uint64 { return p.hi })
}

// dropPieces forgets the pieces of [lo, hi): its host memory is mapped
// anew (committed, released, zeroed or mapped from another snapshot).
func (h *hostMem) dropPieces(lo, hi uint64) {
	i := h.pieceFirst(lo)
	if i == len(h.pieces) || h.pieces[i].lo >= hi {
		return
	}
	var keep, gone []piece
	j := i
	for ; j < len(h.pieces) && h.pieces[j].lo < hi; j++ {
		p := h.pieces[j]
		if p.lo < lo {
			h.ref(p.snap)
			keep = append(keep, piece{p.lo, lo, p.snap})
		}
		if p.hi > hi {
			h.ref(p.snap)
			keep = append(keep, piece{hi, p.hi, p.snap})
		}
		gone = append(gone, piece{max(p.lo, lo), min(p.hi, hi), p.snap})
	}
	h.pieces = slices.Replace(h.pieces, i, j, keep...)
	for _, p := range gone {
		p.snap.release(h, p.lo, p.hi)
		h.unref(p.snap)
	}
}

// setPiece records that [lo, hi) now maps s, merging with neighbours
// that map s at adjacent offsets (the host merges those mappings too).
func (h *hostMem) setPiece(lo, hi uint64, s *snapshot) {
	h.dropPieces(lo, hi)
	i := h.pieceFirst(lo)
	h.ref(s)
	h.pieces = slices.Insert(h.pieces, i, piece{lo, hi, s})
	if i+1 < len(h.pieces) && h.pieces[i+1].lo == hi && h.pieces[i+1].snap == s && hi&(slotSize-1) != 0 {
		h.pieces[i].hi = h.pieces[i+1].hi
		h.pieces = slices.Delete(h.pieces, i+1, i+2)
		h.unref(s)
	}
	if i > 0 && h.pieces[i-1].hi == lo && h.pieces[i-1].snap == s && lo&(slotSize-1) != 0 {
		h.pieces[i-1].hi = h.pieces[i].hi
		h.pieces = slices.Delete(h.pieces, i, i+1)
		h.unref(s)
	}
}

// dropAllPieces forgets every piece (the slots are unreserved).
func (h *hostMem) dropAllPieces() {
	ps := h.pieces
	h.pieces = nil
	for _, p := range ps {
		p.snap.release(h, p.lo, p.hi)
		h.unref(p.snap)
	}
}

// inPieces reports whether a page of [lo, hi) maps a snapshot.
func (h *hostMem) inPieces(lo, hi uint64) bool {
	i := h.pieceFirst(lo)
	return i < len(h.pieces) && h.pieces[i].lo < hi
}

// fragmented reports whether h's pieces are too many to add to: more
// host mappings than maxPieces, or open files of more than maxSnapshots.
func (h *hostMem) fragmented() bool {
	if len(h.pieces) > maxPieces {
		return true
	}
	seen := map[*snapshot]bool{}
	for _, p := range h.pieces {
		seen[p.snap] = true
	}
	return len(seen) > maxSnapshots
}

const (
	// snapshotSize is the size of a snapshot file: offsets are guest
	// addresses, below the top of the user address space.
	snapshotSize = mm.TaskSize
	// freezeChunk is the most of the parent's memory frozen at once: its
	// anonymous pages are copied into the snapshot, then replaced by the
	// snapshot's, so the fork's extra host memory stays this small.
	freezeChunk = 64 << 20
	// fillGap is the most clean pages between two runs of pages written
	// since the last fork that are copied too, so that both runs and the
	// gap become one host mapping (the host allows 65530 per process,
	// vm.max_map_count, and all engines are in one process).
	fillGap = 16
	// maxPieces and maxSnapshots bound an engine's host mappings and
	// open snapshot files: past them, a fork writes all of the parent's
	// private memory into its new snapshot (once), the way the eager
	// copy did, instead of only what changed.
	maxPieces    = 1024
	maxSnapshots = 16
)

// errNoSnapshot declines a copy-on-write fork: the caller copies.
var errNoSnapshot = fmt.Errorf("emu: copy-on-write fork: %w", errors.ErrUnsupported)

// ForkPages maps in e (a new engine) at the ranges rs a copy-on-write
// copy of what from (an Engine, maybe wrapped) maps there
// (mm.PageForker); it returns how many bytes of from's it copied into the
// snapshot. It declines (errors.ErrUnsupported, nothing mapped) where
// there are no memory files, where host pages are not guest pages, where
// from's memory there is not its own (shared or borrowed), and where the
// snapshot cannot be written (no /proc/self/pagemap, no room for the
// file): the parent's memory stays as it was where it was not remapped.
func (e *Engine) ForkPages(from mm.Backend, rs []mm.Range) (uint64, error) {
	f, ok := unwrapEngine(from)
	if !ok || os.Getpagesize() != mm.PageSize {
		return 0, errNoSnapshot
	}
	for _, r := range rs {
		end := r.Addr + r.Size
		if !f.mem.covers(r.Addr, end) {
			return 0, fmt.Errorf("emu: fork %#x+%#x: not mapped in the parent", r.Addr, r.Size)
		}
		for i := f.mem.first(r.Addr); i < len(f.mem.regions) && f.mem.regions[i].lo < end; i++ {
			if f.mem.regions[i].foreign() {
				return 0, errNoSnapshot
			}
		}
	}
	n := 0
	for _, r := range rs {
		n += int((r.Addr+r.Size-1)>>slotShift-r.Addr>>slotShift) + 1
	}
	if err := e.mem.full(n); err != nil {
		return 0, err
	}
	fd := C.emu_snapshot(snapshotSize)
	if fd < 0 {
		return 0, errNoSnapshot
	}
	snap := &snapshot{fd: fd, users: map[*hostMem]int{}}
	snap.refs.Add(1) // until the fork is done
	defer snap.drop()
	all := f.mem.fragmented()
	var copied uint64
	for _, r := range rs {
		for a, end := r.Addr, r.Addr+r.Size; a < end; {
			hi := min(end, (a|(slotSize-1))+1, a+freezeChunk)
			n, err := f.freeze(a, hi, snap, all)
			copied += n
			if err != nil {
				return copied, err
			}
			a = hi
		}
	}
	for _, r := range rs {
		if err := e.mapSnapshots(r, f); err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// unwrapEngine returns the Engine b is or wraps (Unwrap).
func unwrapEngine(b mm.Backend) (*Engine, bool) {
	for {
		w, ok := b.(interface{ Unwrap() mm.Backend })
		if !ok {
			break
		}
		b = w.Unwrap()
	}
	e, ok := b.(*Engine)
	return e, ok
}

// Page states from /proc/self/pagemap: bit 63 present, 62 swapped, 61 a
// page of a file (or shared).
const (
	pmPresent = 1 << 63
	pmSwapped = 1 << 62
	pmFile    = 1 << 61
)

// pagemap returns the pagemap entries of the host pages [h, h+n).
func pagemap(h, n uint64) ([]uint64, error) {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n/mm.PageSize*8)
	if _, err := f.ReadAt(buf, int64(h/mm.PageSize*8)); err != nil {
		return nil, err
	}
	out := make([]uint64, n/mm.PageSize)
	for i := range out {
		b := buf[i*8 : i*8+8]
		out[i] = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	return out, nil
}

// freeze makes e's memory [lo, hi) (one slot, e's own) a private mapping
// of snapshots: anonymous pages holding data are written into snap and
// mapped from it (anonymous pages never touched: from its holes, zeros),
// as are pages of an earlier snapshot that e wrote since; the clean pages
// of earlier snapshots stay theirs, unless all. It returns the bytes
// written.
func (e *Engine) freeze(lo, hi uint64, snap *snapshot, all bool) (uint64, error) {
	base := e.mem.slots[lo>>slotShift]
	host := func(a uint64) uint64 { return base + a&(slotSize-1) }
	pm, err := pagemap(host(lo), hi-lo)
	if err != nil {
		// Nothing changed yet, nothing is mapped in the child: the
		// caller copies.
		return 0, fmt.Errorf("%w: reading the engine's page map: %w", errNoSnapshot, err)
	}
	// data: the page's content is in host memory of e's own (anonymous):
	// it must be written into snap. moved: the page is to map snap.
	npages := int((hi - lo) / mm.PageSize)
	data := make([]bool, npages)
	moved := make([]bool, npages)
	for i := range npages {
		a := lo + uint64(i)*mm.PageSize
		own := written(pm[i])
		// A page of zeros need not be written: the snapshot's holes are.
		nonzero := own && C.emu_zero_page(C.uintptr_t(host(a)), mm.PageSize) == 0
		if !e.mem.inPieces(a, a+mm.PageSize) {
			data[i], moved[i] = nonzero, true // anonymous
		} else if own {
			data[i], moved[i] = nonzero, true // written since its snapshot
		} else if all {
			data[i], moved[i] = true, true // an earlier snapshot's
		}
	}
	// Clean pages between two moved runs are moved too when few.
	last := -1
	for i := range npages {
		if !moved[i] {
			continue
		}
		if last >= 0 && i-last-1 > 0 && i-last-1 <= fillGap {
			for k := last + 1; k < i; k++ {
				data[k], moved[k] = true, true
			}
		}
		last = i
	}
	var copied uint64
	for i := 0; i < npages; {
		if !moved[i] {
			i++
			continue
		}
		j := i
		for j < npages && moved[j] {
			j++
		}
		a, b := lo+uint64(i)*mm.PageSize, lo+uint64(j)*mm.PageSize
		for k := i; k < j; {
			if !data[k] {
				k++
				continue
			}
			m := k
			for m < j && data[m] {
				m++
			}
			pa := lo + uint64(k)*mm.PageSize
			n := uint64(m-k) * mm.PageSize
			if r := C.emu_pwrite(snap.fd, C.uintptr_t(host(pa)), C.size_t(n), C.uint64_t(pa)); r != 0 {
				// The run is still the parent's own memory: the
				// caller copies.
				return copied, fmt.Errorf("%w: writing %#x+%#x into the snapshot: %w", errNoSnapshot, pa, n, syscall.Errno(r))
			}
			copied += n
			k = m
		}
		if r := C.emu_map_snapshot(C.uintptr_t(host(a)), C.size_t(b-a), snap.fd, C.uint64_t(a)); r != 0 {
			return copied, fmt.Errorf("emu: fork: mapping %#x+%#x from the snapshot: %w", a, b-a, noMem(syscall.Errno(r)))
		}
		e.mem.setPiece(a, b, snap)
		i = j
	}
	return copied, nil
}

// noMem makes the host's ENOMEM (memory, or too many mappings) and ENOSPC
// the guest's ENOMEM.
func noMem(err syscall.Errno) error {
	if err == syscall.ENOMEM || err == syscall.ENOSPC {
		return fmt.Errorf("%w: %w", err, mm.ErrNoMem)
	}
	return err
}

// mapSnapshots maps r in e from the snapshots f (frozen) maps there, at
// e's own slot addresses, and in Unicorn with r's protection.
func (e *Engine) mapSnapshots(r mm.Range, f *Engine) error {
	end := r.Addr + r.Size
	perms := ucProt(r.Prot)
	for a := r.Addr; a < end; {
		hi := min(end, (a|(slotSize-1))+1)
		if _, err := e.host(a); err != nil {
			return err
		}
		for cur := a; cur < hi; {
			i := f.mem.pieceFirst(cur)
			if i == len(f.mem.pieces) || f.mem.pieces[i].lo > cur {
				return fmt.Errorf("emu: fork %#x: not frozen in the parent", cur)
			}
			p := f.mem.pieces[i]
			top := min(p.hi, hi)
			h, _ := e.host(cur)
			if r := C.emu_map_snapshot(C.uintptr_t(h), C.size_t(top-cur), p.snap.fd, C.uint64_t(cur)); r != 0 {
				return fmt.Errorf("emu: fork: mapping %#x+%#x from the snapshot: %w", cur, top-cur, noMem(syscall.Errno(r)))
			}
			e.mem.setPiece(cur, top, p.snap)
			cur = top
		}
		if err := e.mapPtr(a, hi, perms); err != nil {
			e.releaseHost(a, hi)
			return err
		}
		a = hi
	}
	return e.coalesce(r.Addr, end)
}
