package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// What Linux passes on across fork is passed on: the CPU affinity mask
// (taskset's, through a forking shell and a subshell), a FIFO that two
// processes open after a fork is one pipe (each got a pipe of its own and
// both waited forever), and record locks are not.
func TestForkInherits(t *testing.T) {
	for _, script := range []string{
		`taskset -c 0 sh -c 'nproc; (nproc)'`,
		`mkfifo ff; (seq 3 > ff &); cat ff; rm ff`,
	} {
		t.Run(script, func(t *testing.T) {
			compare(t, nil, t.TempDir(), "sh", "-c", script)
		})
	}
	// POSIX record locks are the process's: the child conflicts with its
	// parent's (it used to share them).
	compare(t, nil, t.TempDir(), "python3", "-c", `
import fcntl, os
f = open("lockf", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
pid = os.fork()
if pid == 0:
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("child got the lock")
    except OSError as e:
        print("child:", e.errno)
    os._exit(0)
os.waitpid(pid, 0)
`)
}

// hostShell runs script with sh natively and with $RUN set to an emuprof
// run, so that the host shell, not the guest, redirects the guest's
// standard streams; stdout, stderr and exit status must be the same. Each
// run starts in an empty directory.
func hostShell(t *testing.T, script string) {
	t.Helper()
	var outs [2]outcome
	for i, runPrefix := range []string{"", emuprofBin + " " + strings.Join(emuArgs(), " ")} {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin", "RUN=" + runPrefix}
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("sh -c %q: %v", script, err)
		}
		outs[i] = outcome{so.String(), se.String(), code}
	}
	if outs[0] != outs[1] {
		t.Errorf("sh -c %q:\nnative: %+v\nemu:    %+v", script, outs[0], outs[1])
	}
}

// A standard stream that is a host regular file is that file to the
// guest: cat and tar recognize their output among their inputs (by fstat's
// device and inode) and refuse as natively, /dev/stdin and /dev/stdout
// reopen the file at offset 0 (bc reads it twice; O_TRUNC empties it),
// /proc/self/fd links name it, and >> appends.
func TestStdRegularFiles(t *testing.T) {
	for _, script := range []string{
		`printf 'hello\n' > f; $RUN cat f >> f; echo "status $?"; cat f`,
		`echo a > x; $RUN tar cf - . > out.tar; echo "status $?"; tar tf out.tar | sort`,
		`printf '1+2\n' > in; $RUN bc /dev/stdin < in`,
		`$RUN sh -c 'echo one; echo two > /dev/stdout; echo three' > out; cat out`,
		`echo old > log; $RUN sh -c 'echo err >&2; echo more > /dev/stderr; echo last >&2' 2>> log; cat log`,
		`$RUN sh -c 'echo a; echo b >&2; echo c; echo d >&2' > log 2>&1; cat log`,
		`echo x > in; $RUN readlink /proc/self/fd/0 /proc/self/fd/1 < in > out; sed "s|$PWD|DIR|" out`,
	} {
		t.Run(script, func(t *testing.T) { hostShell(t, script) })
	}
}

// A guest that fstats and lseeks fds 0-2, in every build flavour, sees what
// the native run sees for regular files (the position shared with the
// host's descriptor: cat goes on where the guest stopped; >> appends) and
// for pipes.
func TestStdFDsFlavours(t *testing.T) {
	for _, v := range variants {
		g := guestBin(t, v, "stdfds")
		t.Run(v, func(t *testing.T) {
			hostShell(t, `printf abcdefghijklmnop > in; echo old > log; ($RUN `+g+`; cat) < in > out 2>> log; cat out log`)
			hostShell(t, `printf abcdefghijklmnop | $RUN `+g+` 2>&1 | cat`)
		})
	}
}
