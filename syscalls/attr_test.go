package syscalls

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const (
	nrChmod    = 90
	nrFchmod   = 91
	nrChown    = 92
	nrFchown   = 93
	nrLchown   = 94
	nrLink     = 86
	nrFchownat = 260
)

// statOf returns what stat says of guest path p: mode, uid, gid and the
// three times in ns.
type statView struct {
	mode, uid, gid      uint32
	atime, mtime, ctime int64
}

func (h *harness) statBuf(st uint64) statView {
	ts := func(off uint64) int64 { return int64(h.u64(st+off))*1e9 + int64(h.u64(st+off+8)) }
	b := h.peek(st, statSize)
	return statView{mode: le.Uint32(b[24:]), uid: le.Uint32(b[28:]), gid: le.Uint32(b[32:]),
		atime: ts(72), mtime: ts(88), ctime: ts(104)}
}

func (h *harness) stat(p string) statView {
	h.t.Helper()
	st := h.alloc(statSize)
	h.must(nrLstat, h.str(p), st)
	return h.statBuf(st)
}

func hostOwner(t *testing.T, p string) (uint32, uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

// An unprivileged guest may change nothing but the group of its own files,
// and only to its own group; -1 keeps an id; a no-op succeeds.
func TestChownUnprivileged(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	writeFile(t, f, "x")
	u0, g0 := hostOwner(t, f)
	// The host user's files are the guest's (uid 1000, gid 1000).
	h := newHarness(t, Config{Cwd: dir, Uid: 1000, Gid: 1000})
	const none = uint64(noID)
	h.must(nrChown, h.str("f"), 1000, 1000)
	h.must(nrChown, h.str("f"), none, none)
	h.must(nrChown, h.str("f"), none, 1000)
	h.errno(ePERM, nrChown, h.str("f"), 1001, none)
	h.errno(ePERM, nrChown, h.str("f"), none, 1001)
	h.errno(ePERM, nrChown, h.str("f"), 0, 0)
	h.errno(eNOENT, nrChown, h.str("missing"), none, none)
	h.must(nrSymlink, h.str("f"), h.str("lnk"))
	h.must(nrLchown, h.str("lnk"), 1000, none)
	h.errno(ePERM, nrLchown, h.str("lnk"), 7, none)
	h.errno(eINVAL, nrFchownat, atFDCWDArg, h.str("f"), none, none, 0x4)
	fd := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFchown, fd, 1000, 1000)
	h.errno(ePERM, nrFchown, fd, none, 1001)
	h.errno(eBADF, nrFchown, 99, none, none)
	pfd := h.must(nrOpen, h.str("f"), oPATH)
	h.errno(eBADF, nrFchown, pfd, none, none)
	h.must(nrFchownat, pfd, h.str(""), none, 1000, atEmptyPath)
	// Pipes belong to the guest; they cannot be given away.
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	rfd := uint64(le.Uint32(h.peek(fds, 4)))
	h.must(nrFchown, rfd, 1000, 1000)
	h.errno(ePERM, nrFchown, rfd, 1001, none)
	if u, g := hostOwner(t, f); u != u0 || g != g0 {
		t.Errorf("host owner changed to %d:%d", u, g)
	}

	// chown drops the set-user-ID bit of a non-directory, even when no id
	// changes; the set-group-ID bit too when group-executable.
	if err := os.Chmod(f, 0o6755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	h.now = 5_000
	h.must(nrChown, h.str("f"), none, none)
	v := h.stat("f")
	if v.mode&0o7777 != 0o755 {
		t.Errorf("mode after chown = %o, want 755", v.mode&0o7777)
	}
	if fi, _ := os.Stat(f); fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("host mode %v keeps the set-ID bits", fi.Mode())
	}
	if v.ctime != h.k.realtime(h.now) {
		t.Errorf("ctime %d, want the virtual time of the chown %d", v.ctime, h.k.realtime(h.now))
	}

	// Someone else's file: nothing may change, but -1 -1 is allowed.
	if os.Getuid() == 0 {
		g := filepath.Join(dir, "g")
		writeFile(t, g, "y")
		if err := os.Chown(g, 2000, 2000); err != nil {
			t.Fatal(err)
		}
		h.must(nrChown, h.str("g"), none, none)
		h.errno(ePERM, nrChown, h.str("g"), none, 1000)
		h.errno(ePERM, nrChown, h.str("g"), 2000, none)
	}
}

