package main

// Runs of blocks as one event (trace.Encoding.Fold) change no profile:
// every analysis that takes them writes the same bytes as with one event
// per block (the hidden --no-fold).

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// foldFiles runs emuprof CMD with flags on prog and returns every file
// it wrote but the run description and the report (which name the flags),
// the program's stdout and emuprof's summary (stderr).
func foldFiles(t *testing.T, stdin []byte, cmd string, flags []string, prog string, args ...string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	a := append(append([]string{cmd, "--out", dir, "--clear-env"}, flags...), "--", prog)
	a = append(a, args...)
	out := run(t, stdin, dir, emuprofBin, a...)
	if out.code != 0 {
		t.Fatalf("emuprof %s: exit %d\n%s", strings.Join(a, " "), out.code, out.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	m := map[string][]byte{"stdout": []byte(out.stdout), "summary": []byte(strings.ReplaceAll(summaryOf(out.stderr), dir, "DIR"))}
	for _, f := range files {
		if b := filepath.Base(f); b != "report.html" && !strings.HasSuffix(b, "_run.json") {
			m[b], _ = os.ReadFile(f)
		}
	}
	return m
}

// sameWithoutFolding fails unless emuprof CMD writes the same files with
// and without --no-fold; it returns how many it compared.
func sameWithoutFolding(t *testing.T, stdin []byte, cmd string, flags []string, prog string, args ...string) int {
	t.Helper()
	a := foldFiles(t, stdin, cmd, flags, prog, args...)
	b := foldFiles(t, stdin, cmd, append(flags, "--no-fold"), prog, args...)
	if len(a) != len(b) {
		t.Fatalf("%d files folded, %d without", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs when every block is an event (%d and %d bytes)", name, len(data), len(b[name]))
		}
	}
	return len(a)
}

// trms takes runs that span lines and the memory accesses of their blocks
// (an activation's cost counts each block; its input does not depend on
// where accesses fall between blocks): four builds, threads, signals,
// lazy binding, --cost insns and --cct, processes, Debian programs.
func TestTRMSFold(t *testing.T) {
	words := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 300)
	cases := []struct {
		name  string
		flags []string
		prog  string
		args  []string
	}{
		{"glibc-static/qsort", nil, guestBin(t, "glibc-static", "qsort"), []string{"20000"}},
		{"glibc-dynamic/wf", nil, guestBin(t, "glibc-dynamic", "wf"), nil},
		{"musl-static/threadpool", nil, guestBin(t, "musl-static", "threadpool"), nil},
		{"glibc-static-pie/mallocstress", nil, guestBin(t, "glibc-static-pie", "mallocstress"), nil},
		{"glibc-static/signals", nil, guestBin(t, "glibc-static", "signals"), nil},
		{"glibc-dynamic/condvar_pc", []string{"--cost", "insns"}, guestBin(t, "glibc-dynamic", "condvar_pc"), nil},
		{"glibc-static/count_zero", []string{"--cct"}, guestBin(t, "glibc-static", "count_zero"), nil},
		{"sh", nil, "/bin/sh", []string{"-c", "sort | uniq -c | sort -n | tail -3"}},
		{"perl", nil, "/usr/bin/perl", []string{"-e", "my %h; $h{$_}++ while <STDIN>; print scalar(keys %h), qq(\n)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := sameWithoutFolding(t, words, "trms", c.flags, c.prog, c.args...); n < 3 {
				t.Errorf("only %d files", n)
			}
		})
	}
}
