package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyGuest copies a test guest into dir, so that a guest that could write
// the file it runs damages only the copy.
func copyGuest(t *testing.T, variant, name, dir string) string {
	t.Helper()
	b, err := os.ReadFile(guestBin(t, variant, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunningProgramIsNotWritable: a running program cannot be opened for
// writing or truncated (O_TRUNC, truncate(2)) through its path, a hard
// link, /proc/self/exe or a link made through it, in a child too
// (ETXTBSY), as natively, and its file stays as it was.
func TestRunningProgramIsNotWritable(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			exe := copyGuest(t, v, "textbusy", dir)
			before, _ := os.ReadFile(exe)
			out := compare(t, nil, dir, "./textbusy")
			for _, call := range []string{"open /proc/self/exe O_WRONLY", "open /proc/self/exe O_RDONLY|O_TRUNC", "truncate self"} {
				if l := fmt.Sprintf("%-40s -1 ETXTBSY\n", call); !strings.Contains(out.stdout, l) {
					t.Errorf("stdout %q: want %q", out.stdout, l)
				}
			}
			if after, _ := os.ReadFile(exe); !bytes.Equal(before, after) {
				t.Errorf("the running program's file changed: %d bytes of %d", len(after), len(before))
			}
		})
	}
}

// TestExeOutsideSysrootIsUntouchable: under --sysroot, the program (outside
// it) is reachable through /proc/self/exe only, and as a file of another,
// read-only file system: no writes, no hard link planted inside the
// sysroot, no change of mode.
func TestExeOutsideSysrootIsUntouchable(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	exe := copyGuest(t, "glibc-static", "textbusy", dir)
	before, _ := os.ReadFile(exe)
	out := run(t, nil, root, emuprofBin, "run", "--sysroot", root, "--", exe, "sysroot")
	want := strings.Join([]string{
		"open /proc/self/exe O_WRONLY             -1 ETXTBSY",
		"linkat /proc/self/exe FOLLOW             -1 EXDEV",
		"chmod /proc/self/exe                     -1 EROFS",
		"truncate /proc/self/exe                  -1 ETXTBSY",
		"open /proc/self/exe O_RDONLY             ok",
	}, "\n") + "\n"
	if out.code != 0 || out.stdout != want {
		t.Errorf("exit %d, stdout\n%s\nwant\n%s(stderr %s)", out.code, out.stdout, want, out.stderr)
	}
	after, _ := os.ReadFile(exe)
	if fi, err := os.Stat(exe); err != nil || fi.Mode().Perm() != 0o755 || !bytes.Equal(before, after) {
		t.Errorf("the program outside the sysroot changed: %v, %d bytes of %d", fi.Mode(), len(after), len(before))
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("the sysroot holds %v, want nothing", ents)
	}
}
