package syscalls

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"emuprof/internal/fstree"
)

// overlayTree writes the starting tree of the overlay tests into dir.
func overlayTree(t *testing.T, dir string) {
	t.Helper()
	for name, data := range map[string]string{
		"log.txt": "a\n", "old.txt": "old", "keep.txt": "keep", "trunc.txt": "123456",
		"gone.txt": "g", "sub/a": "A", "sub/deep/b": "B", "empty/.x": "", "keepdir/inner/f": "f",
	} {
		writeFile(t, filepath.Join(dir, name), data)
	}
	if err := os.Remove(filepath.Join(dir, "empty/.x")); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1_500_000_000, 0)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		return os.Chtimes(p, old, old)
	})
}

// treeOf describes every file under dir (fstree.Describe), with every
// regular file's modification time.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	out, err := fstree.Describe(dir, time.Now().AddDate(100, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// names parses a getdents64 buffer.
func direntNames(b []byte) []string {
	var out []string
	for len(b) >= 19 {
		reclen := int(le.Uint16(b[16:]))
		name := b[19:reclen]
		if i := strings.IndexByte(string(name), 0); i >= 0 {
			name = name[:i]
		}
		out = append(out, string(name))
		b = b[reclen:]
	}
	slices.Sort(out)
	return out
}

// overlayScenario changes the tree in the working directory the ways
// programs do, and returns what the guest saw.
func overlayScenario(h *harness) []string {
	var obs []string
	note := func(format string, a ...any) { obs = append(obs, fmt.Sprintf(format, a...)) }
	stat := func(p string) []byte {
		buf := h.alloc(statSize)
		if r := h.ret(nrNewfstatat, atFDCWDArg, h.str(p), buf, 0); r < 0 {
			note("stat %s: %v", p, Errno(-r))
			return nil
		}
		return h.peek(buf, statSize)
	}
	read := func(p string) {
		fd := h.ret(nrOpenat, atFDCWDArg, h.str(p), oRDONLY)
		if fd < 0 {
			note("open %s: %v", p, Errno(-fd))
			return
		}
		buf := h.alloc(100)
		n := h.must(nrRead, uint64(fd), buf, 100)
		note("%s: %q", p, h.peek(buf, int(n)))
		h.must(nrClose, uint64(fd))
	}
	write := func(p string, flags uint32, data string) {
		fd := h.must(nrOpenat, atFDCWDArg, h.str(p), uint64(flags), 0o644)
		h.must(nrWrite, fd, h.str(data), uint64(len(data)))
		h.must(nrClose, fd)
	}
	list := func(p string) {
		fd := h.must(nrOpenat, atFDCWDArg, h.str(p), oRDONLY|oDIRECTORY)
		buf := h.alloc(4096)
		n := h.must(nrGetdents64, fd, buf, 4096)
		note("ls %s: %v", p, direntNames(h.peek(buf, int(n))))
		h.must(nrClose, fd)
	}
	before := stat("log.txt")
	write("log.txt", oWRONLY|oAPPEND, "b\n")
	after := stat("log.txt")
	note("log.txt keeps dev and inode: %v", string(before[:16]) == string(after[:16]))
	write("new.txt", oWRONLY|oCREAT|oEXCL, "new")
	h.must(nrUnlink, h.str("old.txt"))
	read("old.txt")
	write("old.txt", oWRONLY|oCREAT|oTRUNC, "recreated")
	h.must(nrMkdir, h.str("d2"), 0o750)
	write("d2/f", oWRONLY|oCREAT, "f")
	h.must(nrRename, h.str("sub"), h.str("sub2"))
	h.must(nrRmdir, h.str("empty"))
	h.must(nrMkdir, h.str("empty"), 0o755)
	write("empty/x", oWRONLY|oCREAT, "x")
	h.must(nrChmod, h.str("keep.txt"), 0o600)
	h.must(nrSymlink, h.str("new.txt"), h.str("link"))
	h.must(nrTruncate, h.str("trunc.txt"), 3)
	h.must(nrUnlink, h.str("gone.txt"))
	ts := h.alloc(32)
	h.poke(ts, make([]byte, 32))
	for i := range 2 {
		h.poke(ts+16*uint64(i), le.AppendUint64(nil, 1_600_000_000))
	}
	h.must(nrUtimensat, atFDCWDArg, h.str("new.txt"), ts, 0)
	h.must(nrLink, h.str("new.txt"), h.str("hard.txt"))
	write("keepdir/inner/f", oWRONLY|oTRUNC, "changed") // its directories do not change
	for _, p := range []string{"log.txt", "old.txt", "trunc.txt", "link", "sub2/deep/b", "sub/a", "gone.txt", "empty/x", "hard.txt"} {
		read(p)
	}
	for _, p := range []string{".", "sub2", "sub2/deep", "empty", "d2"} {
		list(p)
	}
	note("rmdir sub2: %v", Errno(-h.ret(nrRmdir, h.str("sub2"))))
	st := stat("hard.txt")
	note("hard.txt nlink %d mtime %d", le.Uint64(st[16:]), le.Uint64(st[88:]))
	st = stat("sub2")
	note("sub2 nlink %d", le.Uint64(st[16:]))
	return obs
}

