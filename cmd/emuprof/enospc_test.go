package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 31.7: on a full disk each profile is written on its own: four
// outputs that get ENOSPC (links to a copy of /dev/full) are each reported
// in a line, every other file is still written, and the program's exit
// status stays visible (exit3's 3; hello's 0 is said, and emuprof exits 2).
func TestEveryProfileWrittenOnENOSPC(t *testing.T) {
	work := t.TempDir()
	full := filepath.Join(work, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prog string
		code int
	}{{"hello", 2}, {"exit3", 3}} {
		dir := filepath.Join(work, tc.prog)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{tc.prog + "_1000_4_rms.aprof", tc.prog + "_trms.json", tc.prog + "_parallel.pb.gz", "report.html"} {
			if err := os.Symlink(full, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		r := run(t, nil, work, emuprofBin, "profile", "--out", dir, "--", guestBin(t, "glibc-static", tc.prog))
		noGoTrace(t, tc.prog, r.stderr)
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %s", tc.prog, r.code, tc.code, r.stderr)
		}
		for _, what := range []string{"writing the trms profile: ", "writing the parallel profile: ", "writing the HTML report: "} {
			if !strings.Contains(r.stderr, "emuprof: "+what) {
				t.Errorf("%s: stderr does not say %q:\n%s", tc.prog, what, r.stderr)
			}
		}
		if n := strings.Count(r.stderr, "no space left on device\n"); n != 4 || strings.Count(r.stderr, "emuprof: writing the ") != 4 {
			t.Errorf("%s: %d ENOSPC lines, want 4, each its own:\n%s", tc.prog, n, r.stderr)
		}
		if tc.code == 2 && !strings.Contains(r.stderr, "(the program exited with status 0)") {
			t.Errorf("%s: the program's status is not said:\n%s", tc.prog, r.stderr)
		}
		for _, name := range []string{tc.prog + "_1000_4_drms.aprof", tc.prog + "_paths.json", tc.prog + "_parallel.json", tc.prog + "_run.json"} {
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s not written after the failures (%v)", tc.prog, name, err)
			}
		}
	}
}

// Issue 31.7 and 25.8: `emuprof report DIR` says which section it could not
// draw (a profile the run wrote is gone) on stderr and on the page, and
// names the path it cannot read.
func TestReportSaysWhatIsMissing(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "out")
	if r := run(t, nil, work, emuprofBin, "profile", "--out", dir, "--", guestBin(t, "glibc-static", "hello")); r.code != 0 {
		t.Fatalf("profile: exit %d: %s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "hello_paths.json")); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, work, emuprofBin, "report", dir)
	want := "No paths section: the paths profile of hello is empty or missing here."
	if r.code != 0 || !strings.Contains(r.stderr, "emuprof: warning: report: "+want+"\n") {
		t.Errorf("report: exit %d, stderr %q; want the warning %q", r.code, r.stderr, want)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(page), want) {
		t.Errorf("report.html does not say %q (%v)", want, err)
	}
	none := filepath.Join(work, "none")
	r = run(t, nil, work, emuprofBin, "report", none)
	if r.code != 2 || r.stderr != "emuprof: report: "+none+": no such file or directory\n" {
		t.Errorf("report of a missing directory: exit %d, stderr %q", r.code, r.stderr)
	}
}

// The same within causal's files: profile.coz refused (ENOSPC), the JSON
// still written.
func TestCausalFilesWrittenOnENOSPC(t *testing.T) {
	work := t.TempDir()
	full := filepath.Join(work, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(full, filepath.Join(dir, "profile.coz")); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, work, emuprofBin, "causal", "--progress", "round_done", "--out", dir, "--", guestBin(t, "glibc-static", "coz_rounds"), "100")
	if r.code != 2 || strings.Count(r.stderr, "emuprof: writing the causal profile: ") != 1 || !strings.Contains(r.stderr, "profile.coz: no space left on device\n") {
		t.Errorf("exit %d, stderr %q; want exit 2 and the ENOSPC of profile.coz", r.code, r.stderr)
	}
	if st, err := os.Stat(filepath.Join(dir, "coz_rounds_causal.json")); err != nil || st.Size() == 0 {
		t.Errorf("the causal JSON was not written after profile.coz failed (%v)", err)
	}
}
