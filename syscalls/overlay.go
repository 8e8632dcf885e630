package syscalls

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Overlay is a private copy-on-write layer over the host files a run sees,
// so that several emulations of one program (the concurrent copies of
// `emuprof paths --copies K`, or a `--dry-fs` run) leave the real file
// system alone. It works like Linux's overlayfs, emulated in Go on guest
// paths:
//
//   - the lower layer is the sysroot, never written; the upper layer is a
//     private host directory holding, at the same guest paths, every file
//     the guest created or changed;
//   - a file is copied up (data, mode and times; a directory without its
//     entries) before the guest writes it, truncates it, changes its mode,
//     owner or times, links it or renames it; its parents are copied up
//     first, keeping their times (copying up is not a change the guest
//     made);
//   - a name the guest removes that exists below is remembered as a
//     whiteout, and a directory the guest creates over a whiteout, or
//     renames, is opaque: the lower entries beneath it stay hidden;
//   - lookups see the upper file when there is one, else the lower one;
//     directory listings merge the two. The guest sees a copied-up file
//     with its lower device and inode number, and a file it created with
//     a number derived from the path it was created at, so every copy sees
//     the same numbers whatever the host gives its private files.
//
// Save writes the whiteouts and opaque directories next to the upper layer;
// CommitOverlay applies a saved overlay to the real file system, which then
// holds what one native run would have left (emuprof paths --copies commits
// copy 0's overlay once every copy has finished).
//
// Known differences from a native run: a file that was open for reading
// before it was copied up keeps reading the lower version, and the real
// files a commit rewrites keep their inode, but renamed or linked files
// reach the real file system as new files.
//
// An Overlay is shared by the processes of one run, which the guest
// runtime drives one system call at a time: it has no lock.
type Overlay struct {
	dir    string // host directory of the overlay
	upper  string // dir/upper: the upper layer
	root   string // the lower layer (the sysroot)
	gone   map[string]bool
	opaque map[string]bool
	// ids maps the host inode of an upper file to the device and inode
	// number the guest sees.
	ids map[uint64][2]uint64
}

// overlayManifest is what Save writes: overlay.json in the overlay's
// directory.
type overlayManifest struct {
	Root      string   `json:"root"`
	Whiteouts []string `json:"whiteouts"`
	Opaque    []string `json:"opaque"`
}

const (
	overlayUpper        = "upper"
	overlayManifestName = "overlay.json"
)

// NewOverlay returns an empty overlay over the host directory sysroot whose
// files live in the host directory dir (created if missing, and expected
// to be empty).
func NewOverlay(dir, sysroot string) (*Overlay, error) {
	if sysroot == "" {
		sysroot = "/"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("overlay %s: %w", dir, err)
	}
	o := &Overlay{
		dir: abs, upper: filepath.Join(abs, overlayUpper), root: filepath.Clean(sysroot),
		gone: map[string]bool{}, opaque: map[string]bool{}, ids: map[uint64][2]uint64{},
	}
	if err := os.MkdirAll(o.upper, 0o700); err != nil {
		return nil, fmt.Errorf("overlay %s: %w", dir, err)
	}
	return o, nil
}

// Dir returns the overlay's host directory.
func (o *Overlay) Dir() string { return o.dir }

// Save writes the overlay's whiteouts and opaque directories to its
// directory, for CommitOverlay.
func (o *Overlay) Save() error {
	m := overlayManifest{Root: o.root, Whiteouts: sortedKeys(o.gone), Opaque: sortedKeys(o.opaque)}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.dir, overlayManifestName), b, 0o600); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (o *Overlay) upperOf(g string) string { return filepath.Join(o.upper, filepath.FromSlash(g)) }
func (o *Overlay) lowerOf(g string) string { return filepath.Join(o.root, filepath.FromSlash(g)) }

// isUpper reports whether host is a path in the upper layer.
func (o *Overlay) isUpper(host string) bool {
	return host == o.upper || strings.HasPrefix(host, o.upper+string(filepath.Separator))
}

