package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The program's stdout is the program's (issue 25 point 1): every command
// that runs a guest leaves stdout byte for byte as the native run writes
// it, also binary output (`emuprof trms -- gzip -c f > f.gz` is a valid
// gzip file of f); emuprof's summaries go to stderr.
func TestStdoutIsTheProgramsOwn(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var text strings.Builder
	for i := range 400 {
		fmt.Fprintf(&text, "%d line %d %s\n", (i*7919)%2003, i, strings.Repeat("xy", i%11))
	}
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gzip := []string{"/usr/bin/gzip", "-c", in}
	rounds := []string{guestBin(t, "glibc-static", "coz_rounds"), "20"}
	for _, c := range []struct {
		name    string
		flags   []string
		prog    []string
		summary string // a line of emuprof's summary, now on stderr
	}{
		{"run", []string{"run", "--stats"}, gzip, "emuprof: virtual duration "},
		{"trms", []string{"trms"}, gzip, "input-sensitive profile: "},
		{"paths", []string{"paths"}, gzip, "paths"},
		{"paths-copies", []string{"paths", "--copies", "2"}, gzip, "probe hits"},
		{"parallel", []string{"parallel"}, gzip, "idle"},
		{"parallel-sweep", []string{"parallel", "--cpus-sweep", "1,2"}, gzip, "== --cpus 2"},
		{"profile", []string{"profile"}, gzip, "input-sensitive profile: "},
		{"causal", []string{"causal", "--progress", "round_done"}, rounds, "round_done"},
		{"profile-causal", []string{"profile", "--progress", "round_done"}, rounds, "round_done"},
	} {
		t.Run(c.name, func(t *testing.T) {
			native := run(t, nil, dir, c.prog[0], c.prog[1:]...)
			out := t.TempDir()
			args := append(append([]string{}, c.flags...), "--clear-env", "--env", "LC_ALL=C")
			if c.name != "run" {
				args = append(args, "--out", out)
			}
			args = append(append(args, "--"), c.prog...)
			emu := run(t, nil, dir, emuprofBin, args...)
			if emu.code != native.code {
				t.Fatalf("exit %d, native %d\n%s", emu.code, native.code, emu.stderr)
			}
			if emu.stdout != native.stdout {
				t.Errorf("stdout (%d bytes) is not the native run's (%d bytes): it ends %q", len(emu.stdout), len(native.stdout), emu.stdout[max(0, len(emu.stdout)-200):])
			}
			if !strings.Contains(emu.stderr, c.summary) {
				t.Errorf("stderr lacks the summary (%q): %.600s", c.summary, emu.stderr)
			}
			if c.prog[0] == gzip[0] {
				unzip := exec.Command("/usr/bin/gzip", "-dc")
				unzip.Stdin = strings.NewReader(emu.stdout)
				var got bytes.Buffer
				unzip.Stdout = &got
				if err := unzip.Run(); err != nil || got.String() != text.String() {
					t.Errorf("gzip -dc of emuprof's stdout: %v, %d bytes, want the %d of the input", err, got.Len(), text.Len())
				}
			}
		})
	}
}

// summaryOf is emuprof's stderr without its "wrote" line, which names
// the output directory.
func summaryOf(stderr string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "emuprof: wrote ") {
			b.WriteString(l)
		}
	}
	return b.String()
}
