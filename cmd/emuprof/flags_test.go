package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noGoTrace fails the test when emuprof's stderr holds a Go panic or fatal
// error trace: whatever the guest or the flags do, emuprof answers in lines
// of its own.
func noGoTrace(t *testing.T, what, stderr string) {
	t.Helper()
	for _, s := range []string{"goroutine ", "panic:", "fatal error:", "runtime."} {
		if strings.Contains(stderr, s) {
			t.Errorf("%s: Go trace in stderr:\n%.2000s", what, stderr)
			return
		}
	}
}

// Every flag is checked before the guest starts: a bad value is one line
// naming the flag, exit status 2, and the guest never runs (hello prints
// nothing, no profile is written). None of these may panic: --cpus huge
// made the scheduler allocate per-CPU state (out of memory), the others
// were taken silently (--resolution 0 became 4, --env FOO was passed on).
func TestBadFlagsRefusedBeforeTheGuestStarts(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	file := filepath.Join(work, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string // stderr, after "emuprof: "
	}{
		{[]string{"run", "--cpus", "100000000000"}, "--cpus 100000000000: want 1 to 1024 virtual CPUs"},
		{[]string{"run", "--time-model", "zen5"}, "--time-model: open zen5: no such file or directory (want insns, zen4 or a table file)"},
		{[]string{"run", "--cpus", "0"}, "--cpus 0: want 1 to 1024 virtual CPUs"},
		{[]string{"run", "--cpus", "-3"}, "--cpus -3: want 1 to 1024 virtual CPUs"},
		{[]string{"run", "--quantum", "0"}, "--quantum 0: want 1 to"},
		{[]string{"run", "--pid", "0"}, "--pid 0: want a process id from 1 to 4194303"},
		{[]string{"run", "--pid", "-1"}, "--pid -1: want a process id from 1 to 4194303"},
		{[]string{"run", "--pid", "4194304"}, "--pid 4194304: want a process id from 1 to 4194303"},
		{[]string{"run", "--env", "FOO"}, `--env "FOO": want NAME=VALUE`},
		{[]string{"run", "--env", "=x"}, `--env "=x": want NAME=VALUE`},
		{[]string{"run", "--sysroot", filepath.Join(work, "none")}, "--sysroot " + filepath.Join(work, "none") + ": no such file or directory"},
		{[]string{"run", "--sysroot", file}, "--sysroot " + file + ": not a directory"},
		{[]string{"run", "--unsupported", "maybe"}, `--unsupported must be stop or enosys, not "maybe"`},
		{[]string{"trms", "--out", work, "--resolution", "0"}, "--resolution 0: want a memory resolution of 1, 2, 4, 8 or 16 bytes"},
		{[]string{"trms", "--out", work, "--resolution", "3"}, "--resolution 3: want a memory resolution of 1, 2, 4, 8 or 16 bytes"},
		{[]string{"trms", "--out", work, "--cost", "cycles"}, "--cost cycles: want blocks, insns or time"},
		{[]string{"profile", "--analyses", "trms", "--out", work, "--cpus", "0"}, "--cpus 0: want 1 to 1024 virtual CPUs"},
		{[]string{"profile", "--analyses", "trms", "--out", work, "--resolution", "5"}, "--resolution 5: want a memory resolution"},
	}
	for _, tc := range tests {
		args := append(append(tc.args, "--"), hello)
		out := run(t, nil, work, emuprofBin, args...)
		what := strings.Join(tc.args, " ")
		noGoTrace(t, what, out.stderr)
		if out.code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", what, out.code, out.stderr)
		}
		if out.stdout != "" {
			t.Errorf("%s: the guest ran: stdout %q", what, out.stdout)
		}
		if !strings.HasPrefix(out.stderr, "emuprof: "+tc.want) || strings.Count(out.stderr, "\n") != 1 {
			t.Errorf("%s: stderr %q, want one line %q", what, out.stderr, "emuprof: "+tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(work, "*.aprof")); len(left) > 0 {
		t.Errorf("profiles written although a flag was bad: %v", left)
	}
}
