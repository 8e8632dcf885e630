package syscalls

import (
	"os"
	"path"
	"strings"
	"time"
)

// The file system name space: getdents64, getcwd, chdir, fchdir, mkdir,
// mkdirat, rmdir, unlink, unlinkat, rename, renameat, renameat2, link,
// linkat, symlink, symlinkat, chmod, fchmod, fchmodat, chown, fchown,
// lchown, fchownat, truncate, ftruncate, fsync, fdatasync, sync, syncfs,
// umask, utimensat, fadvise64, flock.

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
		k.touch(k.hostOf(path.Dir(l.guest)))
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
	if err := os.Mkdir(l.host, 0o700); err != nil {
		return fail(hostErrno(err))
	}
	_ = os.Chmod(l.host, goMode(mode&0o7777&^k.umask))
	k.touch(l.host)
	k.touchParent(l)
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
	if err := os.Remove(l.host); err != nil {
		return fail(hostErrno(err))
	}
	delete(k.times, l.host)
	k.touchParent(l)
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
	if flags&(renameExch|renameWhite) != 0 {
		return fail(eINVAL) // not supported
	}
	ol, e := k.lookupArg(olddir, oldAddr, false)
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
	case ol.guest == "/" || nl.guest == "/":
		return fail(eBUSY)
	case nl.exists() && flags&renameNoRepl != 0:
		return fail(eEXIST)
	case ol.host == nl.host:
		return ok(0)
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
			if err := os.Remove(nl.host); err != nil {
				return fail(hostErrno(err))
			}
		}
	} else if nl.isDir() {
		return fail(eISDIR)
	}
	if err := os.Rename(ol.host, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	if t, ok := k.times[ol.host]; ok {
		k.times[nl.host] = t
		delete(k.times, ol.host)
	} else {
		delete(k.times, nl.host)
	}
	k.touchParent(ol)
	k.touchParent(nl)
	return ok(0)
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
	ol, e := k.lookupArg(olddir, oldAddr, flags&atSymlinkFollow != 0)
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
	}
	if err := os.Link(ol.host, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	k.touchParent(nl)
	return ok(0)
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
	if err := os.Symlink(target, nl.host); err != nil {
		return fail(hostErrno(err))
	}
	k.touchParent(nl)
	return ok(0)
}

func sysSymlink(k *Kernel, c *Call) Outcome {
	return k.symlinkat(c.Args[0], atFDCWD, c.Args[1])
}

func sysSymlinkat(k *Kernel, c *Call) Outcome {
	return k.symlinkat(c.Args[0], fdArg(c.Args[1]), c.Args[2])
}

// chmodLoc changes the mode of an existing file.
func (k *Kernel) chmodLoc(l loc, mode uint32) Errno {
	switch {
	case l.syn != nil:
		return ePERM
	case !l.exists():
		return eNOENT
	case l.isSymlink():
		return eOPNOTSUPP
	}
	if err := os.Chmod(l.host, goMode(mode&0o7777)); err != nil {
		return hostErrno(err)
	}
	if t, ok := k.times[l.host]; ok {
		t.ctime = k.realtime(k.now)
		k.times[l.host] = t
	}
	return 0
}

func (k *Kernel) fchmodat(dirfd int, pathAddr uint64, mode, flags uint32) Outcome {
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return fail(e)
	}
	if p == "" && flags&atEmptyPath != 0 {
		return k.fchmod(dirfd, mode)
	}
	l, e := k.lookup(dirfd, p, flags&atSymlinkNoFollow == 0)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.chmodLoc(l, mode))
}

func (k *Kernel) fchmod(fd int, mode uint32) Outcome {
	f, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	switch o := f.ops.(type) {
	case *hostFile:
		if err := o.f.Chmod(goMode(mode & 0o7777)); err != nil {
			return fail(hostErrno(err))
		}
		return ok(0)
	case *hostDir:
		return result(0, k.chmodLoc(o.l, mode))
	case *pathFile:
		return fail(eBADF)
	}
	return ok(0)
}

func sysChmod(k *Kernel, c *Call) Outcome {
	return k.fchmodat(atFDCWD, c.Args[0], uint32(c.Args[1]), 0)
}

func sysFchmod(k *Kernel, c *Call) Outcome { return k.fchmod(fdArg(c.Args[0]), uint32(c.Args[1])) }

func sysFchmodat(k *Kernel, c *Call) Outcome {
	return k.fchmodat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), 0)
}

func sysFchmodat2(k *Kernel, c *Call) Outcome {
	return k.fchmodat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), uint32(c.Args[3]))
}

