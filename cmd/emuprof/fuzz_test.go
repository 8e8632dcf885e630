package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The fuzz_syscalls guest makes random raw system calls (safe numbers,
// typed and edge arguments: testdata/src/fuzz_syscalls.c). Every seed must
// end with the guest's own exit (status 77 and its last line), or with one
// clean emuprof line (deadlock, crash of the guest, a limit); never with a
// Go trace or an internal error. Before, seeds ended in a Go panic in dup2
// onto the highest descriptor (installAt) and in mincore with a length
// that wraps (makeslice). The guest runs in a sandbox: --sysroot and its
// working directory are a temporary directory, so its paths cannot reach
// the host's files.
func TestFuzzSyscallsNoGoTrace(t *testing.T) {
	type job struct {
		variant string
		mode    []string
		seeds   []int
	}
	jobs := []job{
		{"glibc-static", []string{"run"}, seq(1, 16)},
		{"musl-static", []string{"run"}, seq(101, 104)},
		{"glibc-static", []string{"trms"}, seq(201, 203)},
	}
	const calls = 1500
	finished := 0
	for _, j := range jobs {
		bin := guestBin(t, j.variant, "fuzz_syscalls")
		for _, seed := range j.seeds {
			what := fmt.Sprintf("%s %s seed %d", strings.Join(j.mode, " "), j.variant, seed)
			sandbox := t.TempDir()
			work, out := filepath.Join(sandbox, "work"), filepath.Join(sandbox, "out")
			guest := filepath.Join(sandbox, "bin", "fuzz_syscalls")
			for _, d := range []string{work, out, filepath.Dir(guest)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(guest, data, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{}, j.mode...)
			if j.mode[0] != "run" {
				args = append(args, "--out", out)
			}
			args = append(args, "--unsupported=enosys", "--max-insns", "4000000000", "--sysroot", sandbox,
				"--", guest, fmt.Sprint(seed), fmt.Sprint(calls))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, emuprofBin, args...)
			cmd.Dir = work
			cmd.Stdin = strings.NewReader("some input for read(0)\n")
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err = cmd.Run()
			timedOut := ctx.Err() == context.DeadlineExceeded
			cancel()
			if timedOut {
				t.Errorf("%s: still running after 2 minutes (%s)", what, emuprofLines(se.String()))
				continue
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			stderr := se.String()
			noGoTrace(t, what, stderr)
			if strings.Contains(stderr, "internal error") {
				t.Errorf("%s: %s", what, emuprofLines(stderr))
			}
			if code == 77 {
				finished++
			} else if lines := emuprofLines(stderr); lines == "" {
				t.Errorf("%s: exit %d without an emuprof line (stderr %.1000q)", what, code, stderr)
			} else {
				t.Logf("%s: exit %d: %s", what, code, lines)
			}
			if j.mode[0] == "trms" {
				if reports, _ := filepath.Glob(filepath.Join(out, "*.aprof")); len(reports) != 2 {
					t.Errorf("%s: reports %v", what, reports)
				}
			}
		}
	}
	// The guest keeps itself from blocking forever and from unmapping its
	// own memory: most seeds make all their calls.
	if total := 16 + 4 + 3; finished < total*3/4 {
		t.Errorf("only %d of %d seeds made all their calls", finished, total)
	}
}

var emuprofLine = regexp.MustCompile(`emuprof: [^\n]*`)

// emuprofLines returns emuprof's own lines in stderr (the guest's writes to
// stderr may precede them on the same line), but for the warning about
// unsupported calls, joined by " | ".
func emuprofLines(stderr string) string {
	var out []string
	for _, l := range emuprofLine.FindAllString(stderr, -1) {
		if !strings.HasPrefix(l, "emuprof: warning: unsupported syscalls") {
			out = append(out, l)
		}
	}
	return strings.Join(out, " | ")
}

func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}