// TestOverlayMatchesNative runs the same changes natively and in an
// overlay: the guest sees the same, the real tree is untouched until the
// overlay is committed, and then equals the native run's.
func TestOverlayMatchesNative(t *testing.T) {
	native, lower := t.TempDir(), t.TempDir()
	overlayTree(t, native)
	overlayTree(t, lower)
	start := treeOf(t, lower)

	want := overlayScenario(newHarness(t, Config{Cwd: native}))

	ov, err := NewOverlay(t.TempDir(), "/")
	if err != nil {
		t.Fatal(err)
	}
	got := overlayScenario(newHarness(t, Config{Cwd: lower, Overlay: ov}))
	if !slices.Equal(got, want) {
		t.Errorf("in the overlay the guest saw\n%s\nnatively\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if now := treeOf(t, lower); !slices.Equal(now, start) {
		t.Fatalf("the overlay changed the real tree:\n%s", strings.Join(now, "\n"))
	}
	if err := ov.Save(); err != nil {
		t.Fatal(err)
	}
	if err := CommitOverlay(ov.Dir()); err != nil {
		t.Fatal(err)
	}
	nt, ct := treeOf(t, native), treeOf(t, lower)
	// Files the guest wrote have the host's time of the write: compare
	// everything else.
	strip := func(s []string) []string {
		out := make([]string, len(s))
		for i, l := range s {
			if !strings.HasPrefix(l, "new.txt") && !strings.HasPrefix(l, "hard.txt") {
				l, _, _ = strings.Cut(l, " mtime ")
			}
			out[i] = l
		}
		return out
	}
	if !slices.Equal(strip(ct), strip(nt)) {
		t.Errorf("committed tree\n%s\nnative tree\n%s", strings.Join(ct, "\n"), strings.Join(nt, "\n"))
	}
	for _, p := range []string{"keep.txt", "sub2/a", "sub2/deep/b", "keepdir", "keepdir/inner"} {
		fi, err := os.Stat(filepath.Join(lower, p))
		if err != nil || fi.ModTime().Unix() != 1_500_000_000 {
			t.Errorf("%s: the commit changed its time (%v)", p, err)
		}
	}
	a, _ := os.Stat(filepath.Join(lower, "new.txt"))
	b, _ := os.Stat(filepath.Join(lower, "hard.txt"))
	if a == nil || b == nil || !os.SameFile(a, b) {
		t.Errorf("new.txt and hard.txt are not one file after the commit")
	}
}

// TestOverlayCopiesSeeTheSame: two overlays over one tree, used one after
// the other as concurrent copies would, see the same files and numbers, and
// neither sees the other's changes.
func TestOverlayCopiesSeeTheSame(t *testing.T) {
	lower := t.TempDir()
	overlayTree(t, lower)
	var runs [2][]string
	for i := range runs {
		ov, err := NewOverlay(t.TempDir(), "/")
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, Config{Cwd: lower, Overlay: ov})
		runs[i] = overlayScenario(h)
		// What the guest saw of inode numbers, for the files it created.
		for _, p := range []string{"new.txt", "d2", "d2/f", "log.txt"} {
			buf := h.alloc(statSize)
			h.must(nrNewfstatat, atFDCWDArg, h.str(p), buf, 0)
			runs[i] = append(runs[i], fmt.Sprintf("%s dev %x ino %x", p, le.Uint64(h.peek(buf, 8)), le.Uint64(h.peek(buf+8, 8))))
		}
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("copy 1 saw\n%s\ncopy 0\n%s", strings.Join(runs[1], "\n"), strings.Join(runs[0], "\n"))
	}
}
