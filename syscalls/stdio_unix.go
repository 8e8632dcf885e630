//go:build unix

package syscalls

import (
	"os"

	"golang.org/x/sys/unix"
)

// hostFDFlags returns the access mode (as O_RDONLY, O_WRONLY, O_RDWR) and
// whether O_APPEND is set, of the host descriptor f.
func hostFDFlags(f *os.File) (acc uint32, app bool, ok bool) {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return 0, false, false
	}
	switch fl & unix.O_ACCMODE {
	case unix.O_WRONLY:
		acc = oWRONLY
	case unix.O_RDWR:
		acc = oRDWR
	}
	return acc, fl&unix.O_APPEND != 0, true
}
