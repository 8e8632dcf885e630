package syscalls

import (
	"os"
	"path/filepath"
	"strings"
)

// Running executables cannot be written (Linux's deny_write_access): while
// a process of the run executes a file, as its program or its ELF
// interpreter, opening that file for writing, truncating it or writing it
// through any name or hard link fails with ETXTBSY. One registry serves the
// processes of a run (Fork shares it), as the inode's count is one.

// textBusy counts the processes executing each file, by host identity.
type textBusy struct {
	files []textFile
}

type textFile struct {
	fi   os.FileInfo
	refs int
}

func (t *textBusy) add(fi os.FileInfo) {
	for i := range t.files {
		if os.SameFile(t.files[i].fi, fi) {
			t.files[i].refs++
			return
		}
	}
	t.files = append(t.files, textFile{fi: fi, refs: 1})
}

func (t *textBusy) drop(fi os.FileInfo) {
	for i := range t.files {
		if os.SameFile(t.files[i].fi, fi) {
			if t.files[i].refs--; t.files[i].refs == 0 {
				t.files = append(t.files[:i], t.files[i+1:]...)
			}
			return
		}
	}
}

// busy reports whether a process of the run executes the file fi.
func (t *textBusy) busy(fi os.FileInfo) bool {
	if fi == nil {
		return false
	}
	for _, f := range t.files {
		if os.SameFile(f.fi, fi) {
			return true
		}
	}
	return false
}

// SetText records the host files this process executes (its program and
// its interpreter) from now on, in place of those of its previous image.
func (k *Kernel) SetText(hostPaths ...string) {
	k.dropText()
	for _, p := range hostPaths {
		if fi, err := os.Stat(p); err == nil {
			k.text = append(k.text, fi)
			k.textBusy.add(fi)
		}
	}
}

// dropText forgets this process's executables (exec, exit).
func (k *Kernel) dropText() {
	for _, fi := range k.text {
		k.textBusy.drop(fi)
	}
	k.text = nil
}

// forkText gives child c the parent's executables: it runs them too.
func (k *Kernel) forkText(c *Kernel) {
	c.text = append([]os.FileInfo(nil), k.text...)
	for _, fi := range c.text {
		k.textBusy.add(fi)
	}
}

// outsideRoot reports whether the host file lies outside the sysroot: the
// guest reaches such a file only through /proc/self/exe, and it behaves as
// a file of another, read-only mount (no links to it, no changes of it).
func (k *Kernel) outsideRoot(host string) bool {
	if d := k.shm.dir; d != "" && strings.HasPrefix(host, d+string(filepath.Separator)) {
		return false // /dev/shm (shm.go)
	}
	return host != "" && k.hostOf(k.guestOfHost(host)) != filepath.Clean(host)
}
