package syscalls

import (
	"os"
	"path"
	"strings"
	"time"
)

// The file system name space: getdents64, getcwd, chdir, fchdir, mkdir,
// mkdirat, rmdir, unlink, unlinkat, rename, renameat, renameat2, link,
// linkat, symlink, symlinkat, truncate, ftruncate, fsync, fdatasync, sync,
// syncfs, umask, utimensat, fadvise64. The chmod and chown families are in
// sys_attr.go, flock in locks.go.

func sysGetdents64(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	d, isDir := f.ops.(dirOps)
	if !isDir {
		return fail(eNOTDIR)
	}
	k.fileEvent(f, inAccess)
	if f.dents == nil || f.off == 0 {
		ents, e := d.list(k)
		if e != 0 {
			return fail(e)
		}
		f.dents = ents
	}
	count := int(min(c.Args[2], maxRWCount))
	var b []byte
	i := int(max(f.off, 0))
	for ; i < len(f.dents); i++ {
		ent := f.dents[i]
		reclen := (19 + len(ent.name) + 1 + 7) &^ 7
		if len(b)+reclen > count {
			if len(b) == 0 {
				return fail(eINVAL)
			}
			break
		}
		rec := make([]byte, reclen)
		le.PutUint64(rec[0:], ent.ino)
		le.PutUint64(rec[8:], uint64(i+1)) // d_off: the cookie of the next entry
		le.PutUint16(rec[16:], uint16(reclen))
		rec[18] = ent.typ
		copy(rec[19:], ent.name)
		b = append(b, rec...)
	}
	if e := k.copyOut(c.Args[1], b); e != 0 {
		return fail(e)
	}
	f.off = int64(i)
	return ok(uint64(len(b)))
}

func sysGetcwd(k *Kernel, c *Call) Outcome {
	b := append([]byte(k.cwd), 0)
	if uint64(len(b)) > c.Args[1] {
		return fail(eRANGE)
	}
	return result(uint64(len(b)), k.copyOut(c.Args[0], b))
}

func sysChdir(k *Kernel, c *Call) Outcome {
	l, e := k.lookupArg(atFDCWD, c.Args[0], true)
	if e != 0 {
		return fail(e)
	}
	if !l.exists() {
		return fail(eNOENT)
	}
	if !l.isDir() {
		return fail(eNOTDIR)
	}
	k.cwd = l.guest
	return ok(0)
}

func sysFchdir(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	d, isDir := f.ops.(dirOps)
	if !isDir {
		return fail(eNOTDIR)
	}
	k.cwd = d.location().guest
	return ok(0)
}

// touchParent records a change of the directory holding guest path p.
func (k *Kernel) touchParent(l loc) {
	if l.host != "" {
		k.touch(k.hostPath(path.Dir(l.guest)))
	}
}

func (k *Kernel) mkdirat(dirfd int, pathAddr uint64, mode uint32) Outcome {
	l, e := k.lookupArg(dirfd, pathAddr, false)
	if e != 0 {
		return fail(e)
	}
	if l.exists() {
		return fail(eEXIST)
	}
	if e := k.ovCreate(l); e != 0 {
		return fail(e)
	}
	if err := os.Mkdir(l.host, 0o700); err != nil {
		return fail(hostErrno(err))
	}
	_ = os.Chmod(l.host, goMode(mode&0o7777&^k.umask))
	k.ovCreated(l, true, false)
	k.created(l.host)
	k.touchParent(l)
	k.dirEvent(l, inCreate)
	return ok(0)
}

func sysMkdir(k *Kernel, c *Call) Outcome {
	return k.mkdirat(atFDCWD, c.Args[0], uint32(c.Args[1]))
}

func sysMkdirat(k *Kernel, c *Call) Outcome {
	return k.mkdirat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]))
}

// lastComponent returns the last component of a path argument as written.
func lastComponent(p string) string {
	return path.Base(strings.TrimRight(p, "/"))
}

