package main

// The guest's own executable (issue 31.4): through /proc/self/exe it can
// be hard-linked (natively, and without --sysroot) but not written or
// truncated (ETXTBSY); under --sysroot an executable from outside the
// sysroot cannot be linked into it (EXDEV). The program is a copy in a
// temp dir: we run as root.

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestProcSelfExeEscapes(t *testing.T) {
	src, err := os.ReadFile(guestBin(t, "glibc-static", "procexe"))
	if err != nil {
		t.Fatal(err)
	}
	dir, root := t.TempDir(), t.TempDir()
	prog := filepath.Join(dir, "procexe")
	if err := os.WriteFile(prog, src, 0o755); err != nil {
		t.Fatal(err)
	}
	busy := "open(/proc/self/exe, O_WRONLY) = -1 ETXTBSY\n" +
		"open(/proc/self/exe, O_RDONLY|O_TRUNC) = -1 ETXTBSY\n" +
		"truncate(/proc/self/exe) = -1 ETXTBSY\n"
	native := run(t, nil, dir, prog, filepath.Join(dir, "native-link"))
	o := run(t, nil, dir, emuprofBin, append(emuArgs(), prog, filepath.Join(dir, "emu-link"))...)
	for _, r := range []outcome{native, o} {
		if r.code != 0 || r.stdout != "linkat(/proc/self/exe, FOLLOW) = ok\n"+busy {
			t.Errorf("without --sysroot: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	e := run(t, nil, root, emuprofBin, append(emuArgs("--sysroot", root), prog, "x")...)
	if e.code != 0 || e.stdout != "linkat(/proc/self/exe, FOLLOW) = -1 EXDEV\n"+busy {
		t.Errorf("--sysroot: exit %d, stdout %q, stderr %q", e.code, e.stdout, e.stderr)
	}
	if _, err := os.Lstat(filepath.Join(root, "x")); err == nil {
		t.Error("a link to the executable appeared inside the sysroot")
	}
	if got, _ := os.ReadFile(prog); !bytes.Equal(got, src) {
		t.Error("the executable changed")
	}
}
