package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildDiffwork builds testdata/diffwork.c with ROUNDS rounds.
func buildDiffwork(t *testing.T, dir, rounds string) string {
	t.Helper()
	src, _ := filepath.Abs("testdata/diffwork.c")
	out := filepath.Join(dir, "diffwork-"+rounds)
	if b, err := exec.Command("gcc", "-static", "-O2", "-g", "-DROUNDS="+rounds, "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

type verdictFile struct {
	Pass       bool   `json:"pass"`
	Reason     string `json:"reason"`
	Conditions []struct {
		Failed bool `json:"failed"`
	} `json:"conditions"`
	Changes []struct {
		Metric, Kind, Name string
		Old, New           float64
	} `json:"changes"`
}

// TestDiffGate runs docs/USAGE.md's CI recipe as written (bash, emuprof on
// PATH) against a baseline of diffwork: the same program again passes
// with no difference at all; the program changed to do 2 % more rounds
// fails insns>+1% with one line and a JSON verdict that says why; gates
// on one routine and one metric see its change alone.
func TestDiffGate(t *testing.T) {
	recipe := docBlock(t, "docs/USAGE.md", "a CI job is two lines")
	if n := strings.Count(recipe, "\n"); n != 2 {
		t.Fatalf("the CI recipe in docs/USAGE.md has %d lines, want 2: %q", n, recipe)
	}
	dir := t.TempDir()
	base, more := buildDiffwork(t, dir, "1000"), buildDiffwork(t, dir, "1020")
	work := filepath.Join(dir, "ci")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(work, "prog")
	use := func(bin string) {
		os.Remove(prog)
		if err := os.Symlink(bin, prog); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(work, "new"))
	}
	env := []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=" + filepath.Dir(emuprofBin) + ":/usr/bin:/bin"}
	sh := func(script string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir, cmd.Env = work, env
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return so.String(), se.String(), code
	}
	verdict := func() verdictFile {
		t.Helper()
		var v verdictFile
		data, err := os.ReadFile(filepath.Join(work, "emuprof-diff.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(work, "emuprof-diff.json"))
		return v
	}
	use(base)
	if _, se, code := sh("emuprof profile --out baseline -- ./prog"); code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, se)
	}

	so, se, code := sh(recipe)
	if code != 0 || !strings.Contains(so, "\nno difference\n") {
		t.Fatalf("the same program: exit %d, want 0 and no difference:\n%s%s", code, so, se)
	}
	if v := verdict(); !v.Pass || len(v.Changes) != 0 || len(v.Conditions) != 1 || v.Conditions[0].Failed {
		t.Errorf("the same program: verdict %+v, want a pass with no change", v)
	}

	use(more)
	so, se, code = sh(recipe)
	last := strings.Split(strings.TrimSpace(se), "\n")
	if code != 1 || !strings.HasPrefix(last[len(last)-1], "emuprof: diff: failed insns>+1%: the program's insns +1.9") {
		t.Fatalf("2 %% more work: exit %d, want 1 and the reason in one line:\n%s%s", code, so, se)
	}
	v := verdict()
	if v.Pass || !strings.HasPrefix(v.Reason, "insns>+1%: the program's insns +1.9") {
		t.Errorf("2 %% more work: verdict %+v, want a failure naming insns>+1%%", v)
	}
	var mixCalls bool
	for _, c := range v.Changes {
		if c.Metric == "calls" && c.Kind == "routine" && c.Name == "mix" {
			mixCalls = c.Old == 1000 && c.New == 1020
		}
	}
	if !mixCalls {
		t.Errorf("the verdict's changes do not say that mix was called 1020 times instead of 1000: %+v", v.Changes)
	}
	for _, tc := range []struct {
		cond string
		code int
	}{
		{"insns[mix]>+1.9%", 1}, // 2.0 %: the loop's own instructions
		{"insns[mix]>+2.1%", 0},
		{"calls[mix]>=20", 1},
		{"calls[mix]>20", 0},
		{"insns[*]>+5%", 0},
		{"insns[diffwork.c:13]>+1.9%", 1}, // the loop's line
		{"idleness<0", 0},
		{"idleness[mix]>+1.9%", 1}, // parallel: its idle cores grow with its work
		{"paths[mix]>0", 0},        // paths: the same paths,
		{"pathruns[mix]>+1.9%", 1}, // run 2 % more often
		{"insns[nosuch]>1", 2},
		{"insn>1", 2},
	} {
		_, se, code := sh("emuprof diff --json '' --fail-if '" + tc.cond + "' baseline new")
		if code != tc.code || strings.Count(strings.TrimSpace(se), "\n") > 0 {
			t.Errorf("--fail-if %s: exit %d, want %d with at most one line:\n%s", tc.cond, code, tc.code, se)
		}
	}
}
