package syscalls

import (
	"os"
	"path"
	"slices"
)

// inotify (fs/notify/inotify): watches on files and directories, and the
// events of the changes the run's own processes make to them (another
// program on the host changing a watched file is not seen). One registry
// serves the processes of a run (Fork shares it), so that a change one
// process makes reaches another's watch. Events are queued as Linux
// queues them (identical consecutive events merge), read whole, wait in
// read, poll and epoll like a pipe's data.

const (
	inAccess       = 0x1
	inModify       = 0x2
	inAttrib       = 0x4
	inCloseWrite   = 0x8
	inCloseNowrite = 0x10
	inOpen         = 0x20
	inMovedFrom    = 0x40
	inMovedTo      = 0x80
	inCreate       = 0x100
	inDelete       = 0x200
	inDeleteSelf   = 0x400
	inMoveSelf     = 0x800
	inAllEvents    = 0xfff
	inIgnored      = 0x8000
	inOnlydir      = 0x1000000
	inDontFollow   = 0x2000000
	inExclUnlink   = 0x4000000
	inMaskCreate   = 0x10000000
	inMaskAdd      = 0x20000000
	inIsdir        = 0x40000000
	inOneshot      = 0x80000000
	inEventSize    = 16
)

// inotifyReg is the run's inotify instances.
type inotifyReg struct {
	insts  []*inotifyFD
	cookie uint32 // the last rename cookie
}

// inotifyWatch watches the file with identity (dev, ino).
type inotifyWatch struct {
	wd       int
	dev, ino uint64
	mask     uint32
}

// inotifyFD is an inotify instance.
type inotifyFD struct {
	reg     *inotifyReg
	ino     uint64
	watches []*inotifyWatch
	nextWd  int
	evs     [][]byte // the events not read yet, each a whole record
	q       pollQueue
}

func (n *inotifyFD) queue() *pollQueue                         { return &n.q }
func (n *inotifyFD) seekable() bool                            { return false }
func (n *inotifyFD) stat(*Kernel) (statInfo, Errno)            { return anonStat() }
func (n *inotifyFD) write(*Kernel, []byte, int64) (int, Errno) { return 0, eINVAL }

func (n *inotifyFD) release() error {
	n.reg.insts = slices.DeleteFunc(n.reg.insts, func(x *inotifyFD) bool { return x == n })
	n.q.items = nil
	return nil
}

func (n *inotifyFD) poll(events uint16) uint16 {
	if len(n.evs) > 0 {
		return events & (pollIn | pollRdNm)
	}
	return 0
}

// read returns the whole events that fit (EINVAL if the first does not).
func (n *inotifyFD) read(_ *Kernel, p []byte, _ int64) (int, Errno) {
	if len(n.evs) == 0 {
		return 0, eAGAIN
	}
	done := 0
	for len(n.evs) > 0 && done+len(n.evs[0]) <= len(p) {
		done += copy(p[done:], n.evs[0])
		n.evs = n.evs[1:]
	}
	if done == 0 {
		return 0, eINVAL
	}
	return done, 0
}

// pending is FIONREAD's answer: the bytes of the queued events.
func (n *inotifyFD) pending() int {
	t := 0
	for _, e := range n.evs {
		t += len(e)
	}
	return t
}

// add queues an event of watch w (merged with an identical last one).
func (k *Kernel) inotifyAdd(n *inotifyFD, wd int, mask, cookie uint32, name string) {
	size := 0
	if name != "" {
		size = (len(name) + inEventSize) / inEventSize * inEventSize // NUL-padded
	}
	ev := make([]byte, inEventSize+size)
	le.PutUint32(ev[0:], uint32(wd))
	le.PutUint32(ev[4:], mask)
	le.PutUint32(ev[8:], cookie)
	le.PutUint32(ev[12:], uint32(size))
	copy(ev[inEventSize:], name)
	if l := len(n.evs); l > 0 && string(n.evs[l-1]) == string(ev) {
		return
	}
	n.evs = append(n.evs, ev)
	n.q.wake(pollIn | pollRdNm)
	if k.OnPipeEvent != nil {
		k.OnPipeEvent(n.ino)
	}
}

