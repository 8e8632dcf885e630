package syscalls

import (
	"io/fs"
	"os"
	"path"
	"strings"
)

// Guest paths are resolved here, component by component, the way the Linux
// kernel walks them: symbolic links are read with os.Readlink and followed
// inside the guest's view (an absolute link target starts again at the
// sysroot, never at the host's root), "/proc", "/sys" and "/dev" are the
// emulated trees of synth.go, and the working directory is a guest path
// (the host's working directory is never used).

// maxSymlinks is the kernel's limit on links followed in one lookup.
const maxSymlinks = 40

// loc is where a guest path leads.
type loc struct {
	// guest is the resolved guest path: no symbolic links but perhaps the
	// last component when the lookup did not follow it.
	guest string
	// host is the host path of a host file ("" in the emulated trees).
	host string
	// fi is the host's Lstat of host; nil when the file does not exist (the
	// last component of a path may be missing: open(O_CREAT), mkdir...).
	fi fs.FileInfo
	// syn is the emulated node, for paths in the emulated trees.
	syn *synthNode
	// tmpfile: an unnamed O_TMPFILE file (linkat's source), host its
	// /proc/self/fd path.
	tmpfile bool
}

func (l loc) exists() bool { return l.syn != nil || l.fi != nil }

func (l loc) isDir() bool {
	if l.syn != nil {
		return l.syn.kind == synDir
	}
	return l.fi != nil && l.fi.IsDir()
}

func (l loc) isSymlink() bool {
	if l.syn != nil {
		return l.syn.kind == synLink
	}
	return l.fi != nil && l.fi.Mode()&fs.ModeSymlink != 0
}

// stat returns the attributes of an existing loc.
func (k *Kernel) statLoc(l loc) (statInfo, Errno) {
	switch {
	case l.syn != nil:
		return k.synthStat(l.syn)
	case l.fi != nil:
		return k.hostStat(l.fi, l.host), 0
	}
	return statInfo{}, eNOENT
}

// dirBase returns the guest path that relative paths of an *at() call with
// dirfd start from.
func (k *Kernel) dirBase(dirfd int) (string, Errno) {
	if dirfd == atFDCWD {
		return k.cwd, 0
	}
	f, e := k.file(dirfd)
	if e != 0 {
		return "", e
	}
	d, ok := f.ops.(dirOps)
	if !ok {
		return "", eNOTDIR
	}
	return d.location().guest, 0
}

// lookup resolves path p relative to dirfd (AT_FDCWD: the working
// directory). follow says whether a symbolic link in the last component is
// followed.
func (k *Kernel) lookup(dirfd int, p string, follow bool) (loc, Errno) {
	if p == "" {
		return loc{}, eNOENT
	}
	if p[0] != '/' {
		base, e := k.dirBase(dirfd)
		if e != 0 {
			return loc{}, e
		}
		p = base + "/" + p
	}
	return k.walk(p, follow)
}

// lookupArg reads a path argument and resolves it.
func (k *Kernel) lookupArg(dirfd int, addr uint64, follow bool) (loc, Errno) {
	p, e := k.readPath(addr)
	if e != 0 {
		return loc{}, e
	}
	return k.lookup(dirfd, p, follow)
}

// splitAt reports whether comps[i] is the last real component, and whether
// the path continues with "/" or "/." after it (the file must then be a
// directory and a link in it is followed).
func splitAt(comps []string, i int) (last, mustDir bool) {
	for _, c := range comps[i+1:] {
		if c == ".." {
			return false, false
		}
		if c != "" && c != "." {
			return false, false
		}
		mustDir = true
	}
	return true, mustDir
}

