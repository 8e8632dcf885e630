package syscalls

import (
	"os"
	"strings"
)

// File attributes: stat, fstat, lstat, newfstatat, statx, access,
// faccessat, faccessat2, readlink, readlinkat, statfs, fstatfs.

// statAt resolves the target of a *stat call: dirfd+path, or dirfd itself
// with AT_EMPTY_PATH and an empty path.
func (k *Kernel) statAt(dirfd int, pathAddr uint64, flags uint32) (statInfo, Errno) {
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return statInfo{}, e
	}
	if p == "" {
		if flags&atEmptyPath == 0 {
			return statInfo{}, eNOENT
		}
		if dirfd == atFDCWD {
			p = "."
		} else {
			f, e := k.file(dirfd)
			if e != 0 {
				return statInfo{}, e
			}
			return f.ops.stat(k)
		}
	}
	l, e := k.lookup(dirfd, p, flags&atSymlinkNoFollow == 0)
	if e != 0 {
		return statInfo{}, e
	}
	return k.statLoc(l)
}

// putStat stores st as struct stat.
func (k *Kernel) putStat(addr uint64, st statInfo, e Errno) Outcome {
	if e != 0 {
		return fail(e)
	}
	return result(0, k.copyOut(addr, encodeStat(&st)))
}

func sysStat(k *Kernel, c *Call) Outcome {
	st, e := k.statAt(atFDCWD, c.Args[0], 0)
	return k.putStat(c.Args[1], st, e)
}

func sysLstat(k *Kernel, c *Call) Outcome {
	st, e := k.statAt(atFDCWD, c.Args[0], atSymlinkNoFollow)
	return k.putStat(c.Args[1], st, e)
}

func sysFstat(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	st, e := f.ops.stat(k)
	return k.putStat(c.Args[1], st, e)
}

func sysNewfstatat(k *Kernel, c *Call) Outcome {
	flags := uint32(c.Args[3])
	if flags&^(atSymlinkNoFollow|atEmptyPath|atNoAutomount) != 0 {
		return fail(eINVAL)
	}
	st, e := k.statAt(fdArg(c.Args[0]), c.Args[1], flags)
	return k.putStat(c.Args[2], st, e)
}

func sysStatx(k *Kernel, c *Call) Outcome {
	flags, mask := uint32(c.Args[2]), uint32(c.Args[3])
	if flags&^(atSymlinkNoFollow|atEmptyPath|atNoAutomount|atStatxSyncMask) != 0 ||
		flags&atStatxSyncMask == atStatxSyncMask || mask&0x80000000 != 0 {
		return fail(eINVAL)
	}
	st, e := k.statAt(fdArg(c.Args[0]), c.Args[1], flags)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.copyOut(c.Args[4], encodeStatx(&st)))
}

// access checks mode (R_OK|W_OK|X_OK) against st for the guest's ids.
func (k *Kernel) access(st statInfo, mode uint32) Errno {
	if mode == fOK {
		return 0
	}
	// access(2) checks the real ids.
	if k.uids.real == 0 {
		if mode&xOK != 0 && st.mode&sIFMT != sIFDIR && st.mode&0o111 == 0 {
			return eACCES
		}
		return 0
	}
	perm := st.mode & 0o7
	switch {
	case st.uid == uint32(k.uids.real):
		perm = st.mode >> 6 & 0o7
	case st.gid == uint32(k.gids.real):
		perm = st.mode >> 3 & 0o7
	}
	if mode&^perm != 0 {
		return eACCES
	}
	return 0
}

func (k *Kernel) faccessat(dirfd int, pathAddr uint64, mode, flags uint32) Outcome {
	if mode&^(rOK|wOK|xOK) != 0 || flags&^(atEAccess|atSymlinkNoFollow|atEmptyPath) != 0 {
		return fail(eINVAL)
	}
	st, e := k.statAt(dirfd, pathAddr, flags)
	if e != 0 {
		return fail(e)
	}
	return result(0, k.access(st, mode))
}

func sysAccess(k *Kernel, c *Call) Outcome {
	return k.faccessat(atFDCWD, c.Args[0], uint32(c.Args[1]), 0)
}

func sysFaccessat(k *Kernel, c *Call) Outcome {
	return k.faccessat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), 0)
}

