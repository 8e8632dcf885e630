package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `emuprof merge` refuses, in one line and with exit status 2, what it
// cannot merge: reports of two programs (they were summed under the first
// one's name), a report cut short, a binary file (1.9 KB of escaped bytes
// before); reports of one program merge.
func TestMergeRefusesWhatItCannotMerge(t *testing.T) {
	work := t.TempDir()
	report := func(prog, sub string) string {
		dir := filepath.Join(work, sub)
		out := run(t, nil, work, emuprofBin, "trms", "--out", dir, "--", guestBin(t, "glibc-static", prog))
		if strings.Contains(out.stderr, "panic") {
			t.Fatal(out.stderr)
		}
		p, _ := filepath.Glob(filepath.Join(dir, "*_rms.aprof"))
		if len(p) != 1 {
			t.Fatalf("%s: reports %v (stderr %s)", prog, p, out.stderr)
		}
		return p[0]
	}
	hello1, hello2, exit3 := report("hello", "h1"), report("hello", "h2"), report("exit3", "e")
	data, err := os.ReadFile(hello1)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(work, "cut.aprof")
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	elfFile := guestBin(t, "glibc-static", "hello")
	out := filepath.Join(work, "merged.aprof")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{hello1, exit3}, exit3 + ": cannot merge with " + hello1 + `: a profile of "` + guestBin(t, "glibc-static", "exit3") + `", not of "` + elfFile + `"`},
		{[]string{hello1, cut}, cut + ": trms: report truncated"},
		{[]string{hello1, elfFile}, elfFile + ": trms: not an aprof report (binary data)"},
	} {
		r := run(t, nil, work, emuprofBin, append([]string{"merge", "-o", out}, tc.args...)...)
		noGoTrace(t, "merge", r.stderr)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "emuprof: "+tc.want) || strings.Count(r.stderr, "\n") != 1 || len(r.stderr) > 400 {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 2 and one line %q", tc.args, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("merge %v wrote %s", tc.args, out)
		}
	}
	if r := run(t, nil, work, emuprofBin, "merge", "-o", out, hello1, hello2); r.code != 0 {
		t.Errorf("merging two runs of hello: exit %d, %s", r.code, r.stderr)
	}
}
