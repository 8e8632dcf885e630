package syscalls

import (
	"io/fs"
	"syscall"
)

// hostAtime is a host file's access time in ns.
func hostAtime(fi fs.FileInfo) int64 {
	st := fi.Sys().(*syscall.Stat_t)
	return st.Atim.Sec*1e9 + st.Atim.Nsec
}
