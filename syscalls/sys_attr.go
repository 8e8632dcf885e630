package syscalls

import (
	"io/fs"
	"os"
	"slices"
)

// Owners and modes: chmod, fchmod, fchmodat, fchmodat2, chown, fchown,
// lchown, fchownat.
//
// The guest's identity is Config.Uid and Config.Gid (its only group), which
// getuid, getgid and getgroups report; permissions follow Linux's rules for
// that identity (uid 0 has CAP_CHOWN and CAP_FOWNER), and what they permit is
// applied to the host file, whose owner the host may still refuse to change
// (then EPERM, as a Linux without the privilege would say). Pipes, the
// standard streams and the emulated files of /proc and /dev keep their mode
// and owner: a request that would change them fails with EPERM.

// attrTarget is the file whose mode or owner a call changes.
type attrTarget struct {
	st   statInfo
	host string      // host path of a host file ("" for anything else)
	fi   fs.FileInfo // its host attributes
	f    *os.File    // the open host file, for calls on a descriptor
	link bool        // a symbolic link (lchown)
	// guest is the file's guest path, for the overlay ("" when unknown).
	guest string
}

// locTarget is the file at l.
func (k *Kernel) locTarget(l loc) (attrTarget, Errno) {
	if !l.exists() {
		return attrTarget{}, eNOENT
	}
	if l.syn != nil && l.syn.kind == synFD {
		return k.fileTarget(l.syn.fd) // /proc/self/fd/N of a pipe or stream
	}
	st, e := k.statLoc(l)
	if e != 0 || l.syn != nil {
		return attrTarget{st: st}, e
	}
	return attrTarget{st: st, host: l.host, fi: l.fi, link: l.isSymlink(), guest: l.guest}, 0
}

// fileTarget is the open file f.
func (k *Kernel) fileTarget(f *openFile) (attrTarget, Errno) {
	var l loc
	switch o := f.ops.(type) {
	case *hostFile:
		fi, err := o.f.Stat()
		if err != nil {
			return attrTarget{}, hostErrno(err)
		}
		return attrTarget{st: k.hostStat(fi, o.host), host: o.host, fi: fi, f: o.f, guest: f.guest}, 0
	case *hostDir:
		l = o.l
	case *pathFile:
		l = o.l
	default:
		st, e := f.ops.stat(k)
		return attrTarget{st: st}, e
	}
	if l.syn == nil {
		// The attributes seen at open may have changed since.
		fi, err := os.Lstat(l.host)
		if err != nil {
			return attrTarget{}, hostErrno(err)
		}
		l.fi = fi
	}
	return k.locTarget(l)
}

// pathTarget resolves the target of a *at() call: dirfd+path, or dirfd
// itself with AT_EMPTY_PATH and an empty path.
func (k *Kernel) pathTarget(dirfd int, pathAddr uint64, flags uint32) (attrTarget, Errno) {
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return attrTarget{}, e
	}
	if p == "" {
		if flags&atEmptyPath == 0 {
			return attrTarget{}, eNOENT
		}
		if dirfd != atFDCWD {
			f, e := k.file(dirfd)
			if e != 0 {
				return attrTarget{}, e
			}
			return k.fileTarget(f)
		}
		p = "."
	}
	l, e := k.lookup(dirfd, p, flags&atSymlinkNoFollow == 0)
	if e != 0 {
		return attrTarget{}, e
	}
	return k.locTarget(l)
}

// fdTarget is the target of fchmod and fchown, which refuse O_PATH
// descriptors.
func (k *Kernel) fdTarget(fd int) (attrTarget, Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return attrTarget{}, e
	}
	if f.flags&oPATH != 0 {
		return attrTarget{}, eBADF
	}
	return k.fileTarget(f)
}

func (t attrTarget) hostChmod(mode uint32) error {
	if t.f != nil {
		return t.f.Chmod(goMode(mode))
	}
	return os.Chmod(t.host, goMode(mode))
}

func (t attrTarget) hostChown(uid, gid int) error {
	if t.f != nil {
		return t.f.Chown(uid, gid)
	}
	return os.Lchown(t.host, uid, gid)
}

// inGroup reports whether gid is one of the guest's groups.
func (k *Kernel) inGroup(gid uint32) bool {
	return gid == uint32(k.gids.fs) || slices.Contains(k.groups, gid)
}

// chmod sets the permission bits of t, with Linux's checks (chmod_common,
// setattr_prepare): only the owner or root may, and a set-group-ID bit for a
// group the caller is not in is dropped.
func (k *Kernel) chmod(t attrTarget, mode uint32) Errno {
	root := k.uids.fs == 0
	switch {
	case t.link:
		return eOPNOTSUPP
	case !root && t.st.uid != uint32(k.uids.fs):
		return ePERM
	case t.host == "":
		return ePERM // see the file comment
	}
	mode &= 0o7777
	if !root && !k.inGroup(t.st.gid) {
		mode &^= sISGID
	}
	if e := k.ovAttr(&t); e != 0 {
		return e
	}
	if err := t.hostChmod(mode); err != nil {
		return hostErrno(err)
	}
	k.stamp(t.fi, t.host, stampC)
	k.attrEvent(t.host, t.guest)
	return 0
}

