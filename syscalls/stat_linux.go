//go:build linux

package syscalls

import (
	"io/fs"
	"syscall"
)

// hostIDs returns the device, inode, link count and owner of a host file.
func hostIDs(fi fs.FileInfo) (hostStatIDs, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return hostStatIDs{}, false
	}
	return hostStatIDs{
		dev:   uint64(st.Dev),
		ino:   uint64(st.Ino),
		nlink: uint64(st.Nlink),
		uid:   st.Uid,
		gid:   st.Gid,
		rdev:  uint64(st.Rdev),
	}, true
}