func (k *Kernel) unlinkat(dirfd int, pathAddr uint64, flags uint32) Outcome {
	if flags&^atRemoveDir != 0 {
		return fail(eINVAL)
	}
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return fail(e)
	}
	if flags&atRemoveDir != 0 {
		switch lastComponent(p) {
		case ".":
			return fail(eINVAL)
		case "..":
			return fail(eNOTEMPTY)
		}
	}
	l, e := k.lookup(dirfd, p, false)
	if e != 0 {
		return fail(e)
	}
	switch {
	case l.syn != nil:
		return fail(eACCES)
	case !l.exists():
		return fail(eNOENT)
	case flags&atRemoveDir != 0 && !l.isDir():
		return fail(eNOTDIR)
	case flags&atRemoveDir == 0 && l.isDir():
		return fail(eISDIR)
	case l.guest == "/":
		return fail(eBUSY)
	}
	var st statInfo
	if k.watched() {
		st, _ = k.hostIdentity(l.host)
	}
	if e := k.ovRemove(l); e != 0 {
		return fail(e)
	}
	k.unlinked(l.fi, l.host)
	k.touchParent(l)
	k.removed(l, st)
	return ok(0)
}

func sysUnlink(k *Kernel, c *Call) Outcome { return k.unlinkat(atFDCWD, c.Args[0], 0) }

func sysRmdir(k *Kernel, c *Call) Outcome { return k.unlinkat(atFDCWD, c.Args[0], atRemoveDir) }

func sysUnlinkat(k *Kernel, c *Call) Outcome {
	return k.unlinkat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]))
}

