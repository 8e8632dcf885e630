package main

// File times from the guest's point of view: what it does is stamped with
// its own clock, as Linux would stamp it; host files keep their times; times
// set explicitly reach the host file.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The filetimes guest checks each step against its own clock_gettime and
// prints the same yes/no lines as natively.
func TestFileTimesGuest(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			out := compare(t, nil, t.TempDir(), guestBin(t, v, "filetimes"))
			if strings.Contains(out.stdout, " no\n") {
				t.Errorf("a check fails under emuprof:\n%s", out.stdout)
			}
		})
	}
}

// Debian's tar and touch: an archive of old files extracts without a
// warning and with its times on the host; touch with a date sets it on the
// host, touch without one gives the host's current time (not the virtual
// clock's 2026-01-01).
func TestFileTimesOnTheHost(t *testing.T) {
	work := t.TempDir()
	src := filepath.Join(work, "src")
	old := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, n := range []string{"a", "b"} {
		p := filepath.Join(src, n)
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(src, old, old); err != nil {
		t.Fatal(err)
	}
	emu := func(args ...string) outcome {
		t.Helper()
		out := run(t, nil, work, emuprofBin, append(emuArgs(), args...)...)
		if out.code != 0 || out.stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", args, out.code, out.stderr)
		}
		return out
	}
	emu("/bin/tar", "cf", "a.tar", "src")
	if err := os.Mkdir(filepath.Join(work, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	emu("/bin/tar", "xf", "a.tar", "-C", "x")
	for _, n := range []string{"src", "src/a", "src/b"} {
		fi, err := os.Stat(filepath.Join(work, "x", n))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(old) {
			t.Errorf("extracted %s: host mtime %v, want the archive's %v", n, fi.ModTime(), old)
		}
	}
	out := emu("/bin/ls", "-l", "--time-style=full-iso", "x/src")
	if !strings.Contains(out.stdout, "2025-06-01 12:00:00.000000000 +0000 a") {
		t.Errorf("ls -l under emuprof:\n%s", out.stdout)
	}

	emu("/usr/bin/touch", "-d", "2025-03-04 05:06:07 UTC", "dated")
	if fi, err := os.Stat(filepath.Join(work, "dated")); err != nil || !fi.ModTime().Equal(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("touch -d: host file %v %v", fi, err)
	}
	start := time.Now().Add(-2 * time.Second)
	emu("/usr/bin/touch", "a.tar")
	if fi, err := os.Stat(filepath.Join(work, "a.tar")); err != nil || fi.ModTime().Before(start) {
		t.Errorf("touch: host mtime %v, want the host's current time (after %v)", fi.ModTime(), start)
	}
}
