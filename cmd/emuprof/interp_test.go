package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A PT_INTERP naming a file without execute permission is refused like
// Linux's open_exec refuses it: execve fails with EACCES (sh: "Permission
// denied", status 126), and emuprof run says so in one line (issue 8.8).
func TestInterpNotExecutable(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "ei") // short: the new PT_INTERP must fit in the old one
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ld, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Fatal(err)
	}
	interp := filepath.Join(dir, "ld.so")
	if err := os.WriteFile(interp, ld, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(guestBin(t, "glibc-dynamic", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("/lib64/ld-linux-x86-64.so.2\x00")
	if bytes.Count(exe, old) != 1 || len(interp) >= len(old) {
		t.Fatalf("cannot patch PT_INTERP (%d copies, new path %q)", bytes.Count(exe, old), interp)
	}
	repl := append([]byte(interp), make([]byte, len(old)-len(interp))...)
	if err := os.WriteFile(filepath.Join(dir, "prog"), bytes.Replace(exe, old, repl, 1), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "./prog; echo status $?"
	native := run(t, nil, dir, "/bin/sh", "-c", script)
	if native.stdout != "status 126\n" || !strings.Contains(native.stderr, "Permission denied") {
		t.Fatalf("native: %q %q", native.stdout, native.stderr)
	}
	sameRun(t, "sh", native, run(t, nil, dir, emuprofBin, append(emuArgs(), "/bin/sh", "-c", script)...), true)
	e := run(t, nil, dir, emuprofBin, append(emuArgs(), "./prog")...)
	if e.code != 2 || !strings.Contains(e.stderr, "permission denied") || strings.Count(e.stderr, "\n") != 1 {
		t.Errorf("emuprof run: status %d, stderr %q", e.code, e.stderr)
	}
}
