package syscalls

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// hostTmpfile makes an unnamed regular file in the host directory dir
// (O_TMPFILE, with O_EXCL when it may never be linked), and returns it with
// the host path that names it while it is open (/proc/self/fd/N, which
// linkat follows to give it a name).
func hostTmpfile(dir string, excl bool) (*os.File, string, error) {
	flags := unix.O_TMPFILE | unix.O_RDWR | unix.O_CLOEXEC
	if excl {
		flags |= unix.O_EXCL
	}
	fd, err := unix.Open(dir, flags, 0o600)
	if err != nil {
		return nil, "", &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), fmt.Sprintf("/proc/self/fd/%d", fd), nil
}

// linkTmpfile gives the unnamed file open at host path from (hostTmpfile's)
// the name to.
func linkTmpfile(from, to string) error {
	if err := unix.Linkat(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: from, New: to, Err: err}
	}
	return nil
}
