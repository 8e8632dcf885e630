package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every way emuprof can be stopped still writes the profile, marked
// partial, and says how it ended in one line.

// signalAndWait sends sig to emuprof and waits for it to exit.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig os.Signal) error {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("emuprof ignored %v for 30 s", sig)
		return nil
	}
}

// exitCode is the exit status of a finished command (128+signal when a
// signal killed it, as a shell says).
func exitCode(err error) int {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		if err == nil {
			return 0
		}
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// partialReports checks that dir holds the two aprof reports of a run,
// both marked partial with a reason that contains why.
func partialReports(t *testing.T, dir, why string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.aprof"))
	if len(paths) != 2 {
		t.Fatalf("reports written: %v", paths)
	}
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		if !bytes.Contains(data, []byte("c partial: "+why)) {
			t.Errorf("%s not marked partial (%q):\n%.300s", p, why, data)
		}
	}
	if js, _ := filepath.Glob(filepath.Join(dir, "*_trms.json")); len(js) != 1 {
		t.Errorf("JSON profile written: %v", js)
	}
}

// SIGTERM (kill, `timeout N emuprof trms ...`) and SIGHUP (the terminal
// closed) stop the guest like Ctrl-C: the reports were lost before.
func TestTermAndHupWritePartialProfile(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		why  string
	}{
		{syscall.SIGTERM, 143, "terminated by SIGTERM"},
		{syscall.SIGHUP, 129, "hung up (SIGHUP)"},
	} {
		dir := t.TempDir()
		var se bytes.Buffer
		cmd := startWhenReady(t, &se, "trms", "--out", dir, "--", guestBin(t, "glibc-static", "ready_loop"), "forever")
		err := signalAndWait(t, cmd, tc.sig)
		noGoTrace(t, tc.sig.String(), se.String())
		if code := exitCode(err); code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr %s", tc.sig, code, tc.code, se.String())
		}
		if !strings.Contains(se.String(), "emuprof: "+tc.why+"\n") {
			t.Errorf("%v: stderr %q does not say %q", tc.sig, se.String(), tc.why)
		}
		partialReports(t, dir, tc.why)
	}
}

// `emuprof trms ... | head`: the reader of emuprof's stdout goes away. The
// guest's next write fails with EPIPE and raises SIGPIPE, which kills it
// (status 141, as natively); emuprof writes the profiles, then its summary
// to the closed pipe without a word about it. Before, Go's runtime killed
// emuprof on that first write to fd 1 and the profile was lost.
func TestClosedStdoutWritesPartialProfile(t *testing.T) {
	dir := t.TempDir()
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(emuprofBin, "trms", "--out", dir, "--", guestBin(t, "glibc-static", "cat"))
	var se bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, outW, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	outW.Close()
	outR.Close() // `head` has read all it wanted
	feed.Write([]byte("a line for the guest to copy\n"))
	feed.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("emuprof still running; stderr %s", se.String())
	}
	noGoTrace(t, "closed stdout", se.String())
	if code := exitCode(err); code != 141 {
		t.Errorf("exit %d, want 141 (the guest killed by SIGPIPE); stderr %s", code, se.String())
	}
	if !strings.Contains(se.String(), "emuprof: guest killed by SIGPIPE") || !strings.Contains(se.String(), "emuprof: wrote ") {
		t.Errorf("stderr %q", se.String())
	}
	partialReports(t, dir, "guest killed by SIGPIPE")
}

