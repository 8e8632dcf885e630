//go:build !unix

package syscalls

import "os"

// mksock: this host has no socket nodes; an empty file stands for one.
func mksock(host string, perm uint32) error {
	f, err := os.OpenFile(host, os.O_RDWR|os.O_CREATE|os.O_EXCL, os.FileMode(perm))
	if err != nil {
		return err
	}
	return f.Close()
}