// lowerHidden reports whether the lower file at guest path g is hidden: g
// was removed, or lies beneath a removed name or an opaque directory.
func (o *Overlay) lowerHidden(g string) bool {
	if len(o.gone) == 0 && len(o.opaque) == 0 {
		return false
	}
	if o.gone[g] {
		return true
	}
	for p := path.Dir(g); ; p = path.Dir(p) {
		if o.gone[p] || o.opaque[p] {
			return true
		}
		if p == "/" {
			return false
		}
	}
}

// lstat resolves the guest path g (whose parent is resolved): it returns
// the host path to use, the upper file's if there is one, else the lower
// one's, and its Lstat. A missing file comes with the upper path, where it
// would be created.
func (o *Overlay) lstat(g string) (string, fs.FileInfo, error) {
	if g == "/" {
		// The upper root only holds the upper files: "/" is the lower one.
		l := o.lowerOf(g)
		fi, err := os.Lstat(l)
		return l, fi, err
	}
	u := o.upperOf(g)
	if fi, err := os.Lstat(u); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return u, fi, err
	}
	if o.lowerHidden(g) {
		return u, nil, fs.ErrNotExist
	}
	l := o.lowerOf(g)
	fi, err := os.Lstat(l)
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil, err
	}
	return l, fi, err
}

// hostPath returns the host path of guest path g (upper if there is one).
func (o *Overlay) hostPath(g string) string {
	h, _, _ := o.lstat(g)
	return h
}

// keepDir runs fn, which adds an entry to the upper directory d for the
// overlay's own purposes, so that d's mode and times stay as they were
// (d may be read-only to the guest: the entry is added all the same).
func keepDir(d string, fn func() error) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return fn()
	}
	if fi.Mode().Perm()&0o300 != 0o300 {
		_ = os.Chmod(d, fi.Mode()|0o700)
		defer os.Chmod(d, fi.Mode())
	}
	err = fn()
	_ = os.Chtimes(d, time.Time{}, fi.ModTime())
	return err
}

// copyUp makes sure guest path g, which exists, is in the upper layer, with
// its data unless data is false (the guest truncates it), and returns its
// upper path. The parents are copied up first.
func (o *Overlay) copyUp(g string, data bool) (string, error) {
	u := o.upperOf(g)
	if _, err := os.Lstat(u); err == nil {
		return u, nil
	}
	if g == "/" {
		return u, os.MkdirAll(u, 0o755)
	}
	pu, err := o.copyUp(path.Dir(g), true)
	if err != nil {
		return "", err
	}
	l := o.lowerOf(g)
	fi, err := os.Lstat(l)
	if err != nil || o.lowerHidden(g) {
		if err == nil {
			err = fs.ErrNotExist
		}
		return "", err
	}
	err = keepDir(pu, func() error { return copyFile(l, u, fi, data) })
	if err != nil {
		_ = os.RemoveAll(u)
		return "", fmt.Errorf("overlay: copying up %s: %w", g, err)
	}
	if lid, ok := hostIDs(fi); ok {
		if uf, err := os.Lstat(u); err == nil {
			if uid, ok := hostIDs(uf); ok {
				o.ids[uid.ino] = [2]uint64{lid.dev, lid.ino}
			}
		}
	}
	return u, nil
}

