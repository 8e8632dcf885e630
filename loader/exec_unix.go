//go:build unix

package loader

import (
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// executable applies the permission bits that concern the caller: the
// owner's when it owns the file, else the group's when it is in the
// file's group, else the others'; root needs one execute bit of any.
func executable(fi fs.FileInfo) bool {
	mode := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return mode&0o111 != 0
	}
	uid := os.Geteuid()
	switch {
	case uid == 0:
		return mode&0o111 != 0
	case uint32(uid) == st.Uid:
		return mode&0o100 != 0
	}
	groups, _ := os.Getgroups()
	if uint32(os.Getegid()) == st.Gid || slices.Contains(groups, int(st.Gid)) {
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}