// Root may give files away; the change reaches the host file.
func TestChownRoot(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	writeFile(t, f, "x")
	h := newHarness(t, Config{Cwd: dir, Uid: 0, Gid: 0})
	if os.Getuid() != 0 {
		// The host refuses what Linux would allow root: the guest learns it.
		h.errno(ePERM, nrChown, h.str("f"), 2000, 3000)
		return
	}
	h.must(nrChown, h.str("f"), 2000, 3000)
	if u, g := hostOwner(t, f); u != 2000 || g != 3000 {
		t.Errorf("host owner %d:%d, want 2000:3000", u, g)
	}
	if v := h.stat("f"); v.uid != 2000 || v.gid != 3000 {
		t.Errorf("guest sees %d:%d", v.uid, v.gid)
	}
	h.must(nrChown, h.str("f"), 0, 0)
	if u, g := hostOwner(t, f); u != 0 || g != 0 {
		t.Errorf("host owner %d:%d after chown back", u, g)
	}
}

func TestChmodRules(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir, Uid: 1000, Gid: 1000})
	fd := h.must(nrOpen, h.str("f"), oRDONLY)
	h.must(nrFchmod, fd, 0o640)
	if v := h.stat("f"); v.mode&0o7777 != 0o640 {
		t.Errorf("mode %o", v.mode&0o7777)
	}
	pfd := h.must(nrOpen, h.str("f"), oPATH)
	h.errno(eBADF, nrFchmod, pfd, 0o600)
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	// A pipe's mode cannot be changed here (Linux would): not silently.
	h.errno(ePERM, nrFchmod, uint64(le.Uint32(h.peek(fds, 4))), 0o600)
	h.errno(ePERM, nrChmod, h.str("/dev/null"), 0o600)
	if os.Getuid() == 0 {
		writeFile(t, filepath.Join(dir, "g"), "y")
		if err := os.Chown(filepath.Join(dir, "g"), 2000, 2000); err != nil {
			t.Fatal(err)
		}
		h.errno(ePERM, nrChmod, h.str("g"), 0o600)
	}
}

