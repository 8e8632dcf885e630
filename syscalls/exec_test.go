package syscalls

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExecTarget resolves execve's file as Linux does: missing files are
// ENOENT, directories and files without execute permission EACCES.
func TestExecTarget(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prog"), []byte("x"), 0o755)
	os.WriteFile(filepath.Join(dir, "text"), []byte("x"), 0o644)
	os.Symlink("prog", filepath.Join(dir, "link"))
	h := newHarness(t, Config{Sysroot: dir})
	for _, c := range []struct {
		path   string
		follow bool
		host   string
		e      Errno
	}{
		{"/prog", true, filepath.Join(dir, "prog"), 0},
		{"prog", true, filepath.Join(dir, "prog"), 0},
		{"/link", true, filepath.Join(dir, "prog"), 0},
		{"/link", false, "", eLOOP},
		{"/missing", true, "", eNOENT},
		{"/prog/x", true, "", eNOTDIR},
		{"/text", true, "", eACCES},
		{"/", true, "", eACCES},
		{"/dev/null", true, "", eACCES},
		{"", true, "", eNOENT},
	} {
		host, e := h.k.ExecTarget(atFDCWD, c.path, false, c.follow)
		if host != c.host || e != c.e {
			t.Errorf("%q follow %v: %q, %v; want %q, %v", c.path, c.follow, host, e, c.host, c.e)
		}
	}
}

// TestExec closes the close-on-exec descriptors, resets caught signals and
// keeps ignored ones.
func TestExec(t *testing.T) {
	h := newHarness(t, Config{})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, oCLOEXEC)
	h.must(nrPipe2, fds, 0)
	act := h.alloc(32)
	h.poke(act, []byte{0x34, 0x12, 0, 0, 0, 0, 0, 0}) // a handler
	h.must(nrRtSigaction, 10, act, 0, 8)
	h.poke(act, []byte{1, 0, 0, 0, 0, 0, 0, 0}) // SIG_IGN
	h.must(nrRtSigaction, 13, act, 0, 8)
	h.k.Exec(1000, "/bin/true", "true")
	for fd, open := range []bool{true, true, true, false, false, true, true} {
		if _, e := h.k.file(fd); (e == 0) != open {
			t.Errorf("fd %d open %v after exec, want %v", fd, e == 0, open)
		}
	}
	if got := h.k.sigactions[10].handler; got != sigDfl {
		t.Errorf("SIGUSR1 handler %#x after exec, want SIG_DFL", got)
	}
	if got := h.k.sigactions[13].handler; got != sigIgn {
		t.Errorf("SIGPIPE handler %#x after exec, want SIG_IGN", got)
	}
}