// copyFile copies the file src, whose Lstat is fi, to the new path dst:
// its data (regular files, unless data is false), its target (symbolic
// links), its mode and its modification time; directories are created
// empty.
func copyFile(src, dst string, fi fs.FileInfo, data bool) error {
	switch m := fi.Mode(); {
	case m.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
	case m&fs.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	case m&fs.ModeNamedPipe != 0:
		if err := mkfifo(dst, 0o600); err != nil {
			return err
		}
	case m.IsRegular():
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if data {
			in, err := os.Open(src)
			if err != nil {
				out.Close()
				return err
			}
			_, err = io.Copy(out, in)
			in.Close()
			if err != nil {
				out.Close()
				return err
			}
		}
		if err := out.Close(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s: cannot copy a %v", src, m.Type())
	}
	if err := os.Chmod(dst, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	return os.Chtimes(dst, time.Time{}, fi.ModTime())
}

// copyUpTree copies up guest path g and, for a directory, everything the
// guest sees beneath it (before a rename moves it as a whole).
func (o *Overlay) copyUpTree(g string) error {
	u, err := o.copyUp(g, true)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(u)
	if err != nil || !fi.IsDir() {
		return err
	}
	names, err := o.list(g)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := o.copyUpTree(path.Join(g, n)); err != nil {
			return err
		}
	}
	return nil
}

// prepareCreate copies up the parent of guest path g, which the guest is
// about to create.
func (o *Overlay) prepareCreate(g string) error {
	if err := o.mayWrite(path.Dir(g)); err != nil {
		return err
	}
	_, err := o.copyUp(path.Dir(g), true)
	return err
}

// mayWrite refuses with EACCES, as the real file system would, a change
// of the lower file at guest path g that the host user may not write
// (its upper copy would be the host user's own, and writable).
func (o *Overlay) mayWrite(g string) error {
	if _, err := os.Lstat(o.upperOf(g)); err == nil || o.lowerHidden(g) {
		return nil
	}
	if l := o.lowerOf(g); !hostWritable(l) {
		if _, err := os.Lstat(l); err == nil {
			return fs.ErrPermission
		}
	}
	return nil
}

// created records that the guest created guest path g in the upper layer
// (dir: a directory; link: a new name of an existing file).
func (o *Overlay) created(g string, dir, link bool) {
	if o.gone[g] {
		delete(o.gone, g)
		if dir {
			o.opaque[g] = true
		}
	}
	if link {
		return
	}
	if fi, err := os.Lstat(o.upperOf(g)); err == nil {
		if id, ok := hostIDs(fi); ok {
			o.ids[id.ino] = [2]uint64{o.lowerDev(g), pathIno("overlay:" + g)}
		}
	}
}

// lowerDev is the device of the nearest existing lower ancestor of g.
func (o *Overlay) lowerDev(g string) uint64 {
	for p := path.Dir(g); ; p = path.Dir(p) {
		if fi, err := os.Lstat(o.lowerOf(p)); err == nil {
			if id, ok := hostIDs(fi); ok {
				return id.dev
			}
			return devRootFS
		}
		if p == "/" {
			return devRootFS
		}
	}
}

// removed records that the guest removed guest path g (whose upper file,
// if any, is gone): a lower file of that name is hidden from then on.
func (o *Overlay) removed(g string) {
	o.forget(g)
	if o.lowerHidden(g) {
		return
	}
	if _, err := os.Lstat(o.lowerOf(g)); err == nil {
		o.gone[g] = true
	}
}

// forget drops the whiteouts and opaque marks at and beneath g.
func (o *Overlay) forget(g string) {
	for _, m := range []map[string]bool{o.gone, o.opaque} {
		for p := range m {
			if p == g || strings.HasPrefix(p, g+"/") {
				delete(m, p)
			}
		}
	}
}

// moved records that the guest renamed a file from guest path og to ng in
// the upper layer (after copyUpTree(og)).
func (o *Overlay) moved(og, ng string, dir bool) {
	o.removed(og)
	o.forget(ng)
	if dir {
		o.opaque[ng] = true // its entries are all in the upper layer
	}
}

// list returns the names in the directory at guest path g, sorted: the
// upper directory's and the visible lower ones.
func (o *Overlay) list(g string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	uents, uerr := os.ReadDir(o.upperOf(g))
	for _, e := range uents {
		names = append(names, e.Name())
		seen[e.Name()] = true
	}
	if o.lowerHidden(g) || o.opaque[g] {
		return names, uerr
	}
	lents, lerr := os.ReadDir(o.lowerOf(g))
	if uerr != nil && lerr != nil {
		return nil, lerr
	}
	for _, e := range lents {
		n := e.Name()
		if !seen[n] && !o.gone[path.Join(g, n)] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// guestIDs returns the device and inode number the guest sees for the
// upper file host whose host ids are id.
func (o *Overlay) guestIDs(host string, id hostStatIDs) (dev, ino uint64) {
	if v, ok := o.ids[id.ino]; ok {
		return v[0], v[1]
	}
	g := o.guestOf(host)
	return o.lowerDev(g), pathIno("overlay:" + g)
}

// guestOf returns the guest path of the upper path host.
func (o *Overlay) guestOf(host string) string {
	rel, _ := filepath.Rel(o.upper, host)
	return path.Clean("/" + filepath.ToSlash(rel))
}

// dirLinks is the link count of the upper directory host as the guest sees
// it: 2 and one per subdirectory listed.
func (o *Overlay) dirLinks(host string) uint64 {
	g := o.guestOf(host)
	names, _ := o.list(g)
	n := uint64(2)
	for _, name := range names {
		if _, fi, err := o.lstat(path.Join(g, name)); err == nil && fi.IsDir() {
			n++
		}
	}
	return n
}

// CommitOverlay applies the overlay saved in the host directory dir to the
// real file system: the whiteouts and opaque directories are removed there,
// then every upper file is written at its place, with its mode and
// modification time (a regular file that exists there is rewritten in
// place, keeping its inode; files that shared an inode in the overlay are
// hard links again), and directories get their upper modification times.
func CommitOverlay(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, overlayManifestName))
	if err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	var m overlayManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("overlay %s: %w", dir, err)
	}
	real := func(g string) string { return filepath.Join(m.Root, filepath.FromSlash(g)) }
	for _, g := range append(m.Whiteouts, m.Opaque...) {
		if g == "/" {
			continue
		}
		if err := os.RemoveAll(real(g)); err != nil {
			return fmt.Errorf("overlay commit: %w", err)
		}
	}
	upper := filepath.Join(dir, overlayUpper)
	type dirTime struct {
		path, upper string
		mt          time.Time
	}
	var dirs []dirTime
	links := map[uint64]string{} // upper inode -> real path written
	err = filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(upper, p)
		if rel == "." {
			return nil // the root keeps its mode and times
		}
		dst := filepath.Join(m.Root, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		cur, cerr := os.Lstat(dst)
		if cerr == nil && (cur.Mode().Type() != fi.Mode().Type()) {
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
			cerr = fs.ErrNotExist
		}
		mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if fi.IsDir() {
			if cerr != nil {
				// New: writable until its entries are in, then its mode.
				if err := os.Mkdir(dst, 0o700); err != nil {
					return err
				}
				dirs = append(dirs, dirTime{dst, p, fi.ModTime()})
				return nil
			}
			// An existing directory (perhaps not the host user's, as
			// /tmp): its mode and times change, at the end, only if the
			// guest changed them.
			dirs = append(dirs, dirTime{dst, p, fi.ModTime()})
			return nil
		}
		if id, ok := hostIDs(fi); ok && fi.Mode().IsRegular() {
			if first, seen := links[id.ino]; seen {
				if cerr == nil {
					if err := os.Remove(dst); err != nil {
						return err
					}
				}
				return os.Link(first, dst)
			}
			links[id.ino] = dst
		}
		switch {
		case fi.Mode().IsRegular() && cerr == nil:
			if err := rewrite(p, dst); err != nil {
				return err
			}
		case cerr == nil:
			if err := os.Remove(dst); err != nil {
				return err
			}
			fallthrough
		default:
			tmp := dst + ".emuprof-overlay"
			_ = os.Remove(tmp)
			if err := copyFile(p, tmp, fi, true); err != nil {
				os.Remove(tmp)
				return err
			}
			if err := os.Rename(tmp, dst); err != nil {
				return err
			}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		if err := os.Chmod(dst, mode); err != nil {
			return err
		}
		return os.Chtimes(dst, time.Time{}, fi.ModTime())
	})
	if err != nil {
		return fmt.Errorf("overlay commit: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if fi, err := os.Lstat(d.upper); err == nil {
			mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
			if cur, err := os.Lstat(d.path); err == nil && cur.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != mode {
				if err := os.Chmod(d.path, mode); err != nil {
					return fmt.Errorf("overlay commit: %w", err)
				}
			}
		}
		if cur, err := os.Lstat(d.path); err == nil && cur.ModTime().Equal(d.mt) {
			continue
		}
		if err := os.Chtimes(d.path, time.Time{}, d.mt); err != nil && !errors.Is(err, fs.ErrPermission) {
			// A directory the host user does not own keeps the time the
			// commit's own changes gave it (as the guest's would).
			return fmt.Errorf("overlay commit: %w", err)
		}
	}
	return nil
}