// fsEvent reports event mask to the run's watches: those on directory
// dir (nil: none), with the entry's name, then those on the file self
// (nil: none), as fsnotify_parent does; isDir adds IN_ISDIR.
func (k *Kernel) fsEvent(self, dir *statInfo, name string, mask, cookie uint32, isDir bool) {
	if isDir {
		mask |= inIsdir
	}
	for _, pass := range [2]struct {
		id   *statInfo
		name string
	}{{dir, name}, {self, ""}} {
		if pass.id == nil {
			continue
		}
		for _, n := range slices.Clone(k.inotify.insts) {
			for _, w := range slices.Clone(n.watches) {
				if w.dev != pass.id.dev || w.ino != pass.id.ino || mask&w.mask&inAllEvents == 0 {
					continue
				}
				k.inotifyAdd(n, w.wd, mask&(w.mask|inIsdir), cookie, pass.name)
				if w.mask&inOneshot != 0 {
					k.dropWatch(n, w)
				}
			}
		}
	}
}

// dropWatch removes w, with IN_IGNORED.
func (k *Kernel) dropWatch(n *inotifyFD, w *inotifyWatch) {
	n.watches = slices.DeleteFunc(n.watches, func(x *inotifyWatch) bool { return x == w })
	k.inotifyAdd(n, w.wd, inIgnored, 0, "")
}

// watched reports whether any watch exists in the run (most runs: none,
// and the file calls skip the stats).
func (k *Kernel) watched() bool { return len(k.inotify.insts) > 0 }

// hostIdentity stats host path h (not following a last link).
func (k *Kernel) hostIdentity(h string) (statInfo, bool) {
	fi, err := os.Lstat(h)
	if err != nil {
		return statInfo{}, false
	}
	return k.hostStat(fi, h), true
}

// parentOf is the identity of guest path g's directory (nil: none).
func (k *Kernel) parentOf(g string) *statInfo {
	if g == "/" || g == "" {
		return nil
	}
	dir, ok := k.hostIdentity(k.hostPath(path.Dir(g)))
	if !ok {
		return nil
	}
	return &dir
}

// fileEvent reports mask on the open host file f, and to its directory.
func (k *Kernel) fileEvent(f *openFile, mask uint32) {
	if !k.watched() || f.guest == "" {
		return
	}
	var st statInfo
	if h, ok := f.ops.(hostOps); ok {
		hf, host := h.hostFile()
		fi, err := hf.Stat()
		if err != nil {
			return
		}
		st = k.hostStat(fi, host)
	} else if _, isDir := f.ops.(*hostDir); isDir {
		var e Errno
		if st, e = f.ops.stat(k); e != 0 {
			return
		}
	} else {
		return
	}
	k.fsEvent(&st, k.parentOf(f.guest), path.Base(f.guest), mask, 0, st.mode&sIFMT == sIFDIR)
}

// dirEvent reports mask on the new entry at l to its directory's watches
// only (a new name of an old file is not an event of the file).
func (k *Kernel) dirEvent(l loc, mask uint32) {
	if !k.watched() || l.host == "" {
		return
	}
	if st, ok := k.hostIdentity(l.host); ok {
		k.fsEvent(nil, k.parentOf(l.guest), path.Base(l.guest), mask, 0, st.mode&sIFMT == sIFDIR)
	}
}

// attrEvent reports IN_ATTRIB on the host file at host (guest path guest,
// "" when unknown).
func (k *Kernel) attrEvent(host, guest string) {
	if !k.watched() || host == "" {
		return
	}
	st, ok := k.hostIdentity(host)
	if !ok {
		return
	}
	var dir *statInfo
	if guest != "" {
		dir = k.parentOf(guest)
	}
	k.fsEvent(&st, dir, path.Base(guest), inAttrib, 0, st.mode&sIFMT == sIFDIR)
}

