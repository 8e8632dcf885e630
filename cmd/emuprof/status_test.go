package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runOnTerminal runs emuprof with stderr on a pseudo-terminal and stdout
// on a pipe; it returns what the terminal received and stdout.
func runOnTerminal(t *testing.T, dir string, args ...string) (term, stdout string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(emuprofBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	var so bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // read until the terminal's last writer is gone (EIO)
		defer wg.Done()
		io.Copy(&got, ptmx)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("emuprof %v: %v\n%s", args, err, got.String())
	}
	wg.Wait()
	return got.String(), so.String()
}

// The status line (issue 14): on a terminal, a run longer than a second
// shows guest instructions and their rate, virtual time, threads and the
// phase on stderr, redrawn in place, and erases it at the end; the guest's
// output is the native one, and the profile is byte for byte the one of a
// run whose stderr is not a terminal, which gets no status at all (nor
// does --quiet on a terminal).
func TestLiveStatus(t *testing.T) {
	prog := guestBin(t, "glibc-static", "qsort")
	const n = "150000"
	native := run(t, nil, t.TempDir(), prog, n)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	start := time.Now()
	term, stdout := runOnTerminal(t, dirs[0], "trms", "--out", dirs[0], "--clear-env", "--", prog, n)
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Fatalf("the run took %v: too short for a status line (a longer guest is needed)", took)
	}
	if stdout == "" || !strings.HasPrefix(stdout, native.stdout) {
		t.Errorf("stdout %.200q, want the native %.200q first", stdout, native.stdout)
	}
	lines := strings.Split(term, "\r\x1b[K")
	var status []string
	for _, l := range lines {
		if strings.HasPrefix(l, "emuprof: ") && strings.Contains(l, " instructions (") {
			status = append(status, l)
		}
	}
	if len(status) == 0 {
		t.Fatalf("no status line on the terminal: %q", term)
	}
	for _, want := range []string{"/s), virtual ", " 1 thread, running"} {
		if !strings.Contains(status[0], want) {
			t.Errorf("status line %q lacks %q", status[0], want)
		}
	}
	if strings.Contains(status[len(status)-1], "\n") || !strings.Contains(term, "\r\x1b[Kemuprof: wrote ") {
		t.Errorf("the status line was not erased before the last messages: %q", term[max(0, len(term)-400):])
	}

	// Not a terminal: no status, same profile.
	out := run(t, nil, dirs[1], emuprofBin, "trms", "--out", dirs[1], "--clear-env", "--", prog, n)
	if strings.Contains(out.stderr, "instructions (") || strings.Contains(out.stderr, "\x1b[K") {
		t.Errorf("status on a stderr that is not a terminal: %q", out.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dirs[0], "*.aprof"))
	if len(files) != 2 {
		t.Fatalf("reports %v", files)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(dirs[1], filepath.Base(f)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the run on a terminal and the other (%v)", filepath.Base(f), err)
		}
	}

	// --quiet on a terminal: nothing but the messages.
	term, _ = runOnTerminal(t, dirs[0], "run", "--quiet", "--clear-env", "--", prog, n)
	if strings.Contains(term, "instructions (") || strings.Contains(term, "\x1b[K") {
		t.Errorf("--quiet: status on the terminal: %q", term)
	}
}

// The guest's writes to the terminal erase the status line first, whole;
// counters feed the line; nothing is drawn before the delay.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	s := newStatusOn(&term, 2)
	s.counting.Store(true) // as if an engine were wrapped
	c := s.Counter("copies", 8)
	c.Done()
	c.Done()
	s.insns.Store(2_500_000)
	s.run.Load().clock.Store(5_000_000)
	s.run.Load().threads.Store(3)
	got := s.line(2 * time.Second)
	want := "emuprof: 2.50 M instructions (1.25 M/s), virtual 5ms, 3 threads, running, copies 2/8"
	if got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	s.draw()
	w := s.Writer(&term, true)
	w.Write([]byte("guest output\n"))
	w.Write([]byte("more\n"))
	got = term.String()
	if !strings.HasPrefix(got, "\r\x1b[Kemuprof: 2.50 M instructions (") || !strings.HasSuffix(got, ", copies 2/8\r\x1b[Kguest output\nmore\n") {
		t.Errorf("terminal %q: want the line, erased once, then the guest's writes", got)
	}
	if w := s.Writer(&term, false); w != io.Writer(&term) {
		t.Error("a writer that is not the terminal was wrapped")
	}
	var nilStatus *liveStatus
	nilStatus.Start()
	nilStatus.SetPhase("x")
	nilStatus.Stop()
	if nilStatus.Counter("shards", 2) == nil {
		t.Error("no counter without a status line")
	}
}

// A line longer than the terminal is cut to its width: a wrapped line
// would leave rows that "\r\x1b[K" does not erase.
func TestStatusLineWidth(t *testing.T) {
	var term bytes.Buffer
	s := newStatusOn(&term, 1)
	s.counting.Store(true)
	s.width = 30
	s.draw()
	if got := strings.TrimPrefix(term.String(), "\r\x1b[K"); len([]rune(got)) != 29 || !strings.HasPrefix(got, "emuprof: 0 instructions") {
		t.Errorf("drew %q, want the first 29 columns", got)
	}
}

// Work in other processes (paths --copies): no engine feeds the line, so
// it says the phase, the time and the copies done, not zero instructions.
func TestStatusLineCopies(t *testing.T) {
	var term bytes.Buffer
	s := newStatusOn(&term, 1)
	s.SetPhase("running 4 copies of the program")
	c := s.Counter("copies done", 4)
	c.Done()
	if got, want := s.line(3*time.Second), "emuprof: running 4 copies of the program, 3s, copies done 1/4"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
