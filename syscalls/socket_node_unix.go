//go:build unix

package syscalls

import "syscall"

// mksock creates the socket node a bound Unix socket's path names (mknod
// of S_IFSOCK needs no privilege). Nothing listens on it on the host: the
// guests find their socket by the node's path.
func mksock(host string, perm uint32) error {
	return syscall.Mknod(host, syscall.S_IFSOCK|perm, 0)
}