// The chown family checks that the file exists and changes nothing: the
// guest's files keep the host's owner.
func (k *Kernel) fchownat(dirfd int, pathAddr uint64, flags uint32) Outcome {
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	_, e := k.statAt(dirfd, pathAddr, flags)
	return result(0, e)
}

func sysChown(k *Kernel, c *Call) Outcome { return k.fchownat(atFDCWD, c.Args[0], 0) }

func sysLchown(k *Kernel, c *Call) Outcome {
	return k.fchownat(atFDCWD, c.Args[0], atSymlinkNoFollow)
}

func sysFchownat(k *Kernel, c *Call) Outcome {
	return k.fchownat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[4]))
}

func sysFchown(k *Kernel, c *Call) Outcome {
	_, e := k.file(fdArg(c.Args[0]))
	return result(0, e)
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
	}
	if err := os.Truncate(l.host, size); err != nil {
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
	if err := hf.Truncate(size); err != nil {
		return fail(hostErrno(err))
	}
	k.touch(host)
	return ok(0)
}

// sysFsync serves fsync, fdatasync and syncfs: the host file system is
// not asked to flush, which the guest cannot observe.
func sysFsync(k *Kernel, c *Call) Outcome {
	_, e := k.file(fdArg(c.Args[0]))
	return result(0, e)
}

func sysSync(*Kernel, *Call) Outcome { return ok(0) }

func sysUmask(k *Kernel, c *Call) Outcome {
	old := k.umask
	k.umask = uint32(c.Args[0]) & 0o777
	return ok(uint64(old))
}

// utimensTarget finds the host file of a utimensat call.
func (k *Kernel) utimensTarget(dirfd int, pathAddr uint64, flags uint32) (loc, Errno) {
	p := ""
	if pathAddr != 0 {
		var e Errno
		if p, e = k.readPath(pathAddr); e != 0 {
			return loc{}, e
		}
	}
	if pathAddr == 0 || (p == "" && flags&atEmptyPath != 0) {
		if dirfd == atFDCWD {
			return k.walk(k.cwd, true)
		}
		f, e := k.file(dirfd)
		if e != 0 {
			return loc{}, e
		}
		switch o := f.ops.(type) {
		case *hostFile:
			fi, err := o.f.Stat()
			if err != nil {
				return loc{}, hostErrno(err)
			}
			return loc{guest: f.guest, host: o.host, fi: fi}, 0
		case *hostDir:
			return o.l, 0
		case *pathFile:
			return o.l, 0
		}
		return loc{}, ePERM
	}
	return k.lookup(dirfd, p, flags&atSymlinkNoFollow == 0)
}

func sysUtimensat(k *Kernel, c *Call) Outcome {
	dirfd, pathAddr, timesAddr, flags := fdArg(c.Args[0]), c.Args[1], c.Args[2], uint32(c.Args[3])
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	now := k.realtime(k.now)
	at, mt := now, now
	omitA, omitM := false, false
	if timesAddr != 0 {
		var ts [2]timespec
		for i := range ts {
			t, e := k.getTimespec(timesAddr + 16*uint64(i))
			if e != 0 {
				return fail(e)
			}
			ts[i] = t
		}
		parse := func(t timespec, dst *int64, omit *bool) Errno {
			switch t.nsec {
			case utimeNow:
			case utimeOmit:
				*omit = true
			default:
				if t.nsec < 0 || t.nsec >= 1e9 {
					return eINVAL
				}
				*dst = t.ns()
			}
			return 0
		}
		if e := parse(ts[0], &at, &omitA); e != 0 {
			return fail(e)
		}
		if e := parse(ts[1], &mt, &omitM); e != 0 {
			return fail(e)
		}
	}
	l, e := k.utimensTarget(dirfd, pathAddr, flags)
	if e != 0 {
		return fail(e)
	}
	switch {
	case l.syn != nil:
		return fail(ePERM)
	case !l.exists():
		return fail(eNOENT)
	}
	if omitA && omitM {
		return ok(0)
	}
	st := k.hostStat(l.fi, l.host)
	if omitA {
		at = st.atime
	}
	if omitM {
		mt = st.mtime
	}
	k.times[l.host] = fileTimes{atime: at, mtime: mt, ctime: now}
	if !l.isSymlink() {
		if err := os.Chtimes(l.host, time.Unix(0, at), time.Unix(0, mt)); err != nil {
			return fail(hostErrno(err))
		}
	}
	return ok(0)
}

func sysFadvise64(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if _, isPipe := f.ops.(*pipeEnd); isPipe {
		return fail(eSPIPE)
	}
	if c.Args[3] > 5 {
		return fail(eINVAL)
	}
	return ok(0)
}

func sysFlock(k *Kernel, c *Call) Outcome {
	_, e := k.file(fdArg(c.Args[0]))
	return result(0, e)
}
