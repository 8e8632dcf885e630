package syscalls

import (
	"errors"

	"emuprof/mm"
)

// Memory: brk, mmap, munmap, mprotect, mremap, madvise, msync, mincore,
// mlock, munlock, mlockall, munlockall.

// msync flags.
const (
	msAsync      = 1
	msInvalidate = 2
	msSync       = 4
)

// mmErr converts an mm error: guest mistakes become errnos, backend
// failures stop the run.
func mmErr(c *Call, err error, dflt Errno) Outcome {
	var be *mm.BackendError
	switch {
	case errors.As(err, &be):
		return fatal(c, err)
	case errors.Is(err, mm.ErrInvalid):
		return fail(eINVAL)
	case errors.Is(err, mm.ErrNoMem):
		return fail(eNOMEM)
	case errors.Is(err, mm.ErrFault):
		return fail(eFAULT)
	}
	return fail(dflt)
}

func sysBrk(k *Kernel, c *Call) Outcome {
	cur := k.as.Brk(0) // below the start: the break stays, and says where it is
	if want := c.Args[0]; want > cur && want <= mm.TaskSize {
		grow := mm.PageUp(want) - mm.PageUp(cur)
		if !k.vmAllows(grow, grow) {
			return ok(cur) // brk fails by not moving
		}
	}
	return ok(k.as.Brk(c.Args[0]))
}

func sysMmap(k *Kernel, c *Call) Outcome {
	addr, length, prot, flags, fd, off := c.Args[0], c.Args[1], c.Args[2], c.Args[3], fdArg(c.Args[4]), c.Args[5]
	if length == 0 || off%mm.PageSize != 0 {
		return fail(eINVAL)
	}
	typ := flags & mapTypeMask
	if typ != mapShared && typ != mapPrivate && typ != mapSharedValidate {
		return fail(eINVAL)
	}
	if typ == mapSharedValidate && flags&mapAnonymous != 0 {
		return fail(eINVAL) // do_mmap knows MAP_SHARED and MAP_PRIVATE for anonymous memory
	}
	// Unknown prot bits are ignored, as by Linux's mmap (mprotect checks
	// them).
	prot &= protRead | protWrite | protExec
	size := mm.PageUp(length)
	if size == 0 || size > mm.TaskSize {
		return fail(eNOMEM)
	}
	shared := typ != mapPrivate
	anon := flags&mapAnonymous != 0
	var f *openFile
	var host *hostFile
	devZeroShared := false
	if !anon {
		var e Errno
		if f, e = k.file(fd); e != 0 {
			return fail(e)
		}
		// do_mmap's checks of the file, in its order, before its
		// mmap operation is asked (/dev/zero's too).
		if typ == mapSharedValidate && flags&^legacyMapMask != 0 {
			return fail(eOPNOTSUPP)
		}
		if shared && prot&protWrite != 0 && !f.writable() || !f.readable() {
			return fail(eACCES)
		}
		if d, isDev := f.ops.(*device); isDev && d.kind == devZero {
			// Linux maps /dev/zero as anonymous memory (shared: an
			// unnamed shmem file, "/dev/zero (deleted)").
			anon, f = true, nil
			if shared {
				devZeroShared = true
			}
		} else {
			h, isHost := f.ops.(*hostFile)
			if !isHost {
				return fail(eNODEV)
			}
			host = h
			if shared && prot&protWrite != 0 && f.flags&oAPPEND != 0 {
				return fail(eACCES)
			}
			if int64(off) < 0 {
				return fail(eOVERFLOW)
			}
		}
	}

	var err error
	switch {
	case flags&mapFixed != 0:
		if addr%mm.PageSize != 0 {
			return fail(eINVAL)
		}
		if addr+size > mm.TaskSize || addr+size < addr {
			return fail(eNOMEM)
		}
		// Shared file mappings being replaced keep their stores.
		err = k.syncBeforeUnmap(addr, addr+size)
	case flags&mapFixedNoReplace != 0:
		if addr%mm.PageSize != 0 {
			return fail(eINVAL)
		}
		if addr+size > mm.TaskSize || addr+size < addr {
			return fail(eNOMEM)
		}
		if k.as.Overlaps(addr, size) {
			return fail(eEXIST)
		}
	case flags&map32Bit != 0:
		addr, err = k.as.FindFreeIn(size, 0x40000000, 0x80000000)
	default:
		addr, err = k.as.FindFree(size, addr)
	}
	if err != nil {
		return mmErr(c, err, eNOMEM)
	}
	if k.vmLimited() {
		if grow := size - k.mappedIn(addr, size); !k.vmAllows(grow, dataGrowth(grow, prot, shared)) {
			return fail(eNOMEM)
		}
	}

	v := mm.VMA{Start: addr, End: addr + size, Prot: mm.Prot(prot & 7), Shared: shared}
	// Private anonymous MAP_NORESERVE memory is backed as it is touched
	// (Linux: VM_NORESERVE, no commit charge).
	v.NoReserve = anon && !shared && flags&mapNoReserve != 0
	if devZeroShared {
		v.Name = "/dev/zero (deleted)"
	}
	if !anon {
		v.Name, v.Offset = f.guest, off
		if shared {
			v.File = k.sharedHandle(f, host)
		}
	}
	eof := v.End // where pages past the end of the file start
	if host != nil {
		eof = fileEnd(host, addr, size, off)
	}
	err = k.as.MapFile(v, eof)
	k.pruneShared()
	if err != nil {
		return mmErr(c, err, eNOMEM)
	}
	if anon {
		return ok(addr)
	}
	if err := k.loadFile(host, addr, size, off); err != nil {
		var be *mm.BackendError
		if errors.As(err, &be) {
			return fatal(c, err)
		}
		_ = k.as.Unmap(addr, size)
		k.pruneShared()
		return fail(hostErrno(err))
	}
	if shared {
		k.checkAliases(addr)
	}
	if k.OnMapFile != nil {
		k.OnMapFile(host.host, addr, size, off, v.Prot)
	}
	return ok(addr)
}

