package syscalls

import (
	"hash/fnv"
	"io/fs"
)

// statInfo is the kernel's view of a file's attributes, rendered as struct
// stat or struct statx.
type statInfo struct {
	dev, ino, nlink     uint64
	mode, uid, gid      uint32
	rdev                uint64
	size                int64
	blksize, blocks     int64
	atime, mtime, ctime int64 // ns since 1970
}

// Sizes of the guest structures.
const (
	statSize  = 144
	statxSize = 256
)

// makedev encodes a device number like glibc's makedev (and the kernel's
// new_encode_dev for 64-bit dev_t).
func makedev(major, minor uint64) uint64 {
	return minor&0xff | (major&0xfff)<<8 | (minor&^0xff)<<12 | (major&^0xfff)<<32
}

func devMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff | (dev>>32)&^0xfff) }
func devMinor(dev uint64) uint32 { return uint32(dev&0xff | (dev>>12)&^0xff) }

// Fixed device numbers (encoded like makedev) of the emulated file systems.
const (
	devRootFS = 8<<8 | 1 // 8:1, host files when the host does not say
	devProc   = 22       // 0:22
	devSys    = 21       // 0:21
	devDevFS  = 5        // 0:5
	devPipeFS = 14       // 0:14
	devPTS    = 25       // 0:25
)

// encodeStat renders st as the x86-64 struct stat.
func encodeStat(st *statInfo) []byte {
	b := make([]byte, statSize)
	le.PutUint64(b[0:], st.dev)
	le.PutUint64(b[8:], st.ino)
	le.PutUint64(b[16:], st.nlink)
	le.PutUint32(b[24:], st.mode)
	le.PutUint32(b[28:], st.uid)
	le.PutUint32(b[32:], st.gid)
	le.PutUint64(b[40:], st.rdev)
	le.PutUint64(b[48:], uint64(st.size))
	le.PutUint64(b[56:], uint64(st.blksize))
	le.PutUint64(b[64:], uint64(st.blocks))
	for i, t := range []int64{st.atime, st.mtime, st.ctime} {
		ts := nsToTimespec(t)
		le.PutUint64(b[72+16*i:], uint64(ts.sec))
		le.PutUint64(b[80+16*i:], uint64(ts.nsec))
	}
	return b
}

// statxBasicStats is STATX_BASIC_STATS: every field but btime.
const statxBasicStats = 0x7ff

// encodeStatx renders st as struct statx.
func encodeStatx(st *statInfo) []byte {
	b := make([]byte, statxSize)
	le.PutUint32(b[0:], statxBasicStats)
	le.PutUint32(b[4:], uint32(st.blksize))
	le.PutUint32(b[16:], uint32(st.nlink))
	le.PutUint32(b[20:], st.uid)
	le.PutUint32(b[24:], st.gid)
	le.PutUint16(b[28:], uint16(st.mode))
	le.PutUint64(b[32:], st.ino)
	le.PutUint64(b[40:], uint64(st.size))
	le.PutUint64(b[48:], uint64(st.blocks))
	// atime at 64, btime at 80 (not provided), ctime at 96, mtime at 112.
	for _, f := range []struct {
		off int
		t   int64
	}{{64, st.atime}, {96, st.ctime}, {112, st.mtime}} {
		ts := nsToTimespec(f.t)
		le.PutUint64(b[f.off:], uint64(ts.sec))
		le.PutUint32(b[f.off+8:], uint32(ts.nsec))
	}
	le.PutUint32(b[128:], devMajor(st.rdev))
	le.PutUint32(b[132:], devMinor(st.rdev))
	le.PutUint32(b[136:], devMajor(st.dev))
	le.PutUint32(b[140:], devMinor(st.dev))
	return b
}

// linuxMode converts a Go file mode to st_mode.
func linuxMode(m fs.FileMode) uint32 {
	r := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		r |= sISUID
	}
	if m&fs.ModeSetgid != 0 {
		r |= sISGID
	}
	if m&fs.ModeSticky != 0 {
		r |= sISVTX
	}
	switch {
	case m&fs.ModeDir != 0:
		r |= sIFDIR
	case m&fs.ModeSymlink != 0:
		r |= sIFLNK
	case m&fs.ModeNamedPipe != 0:
		r |= sIFIFO
	case m&fs.ModeSocket != 0:
		r |= sIFSOCK
	case m&fs.ModeCharDevice != 0:
		r |= sIFCHR
	case m&fs.ModeDevice != 0:
		r |= sIFBLK
	default:
		r |= sIFREG
	}
	return r
}

// goMode converts permission bits of a guest mode to a Go file mode.
func goMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	if mode&sISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&sISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&sISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// direntType returns d_type for a file mode.
func direntType(mode uint32) uint8 {
	switch mode & sIFMT {
	case sIFDIR:
		return dtDir
	case sIFREG:
		return dtReg
	case sIFLNK:
		return dtLnk
	case sIFIFO:
		return dtFIFO
	case sIFSOCK:
		return dtSock
	case sIFCHR:
		return dtChr
	case sIFBLK:
		return dtBlk
	}
	return dtUnknown
}

// pathIno is the inode number of a file the host does not number: a hash
// of its path.
func pathIno(p string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p))
	return h.Sum64()>>1 | 1
}

// hostStat converts host file information to the guest's view. Files owned
// by the host user appear owned by the guest user. Times come from the
// modification time (atime and ctime too, since the host's change with
// every access), unless the guest changed them during the run (see
// filetimes.go); sizes in blocks are computed from the size.
func (k *Kernel) hostStat(fi fs.FileInfo, host string) statInfo {
	st := statInfo{
		mode:    linuxMode(fi.Mode()),
		size:    fi.Size(),
		blksize: 4096,
		uid:     uint32(k.cfg.Uid),
		gid:     uint32(k.cfg.Gid),
	}
	if id, ok := hostIDs(fi); ok {
		st.dev, st.ino, st.nlink, st.rdev = id.dev, id.ino, id.nlink, id.rdev
		if k.ov != nil && k.ov.isUpper(host) {
			st.dev, st.ino = k.ov.guestIDs(host, id)
			if fi.IsDir() {
				st.nlink = k.ov.dirLinks(host)
			}
		}
		if int(id.uid) != k.hostUid {
			st.uid = id.uid
		}
		if int(id.gid) != k.hostGid {
			st.gid = id.gid
		}
	} else {
		st.dev, st.ino, st.nlink = devRootFS, pathIno(host), 1
		if fi.IsDir() {
			st.nlink = 2
		}
	}
	if st.mode&sIFMT == sIFREG || st.mode&sIFMT == sIFDIR {
		st.blocks = (st.size + 4095) / 4096 * 8
	}
	t := k.timesOf(fi, host)
	st.atime, st.mtime, st.ctime = t.atime, t.mtime, t.ctime
	return st
}

// hostStatIDs is what some hosts say about a file beyond fs.FileInfo.
type hostStatIDs struct {
	dev, ino, nlink uint64
	uid, gid        uint32
	rdev            uint64
}

// dirent is one directory entry.
type dirent struct {
	name string
	ino  uint64
	typ  uint8
}
