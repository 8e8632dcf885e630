package syscalls

import (
	"math"
	"slices"
	"strconv"
)

// File locks: flock(2), POSIX record locks (F_SETLK, F_SETLKW, F_GETLK) and
// open file description locks (F_OFD_*), as Linux's fs/locks.c keeps them.
// POSIX locks belong to a process: its own never conflict with one
// another, another process's do, a child does not inherit them, and
// closing any descriptor of the file releases them; flock and OFD locks
// belong to open file descriptions (shared across fork), so two open()s of
// one file conflict, and OFD locks conflict with POSIX locks. flock locks and record locks are
// independent, as on Linux. A request that would wait parks the thread
// (LockWait) until a lock of the file is released.

// LockWait says that a blocking lock request (flock without LOCK_NB,
// F_SETLKW, F_OFD_SETLKW) conflicts with a lock held through another open
// file description. The call has returned -EAGAIN; re-executing it after
// Kernel.OnLockEvent reports Lock emulates waiting.
type LockWait struct {
	Lock uint64
	// What describes the wait for deadlock reports.
	What string
}

// lockTable is the locks of a run's files, by file (lockKey).
type lockTable struct {
	files map[string]*lockedFile
	ids   uint64
}

// lockOwner is who holds a lock: an open file description (flock, OFD
// locks) or, when f is nil, process pid (POSIX record locks).
type lockOwner struct {
	f   *openFile
	pid int
}

// fileLock is one lock of a file.
type fileLock struct {
	owner      lockOwner
	write      bool
	start, end int64 // bytes start..end inclusive
}

func (l fileLock) overlaps(start, end int64) bool { return l.start <= end && start <= l.end }

// lockedFile is the locks of one file. Entries stay for the run: waiters
// know a file by its id.
type lockedFile struct {
	id    uint64     // for LockWait
	flock []fileLock // whole-file locks
	rec   []fileLock // POSIX and OFD record locks, by start
}

// lockKey identifies the file of f for locking: its device and inode.
func (k *Kernel) lockKey(f *openFile) (string, Errno) {
	st, e := f.ops.stat(k)
	if e != 0 {
		return "", e
	}
	return strconv.FormatUint(st.dev, 16) + ":" + strconv.FormatUint(st.ino, 16), 0
}

// lockedFile returns the locks of f's file, creating the entry.
func (k *Kernel) lockedFile(f *openFile) (*lockedFile, Errno) {
	key, e := k.lockKey(f)
	if e != 0 {
		return nil, e
	}
	lf := k.locks.files[key]
	if lf == nil {
		k.locks.ids++
		lf = &lockedFile{id: k.locks.ids}
		k.locks.files[key] = lf
	}
	return lf, 0
}

// lockReleased wakes the threads waiting for a lock of lf.
func (k *Kernel) lockReleased(lf *lockedFile) {
	if k.OnLockEvent != nil {
		k.OnLockEvent(lf.id)
	}
}

// lockWait is the outcome of a blocking request that conflicts.
func lockWait(lf *lockedFile, what string) Outcome {
	out := fail(eAGAIN)
	out.Wait = &LockWait{Lock: lf.id, What: what}
	return out
}

// Operations of flock(2).
const (
	lockSH   = 1
	lockEX   = 2
	lockNB   = 4
	lockMand = 32
	lockUN   = 8
)

func sysFlock(k *Kernel, c *Call) Outcome {
	op := uint32(c.Args[1])
	if op&lockMand != 0 {
		return ok(0) // LOCK_MAND: ignored since Linux 5.15
	}
	kind := op &^ lockNB
	if kind != lockSH && kind != lockEX && kind != lockUN {
		return fail(eINVAL)
	}
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	lf, e := k.lockedFile(f)
	if e != 0 {
		return fail(e)
	}
	// A lock of this description is first dropped (Linux converts a lock
	// that way, and a conversion that fails leaves none).
	i := slices.IndexFunc(lf.flock, func(l fileLock) bool { return l.owner.f == f })
	if i >= 0 {
		if kind != lockUN && lf.flock[i].write == (kind == lockEX) {
			return ok(0)
		}
		lf.flock = slices.Delete(lf.flock, i, i+1)
		k.lockReleased(lf)
	}
	if kind == lockUN {
		return ok(0)
	}
	for _, l := range lf.flock {
		if l.write || kind == lockEX {
			if op&lockNB != 0 {
				return fail(eWOULDBLOCK)
			}
			return lockWait(lf, "flock")
		}
	}
	lf.flock = append(lf.flock, fileLock{owner: lockOwner{f: f}, write: kind == lockEX, start: 0, end: math.MaxInt64})
	return ok(0)
}

// recordConflict returns the first record lock that conflicts with a lock
// by owner of [start, end] (write or read).
func (lf *lockedFile) recordConflict(owner lockOwner, write bool, start, end int64) (fileLock, bool) {
	for _, l := range lf.rec {
		if l.owner != owner && l.overlaps(start, end) && (l.write || write) {
			return l, true
		}
	}
	return fileLock{}, false
}

