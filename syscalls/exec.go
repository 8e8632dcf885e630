package syscalls

import (
	"fmt"
	"path"
	"path/filepath"
)

// execve is run by the runtime (package guest), which replaces the address
// space and the registers; the kernel resolves the file and updates what it
// keeps per process (ExecTarget, Exec).

// ExecTarget resolves the file an execve or execveat names, relative to
// dirfd (AT_FDCWD: the working directory), and returns its host path or the
// errno Linux gives: ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG from the lookup,
// EACCES for a directory, a file that is not regular or one without execute
// permission. An empty path with emptyPath (AT_EMPTY_PATH) names dirfd's
// file; follow false (AT_SYMLINK_NOFOLLOW) refuses a symbolic link (ELOOP).
func (k *Kernel) ExecTarget(dirfd int, p string, emptyPath, follow bool) (string, Errno) {
	var l loc
	if p == "" {
		if !emptyPath {
			return "", eNOENT
		}
		f, e := k.file(dirfd)
		if e != 0 {
			return "", e
		}
		h, ok := f.ops.(interface{ location() loc })
		if !ok {
			return "", eACCES
		}
		l = h.location()
		if l.host != "" && l.fi == nil {
			return "", eACCES
		}
	} else {
		if len(p) >= pathMax {
			return "", eNAMETOOLONG
		}
		var e Errno
		if l, e = k.lookup(dirfd, p, follow); e != 0 {
			return "", e
		}
		if !l.exists() {
			return "", eNOENT
		}
		if l.isSymlink() {
			return "", eLOOP
		}
	}
	if l.syn != nil || l.fi == nil || !l.fi.Mode().IsRegular() {
		return "", eACCES
	}
	if l.fi.Mode()&0o111 == 0 {
		return "", eACCES
	}
	return l.host, 0
}

// ReadPath reads a NUL-terminated path argument from guest memory (EFAULT,
// ENAMETOOLONG).
func (k *Kernel) ReadPath(addr uint64) (string, Errno) { return k.readPath(addr) }

// ReadString reads a NUL-terminated string of at most max bytes from guest
// memory; a longer one fails with tooLong.
func (k *Kernel) ReadString(addr uint64, max int, tooLong Errno) (string, Errno) {
	return k.readString(addr, max, tooLong)
}

// Exec updates the kernel's state of the process for a successful execve by
// thread tid of the program at host path exe, as Linux's begin_new_exec
// does: shared file mappings are written back and dropped (the runtime
// unmaps everything next), file descriptors marked close-on-exec are
// closed, caught signals return to their default action (ignored ones stay
// ignored), the other threads are forgotten, the caller's alternate signal
// stack, clear-child-tid address and robust list are cleared, its name
// becomes the program's, locked memory is unlocked. The working directory,
// the other descriptors, the signal mask, pending signals, limits and umask
// are kept. A failure to write back a shared mapping is a warning; the
// exec goes on.
//
// comm is the name the thread takes: the base name of the path execve was
// given, as Linux's bprm->filename (a script's, not its interpreter's;
// /bin/sh's even when it links to dash).
func (k *Kernel) Exec(tid int, exe, comm string) {
	first := k.syncAll()
	for fd := range k.fds {
		if k.fds[fd].f != nil && k.fds[fd].cloexec {
			if err := k.closeFD(fd); err != nil && first == nil {
				first = err
			}
		}
	}
	for sig := range k.sigactions {
		if k.sigactions[sig].handler == sigIgn {
			k.sigactions[sig] = sigAction{handler: sigIgn}
		} else {
			k.sigactions[sig] = sigAction{}
		}
	}
	for t := range k.threads {
		if t != tid {
			delete(k.threads, t)
		}
	}
	th := k.thread(tid)
	th.altStack = [3]uint64{0, ssDisable, 0}
	th.clearChildTID, th.robustList = 0, 0
	th.restart = restartState{}
	name := comm
	if name == "" {
		name = path.Base(filepath.ToSlash(exe))
	}
	if len(name) > 15 {
		name = name[:15] // TASK_COMM_LEN - 1
	}
	th.name = name
	k.mlocked = nil
	k.undumpable = false
	k.ptimers = nil // exit_itimers; the ids go on counting
	// The saved and fs ids become the effective ones; root (real or
	// effective) is given every capability, effective if its euid is 0.
	k.uids.saved, k.uids.fs = k.uids.eff, k.uids.eff
	k.gids.saved, k.gids.fs = k.gids.eff, k.gids.eff
	k.keepCaps = false
	k.caps = initialCaps(min(k.uids.real, k.uids.eff))
	if k.uids.eff != 0 {
		k.caps.effective = 0
	}
	k.setExe(exe)
	if first != nil {
		k.warn(fmt.Sprintf("execve: %v", first))
	}
}

// setExe records the host path of the executable (/proc/self/exe).
func (k *Kernel) setExe(exe string) {
	k.cfg.ExePath = exe
	k.exeHost = exe
	if !filepath.IsAbs(k.exeHost) {
		k.exeHost = filepath.Join(k.hostOf(k.cwd), k.exeHost)
	}
	k.exeHost = filepath.Clean(k.exeHost)
	k.exeGuest = k.guestOfHost(k.exeHost)
	if k.hostOf(k.exeGuest) != k.exeHost {
		k.exeGuest = filepath.ToSlash(k.exeHost) // outside the sysroot
	}
}
