package main

// What the guest reads from its standard input depends on the bytes only:
// a file, a pipe written at once, and a pipe written slowly in pieces give
// the same trace and the same profile.

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// inputMode is how the input reaches emuprof's stdin.
type inputMode int

const (
	fromFile inputMode = iota
	fastPipe
	slowPipe
)

func (m inputMode) String() string {
	return [...]string{"file", "fast pipe", "slow pipe"}[m]
}

// runFed runs emuprof with args, feeding input on stdin the way mode says.
func runFed(t *testing.T, input []byte, mode inputMode, dir string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(emuprofBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	var w *os.File
	switch mode {
	case fromFile:
		p := filepath.Join(t.TempDir(), "input")
		if err := os.WriteFile(p, input, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	default:
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cmd.Stdin, w = r, pw
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if w != nil {
		go func() {
			defer w.Close()
			if mode == fastPipe {
				w.Write(input)
				return
			}
			// About 20 pieces of random sizes, with pauses between them: the
			// guest's reads overtake the writer.
			rng := rand.New(rand.NewPCG(1, 2))
			for rest := input; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(2*len(input)/20))
				if _, err := w.Write(rest[:n]); err != nil {
					return
				}
				rest = rest[n:]
				time.Sleep(time.Duration(30+rng.IntN(40)) * time.Millisecond)
			}
		}()
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return outcome{so.String(), se.String(), code}
}

func TestInputDoesNotDependOnDelivery(t *testing.T) {
	words, err := os.ReadFile(filepath.Join(filepath.Dir(guestDir), "inputs", "words.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var input []byte
	for len(input) < 200_000 {
		input = append(input, words...)
	}
	prog := guestBin(t, "glibc-static", "wf")
	type result struct {
		stdout, digest string
		reports        map[string][]byte
	}
	var results []result
	for _, mode := range []inputMode{fromFile, fastPipe, slowPipe} {
		var r result
		out := runFed(t, input, mode, t.TempDir(), append(emuArgs("--trace-digest"), prog)...)
		if out.code != 0 {
			t.Fatalf("%v: exit %d: %s", mode, out.code, out.stderr)
		}
		r.stdout, r.digest = out.stdout, digestOf(t, out)
		dir := t.TempDir()
		out = runFed(t, input, mode, dir, "trms", "--out", dir, "--clear-env", "--", prog)
		if out.code != 0 {
			t.Fatalf("%v: trms exit %d: %s", mode, out.code, out.stderr)
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "*.aprof"))
		if len(paths) == 0 {
			t.Fatalf("%v: no reports in %s", mode, dir)
		}
		r.reports = map[string][]byte{}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r.reports[filepath.Base(p)] = b
		}
		results = append(results, r)
	}
	for i, r := range results[1:] {
		mode, want := inputMode(i+1), results[0]
		if r.stdout != want.stdout {
			t.Errorf("%v: stdout differs from the file's:\n%s\nvs\n%s", mode, r.stdout, want.stdout)
		}
		if r.digest != want.digest {
			t.Errorf("%v: trace digest %s, from a file %s", mode, r.digest, want.digest)
		}
		if len(r.reports) != len(want.reports) {
			t.Errorf("%v: %d reports, from a file %d", mode, len(r.reports), len(want.reports))
		}
		for name, b := range want.reports {
			if !bytes.Equal(r.reports[name], b) {
				t.Errorf("%v: %s differs from the file's", mode, name)
			}
		}
	}
}