// setRecord makes owner hold [start, end] as a read or write lock, or not at
// all (unlock), splitting and merging its locks as Linux does.
func (lf *lockedFile) setRecord(owner lockOwner, unlock, write bool, start, end int64) {
	var out []fileLock
	for _, l := range lf.rec {
		if l.owner != owner || !l.overlaps(start, end) {
			out = append(out, l)
			continue
		}
		if l.start < start {
			out = append(out, fileLock{owner, l.write, l.start, start - 1})
		}
		if l.end > end {
			out = append(out, fileLock{owner, l.write, end + 1, l.end})
		}
	}
	if !unlock {
		nl := fileLock{owner, write, start, end}
		// Merge with the owner's adjacent locks of the same type.
		next := func(x int64) int64 { return min(x, math.MaxInt64-1) + 1 }
		var rest []fileLock
		for _, l := range out {
			if l.owner == owner && l.write == write && l.start <= next(nl.end) && nl.start <= next(l.end) {
				nl.start, nl.end = min(nl.start, l.start), max(nl.end, l.end)
				continue
			}
			rest = append(rest, l)
		}
		out = append(rest, nl)
	}
	slices.SortStableFunc(out, func(a, b fileLock) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	lf.rec = out
}

// Record lock types (struct flock's l_type).
const (
	fRdlck = 0
	fWrlck = 1
)

// recordLock serves F_GETLK, F_SETLK, F_SETLKW and their F_OFD_ forms on f
// with the struct flock at arg.
func (k *Kernel) recordLock(f *openFile, cmd int, arg uint64) Outcome {
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	var b [flockStructLen]byte
	if e := k.copyIn(arg, b[:]); e != 0 {
		return fail(e)
	}
	typ, whence := int16(le.Uint16(b[0:])), int16(le.Uint16(b[2:]))
	lstart, llen, lpid := int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int32(le.Uint32(b[24:]))
	ofd := cmd == fOFDGetLK || cmd == fOFDSetLK || cmd == fOFDSetLKW
	if ofd && lpid != 0 {
		return fail(eINVAL)
	}
	if typ != fRdlck && typ != fWrlck && typ != fUnlck {
		return fail(eINVAL)
	}
	var base int64
	switch whence {
	case seekSet:
	case seekCur:
		base = f.pos()
	case seekEnd:
		st, e := f.ops.stat(k)
		if e != 0 {
			return fail(e)
		}
		base = st.size
	default:
		return fail(eINVAL)
	}
	// The range, as flock_to_posix_lock computes it.
	start := base + lstart
	if (lstart > 0 && start < base) || (lstart < 0 && start > base) {
		return fail(eOVERFLOW)
	}
	end := int64(math.MaxInt64)
	switch {
	case llen > 0:
		if start > math.MaxInt64-(llen-1) {
			return fail(eOVERFLOW)
		}
		end = start + llen - 1
	case llen < 0:
		end = start - 1
		start += llen
	}
	if start < 0 {
		return fail(eINVAL)
	}
	owner := lockOwner{pid: k.cfg.Pid}
	if ofd {
		owner = lockOwner{f: f}
	}
	lf, e := k.lockedFile(f)
	if e != 0 {
		return fail(e)
	}
	if cmd == fGetLK || cmd == fOFDGetLK {
		if typ == fUnlck {
			return fail(eINVAL)
		}
		l, found := lf.recordConflict(owner, typ == fWrlck, start, end)
		if !found {
			le.PutUint16(b[0:], fUnlck)
			return result(0, k.copyOut(arg, b[:2]))
		}
		lt, pid, n := uint16(fRdlck), int32(-1), int64(0)
		if l.write {
			lt = fWrlck
		}
		if l.owner.f == nil {
			pid = int32(l.owner.pid)
		}
		if l.end != math.MaxInt64 {
			n = l.end - l.start + 1
		}
		le.PutUint16(b[0:], lt)
		le.PutUint16(b[2:], seekSet)
		le.PutUint64(b[8:], uint64(l.start))
		le.PutUint64(b[16:], uint64(n))
		le.PutUint32(b[24:], uint32(pid))
		return result(0, k.copyOut(arg, b[:]))
	}
	switch {
	case typ == fRdlck && !f.readable(), typ == fWrlck && !f.writable():
		return fail(eBADF)
	case typ == fUnlck:
		lf.setRecord(owner, true, false, start, end)
		k.lockReleased(lf)
		return ok(0)
	}
	if _, found := lf.recordConflict(owner, typ == fWrlck, start, end); found {
		if cmd == fSetLK || cmd == fOFDSetLK {
			return fail(eAGAIN)
		}
		return lockWait(lf, "record lock")
	}
	// Taking a read lock over one's write lock releases the write part.
	lf.setRecord(owner, false, typ == fWrlck, start, end)
	k.lockReleased(lf)
	return ok(0)
}

// dropLocks releases the locks that closing one descriptor of f releases:
// the process's record locks on the file, and when the description is
// released (last), its flock and OFD locks.
func (k *Kernel) dropLocks(f *openFile, last bool) {
	if len(k.locks.files) == 0 {
		return
	}
	key, e := k.lockKey(f)
	if e != 0 {
		return
	}
	lf := k.locks.files[key]
	if lf == nil {
		return
	}
	keep := func(l fileLock) bool {
		if l.owner.f == nil {
			return l.owner.pid != k.cfg.Pid // another process's
		}
		return !last || l.owner.f != f
	}
	n := len(lf.rec) + len(lf.flock)
	lf.rec = slices.DeleteFunc(lf.rec, func(l fileLock) bool { return !keep(l) })
	if last {
		lf.flock = slices.DeleteFunc(lf.flock, func(l fileLock) bool { return l.owner.f == f })
	}
	if len(lf.rec)+len(lf.flock) != n {
		k.lockReleased(lf)
	}
}