// removed reports the removal of the file at l whose identity was st:
// IN_ATTRIB on it, IN_DELETE_SELF and the end of its watches if that was
// its last name, then IN_DELETE to its directory.
func (k *Kernel) removed(l loc, st statInfo) {
	if !k.watched() {
		return
	}
	isDir := st.mode&sIFMT == sIFDIR
	if !isDir {
		k.fsEvent(&st, nil, "", inAttrib, 0, false)
	}
	if isDir || st.nlink <= 1 {
		k.fsEvent(&st, nil, "", inDeleteSelf, 0, false)
		for _, n := range slices.Clone(k.inotify.insts) {
			for _, w := range slices.Clone(n.watches) {
				if w.dev == st.dev && w.ino == st.ino {
					k.dropWatch(n, w)
				}
			}
		}
	}
	k.fsEvent(nil, k.parentOf(l.guest), path.Base(l.guest), inDelete, 0, isDir)
}

// movedEvent reports a rename from ol to nl of the file with identity st.
func (k *Kernel) movedEvent(ol, nl loc, st statInfo) {
	if !k.watched() {
		return
	}
	k.inotify.cookie++
	isDir := st.mode&sIFMT == sIFDIR
	k.fsEvent(nil, k.parentOf(ol.guest), path.Base(ol.guest), inMovedFrom, k.inotify.cookie, isDir)
	k.fsEvent(nil, k.parentOf(nl.guest), path.Base(nl.guest), inMovedTo, k.inotify.cookie, isDir)
	k.fsEvent(&st, nil, "", inMoveSelf, 0, isDir)
}

func sysInotifyInit(k *Kernel, _ *Call) Outcome { return k.inotifyInit(0) }

func sysInotifyInit1(k *Kernel, c *Call) Outcome { return k.inotifyInit(uint32(c.Args[0])) }

func (k *Kernel) inotifyInit(flags uint32) Outcome {
	if flags&^(oNONBLOCK|oCLOEXEC) != 0 {
		return fail(eINVAL)
	}
	n := &inotifyFD{reg: k.inotify, ino: k.nextIno, nextWd: 1}
	k.nextIno++
	fd, e := k.install(newOpenFile(n, oRDONLY|flags&oNONBLOCK, ""), 0, flags&oCLOEXEC != 0)
	if e != 0 {
		return fail(e)
	}
	k.inotify.insts = append(k.inotify.insts, n)
	return ok(uint64(fd))
}

// inotifyOf returns the instance open at fd: EBADF, or EINVAL for another
// kind of file.
func (k *Kernel) inotifyOf(fd int) (*inotifyFD, Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return nil, e
	}
	n, ok := f.ops.(*inotifyFD)
	if !ok {
		return nil, eINVAL
	}
	return n, 0
}

func sysInotifyAddWatch(k *Kernel, c *Call) Outcome {
	mask := uint32(c.Args[2])
	if mask&inAllEvents == 0 || mask&(inMaskAdd|inMaskCreate) == inMaskAdd|inMaskCreate {
		return fail(eINVAL)
	}
	n, e := k.inotifyOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	l, e := k.lookupArg(atFDCWD, c.Args[1], mask&inDontFollow == 0)
	if e != 0 {
		return fail(e)
	}
	if !l.exists() {
		return fail(eNOENT)
	}
	if mask&inOnlydir != 0 && !l.isDir() {
		return fail(eNOTDIR)
	}
	st, e := k.statLoc(l)
	if e != 0 {
		return fail(e)
	}
	keep := mask & (inAllEvents | inOneshot | inExclUnlink | inDontFollow | inOnlydir)
	for _, w := range n.watches {
		if w.dev == st.dev && w.ino == st.ino {
			if mask&inMaskCreate != 0 {
				return fail(eEXIST)
			}
			if mask&inMaskAdd != 0 {
				w.mask |= keep
			} else {
				w.mask = keep
			}
			return ok(uint64(w.wd))
		}
	}
	w := &inotifyWatch{wd: n.nextWd, dev: st.dev, ino: st.ino, mask: keep}
	n.nextWd++
	n.watches = append(n.watches, w)
	return ok(uint64(w.wd))
}

func sysInotifyRmWatch(k *Kernel, c *Call) Outcome {
	n, e := k.inotifyOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	wd := int(int32(c.Args[1]))
	for _, w := range n.watches {
		if w.wd == wd {
			k.dropWatch(n, w)
			return ok(0)
		}
	}
	return fail(eINVAL)
}