// File times come from the virtual clock for what the guest does, per
// inode, with Linux's choice of which times each call sets.
func TestFileTimes(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	writeFile(t, old, "x")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(old, t0, t0); err != nil {
		t.Fatal(err)
	}
	const epoch = 1_767_225_600_000_000_000
	h := newHarness(t, Config{Cwd: dir, EpochNanos: epoch})
	vt := func(ns int64) int64 { return epoch + ns }
	check := func(what string, v statView, a, m, c int64) {
		t.Helper()
		if v.atime != a || v.mtime != m || v.ctime != c {
			t.Errorf("%s: times a=%d m=%d c=%d, want a=%d m=%d c=%d", what, v.atime, v.mtime, v.ctime, a, m, c)
		}
	}
	// Untouched host files show their modification time.
	T0 := t0.UnixNano()
	check("host file", h.stat("old"), T0, T0, T0)

	h.now = 1e9
	fd := h.must(nrOpenat, atFDCWDArg, h.str("new"), oRDWR|oCREAT, 0o644)
	check("created", h.stat("new"), vt(1e9), vt(1e9), vt(1e9))
	if v := h.stat("."); v.mtime != vt(1e9) || v.ctime != vt(1e9) {
		t.Errorf("directory times m=%d c=%d after a create", v.mtime, v.ctime)
	}

	h.now = 2e9
	ts := h.alloc(32)
	h.poke(ts, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 100), 5), 0), utimeOmit))
	h.must(nrUtimensat, atFDCWDArg, h.str("new"), ts, 0)
	check("utimensat", h.stat("new"), 100e9+5, vt(1e9), vt(2e9))
	if fi, _ := os.Stat(filepath.Join(dir, "new")); hostAtime(fi) >= 0 && hostAtime(fi) != 100e9+5 {
		t.Errorf("explicit atime not applied to the host file: %d", hostAtime(fi))
	}

	// A write sets mtime and ctime, never atime.
	h.now = 3e9
	h.must(nrWrite, fd, h.str("data"), 4)
	check("written", h.stat("new"), 100e9+5, vt(3e9), vt(3e9))

	// Times belong to the inode: a hard link shares them.
	h.now = 4e9
	h.must(nrLink, h.str("new"), h.str("new2"))
	check("linked", h.stat("new2"), 100e9+5, vt(3e9), vt(4e9))
	h.now = 5e9
	fd2 := h.must(nrOpen, h.str("new2"), oWRONLY)
	h.must(nrWrite, fd2, h.str("more"), 4)
	check("written through the other name", h.stat("new"), 100e9+5, vt(5e9), vt(5e9))

	// chmod, chown and rename change ctime only.
	h.now = 6e9
	h.must(nrChmod, h.str("old"), 0o600)
	check("chmod", h.stat("old"), T0, T0, vt(6e9))
	h.now = 7e9
	h.must(nrChown, h.str("old"), uint64(noID), uint64(noID))
	check("chown", h.stat("old"), T0, T0, vt(7e9))
	h.now = 8e9
	h.must(nrRename, h.str("old"), h.str("old2"))
	check("rename", h.stat("old2"), T0, T0, vt(8e9))

	// Every stat call says the same.
	st := h.alloc(statSize)
	want := h.stat("new")
	h.must(nrFstat, fd, st)
	if got := h.statBuf(st); got != want {
		t.Errorf("fstat %+v, lstat %+v", got, want)
	}
	h.must(nrStat, h.str("new2"), st)
	if got := h.statBuf(st); got != want {
		t.Errorf("stat %+v, lstat %+v", got, want)
	}
	h.must(nrNewfstatat, atFDCWDArg, h.str("new"), st, 0)
	if got := h.statBuf(st); got != want {
		t.Errorf("newfstatat %+v, lstat %+v", got, want)
	}
	sx := h.alloc(statxSize)
	h.must(nrStatx, atFDCWDArg, h.str("new"), 0, statxBasicStats, sx)
	b := h.peek(sx, statxSize)
	xt := func(off int) int64 { return int64(le.Uint64(b[off:]))*1e9 + int64(le.Uint32(b[off+8:])) }
	if a, c, m := xt(64), xt(96), xt(112); a != want.atime || m != want.mtime || c != want.ctime {
		t.Errorf("statx a=%d m=%d c=%d, stat %+v", a, m, c, want)
	}

	// Removing one name of two changes the inode's ctime.
	h.now = 9e9
	h.must(nrUnlink, h.str("new2"))
	check("unlinked other name", h.stat("new"), 100e9+5, vt(5e9), vt(9e9))

	// UTIME_NOW: the guest sees its clock, the host file gets the host's.
	h.now = 10e9
	before := time.Now().Add(-time.Second)
	h.must(nrUtimensat, atFDCWDArg, h.str("new"), 0, 0)
	check("touched", h.stat("new"), vt(10e9), vt(10e9), vt(10e9))
	if fi, _ := os.Stat(filepath.Join(dir, "new")); fi.ModTime().Before(before) {
		t.Errorf("host mtime %v after UTIME_NOW, want the host's now", fi.ModTime())
	}

	// A file without a name any more is still stamped (tmpfile's way).
	h.now = 11e9
	tfd := h.must(nrOpenat, atFDCWDArg, h.str("tmp"), oRDWR|oCREAT, 0o600)
	h.must(nrUnlink, h.str("tmp"))
	h.now = 12e9
	h.must(nrWrite, tfd, h.str("x"), 1)
	h.must(nrFstat, tfd, st)
	if v := h.statBuf(st); v.mtime != vt(12e9) {
		t.Errorf("unlinked file written at %d: mtime %d", vt(12e9), v.mtime)
	}
}
