package syscalls

import (
	"errors"
	"io"
	"os"
	"slices"

	"emuprof/mm"
)

// Memory advice and locking: madvise, mlock, munlock, mlockall,
// munlockall. Advice that only tunes paging is accepted (the guest cannot
// observe it); advice that changes contents does; what Linux refuses is
// refused. Locked memory is counted against RLIMIT_MEMLOCK like Linux's;
// being resident it is anyway.

// madvise advice values (Linux 6.8).
const (
	madvNormal         = 0
	madvWillNeed       = 3
	madvFree           = 8
	madvRemove         = 9
	madvDontFork       = 10
	madvDoFork         = 11
	madvWipeOnFork     = 18
	madvKeepOnFork     = 19
	madvCold           = 20
	madvPageOut        = 21
	madvPopulateRead   = 22
	madvPopulateWrite  = 23
	madvDontNeedLocked = 24
	madvCollapse       = 25
	madvHWPoison       = 100
	madvSoftOffline    = 101
)

// privateAnon reports whether v is private anonymous memory (heap and
// stack included).
func privateAnon(v mm.VMA) bool {
	return !v.Shared && (v.Name == "" || v.Name[0] == '[')
}

func sysMadviseAll(k *Kernel, c *Call) Outcome {
	addr, length, advice := c.Args[0], c.Args[1], c.Args[2]
	switch {
	case advice <= madvDontNeed, advice >= madvDontFork && advice <= madvCollapse && advice != madvRemove:
	case advice == madvFree, advice == madvRemove:
	default:
		// MADV_HWPOISON and MADV_SOFT_OFFLINE included: the emulated
		// kernel has no memory failure handling (CONFIG_MEMORY_FAILURE).
		return fail(eINVAL)
	}
	if addr%mm.PageSize != 0 || addr+length < addr {
		return fail(eINVAL)
	}
	if length == 0 {
		return ok(0)
	}
	// Checks first, then effects, range by range as Linux does.
	e, err := k.forEachMapped(addr, length, func(v mm.VMA, lo, hi uint64) error {
		var bad bool
		switch advice {
		case madvFree, madvWipeOnFork, madvKeepOnFork:
			bad = !privateAnon(v)
		case madvRemove:
			bad = !v.Shared || v.Prot&mm.ProtWrite == 0
		case madvPopulateRead:
			bad = v.Prot&mm.ProtRead == 0
		case madvPopulateWrite:
			bad = v.Prot&mm.ProtWrite == 0
		}
		switch advice {
		case madvDontNeed, madvFree, madvRemove, madvCold, madvPageOut:
			bad = bad || k.isLocked(lo, hi) // the pages must stay
		}
		if bad {
			return errBadAdvice
		}
		return nil
	})
	if errors.Is(err, errBadAdvice) {
		return fail(eINVAL)
	}
	if err != nil {
		return fatal(c, err)
	}
	switch advice {
	case madvDontNeed, madvDontNeedLocked:
		// Private file pages read the file again; private anonymous pages
		// read as zeros (sysMadvise).
		_, err = k.forEachMapped(addr, length, func(v mm.VMA, lo, hi uint64) error {
			if v.Shared || privateAnon(v) {
				return nil
			}
			return k.reloadPrivate(v, lo, hi)
		})
		if err != nil {
			return fatal(c, err)
		}
		dc := *c
		dc.Args[2] = madvDontNeed
		if out := sysMadvise(k, &dc); out.Err != nil {
			return out
		}
	case madvRemove:
		// Shared anonymous memory: the pages are freed and read as zeros.
		// A file's pages would need a hole punched in the file: refused,
		// as by a file system without FALLOC_FL_PUNCH_HOLE.
		_, err = k.forEachMapped(addr, length, func(v mm.VMA, lo, hi uint64) error {
			if v.Name != "" {
				return errNoPunch
			}
			return k.zero(lo, hi)
		})
		if errors.Is(err, errNoPunch) {
			return fail(eOPNOTSUPP)
		}
		if err != nil {
			return fatal(c, err)
		}
	}
	return result(0, e)
}

var (
	errBadAdvice = errors.New("advice not applicable")
	errNoPunch   = errors.New("no hole punching")
)

// zero stores zeros in guest memory [lo, hi).
func (k *Kernel) zero(lo, hi uint64) error {
	z := make([]byte, min(hi-lo, maxChunk))
	for a := lo; a < hi; a += uint64(len(z)) {
		n := min(hi-a, uint64(len(z)))
		if err := k.mem.WriteMem(a, z[:n]); err != nil {
			return &mm.BackendError{Op: "write", Addr: a, Size: n, Err: err}
		}
	}
	return nil
}