// fileEnd is where the pages past the end of the file start in a mapping
// of size bytes of h from offset off at addr (addr+size: none): an access
// there is SIGBUS. A file that is not a regular one has no such pages.
func fileEnd(h *hostFile, addr, size, off uint64) uint64 {
	fi, err := h.f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return addr + size
	}
	end := mm.PageUp(uint64(max(fi.Size(), 0)))
	if end <= off {
		return addr
	}
	return addr + min(size, end-off)
}

func sysMunmap(k *Kernel, c *Call) Outcome {
	addr, length := c.Args[0], c.Args[1]
	if addr%mm.PageSize != 0 || length == 0 {
		return fail(eINVAL)
	}
	if addr+length < addr {
		return fail(eINVAL)
	}
	// Stores through shared file mappings reach the file at munmap.
	err := k.syncBeforeUnmap(addr, addr+length)
	if err == nil {
		err = k.as.Unmap(addr, length)
	}
	k.pruneShared()
	if err != nil {
		return mmErr(c, err, eINVAL)
	}
	return ok(0)
}

func sysMprotect(k *Kernel, c *Call) Outcome {
	addr, length, prot := c.Args[0], c.Args[1], c.Args[2]
	const protSem = 0x8 // accepted and meaningless on x86-64
	if addr%mm.PageSize != 0 || prot&^(protRead|protWrite|protExec|protSem|protGrowsDown|protGrowsUp) != 0 {
		return fail(eINVAL)
	}
	if prot&(protGrowsDown|protGrowsUp) == protGrowsDown|protGrowsUp {
		return fail(eINVAL)
	}
	if length == 0 {
		return ok(0)
	}
	if addr+length < addr {
		return fail(eNOMEM)
	}
	if prot&protGrowsUp != 0 {
		return fail(eINVAL) // no VM_GROWSUP mapping on x86-64
	}
	if prot&protGrowsDown != 0 && !k.growsDown(addr) {
		return fail(eINVAL) // only the stack grows down
	}
	if prot&protWrite != 0 {
		// A shared mapping of a file not open for writing cannot become
		// writable (Linux: no VM_MAYWRITE).
		for _, v := range k.sharedVMAs(nil, true) {
			if v.Start < mm.PageUp(addr+length) && addr < v.End && !v.File.(*sharedFile).writable {
				return fail(eACCES)
			}
		}
	}
	end := mm.PageUp(addr + length)
	if mapped := k.mappedPrefix(addr, end); mapped < end {
		// A hole: Linux changes the mappings before it, then says ENOMEM.
		if mapped > addr {
			if err := k.as.Protect(addr, mapped-addr, mm.Prot(prot&7)); err != nil {
				return mmErr(c, err, eNOMEM)
			}
		}
		return fail(eNOMEM)
	}
	if err := k.as.Protect(addr, length, mm.Prot(prot&7)); err != nil {
		if errors.Is(err, mm.ErrInvalid) {
			return fail(eNOMEM)
		}
		return mmErr(c, err, eNOMEM)
	}
	return ok(0)
}

