package main

// Profiles of a process tree (issue 9, item 3): every analysis follows the
// children, one profile per process image, named by program and pid.

import (
	"emuprof/session"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// profileFiles returns the names of the files in dir, sorted.
func profileFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

func readProcesses(t *testing.T, path string) []session.ProcessRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []session.ProcessRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// TestFollowPipeline profiles a shell pipeline: bash forks three children
// that exec seq, sort and head; each image has its own profile, the
// pre-exec ones included, and the bytes are the same every run. With
// --follow=none only the first process is profiled, and its files are the
// ones following children writes for it.
func TestFollowPipeline(t *testing.T) {
	work := t.TempDir()
	cmdline := "seq 1 100 | sort -r | head -3"
	native := run(t, nil, work, "/bin/bash", "-c", cmdline)
	profile := func(out string, extra ...string) outcome {
		args := append([]string{"trms", "--clear-env", "--env", "LC_ALL=C", "--env", "HOME=/nonexistent", "--env", "PATH=/usr/bin:/bin", "--out", out}, extra...)
		o := run(t, nil, work, emuprofBin, append(args, "--", "/bin/bash", "-c", cmdline)...)
		if o.code != 0 || o.stdout != native.stdout {
			t.Fatalf("exit %d, stdout %.300q (native %q), stderr %.500s", o.code, o.stdout, native.stdout, o.stderr)
		}
		return o
	}
	a := filepath.Join(work, "a")
	o := profile(a)
	want := []string{"bash_1000_4_drms.aprof", "bash_1000_4_rms.aprof"}
	for _, img := range []string{"bash_1001", "bash_1002", "bash_1003", "seq_1001", "sort_1002", "head_1003"} {
		pid := img[strings.IndexByte(img, '_')+1:]
		want = append(want, img+"_"+pid+"_4_drms.aprof", img+"_"+pid+"_4_rms.aprof", img+"_trms.json")
	}
	want = append(want, "bash_processes.json", "bash_run.json", "bash_trms.json", "report.html")
	slices.Sort(want)
	if got := profileFiles(t, a); !slices.Equal(got, want) {
		t.Errorf("files:\n got  %q\n want %q", got, want)
	}
	if !strings.Contains(o.stderr, "profiled 7 process images: 1000 bash, 1001 bash, 1002 bash, 1003 bash, 1001 seq, 1002 sort, 1003 head") {
		t.Errorf("stderr: %s", o.stderr)
	}
	recs := readProcesses(t, filepath.Join(a, "bash_processes.json"))
	var got []string
	for _, r := range recs {
		got = append(got, strings.Join([]string{itoa(r.Pid), itoa(r.Parent), itoa(r.Exec), filepath.Base(r.Program), strings.Join(r.Args, " "), r.Partial, itoa(len(r.Files))}, "|"))
	}
	wantRecs := []string{
		"1000|999|0|bash|/bin/bash -c " + cmdline + "||3",
		"1001|1000|0|bash|/bin/bash -c " + cmdline + "||3",
		"1002|1000|0|bash|/bin/bash -c " + cmdline + "||3",
		"1003|1000|0|bash|/bin/bash -c " + cmdline + "||3",
		"1001|1000|1|seq|seq 1 100||3",
		"1002|1000|1|sort|sort -r||3",
		"1003|1000|1|head|head -3||3",
	}
	if !slices.Equal(got, wantRecs) {
		t.Errorf("processes:\n got  %q\n want %q", got, wantRecs)
	}
	// Each image's profile is its own program's: sort's names sort's
	// code, with its command line.
	sortRep, err := os.ReadFile(filepath.Join(a, "sort_1002_1002_4_rms.aprof"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(sortRep); !strings.Contains(s, "\nf sort -r\n") || !strings.Contains(s, "\"/usr/bin/sort\"") || strings.Contains(s, "/bin/bash") {
		t.Errorf("sort's report does not describe sort alone:\n%.600s", s)
	}
	// Deterministic: a second run writes the same bytes.
	b := filepath.Join(work, "b")
	profile(b)
	for _, f := range want {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if string(x) != string(y) {
			t.Errorf("%s differs between two runs", f)
		}
	}
	// --follow=none: the first process only, the same files as above.
	n := filepath.Join(work, "none")
	profile(n, "--follow=none")
	wantNone := []string{"bash_1000_4_drms.aprof", "bash_1000_4_rms.aprof", "bash_run.json", "bash_trms.json", "report.html"}
	if got := profileFiles(t, n); !slices.Equal(got, wantNone) {
		t.Errorf("--follow=none files: %q, want %q", got, wantNone)
	}
	for _, f := range wantNone[:4] {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(n, f))
		if string(x) != string(y) {
			t.Errorf("%s: --follow=none and following children differ", f)
		}
	}
	// The report shows the tree, during the run and from the files.
	for _, dir := range []string{a, b} {
		if dir == b {
			if o := run(t, nil, work, emuprofBin, "report", b); o.code != 0 {
				t.Fatalf("report: exit %d: %s", o.code, o.stderr)
			}
		}
		page, _ := checkPage(t, filepath.Join(dir, "report.html")) // well-formed, self-contained
		for _, s := range []string{`id="processes"`, "<td>1002</td><td>1000</td><td>1</td><td>sort</td>", "<code>sort_1002_trms.json</code>"} {
			if !strings.Contains(page, s) {
				t.Errorf("%s: report.html lacks %q", dir, s)
			}
		}
	}
	if page, _ := os.ReadFile(filepath.Join(n, "report.html")); strings.Contains(string(page), `id="processes"`) {
		t.Errorf("--follow=none: report.html has a process section")
	}
}

// TestFollowForkExec profiles the procs guest: forks, a vfork child that
// execs echo (its pre-exec image is profiled too), children killed by
// signals (their profiles say so), an orphan.
func TestFollowForkExec(t *testing.T) {
	work := t.TempDir()
	prog := guestBin(t, "glibc-static", "procs")
	native := run(t, nil, work, prog)
	o := run(t, nil, work, emuprofBin, "trms", "--clear-env", "--env", "LC_ALL=C", "--out", "out", "--", prog)
	if o.code != native.code || o.stdout != native.stdout {
		t.Fatalf("exit %d (native %d), stdout %.300q, stderr %.500s", o.code, native.code, o.stdout, o.stderr)
	}
	recs := readProcesses(t, filepath.Join(work, "out", "procs_processes.json"))
	var got []string
	for _, r := range recs {
		got = append(got, strings.Join([]string{itoa(r.Pid), itoa(r.Parent), itoa(r.Exec), filepath.Base(r.Program), r.Partial}, "|"))
		for _, f := range r.Files {
			if _, err := os.Stat(filepath.Join(work, "out", f)); err != nil {
				t.Errorf("process %d: %v", r.Pid, err)
			}
		}
	}
	want := []string{"1000|999|0|procs|", "1001|1000|0|procs|", "1002|1000|0|procs|", "1003|1000|0|procs|",
		"1004|1000|0|procs|process 1004 killed by SIGSEGV", "1005|1000|0|procs|process 1005 killed by SIGABRT",
		"1006|1000|0|procs|", "1007|1000|0|procs|", "1008|1000|0|procs|", "1008|1000|1|echo|",
		"1009|1000|0|procs|", "1010|1000|0|procs|", "1011|1010|0|procs|", "1012|1000|0|procs|"}
	if !slices.Equal(got, want) {
		t.Errorf("processes:\n got  %q\n want %q", got, want)
	}
	// The killed child's report is marked partial; echo's names echo.
	if rep, _ := os.ReadFile(filepath.Join(work, "out", "procs_1004_1004_4_rms.aprof")); !strings.Contains(string(rep), "killed by SIGSEGV") {
		t.Errorf("the SIGSEGV child's report is not marked partial:\n%.500s", rep)
	}
	if rep, _ := os.ReadFile(filepath.Join(work, "out", "echo_1008_1008_4_rms.aprof")); !strings.Contains(string(rep), "\nf echo vfork exec\n") {
		t.Errorf("echo's report:\n%.500s", rep)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
