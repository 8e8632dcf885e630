package syscalls

import (
	"errors"
	"io/fs"
	"syscall"
)

// hostErrnos translates the host's error numbers to Linux ones. The host's
// syscall.Errno constants are only used to recognise errors that package os
// returned (their values differ between Linux and macOS); the guest always
// gets the Linux value on the right. A table rather than a switch, because
// some names share a value on one host and not on another.
var hostErrnos = [...]struct {
	host  syscall.Errno
	guest Errno
}{
	{syscall.EPERM, ePERM},
	{syscall.ENOENT, eNOENT},
	{syscall.EINTR, eINTR},
	{syscall.EIO, eIO},
	{syscall.ENXIO, eNXIO},
	{syscall.EBADF, eBADF},
	{syscall.EAGAIN, eAGAIN},
	{syscall.ENOMEM, eNOMEM},
	{syscall.EACCES, eACCES},
	{syscall.EFAULT, eFAULT},
	{syscall.EBUSY, eBUSY},
	{syscall.EEXIST, eEXIST},
	{syscall.EXDEV, eXDEV},
	{syscall.ENODEV, eNODEV},
	{syscall.ENOTDIR, eNOTDIR},
	{syscall.EISDIR, eISDIR},
	{syscall.EINVAL, eINVAL},
	{syscall.ENFILE, eNFILE},
	{syscall.EMFILE, eMFILE},
	{syscall.ENOTTY, eNOTTY},
	{syscall.ETXTBSY, eTXTBSY},
	{syscall.EFBIG, eFBIG},
	{syscall.ENOSPC, eNOSPC},
	{syscall.ESPIPE, eSPIPE},
	{syscall.EROFS, eROFS},
	{syscall.EMLINK, eMLINK},
	{syscall.EPIPE, ePIPE},
	{syscall.ERANGE, eRANGE},
	{syscall.ENAMETOOLONG, eNAMETOOLONG},
	{syscall.ENOSYS, eNOSYS},
	{syscall.ENOTEMPTY, eNOTEMPTY},
	{syscall.ELOOP, eLOOP},
	{syscall.EOVERFLOW, eOVERFLOW},
	{syscall.EOPNOTSUPP, eOPNOTSUPP},
	{syscall.ENOTSUP, eOPNOTSUPP},
	{syscall.EDQUOT, eDQUOT},
	{syscall.ESTALE, eSTALE},
}

// hostErrno translates an error from package os into a Linux errno.
func hostErrno(err error) Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		for _, h := range hostErrnos {
			if h.host == en {
				return h.guest
			}
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return eNOENT
	case errors.Is(err, fs.ErrExist):
		return eEXIST
	case errors.Is(err, fs.ErrPermission):
		return eACCES
	case errors.Is(err, fs.ErrInvalid):
		return eINVAL
	}
	return eIO
}
