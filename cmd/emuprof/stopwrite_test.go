package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ctrl-C while the guest is blocked writing to emuprof's stdout, a pipe
// whose reader does not read: the write is abandoned, the profile is
// written, the summary is dropped and emuprof exits with 130. Before, it
// waited in the host write until it was killed, and the profile was lost.
func TestInterruptWhileWritingStdout(t *testing.T) {
	dir := t.TempDir()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close() // open, never read: the pipe fills up
	cmd := exec.Command(emuprofBin, "trms", "--out", dir, "--", "/bin/cat", "/dev/zero")
	var se bytes.Buffer
	cmd.Stdout, cmd.Stderr = outW, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	if !blockedWritingStdout(cmd.Process.Pid, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("emuprof never waited in write(1); stderr %s", se.String())
	}
	err = signalAndWait(t, cmd, os.Interrupt)
	noGoTrace(t, "Ctrl-C in write", se.String())
	if code := exitCode(err); code != 130 {
		t.Errorf("exit %d, want 130; stderr %s", code, se.String())
	}
	partialReports(t, dir, "interrupted")
}

// blockedWritingStdout polls /proc/PID/task/*/syscall (Linux) until a
// thread of the process waits in write(1, ...).
func blockedWritingStdout(pid int, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, task := range tasks {
			data, _ := os.ReadFile(task)
			if f := strings.Fields(string(data)); len(f) > 2 && f[0] == "1" && f[1] == "0x1" {
				return true
			}
		}
	}
	return false
}
