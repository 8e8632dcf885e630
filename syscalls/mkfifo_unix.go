//go:build unix

package syscalls

import "syscall"

// mkfifo creates a FIFO node on the host.
func mkfifo(host string, perm uint32) error { return syscall.Mkfifo(host, perm) }

// hostWritable reports whether the host user may write the host file at
// path (access(2) with W_OK): an overlay copies a file up only where the
// real file system would let the write happen.
func hostWritable(path string) bool { return syscall.Access(path, 2) == nil }