// Ctrl-C while the guest waits for input on emuprof's stdin (a pipe that
// stays open): the read is abandoned and the run stops. Before, emuprof
// waited in the host read until it was killed. The cat guest copies its
// first 8192 bytes to stdout; once the test has read them back, cat is
// about to read again, and the test waits until emuprof waits in read(0).
func TestInterruptWhileReadingStdin(t *testing.T) {
	dir := t.TempDir()
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd := exec.Command(emuprofBin, "trms", "--out", dir, "--", guestBin(t, "glibc-static", "cat"))
	var se bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, outW, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	outW.Close()
	block := bytes.Repeat([]byte("ready\n"), 8192/6+1)[:8192] // one read(0, buf, 8192) of cat
	if _, err := feed.Write(block); err != nil {
		t.Fatal(err)
	}
	echoed := make(chan error, 1)
	go func() {
		got := make([]byte, len(block))
		_, err := io.ReadFull(outR, got)
		echoed <- err
	}()
	select {
	case err := <-echoed:
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("reading the guest's copy: %v; stderr %s", err, se.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the guest did not copy its input; stderr %s", se.String())
	}
	// cat is about to read again: wait until a thread of emuprof waits in
	// read(0, ...) on the host, so that the signal finds it there.
	if !blockedReadingStdin(cmd.Process.Pid, 30*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("emuprof never waited in read(0); stderr %s", se.String())
	}
	err = signalAndWait(t, cmd, os.Interrupt)
	noGoTrace(t, "Ctrl-C in read", se.String())
	if code := exitCode(err); code != 130 {
		t.Errorf("exit %d, want 130; stderr %s", code, se.String())
	}
	partialReports(t, dir, "interrupted")
}

// blockedReadingStdin polls /proc/PID/task/*/syscall (Linux) until a thread
// of the process waits in read(0, ...).
func blockedReadingStdin(pid int, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, task := range tasks {
			data, _ := os.ReadFile(task)
			if f := strings.Fields(string(data)); len(f) > 2 && f[0] == "0" && f[1] == "0x0" {
				return true
			}
		}
	}
	return false
}

// An output that cannot work is reported before the guest starts (the
// guest would write "hello, world"), in one line with exit status 2: --out
// an existing regular file, a directory where files cannot be created, a
// program whose report names are longer than a file name may be. A name
// that fits only without the temporary file's suffix is written (its
// profile was lost after the run).
func TestOutputCheckedBeforeTheRun(t *testing.T) {
	work := t.TempDir()
	hello := guestBin(t, "glibc-static", "hello")
	file := filepath.Join(work, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(work, strings.Repeat("p", 240)) // _1000_4_drms.aprof: 258 bytes
	fits := filepath.Join(work, strings.Repeat("q", 235)) // 253 bytes; its temporary file's name did not fit
	for _, p := range []string{long, fits} {
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unwritable := "/proc/self/emuprof-out" // root may write anywhere else
	if os.Getuid() != 0 {
		ro := filepath.Join(work, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		unwritable = filepath.Join(ro, "out")
	}
	for _, tc := range []struct {
		out, prog, want string
	}{
		{file, hello, "--out " + file + ": not a directory"},
		{filepath.Join(file, "sub"), hello, "--out " + filepath.Join(file, "sub") + ": not a directory"},
		{unwritable, hello, "--out " + unwritable + ": cannot create files in "},
		{filepath.Join(work, "o1"), long, "--out " + filepath.Join(work, "o1") + ": trms: report name ppppp"},
	} {
		out := run(t, nil, work, emuprofBin, "trms", "--out", tc.out, "--", tc.prog)
		noGoTrace(t, tc.out, out.stderr)
		if out.code != 2 || out.stdout != "" || !strings.HasPrefix(out.stderr, "emuprof: "+tc.want) || strings.Count(out.stderr, "\n") != 1 {
			t.Errorf("--out %s: exit %d, stdout %q, stderr %q; want exit 2, no output, one line %q", tc.out, out.code, out.stdout, out.stderr, tc.want)
		}
	}
	o2 := filepath.Join(work, "o2")
	out := run(t, nil, work, emuprofBin, "trms", "--out", o2, "--", fits)
	if out.code != 0 || !strings.HasPrefix(out.stdout, "hello, world\n") {
		t.Fatalf("235-byte program name: exit %d, stderr %s", out.code, out.stderr)
	}
	if reports, _ := filepath.Glob(filepath.Join(o2, "*.aprof")); len(reports) != 2 {
		t.Errorf("235-byte program name: reports %v", reports)
	}
}

// --out that does not exist yet is created for every analysis (the paths
// analysis lost its profile: only trms created the directory).
func TestOutCreatedForEveryAnalysis(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new", "sub")
	r := run(t, nil, t.TempDir(), emuprofBin, "paths", "--out", out, "--", guestBin(t, "glibc-static", "hello"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got, _ := filepath.Glob(filepath.Join(out, "*_paths.json")); len(got) != 1 {
		t.Errorf("paths profile not written in a new --out: %v (%s)", got, r.stderr)
	}
}