// rewrite replaces the contents of the existing regular file dst with
// src's, keeping dst's inode.
func rewrite(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// The handlers that change files call these; without an overlay they do
// nothing.

// ovWrite copies the existing host file at l up before the guest changes
// it (its data too unless data is false) and returns l in the upper layer.
func (k *Kernel) ovWrite(l loc, data bool) (loc, Errno) {
	if k.ov == nil || l.syn != nil || l.host == "" || k.ov.isUpper(l.host) {
		return l, 0
	}
	if err := k.ov.mayWrite(l.guest); err != nil {
		return l, hostErrno(err)
	}
	return k.ovCopyUpData(l, data)
}

// ovCopyUp copies the existing host file at l up (a new name for it:
// link) and returns l in the upper layer.
func (k *Kernel) ovCopyUp(l loc) (loc, Errno) {
	if k.ov == nil || l.syn != nil || l.host == "" || k.ov.isUpper(l.host) {
		return l, 0
	}
	return k.ovCopyUpData(l, true)
}

// ovCopyUpData copies the host file at l up, with its data unless data is
// false, and returns l in the upper layer.
func (k *Kernel) ovCopyUpData(l loc, data bool) (loc, Errno) {
	u, err := k.ov.copyUp(l.guest, data)
	if err != nil {
		return l, hostErrno(err)
	}
	fi, err := os.Lstat(u)
	if err != nil {
		return l, hostErrno(err)
	}
	l.host, l.fi = u, fi
	return l, 0
}

// ovCreate prepares the creation of the missing file at l: its parent is
// copied up (l.host is already its upper path).
func (k *Kernel) ovCreate(l loc) Errno {
	if k.ov == nil {
		return 0
	}
	return hostErrno(k.ov.prepareCreate(l.guest))
}

// ovCreated records that the guest created the file at l (see
// Overlay.created).
func (k *Kernel) ovCreated(l loc, dir, link bool) {
	if k.ov != nil {
		k.ov.created(l.guest, dir, link)
	}
}

// ovAttr copies the host file of attribute target t up before the guest
// changes its mode, owner or times; a file outside the sysroot may not
// change (EROFS).
func (k *Kernel) ovAttr(t *attrTarget) Errno {
	if k.outsideRoot(t.host) {
		return eROFS // /proc/self/exe outside the sysroot
	}
	if k.ov == nil || t.host == "" || k.ov.isUpper(t.host) || t.guest == "" {
		return 0
	}
	u, err := k.ov.copyUp(t.guest, true)
	if err != nil {
		return hostErrno(err)
	}
	fi, err := os.Lstat(u)
	if err != nil {
		return hostErrno(err)
	}
	t.host, t.fi, t.f = u, fi, nil
	return 0
}

// ovRemove removes the file at l (for a directory: empty, as the guest
// sees it): its upper file, and a lower one by a whiteout.
func (k *Kernel) ovRemove(l loc) Errno {
	if k.ov == nil {
		return hostErrno(os.Remove(l.host))
	}
	if l.isDir() {
		names, err := k.ov.list(l.guest)
		if err != nil {
			return hostErrno(err)
		}
		if len(names) > 0 {
			return eNOTEMPTY
		}
	}
	if u := k.ov.upperOf(l.guest); u == l.host || k.ov.isUpper(l.host) {
		if err := os.Remove(u); err != nil {
			return hostErrno(err)
		}
	} else if _, err := os.Lstat(u); err == nil {
		if err := os.RemoveAll(u); err != nil {
			return hostErrno(err)
		}
	}
	k.ov.removed(l.guest)
	return 0
}

// ovRename renames ol to nl in the overlay (what could replace nl was
// removed): ol, with everything beneath it, is copied up and moved in the
// upper layer. It returns both in the upper layer.
func (k *Kernel) ovRename(ol, nl loc) (loc, loc, Errno) {
	dir := ol.isDir()
	if err := k.ov.copyUpTree(ol.guest); err != nil {
		return ol, nl, hostErrno(err)
	}
	if e := k.ovCreate(nl); e != 0 {
		return ol, nl, e
	}
	ou, nu := k.ov.upperOf(ol.guest), k.ov.upperOf(nl.guest)
	if err := os.Rename(ou, nu); err != nil {
		return ol, nl, hostErrno(err)
	}
	k.ov.moved(ol.guest, nl.guest, dir)
	ol.host, nl.host = ou, nu
	return ol, nl, 0
}
