package syscalls

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Standard streams that are host regular files (`prog < in > out 2>> log`)
// are given to the guest as those files, as Linux gives them to a child:
// fstat says regular file with the file's own device and inode (so `cat f
// >> f` and `tar cf - . > f` recognize their output), they are seekable,
// reads and writes go to the file at the position the host's descriptor
// has, which the guest's moves (the position is shared with the processes
// that gave it, and with emuprof's own messages on stderr), writes go to
// the end when the host opened it O_APPEND, and reopening /dev/stdout or
// /proc/self/fd/1 opens the file again at offset 0. A regular file is as
// deterministic as a pipe, so the "count bytes or end of file" rule of the
// other streams is not needed.
//
// The file's path, which /proc/self/fd/N shows, is found where the host
// names its standard streams (Linux: /dev/stdout is a link to the file;
// elsewhere the link has no path). Reopening goes through the host's
// descriptor, so that it is the host's file also under an overlay, and
// needs the access the host gave it.

// stdFile returns the open file for fd (0, 1 or 2) when f is a host
// regular file, nil otherwise.
func stdFile(f *os.File, fd int) *openFile {
	if f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	flags := uint32(oWRONLY)
	if fd == 0 {
		flags = oRDONLY
	}
	h := &hostFile{f: f, keep: true}
	if acc, app, ok := hostFDFlags(f); ok {
		flags, h.app = acc, app
		if app {
			flags |= oAPPEND
		}
	}
	h.acc = flags & oAccMode
	of := newOpenFile(h, flags|oLARGEFILE, "")
	of.hostPos = f
	return of
}

// stdPath returns the guest path of the standard stream f opened as of
// (stdFile), "" when the host does not name it or it lies outside the
// sysroot.
func (k *Kernel) stdPath(f *os.File) string {
	p, err := filepath.EvalSymlinks(f.Name())
	if err != nil || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
		return "" // the host does not say (macOS: /dev/stdout is a device)
	}
	fi, err := os.Stat(p)
	id, err2 := f.Stat()
	if err != nil || err2 != nil || !os.SameFile(fi, id) {
		return ""
	}
	if g := k.guestOfHost(p); k.hostOf(g) == filepath.Clean(p) {
		return g
	}
	return ""
}

// pos is the file position: the host descriptor's for a standard stream
// that is a host file (see stdFile).
func (f *openFile) pos() int64 {
	if f.hostPos != nil {
		if n, err := f.hostPos.Seek(0, io.SeekCurrent); err == nil {
			f.off = n
		}
	}
	return f.off
}

// setPos moves the file position.
func (f *openFile) setPos(n int64) {
	f.off = n
	if f.hostPos != nil {
		_, _ = f.hostPos.Seek(n, io.SeekStart)
	}
}

// reopenStd opens a standard stream that is a host file again, for
// /proc/self/fd/N: a new open file description at offset 0 with the
// flags asked for, as Linux's reopening of the file by its path. It goes
// through the host descriptor, so it needs the access the host gave it,
// and its writes append when the host's do.
func (k *Kernel) reopenStd(f *openFile, flags, keep uint32) (*openFile, Errno) {
	h := f.ops.(*hostFile)
	acc := flags & oAccMode
	if (acc != oWRONLY && h.acc == oWRONLY) || (acc != oRDONLY && h.acc == oRDONLY) {
		return nil, eACCES
	}
	if flags&oTRUNC != 0 && acc != oRDONLY {
		if err := k.truncateHost(h.f, 0); err != nil {
			return nil, hostErrno(err)
		}
		k.stampFile(h.f, h.host, stampM|stampC)
	}
	return newOpenFile(&hostFile{f: h.f, keep: true, app: h.app, acc: h.acc}, keep, f.guest), 0
}
