//go:build unix

package syscalls

import "syscall"

// mkfifo creates a FIFO node on the host.
func mkfifo(host string, perm uint32) error { return syscall.Mkfifo(host, perm) }
