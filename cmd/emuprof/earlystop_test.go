package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// catches says whether process pid has a handler for signal number sig
// (/proc/PID/status SigCgt): emuprof's first initializer installs one.
func catches(pid, sig int) (bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(sig-1)) != 0, err
		}
	}
	return false, fmt.Errorf("no SigCgt in /proc/%d/status", pid)
}

// Issue 31.2: a stop signal in emuprof's first milliseconds, before its
// main watches for stops (while the Go runtime and the packages start,
// before main, before the flags are parsed, before the guest), ends it as
// any other stop before the guest's first instruction: every profile
// written, empty and partial, the signal's status. Each signal is sent
// once emuprof's first initializer ran, then after a delay that grows by
// 50 µs from run to run; whatever moment it hits, the outcome is the same.
func TestStopFromFirstInstruction(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	ref := run(t, nil, work, emuprofBin, "profile", "--list-files", "--out", filepath.Join(work, "ref"), "--", hello)
	if ref.code != 0 {
		t.Fatalf("profile: exit %d: %s", ref.code, ref.stderr)
	}
	all := listedFiles(t, ref.stderr)
	for i := 0; i < 60; i++ {
		s := stopSigs[i%len(stopSigs)]
		dir := filepath.Join(work, fmt.Sprint(i))
		cmd := exec.Command(emuprofBin, "profile", "--out", dir, "--", hello)
		cmd.Dir = work
		cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
		var se bytes.Buffer
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Before emuprof's first instruction (in the dynamic loader) a
		// signal kills it as it kills any program: wait for the handler.
		for {
			ok, err := catches(cmd.Process.Pid, int(s.sig))
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			if ok {
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		time.Sleep(time.Duration(i) * 50 * time.Microsecond) // spreads the moments; any moment must do
		_ = cmd.Process.Signal(s.sig)
		err := cmd.Wait()
		what := fmt.Sprintf("SIG%s %d µs after the first initializer", s.name, i*50)
		noGoTrace(t, what, se.String())
		if code := exitCode(err); code != 128+int(s.sig) {
			t.Errorf("%s: exit %d (%v), want %d; stderr %q", what, code, err, 128+int(s.sig), se.String())
			continue
		}
		if !strings.Contains(se.String(), "emuprof: "+s.why+"\n") {
			t.Errorf("%s: stderr %q does not say %q", what, se.String(), s.why)
		}
		if partial := checkProfiles(t, what, dir, all); partial != s.why {
			t.Errorf("%s: run record partial %q, want %q", what, partial, s.why)
		}
	}
}

// libunicorn is opened when the first engine is made: a library that is
// missing or not Unicorn's is one line and exit status 2, not a loader's
// message before emuprof starts (or a crash).
func TestUnicornMissing(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	empty := filepath.Join(work, "empty")
	notUnicorn := filepath.Join(work, "other")
	for _, d := range []string{empty, notUnicorn} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(empty, "libunicorn.so.2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(work, "other.c")
	if err := os.WriteFile(src, []byte("int uc_version_typo(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", filepath.Join(notUnicorn, "libunicorn.so.2"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, c := range []struct{ dir, why string }{
		{empty, "libunicorn.so.2: file too short"},
		{notUnicorn, "libunicorn.so.2 has no function uc_version (is it Unicorn 2?)"},
	} {
		out := runEnv(t, []string{"LD_LIBRARY_PATH=" + c.dir}, emuprofBin, "trms", "--out", filepath.Join(work, "out"), "--", hello)
		noGoTrace(t, c.dir, out.stderr)
		lines := strings.Split(strings.TrimSuffix(out.stderr, "\n"), "\n")
		if out.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "emuprof: ") ||
			!strings.Contains(lines[0], "cannot load libunicorn") || !strings.HasSuffix(lines[0], c.why) {
			t.Errorf("LD_LIBRARY_PATH=%s: exit %d, stderr %q; want exit 2 and one line ending %q", c.dir, out.code, out.stderr, c.why)
		}
		if out.stdout != "" {
			t.Errorf("LD_LIBRARY_PATH=%s: stdout %q", c.dir, out.stdout)
		}
	}
	// The commands that run no guest need no libunicorn.
	out := runEnv(t, []string{"LD_LIBRARY_PATH=" + empty}, emuprofBin, "syscalls")
	if out.code != 0 || !strings.Contains(out.stdout, "read") {
		t.Errorf("syscalls without libunicorn: exit %d, stderr %q", out.code, out.stderr)
	}
}