func (k *Kernel) renameat(olddir int, oldAddr uint64, newdir int, newAddr uint64, flags uint32) Outcome {
	if flags&^(renameNoRepl|renameExch|renameWhite) != 0 {
		return fail(eINVAL)
	}
	if flags&renameExch != 0 && flags&(renameNoRepl|renameWhite) != 0 || flags&renameWhite != 0 {
		return fail(eINVAL) // RENAME_WHITEOUT is for overlay file systems
	}
	op, e := k.readPath(oldAddr)
	if e != 0 {
		return fail(e)
	}
	np, e := k.readPath(newAddr)
	if e != 0 {
		return fail(e)
	}
	ol, e := k.lookup(olddir, op, false)
	if e != 0 {
		return fail(e)
	}
	nl, e := k.lookup(newdir, np, false)
	if e != 0 {
		return fail(e)
	}
	switch {
	case ol.syn != nil || nl.syn != nil:
		return fail(eXDEV)
	case !lastNormal(op):
		return fail(eBUSY)
	case !lastNormal(np) && flags&renameNoRepl != 0:
		return fail(eEXIST)
	case !lastNormal(np):
		return fail(eBUSY)
	case !ol.exists():
		return fail(eNOENT)
	case ol.guest == "/" || nl.guest == "/":
		return fail(eBUSY)
	case nl.exists() && flags&renameNoRepl != 0:
		return fail(eEXIST)
	case flags&renameExch != 0 && !nl.exists():
		return fail(eNOENT)
	case ol.host == nl.host:
		return ok(0)
	case flags&renameExch != 0:
		return k.exchange(ol, nl)
	}
	if ol.isDir() {
		if strings.HasPrefix(nl.guest, ol.guest+"/") {
			return fail(eINVAL)
		}
		if nl.exists() {
			if !nl.isDir() {
				return fail(eNOTDIR)
			}
			// Linux replaces an empty directory; package os refuses.
			if e := k.ovRemove(nl); e != 0 {
				return fail(e)
			}
		}
	} else if nl.isDir() {
		return fail(eISDIR)
	}
	var moved statInfo
	if k.watched() {
		moved, _ = k.hostIdentity(ol.host)
	}
	if k.ov != nil {
		var e Errno
		if ol, nl, e = k.ovRename(ol, nl); e != 0 {
			return fail(e)
		}
	} else if err := os.Rename(ol.host, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	if nl.exists() && !nl.isDir() {
		k.unlinked(nl.fi, nl.host) // the replaced file lost a name
	}
	k.renamed(ol.host, nl.host)
	k.touchParent(ol)
	k.touchParent(nl)
	k.movedEvent(ol, nl, moved)
	return ok(0)
}

// exchange swaps the files at ol and nl (RENAME_EXCHANGE). The host has no
// portable atomic exchange; three renames through a name beside nl are
// atomic for the guest, whose threads and processes are serialized.
func (k *Kernel) exchange(ol, nl loc) Outcome {
	if k.ov != nil {
		return fail(eINVAL) // the overlay's rename does not exchange
	}
	if ol.isDir() && strings.HasPrefix(nl.guest, ol.guest+"/") || nl.isDir() && strings.HasPrefix(ol.guest, nl.guest+"/") {
		return fail(eINVAL)
	}
	tmp := nl.host + ".emuprof-exchange"
	if _, err := os.Lstat(tmp); err == nil {
		return fail(eBUSY)
	}
	if err := os.Rename(nl.host, tmp); err != nil {
		return fail(hostErrno(err))
	}
	if err := os.Rename(ol.host, nl.host); err != nil {
		_ = os.Rename(tmp, nl.host)
		return fail(hostErrno(err))
	}
	if err := os.Rename(tmp, ol.host); err != nil {
		return fail(hostErrno(err))
	}
	k.stamp(ol.fi, nl.host, stampC)
	k.stamp(nl.fi, ol.host, stampC)
	k.touchParent(ol)
	k.touchParent(nl)
	return ok(0)
}

// lastNormal reports whether the last component of path p is a name (not
// ".", ".." or the root): Linux's LAST_NORM.
func lastNormal(p string) bool {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return false
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	return last != "." && last != ".."
}

func sysRename(k *Kernel, c *Call) Outcome {
	return k.renameat(atFDCWD, c.Args[0], atFDCWD, c.Args[1], 0)
}

func sysRenameat(k *Kernel, c *Call) Outcome {
	return k.renameat(fdArg(c.Args[0]), c.Args[1], fdArg(c.Args[2]), c.Args[3], 0)
}

func sysRenameat2(k *Kernel, c *Call) Outcome {
	return k.renameat(fdArg(c.Args[0]), c.Args[1], fdArg(c.Args[2]), c.Args[3], uint32(c.Args[4]))
}

func (k *Kernel) linkat(olddir int, oldAddr uint64, newdir int, newAddr uint64, flags uint32) Outcome {
	if flags&^(atSymlinkFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	ol, e := k.linkSource(olddir, oldAddr, flags)
	if e != 0 {
		return fail(e)
	}
	nl, e := k.lookupArg(newdir, newAddr, false)
	if e != 0 {
		return fail(e)
	}
	switch {
	case ol.syn != nil || nl.syn != nil:
		return fail(eXDEV)
	case !ol.exists():
		return fail(eNOENT)
	case ol.isDir():
		return fail(ePERM)
	case nl.exists():
		return fail(eEXIST)
	case !ol.tmpfile && k.outsideRoot(ol.host):
		return fail(eXDEV) // /proc/self/exe outside the sysroot: another file system
	}
	if ol, e = k.ovCopyUp(ol); e != 0 { // linking needs no write permission on the file
		return fail(e)
	}
	if e := k.ovCreate(nl); e != 0 {
		return fail(e)
	}
	link := os.Link
	if ol.tmpfile {
		link = linkTmpfile
	}
	if err := link(ol.host, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	k.ovCreated(nl, false, true)
	k.stamp(ol.fi, ol.host, stampC)
	k.touchParent(nl)
	k.dirEvent(nl, inCreate)
	return ok(0)
}

// linkSource is the file linkat links: the path's, or with AT_EMPTY_PATH
// and an empty path the file open at olddir.
func (k *Kernel) linkSource(olddir int, oldAddr uint64, flags uint32) (loc, Errno) {
	if flags&atEmptyPath != 0 {
		p, e := k.readPath(oldAddr)
		if e != 0 && e != eNOENT {
			return loc{}, e
		}
		if p == "" {
			f, e := k.file(olddir)
			if e != 0 {
				return loc{}, e
			}
			if _, dir := f.ops.(*hostDir); dir {
				return loc{}, ePERM // directories are not hard-linked
			}
			if hf, ok := f.ops.(*hostFile); ok && hf.tmp {
				if hf.unlinkable {
					return loc{}, eNOENT // O_TMPFILE|O_EXCL: never to be named
				}
				fi, err := hf.f.Stat()
				if err != nil {
					return loc{}, hostErrno(err)
				}
				return loc{guest: f.guest, host: hf.host, fi: fi, tmpfile: true}, 0
			}
			h, ok := f.ops.(hostOps)
			if !ok {
				return loc{}, eXDEV // a pipe or an emulated file: another file system
			}
			_, host := h.hostFile()
			fi, err := os.Lstat(host)
			if err != nil {
				return loc{}, hostErrno(err)
			}
			return loc{guest: f.guest, host: host, fi: fi}, 0
		}
	}
	return k.lookupArg(olddir, oldAddr, flags&atSymlinkFollow != 0)
}

func sysLink(k *Kernel, c *Call) Outcome {
	return k.linkat(atFDCWD, c.Args[0], atFDCWD, c.Args[1], 0)
}

func sysLinkat(k *Kernel, c *Call) Outcome {
	return k.linkat(fdArg(c.Args[0]), c.Args[1], fdArg(c.Args[2]), c.Args[3], uint32(c.Args[4]))
}

func (k *Kernel) symlinkat(targetAddr uint64, newdir int, newAddr uint64) Outcome {
	target, e := k.readPath(targetAddr)
	if e != 0 {
		return fail(e)
	}
	if target == "" {
		return fail(eNOENT)
	}
	nl, e := k.lookupArg(newdir, newAddr, false)
	if e != 0 {
		return fail(e)
	}
	switch {
	case nl.syn != nil:
		return fail(eACCES)
	case nl.exists():
		return fail(eEXIST)
	}
	if e := k.ovCreate(nl); e != 0 {
		return fail(e)
	}
	if err := os.Symlink(target, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	k.ovCreated(nl, false, false)
	k.created(nl.host)
	k.touchParent(nl)
	k.dirEvent(nl, inCreate)
	return ok(0)
}

func sysSymlink(k *Kernel, c *Call) Outcome {
	return k.symlinkat(c.Args[0], atFDCWD, c.Args[1])
}

func sysSymlinkat(k *Kernel, c *Call) Outcome {
	return k.symlinkat(c.Args[0], fdArg(c.Args[1]), c.Args[2])
}

func sysTruncate(k *Kernel, c *Call) Outcome {
	size := int64(c.Args[1])
	if size < 0 {
		return fail(eINVAL)
	}
	l, e := k.lookupArg(atFDCWD, c.Args[0], true)
	if e != 0 {
		return fail(e)
	}
	switch {
	case l.syn != nil:
		return fail(eACCES)
	case !l.exists():
		return fail(eNOENT)
	case l.isDir():
		return fail(eISDIR)
	case !l.fi.Mode().IsRegular():
		return fail(eINVAL)
	case k.textBusy.busy(l.fi):
		return fail(eTXTBSY)
	case k.outsideRoot(l.host):
		return fail(eROFS)
	}
	if e := k.fsizeAllows(l.fi.Size(), size); e != 0 {
		return fail(e)
	}
	if l, e = k.ovWrite(l, size > 0); e != 0 {
		return fail(e)
	}
	if err := k.truncatePath(l.host, size); err != nil {
		return fail(hostErrno(err))
	}
	k.touch(l.host)
	return ok(0)
}

func sysFtruncate(k *Kernel, c *Call) Outcome {
	size := int64(c.Args[1])
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	h, isHost := f.ops.(hostOps)
	if size < 0 || !isHost || !f.writable() {
		return fail(eINVAL)
	}
	hf, host := h.hostFile()
	if fi, err := hf.Stat(); err == nil {
		if e := k.fsizeAllows(fi.Size(), size); e != 0 {
			return fail(e)
		}
		if sealed(f, size, fi.Size()) {
			return fail(ePERM)
		}
	}
	if err := k.truncateHost(hf, size); err != nil {
		return fail(hostErrno(err))
	}
	k.touch(host)
	k.fileEvent(f, inModify)
	return ok(0)
}

// sysFsync serves fsync, fdatasync and syncfs. A host file's data is not
// flushed to the host's disk: only a crash of the machine could tell. fsync
// and fdatasync fail on files that cannot be synchronized (pipes,
// terminals, devices, /proc), as on Linux; syncfs works on any file.
func sysFsync(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	if c.Nr == 306 { // syncfs
		return ok(0)
	}
	switch f.ops.(type) {
	case *hostFile, *hostDir, *synthDir:
		return ok(0)
	}
	return fail(eINVAL)
}

func sysSync(*Kernel, *Call) Outcome { return ok(0) }

func sysUmask(k *Kernel, c *Call) Outcome {
	old := k.umask
	k.umask = uint32(c.Args[0]) & 0o777
	return ok(uint64(old))
}

// samePath reports whether t's path still leads to it (an open file may
// have been renamed or removed: package os sets times by path only).
func samePath(t attrTarget) bool {
	if t.f == nil {
		return true
	}
	fi, err := os.Stat(t.host)
	return err == nil && os.SameFile(fi, t.fi)
}

// utimensat sets a file's access and modification times (see filetimes.go):
// the guest sees them from then on, and explicit times also reach the host
// file (UTIME_NOW gives it the host's current time, as a native touch
// would). A symbolic link's times (AT_SYMLINK_NOFOLLOW) are the guest's
// only, as package os cannot set them.
func sysUtimensat(k *Kernel, c *Call) Outcome {
	dirfd, pathAddr, timesAddr, flags := fdArg(c.Args[0]), c.Args[1], c.Args[2], uint32(c.Args[3])
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	// Each time: explicit (ns), now, or omitted.
	var ts [2]timespec
	for i := range ts {
		ts[i] = timespec{0, utimeNow}
		if timesAddr != 0 {
			t, e := k.getTimespec(timesAddr + 16*uint64(i))
			if e != 0 {
				return fail(e)
			}
			if t.nsec != utimeNow && t.nsec != utimeOmit && (t.nsec < 0 || t.nsec >= 1e9) {
				return fail(eINVAL)
			}
			ts[i] = t
		}
	}
	var t attrTarget
	var e Errno
	switch {
	case pathAddr != 0:
		t, e = k.pathTarget(dirfd, pathAddr, flags)
	case dirfd == atFDCWD:
		e = eFAULT
	default:
		t, e = k.fdTarget(dirfd)
	}
	if e != 0 {
		return fail(e)
	}
	if ts[0].nsec == utimeOmit && ts[1].nsec == utimeOmit {
		return ok(0)
	}
	root, owner := k.uids.fs == 0, t.st.uid == uint32(k.uids.fs)
	explicit := ts[0].nsec != utimeNow || ts[1].nsec != utimeNow
	switch {
	case t.host == "":
		return fail(ePERM)
	case explicit && !root && !owner:
		return fail(ePERM)
	case !explicit && !root && !owner && k.access(t.st, wOK) != 0:
		return fail(eACCES)
	}
	if !t.link {
		// The times reach the host file: in an overlay, its upper copy.
		if e := k.ovAttr(&t); e != 0 {
			return fail(e)
		}
	}
	now := k.realtime(k.now)
	cur := k.timesOf(t.fi, t.host)
	guest := [2]int64{cur.atime, cur.mtime}
	var host [2]time.Time // zero: unchanged
	for i, v := range ts {
		switch v.nsec {
		case utimeOmit:
		case utimeNow:
			guest[i], host[i] = now, time.Now()
		default:
			guest[i] = v.ns()
			host[i] = time.Unix(0, guest[i])
		}
	}
	if !t.link && samePath(t) {
		if err := os.Chtimes(t.host, host[0], host[1]); err != nil {
			return fail(hostErrno(err))
		}
	}
	k.times[timesKey(t.fi, t.host)] = fileTimes{atime: guest[0], mtime: guest[1], ctime: now}
	k.attrEvent(t.host, t.guest)
	return ok(0)
}

// sysFadvise64 checks its arguments as Linux does (generic_fadvise) and
// takes the advice as a hint: it only tunes the page cache.
func sysFadvise64(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	if st, e := f.ops.stat(k); e == 0 && st.mode&sIFMT == sIFIFO {
		return fail(eSPIPE)
	}
	if c.Args[3] > 5 || int64(c.Args[2]) < 0 {
		return fail(eINVAL)
	}
	return ok(0)
}
