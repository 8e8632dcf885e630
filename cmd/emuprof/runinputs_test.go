package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunInputsAreTheStatedOnes checks docs/USAGE.md's "What a run depends on":
// the host's environment reaches the guest unless --clear-env, the working
// directory's path and the input files' contents and modification times
// are inputs, and the host's atime and ctime of those files are not.
func TestRunInputsAreTheStatedOnes(t *testing.T) {
	emu := func(dir string, env []string, args ...string) (stdout, digest string) {
		t.Helper()
		cmd := exec.Command(emuprofBin, append([]string{"run", "--trace-digest"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("emuprof %v: %v\n%s", args, err, se.String())
		}
		return so.String(), se.String()
	}
	dir := t.TempDir()
	base := []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	utc, jst := append(base, "TZ=UTC"), append(base, "TZ=JST-9")

	// The environment: the host's TZ changes the output, unless --clear-env.
	hostUTC, _ := emu(dir, utc, "--", "/usr/bin/date")
	hostJST, _ := emu(dir, jst, "--", "/usr/bin/date")
	if hostUTC == hostJST {
		t.Errorf("date printed %q under TZ=UTC and TZ=JST-9: the host's environment should reach the guest", hostUTC)
	}
	a, da := emu(dir, utc, "--clear-env", "--", "/usr/bin/date")
	b, db := emu(dir, jst, "--clear-env", "--", "/usr/bin/date")
	if a != b || da != db {
		t.Errorf("--clear-env: the host's TZ still changes the run: %q %q / %q %q", a, da, b, db)
	}
	if c, _ := emu(dir, utc, "--clear-env", "--env", "TZ=JST-9", "--", "/usr/bin/date"); !strings.Contains(c, "09:00:00 JST") {
		t.Errorf("--clear-env --env TZ=JST-9: date printed %q", c)
	}

	// Files: contents and modification time are inputs; the host's atime
	// and ctime (changed by every access, by anyone) are not.
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	var outs, digests [2]string
	for i := range outs {
		d := filepath.Join(dir, string(rune('a'+i)))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, "f")
		if err := os.WriteFile(f, []byte("same bytes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, mtime.Add(time.Duration(i)*time.Hour), mtime); err != nil { // atimes differ
			t.Fatal(err)
		}
		if i == 1 {
			if err := os.Chmod(f, 0o644); err != nil { // a later ctime
				t.Fatal(err)
			}
		}
		outs[i], digests[i] = emu(d, base, "--clear-env", "--", "/usr/bin/stat", "-c", "%x %y %z %s %a", "f")
	}
	if outs[0] != outs[1] || digests[0] != digests[1] {
		t.Errorf("equal contents and mtimes, other atime and ctime: %q %q / %q %q", outs[0], digests[0], outs[1], digests[1])
	}
	f := filepath.Join(dir, "a", "f")
	if err := os.Chtimes(f, mtime, mtime.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if later, _ := emu(filepath.Join(dir, "a"), base, "--clear-env", "--", "/usr/bin/stat", "-c", "%x %y %z %s %a", "f"); later == outs[0] {
		t.Errorf("a new mtime did not change the run: %q", later)
	}

	// The working directory's path is an input, with or without --clear-env.
	pa, _ := emu(filepath.Join(dir, "a"), base, "--clear-env", "--", "/bin/sh", "-c", "pwd")
	pb, _ := emu(filepath.Join(dir, "b"), base, "--clear-env", "--", "/bin/sh", "-c", "pwd")
	if pa == pb || !strings.HasSuffix(pa, "/a\n") {
		t.Errorf("pwd printed %q and %q in two directories", pa, pb)
	}
}