// reloadPrivate gives the private file pages [lo, hi) of v the file's
// current contents (zeros past its end), as dropping them does on Linux.
func (k *Kernel) reloadPrivate(v mm.VMA, lo, hi uint64) error {
	if err := k.zero(lo, hi); err != nil {
		return err
	}
	l, e := k.walk(v.Name, true)
	if e != 0 || l.host == "" {
		return nil // the file is gone: nothing to read back
	}
	f, err := os.Open(l.host)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, min(hi-lo, maxChunk))
	for a := lo; a < hi; a += uint64(len(buf)) {
		n := min(hi-a, uint64(len(buf)))
		got, err := f.ReadAt(buf[:n], int64(v.Offset+a-v.Start))
		if got > 0 {
			if err := k.mem.WriteMem(a, buf[:got]); err != nil {
				return &mm.BackendError{Op: "write", Addr: a, Size: uint64(got), Err: err}
			}
		}
		if err != nil && !errors.Is(err, io.EOF) || got < int(n) {
			return nil
		}
	}
	return nil
}

// mlockall flags.
const (
	mclCurrent = 1
	mclFuture  = 2
	mclOnFault = 4
)

// span is a range of guest addresses [start, end).
type span struct{ start, end uint64 }

// lockedBytes is how much of the locked ranges is mapped.
func (k *Kernel) lockedBytes() uint64 {
	var n uint64
	for _, v := range k.as.VMAs() {
		for _, s := range k.mlocked {
			if lo, hi := max(s.start, v.Start), min(s.end, v.End); lo < hi {
				n += hi - lo
			}
		}
	}
	return n
}

// isLocked reports whether any of [lo, hi) is locked.
func (k *Kernel) isLocked(lo, hi uint64) bool {
	for _, s := range k.mlocked {
		if s.start < hi && lo < s.end {
			return true
		}
	}
	return false
}

// setLocked adds [start, end) to the locked ranges, or removes it.
func (k *Kernel) setLocked(start, end uint64, lock bool) {
	var out []span
	for _, s := range k.mlocked {
		if s.end <= start || s.start >= end {
			out = append(out, s)
			continue
		}
		if s.start < start {
			out = append(out, span{s.start, start})
		}
		if s.end > end {
			out = append(out, span{end, s.end})
		}
	}
	if lock {
		out = append(out, span{start, end})
	}
	k.mlocked = out
}

// memlockAllows checks RLIMIT_MEMLOCK for locking extra more bytes
// (mlock_fixup, can_do_mlock): root is not limited.
func (k *Kernel) memlockAllows(extra uint64) Errno {
	if k.uids.eff == 0 {
		return 0
	}
	limit := k.rlimits[rlimitMemLock].cur
	switch {
	case limit == 0:
		return ePERM
	case k.lockedBytes()+extra > limit:
		return eNOMEM
	}
	return 0
}

// sysMemLock serves mlock, munlock, mlockall and munlockall.
func sysMemLock(k *Kernel, c *Call) Outcome {
	switch c.Nr {
	case 151: // mlockall
		flags := c.Args[0]
		if flags == 0 || flags&^(mclCurrent|mclFuture|mclOnFault) != 0 || flags == mclOnFault {
			return fail(eINVAL)
		}
		if k.uids.eff != 0 && k.rlimits[rlimitMemLock].cur == 0 {
			return fail(ePERM)
		}
		if flags&mclCurrent != 0 {
			var all []span
			var n uint64
			for _, v := range k.as.VMAs() {
				all, n = append(all, span{v.Start, v.End}), n+v.Size()
			}
			if k.uids.eff != 0 && n > k.rlimits[rlimitMemLock].cur {
				return fail(eNOMEM)
			}
			k.mlocked = all
		}
		return ok(0)
	case 152: // munlockall
		k.mlocked = nil
		return ok(0)
	}
	addr, length := c.Args[0], c.Args[1]
	start := addr &^ (mm.PageSize - 1)
	end := mm.PageUp(addr + length)
	if addr+length < addr {
		return fail(eINVAL)
	}
	if start == end {
		return ok(0)
	}
	if e, _ := k.forEachMapped(start, end-start, func(mm.VMA, uint64, uint64) error { return nil }); e != 0 {
		return fail(e)
	}
	if c.Nr == 150 { // munlock
		k.setLocked(start, end, false)
		return ok(0)
	}
	if k.uids.eff != 0 && k.rlimits[rlimitMemLock].cur == 0 {
		return fail(ePERM) // can_do_mlock
	}
	old := slices.Clone(k.mlocked)
	before := k.lockedBytes()
	k.setLocked(start, end, true)
	if e := k.memlockAllows(0); e != 0 && k.lockedBytes() > before {
		k.mlocked = old
		return fail(e)
	}
	return ok(0)
}