// walk resolves the absolute guest path p.
func (k *Kernel) walk(p string, follow bool) (loc, Errno) {
	comps := strings.Split(p, "/")
	cur := "/"
	var syn *synthNode
	var fi fs.FileInfo // Lstat of cur, when known
	var curHost string // cur's host path, with fi
	links := 0
	mustDir := strings.HasSuffix(p, "/")
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			cur = path.Dir(cur)
			fi = nil
			syn = nil
			if cur != "/" && isSynthPath(cur) {
				syn = k.synthAt(cur)
			}
			continue
		}
		last, md := splitAt(comps, i)
		next := path.Join(cur, c)
		if (syn != nil || cur == "/" && isSynthPath(next)) && !isShmPath(next) {
			n := k.synthAt(next)
			if n == nil {
				return loc{}, eNOENT
			}
			if n.kind == synLink && (!last || follow || md) {
				if links++; links > maxSymlinks {
					return loc{}, eLOOP
				}
				if n.hostTarget != "" && k.hostOf(n.target) != n.hostTarget {
					// The executable lies outside the sysroot.
					if !last {
						return loc{}, eNOTDIR
					}
					st, err := os.Stat(n.hostTarget)
					if err != nil {
						return loc{}, hostErrno(err)
					}
					return loc{guest: n.target, host: n.hostTarget, fi: st}, 0
				}
				if n.fd != nil {
					// A descriptor without a path: the link leads to it.
					if !last {
						return loc{}, eNOTDIR
					}
					return loc{guest: next, syn: &synthNode{path: next, kind: synFD, fd: n.fd}}, 0
				}
				comps = append(strings.Split(n.target, "/"), comps[i+1:]...)
				i = -1
				if strings.HasPrefix(n.target, "/") {
					cur, syn = "/", nil
				}
				continue
			}
			if !last && n.kind != synDir {
				return loc{}, eNOTDIR
			}
			cur, syn, fi = next, n, nil
			continue
		}
		h, st, err := k.lstatGuest(next)
		if err != nil {
			e := hostErrno(err)
			if e == eNOENT && last {
				return loc{guest: next, host: h}, 0
			}
			return loc{}, e
		}
		if st.Mode()&fs.ModeSymlink != 0 && (!last || follow || md) {
			if links++; links > maxSymlinks {
				return loc{}, eLOOP
			}
			target, err := os.Readlink(h)
			if err != nil {
				return loc{}, hostErrno(err)
			}
			if target == "" {
				return loc{}, eNOENT
			}
			comps = append(strings.Split(target, "/"), comps[i+1:]...)
			i = -1
			if strings.HasPrefix(target, "/") {
				cur = "/"
			}
			fi = nil
			continue
		}
		if !last && !st.IsDir() {
			return loc{}, eNOTDIR
		}
		cur, fi, curHost, syn = next, st, h, nil // syn: /dev/shm's parent
	}
	if syn != nil {
		if mustDir && syn.kind != synDir {
			return loc{}, eNOTDIR
		}
		return loc{guest: cur, syn: syn}, 0
	}
	h := curHost
	if fi == nil {
		var st fs.FileInfo
		var err error
		h, st, err = k.lstatGuest(cur)
		if err != nil {
			return loc{}, hostErrno(err)
		}
		fi = st
	}
	if mustDir && !fi.IsDir() {
		return loc{}, eNOTDIR
	}
	return loc{guest: cur, host: h, fi: fi}, 0
}

// lstatGuest returns the host path of the resolved guest path g (in the
// overlay, if the run has one: overlay.go) and its Lstat.
func (k *Kernel) lstatGuest(g string) (string, fs.FileInfo, error) {
	if isShmPath(g) {
		h := k.shmHost(g)
		fi, err := os.Lstat(h)
		return h, fi, err
	}
	if k.ov != nil {
		return k.ov.lstat(g)
	}
	h := k.hostOf(g)
	fi, err := os.Lstat(h)
	return h, fi, err
}

// hostPath returns the host path of the resolved guest path g.
func (k *Kernel) hostPath(g string) string {
	if isShmPath(g) {
		return k.shmHost(g)
	}
	if k.ov != nil {
		return k.ov.hostPath(g)
	}
	return k.hostOf(g)
}
