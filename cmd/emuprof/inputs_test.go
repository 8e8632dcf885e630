package main

// What a run depends on (README "What a run depends on"): the host's
// environment reaches the guest unless --clear-env, the working directory
// always does; with --clear-env, TZ and PWD change nothing.

import (
	"bytes"
	"os/exec"
	"testing"
)

// runIn runs emuprof with the host environment env in dir.
func runIn(t *testing.T, dir string, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(emuprofBin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running emuprof: %v", err)
		}
		code = ee.ExitCode()
	}
	return outcome{so.String(), se.String(), code}
}

func TestRunInputs(t *testing.T) {
	prog := guestBin(t, "glibc-static", "args")
	dir := t.TempDir()
	base := []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	hostVars := map[string][2][]string{
		"TZ":  {append(base, "TZ=UTC"), append(base, "TZ=Asia/Tokyo")},
		"PWD": {append(base, "PWD=/a"), append(base, "PWD=/b")},
	}
	for name, envs := range hostVars {
		for _, clear := range []bool{false, true} {
			args := []string{"run", "--trace-digest"}
			if clear {
				args = append(args, "--clear-env")
			}
			args = append(args, "--", prog)
			a, b := runIn(t, dir, envs[0], args...), runIn(t, dir, envs[1], args...)
			if a.code != 0 || b.code != 0 {
				t.Fatalf("%s: exit %d, %d: %s %s", name, a.code, b.code, a.stderr, b.stderr)
			}
			same := a == b
			if clear && !same {
				t.Errorf("--clear-env: host %s changed the run:\n%s%s\n--\n%s%s", name, a.stdout, a.stderr, b.stdout, b.stderr)
			}
			if !clear && same {
				t.Errorf("without --clear-env: host %s did not reach the guest", name)
			}
		}
	}
	// The working directory is an input even with --clear-env: its path
	// is what getcwd answers.
	pwdArgs := []string{"run", "--clear-env", "--trace-digest", "--", "/bin/pwd"}
	a, b := runIn(t, t.TempDir(), base, pwdArgs...), runIn(t, t.TempDir(), base, pwdArgs...)
	if a.code != 0 || a.stdout == b.stdout {
		t.Errorf("pwd in two directories: exit %d, %q and %q", a.code, a.stdout, b.stdout)
	}
}