// mappedPrefix returns the end of the mapped run of memory from addr (at
// most end): addr itself when addr is not mapped.
func (k *Kernel) mappedPrefix(addr, end uint64) uint64 {
	at := addr
	for _, v := range k.as.VMAs() { // sorted by address
		if v.End <= at {
			continue
		}
		if v.Start > at || at >= end {
			break
		}
		at = v.End
	}
	return min(at, end)
}

func sysMremap(k *Kernel, c *Call) Outcome {
	old, oldSize, newSize, flags, newAddr := c.Args[0], c.Args[1], c.Args[2], c.Args[3], c.Args[4]
	if flags&^(mremapMayMove|mremapFixed|mremapDontUnmap) != 0 || flags&mremapDontUnmap != 0 {
		return fail(eINVAL)
	}
	if v, found := k.as.Find(old); found && mm.PageUp(newSize) > mm.PageUp(oldSize) {
		grow := mm.PageUp(newSize) - mm.PageUp(oldSize)
		if !k.vmAllows(grow, dataGrowth(grow, uint64(v.Prot), v.Shared)) {
			return fail(eNOMEM)
		}
	}
	// Shared file mappings shrunk, moved or replaced keep their stores.
	err := k.syncBeforeUnmap(old, old+oldSize)
	if err == nil && flags&mremapFixed != 0 {
		err = k.syncBeforeUnmap(newAddr, newAddr+newSize)
	}
	if err != nil {
		return mmErr(c, err, eINVAL)
	}
	a, err := k.as.Remap(old, oldSize, newSize, mm.RemapHow{
		MayMove: flags&mremapMayMove != 0,
		Fixed:   flags&mremapFixed != 0,
		NewAddr: newAddr,
	})
	k.pruneShared()
	if err != nil {
		return mmErr(c, err, eINVAL)
	}
	// Pages added to a shared file mapping show the file.
	oldLen, newLen := mm.PageUp(oldSize), mm.PageUp(newSize)
	if v, found := k.as.Find(a + oldLen); found && newLen > oldLen && v.File != nil {
		s := v.File.(*sharedFile)
		if err := k.loadFile(s.h, a+oldLen, newLen-oldLen, v.Offset+(a+oldLen-v.Start)); err != nil {
			return mmErr(c, err, eIO)
		}
	}
	k.checkAliases(a)
	return ok(a)
}