func sysFaccessat2(k *Kernel, c *Call) Outcome {
	return k.faccessat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), uint32(c.Args[3]))
}

func (k *Kernel) readlinkat(dirfd int, pathAddr, buf uint64, size int) Outcome {
	if size <= 0 {
		return fail(eINVAL)
	}
	l, e := k.lookupArg(dirfd, pathAddr, false)
	if e == eNOENT {
		// An empty path names dirfd's own file (LOOKUP_EMPTY): a
		// symbolic link opened with O_PATH|O_NOFOLLOW is read; other
		// files stay ENOENT.
		if p, pe := k.readPath(pathAddr); pe == 0 && p == "" && dirfd != atFDCWD {
			if f, fe := k.file(dirfd); fe == 0 {
				if pf, isPath := f.ops.(*pathFile); isPath && (pf.l.syn != nil && pf.l.syn.kind == synLink || pf.l.syn == nil && pf.l.isSymlink()) {
					l, e = pf.l, 0
				}
			}
		}
	}
	if e != 0 {
		return fail(e)
	}
	var target string
	switch {
	case l.syn != nil:
		if l.syn.kind != synLink {
			return fail(eINVAL)
		}
		target = l.syn.target
	case !l.exists():
		return fail(eNOENT)
	case !l.isSymlink():
		return fail(eINVAL)
	default:
		t, err := os.Readlink(l.host)
		if err != nil {
			return fail(hostErrno(err))
		}
		target = t
	}
	n := min(len(target), size)
	return result(uint64(n), k.copyOut(buf, []byte(target[:n])))
}

func sysReadlink(k *Kernel, c *Call) Outcome {
	return k.readlinkat(atFDCWD, c.Args[0], c.Args[1], int(int32(c.Args[2])))
}

func sysReadlinkat(k *Kernel, c *Call) Outcome {
	return k.readlinkat(fdArg(c.Args[0]), c.Args[1], c.Args[2], int(int32(c.Args[3])))
}

// File system magic numbers for statfs.
const (
	ext4Magic  = 0xef53
	procMagic  = 0x9fa0
	sysfsMagic = 0x62656572
	tmpfsMagic = 0x01021994
)

// putStatfs stores a struct statfs for the file system holding guest path p.
func (k *Kernel) putStatfs(addr uint64, p string) Outcome {
	b := make([]byte, 120)
	magic, blocks, free, files, ffree := uint64(ext4Magic), uint64(25<<20), uint64(12<<20), uint64(6<<20), uint64(5<<20)
	switch {
	case p == "/proc" || strings.HasPrefix(p, "/proc/"):
		magic, blocks, free, files, ffree = procMagic, 0, 0, 0, 0
	case p == "/sys" || strings.HasPrefix(p, "/sys/"):
		magic, blocks, free, files, ffree = sysfsMagic, 0, 0, 0, 0
	case p == "/dev" || strings.HasPrefix(p, "/dev/"):
		magic, blocks, free = tmpfsMagic, 0, 0
	}
	le.PutUint64(b[0:], magic)   // f_type
	le.PutUint64(b[8:], 4096)    // f_bsize
	le.PutUint64(b[16:], blocks) // f_blocks
	le.PutUint64(b[24:], free)   // f_bfree
	le.PutUint64(b[32:], free)   // f_bavail
	le.PutUint64(b[40:], files)  // f_files
	le.PutUint64(b[48:], ffree)  // f_ffree
	le.PutUint32(b[56:], 0x4d50) // f_fsid
	le.PutUint32(b[60:], 0x7265)
	le.PutUint64(b[64:], 255)  // f_namelen
	le.PutUint64(b[72:], 4096) // f_frsize
	le.PutUint64(b[80:], 0x20) // f_flags: ST_RELATIME
	return result(0, k.copyOut(addr, b))
}

func sysStatfs(k *Kernel, c *Call) Outcome {
	l, e := k.lookupArg(atFDCWD, c.Args[0], true)
	if e != 0 {
		return fail(e)
	}
	if !l.exists() {
		return fail(eNOENT)
	}
	return k.putStatfs(c.Args[1], l.guest)
}

func sysFstatfs(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	return k.putStatfs(c.Args[1], f.guest)
}