func (k *Kernel) fchmodat(dirfd int, pathAddr uint64, mode, flags uint32) Outcome {
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	t, e := k.pathTarget(dirfd, pathAddr, flags)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.chmod(t, mode))
}

func sysChmod(k *Kernel, c *Call) Outcome {
	return k.fchmodat(atFDCWD, c.Args[0], uint32(c.Args[1]), 0)
}

func sysFchmod(k *Kernel, c *Call) Outcome {
	t, e := k.fdTarget(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	return result(0, k.chmod(t, uint32(c.Args[1])))
}

func sysFchmodat(k *Kernel, c *Call) Outcome {
	return k.fchmodat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), 0)
}

func sysFchmodat2(k *Kernel, c *Call) Outcome {
	return k.fchmodat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), uint32(c.Args[3]))
}

// noID is the uid or gid -1 of chown: leave it as it is.
const noID = ^uint32(0)

// hostID converts a guest uid or gid to the host's: the guest's own id is
// the host user's (see hostStat), others are the same number.
func hostID(id uint32, guest, host int) int {
	if id == uint32(guest) {
		return host
	}
	return int(id)
}

// chown changes the owner and group of t with Linux's rules (chown_common,
// chown_ok, chgrp_ok): without CAP_CHOWN (uid 0) a process may set the owner
// only to what it is and the group only to what it is or to one of its
// groups, and only on its own files. Changing anything of a non-directory
// drops its set-user-ID bit, and its set-group-ID bit when group-executable
// (or, without CAP_FSETID, when the file's group is not one of the
// caller's). ctime changes even when nothing else does.
func (k *Kernel) chown(t attrTarget, uid, gid uint32) Errno {
	root := k.uids.fs == 0
	owner := t.st.uid == uint32(k.uids.fs)
	if uid != noID && !root && !(owner && uid == t.st.uid) {
		return ePERM
	}
	if gid != noID && !root && !(owner && (gid == t.st.gid || k.inGroup(gid))) {
		return ePERM
	}
	mode := t.st.mode & 0o7777
	newMode := mode
	if t.st.mode&sIFMT != sIFDIR {
		newMode &^= sISUID
		if mode&sISGID != 0 && (mode&0o010 != 0 || !root && !k.inGroup(t.st.gid)) {
			newMode &^= sISGID
		}
	}
	if newMode != mode && !root && !owner {
		return ePERM // dropping the bits is a mode change
	}
	hu, hg := -1, -1
	if uid != noID && uid != t.st.uid {
		hu = hostID(uid, k.cfg.Uid, k.hostUid)
	}
	if gid != noID && gid != t.st.gid {
		hg = hostID(gid, k.cfg.Gid, k.hostGid)
	}
	if t.host == "" {
		if hu != -1 || hg != -1 {
			return ePERM // see the file comment
		}
		return 0
	}
	if hu != -1 || hg != -1 || newMode != mode && !t.link {
		if e := k.ovAttr(&t); e != 0 {
			return e
		}
	}
	if hu != -1 || hg != -1 {
		if err := t.hostChown(hu, hg); err != nil {
			return hostErrno(err)
		}
	}
	if newMode != mode && !t.link {
		if err := t.hostChmod(newMode); err != nil {
			return hostErrno(err)
		}
	}
	k.stamp(t.fi, t.host, stampC)
	k.attrEvent(t.host, t.guest)
	return 0
}

func (k *Kernel) fchownat(dirfd int, pathAddr uint64, uid, gid, flags uint32) Outcome {
	if flags&^(atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	t, e := k.pathTarget(dirfd, pathAddr, flags)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.chown(t, uid, gid))
}

func sysChown(k *Kernel, c *Call) Outcome {
	return k.fchownat(atFDCWD, c.Args[0], uint32(c.Args[1]), uint32(c.Args[2]), 0)
}

func sysLchown(k *Kernel, c *Call) Outcome {
	return k.fchownat(atFDCWD, c.Args[0], uint32(c.Args[1]), uint32(c.Args[2]), atSymlinkNoFollow)
}

func sysFchownat(k *Kernel, c *Call) Outcome {
	return k.fchownat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), uint32(c.Args[3]), uint32(c.Args[4]))
}

func sysFchown(k *Kernel, c *Call) Outcome {
	t, e := k.fdTarget(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	return result(0, k.chown(t, uint32(c.Args[1]), uint32(c.Args[2])))
}