// forEachMapped calls fn for every mapped part of [addr, addr+length) and
// reports ENOMEM if some part is unmapped.
func (k *Kernel) forEachMapped(addr, length uint64, fn func(v mm.VMA, lo, hi uint64) error) (Errno, error) {
	end := mm.PageUp(addr + length)
	var hole bool
	cur := addr
	for _, v := range k.as.VMAs() {
		if v.End <= cur || v.Start >= end {
			continue
		}
		if v.Start > cur {
			hole = true
		}
		lo, hi := max(v.Start, cur), min(v.End, end)
		if err := fn(v, lo, hi); err != nil {
			return 0, err
		}
		cur = hi
	}
	if hole || cur < end {
		return eNOMEM, nil
	}
	return 0, nil
}

func sysMadvise(k *Kernel, c *Call) Outcome {
	addr, length, advice := c.Args[0], c.Args[1], c.Args[2]
	if addr%mm.PageSize != 0 || addr+length < addr {
		return fail(eINVAL)
	}
	if length == 0 {
		return ok(0)
	}
	e, err := k.forEachMapped(addr, length, func(v mm.VMA, lo, hi uint64) error {
		// MADV_DONTNEED drops private anonymous pages: they read as zeros.
		// They are zeroed without being written (mm.PageZeroer: the
		// engine frees its host pages); a kernel memory without that
		// writes zeros.
		if advice != madvDontNeed || v.Shared || (v.Name != "" && v.Name[0] == '/') {
			return nil
		}
		if z, ok := k.mem.(mm.PageZeroer); ok {
			if err := z.ZeroPages(lo, hi-lo); err != nil {
				var be *mm.BackendError
				if errors.As(err, &be) {
					return err
				}
				return &mm.BackendError{Op: "zero", Addr: lo, Size: hi - lo, Err: err}
			}
			return nil
		}
		return k.zero(lo, hi)
	})
	if err != nil {
		return fatal(c, err)
	}
	return result(0, e)
}

// sysMsync writes back the shared file mappings in the range.
func sysMsync(k *Kernel, c *Call) Outcome {
	addr, length, flags := c.Args[0], c.Args[1], c.Args[2]
	if addr%mm.PageSize != 0 || flags&^(msAsync|msInvalidate|msSync) != 0 || flags&(msAsync|msSync) == msAsync|msSync {
		return fail(eINVAL)
	}
	if length == 0 {
		return ok(0)
	}
	if addr+length < addr {
		return fail(eNOMEM)
	}
	e, _ := k.forEachMapped(addr, length, func(mm.VMA, uint64, uint64) error { return nil })
	if e != 0 {
		return fail(e)
	}
	if err := k.syncRange(addr, addr+length); err != nil {
		var be *mm.BackendError
		if errors.As(err, &be) {
			return fatal(c, err)
		}
		return fail(eIO)
	}
	return ok(0)
}

func sysMincore(k *Kernel, c *Call) Outcome {
	addr, length, vec := c.Args[0], c.Args[1], c.Args[2]
	if addr%mm.PageSize != 0 {
		return fail(eINVAL)
	}
	// Like Linux: the range must be user space (a length that wraps is
	// not), then every page must be mapped; the vector is written a chunk
	// at a time, so a huge range needs no huge buffer.
	if addr > mm.TaskSize || length > mm.TaskSize-addr || !k.as.Mapped(addr, length) {
		return fail(eNOMEM)
	}
	n := mm.PageUp(length) / mm.PageSize
	chunk := make([]byte, min(n, mincoreChunk))
	for i := range chunk {
		chunk[i] = 1
	}
	for done := uint64(0); done < n; done += uint64(len(chunk)) {
		if e := k.copyOut(vec+done, chunk[:min(uint64(len(chunk)), n-done)]); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

// mincoreChunk is how many pages' bytes mincore writes at a time (Linux:
// a page of them).
const mincoreChunk = 4096

// growsDown reports whether addr lies in a mapping that grows down
// (VM_GROWSDOWN): here, the main thread's stack.
func (k *Kernel) growsDown(addr uint64) bool {
	for _, v := range k.as.VMAs() {
		if v.Start <= addr && addr < v.End {
			return v.Name == "[stack]"
		}
	}
	return false
}
