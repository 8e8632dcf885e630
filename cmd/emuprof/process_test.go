package main

// Processes (issue 9): #! scripts, exec, and later fork, wait and pipelines,
// compared with native runs.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScripts runs #! scripts as the top-level program: the interpreter gets
// binfmt_script's arguments (one optional argument with its blanks, the
// script's path, the original arguments), scripts may name scripts.
func TestScripts(t *testing.T) {
	work := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("hello\nworld\n"))
	zw.Close()
	os.WriteFile(filepath.Join(work, "f.gz"), gz.Bytes(), 0o644)
	script := func(name, text string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	echo := script("echo1", "#! /bin/echo  one arg  \nignored\n")
	script("echo2", "#!"+echo+" x\n")
	script("noarg", "#!/bin/echo\n")
	script("sh1", "#!/bin/sh -e\necho \"$0 $# $*\"; false; echo not reached\n")
	cases := []struct {
		prog string
		args []string
	}{
		// Debian's zcat and gunzip are #! /bin/sh scripts.
		{"/bin/zcat", []string{"f.gz"}},
		{"/bin/sh", []string{"-c", "cp f.gz g.gz && gunzip g.gz && cat g && rm g"}},
		{"/usr/bin/which", []string{"ls", "sh"}},
		{"./echo1", []string{"a", "b c"}},
		{"./echo2", []string{"y"}},
		{echo, nil},
		{"./noarg", []string{"z"}},
		{"./sh1", []string{"1", "2"}},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.prog)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			compare(t, nil, work, c.prog, c.args...)
		})
	}
	// An interpreter that is missing is one line, like a missing program.
	missing := script("missing", "#!/nonexistent/interp\n")
	out := run(t, nil, work, emuprofBin, "run", "--", missing)
	if out.code != 2 || !regexp.MustCompile(`^emuprof: .*missing: interpreter /nonexistent/interp not found in sysroot /\n$`).MatchString(out.stderr) {
		t.Errorf("missing interpreter: exit %d, stderr %q", out.code, out.stderr)
	}
}

// TestExec replaces a process's image in place: same pid, descriptors kept
// unless close-on-exec, #! targets, errors to the caller.
func TestExec(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "in.txt"), []byte("one\ntwo\n"), 0o644)
	os.Mkdir(filepath.Join(work, "d"), 0o755)
	os.WriteFile(filepath.Join(work, "d", "x"), nil, 0o644)
	os.WriteFile(filepath.Join(work, "d", "y"), nil, 0o644)
	cases := []struct {
		prog string
		args []string
	}{
		{"/usr/bin/env", []string{"-i", "A=1", "printenv", "A"}},
		{"/bin/sh", []string{"-c", "exec ls d"}},
		{"/bin/sh", []string{"-c", "exec /nonexistent; echo not reached"}},
		{"/bin/sh", []string{"-c", "exec ./in.txt"}}, // not executable: EACCES
		// fd 3 survives two execs, then becomes cat's stdin.
		{"/bin/sh", []string{"-c", "exec 3<in.txt; exec sh -c 'exec cat <&3'"}},
		// (closerange: natively, the test may inherit other descriptors.)
		{"/usr/bin/python3", []string{"-c", "import os; os.closerange(3, 1 << 16); os.execv('/bin/sh', ['sh', '-c', 'exec 3<in.txt 4>out.txt; exec ls /proc/self/fd'])"}},
		// Python's descriptors are close-on-exec: ls does not see them.
		{"/usr/bin/python3", []string{"-c", "import os; os.closerange(3, 1 << 16); fd = os.open('in.txt', 0); os.execv('/bin/ls', ['ls', '/proc/self/fd'])"}},
		{"/usr/bin/python3", []string{"-c", "import os\ntry: os.execv('/nonexistent', ['x'])\nexcept OSError as e: print(e.errno)"}},
		{"/usr/bin/python3", []string{"-c", "import os; os.execve('/usr/bin/which', ['which', 'sh'], {'PATH': '/bin'})"}}, // a script
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.prog)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			compare(t, nil, work, c.prog, c.args...)
		})
	}
	// The same run gives the same trace.
	digest := func() string {
		out := run(t, nil, work, emuprofBin, append(emuArgs("--trace-digest"), "/bin/sh", "-c", "exec env -i A=1 printenv A")...)
		if out.code != 0 || out.stdout != "1\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
		}
		return digestOf(t, out)
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("trace digests differ: %s, %s", a, b)
	}
}

// TestProcesses runs process trees: fork, vfork, wait, pipes, orphans,
// exit statuses and signals, compared with native runs.
func TestProcesses(t *testing.T) {
	for _, v := range append(variants, "glibc-static-O0") {
		t.Run("procs/"+v, func(t *testing.T) {
			out := compare(t, nil, t.TempDir(), guestBin(t, v, "procs"))
			if out.code != 3 {
				t.Errorf("exit %d, want 3", out.code)
			}
		})
	}
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "src", "sub"), 0o755)
	os.WriteFile(filepath.Join(work, "src", "a.c"), []byte("int a;\nint b;\n"), 0o644)
	os.WriteFile(filepath.Join(work, "src", "sub", "b.c"), []byte("int x;\n"), 0o644)
	os.WriteFile(filepath.Join(work, "src", "c.h"), []byte("int y;\n"), 0o644)
	old := mustTime("2020-03-04T05:06:07Z")
	filepath.Walk(work, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	os.MkdirAll(filepath.Join(work, "proj"), 0o755)
	os.WriteFile(filepath.Join(work, "proj", "a.c"), []byte("int f(void);\nint main(void) { return f(); }\n"), 0o644)
	os.WriteFile(filepath.Join(work, "proj", "b.c"), []byte("int f(void) { return 5; }\n"), 0o644)
	os.WriteFile(filepath.Join(work, "proj", "Makefile"), []byte("p: a.o b.o\n\tgcc -o p a.o b.o\n%.o: %.c\n\tgcc -c $<\n"), 0o644)
	filepath.Walk(work, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	os.WriteFile(filepath.Join(work, "mine"), []byte("a\nb\nc\n"), 0o644)
	os.WriteFile(filepath.Join(work, "older"), []byte("a\nB\nc\n"), 0o644)
	os.WriteFile(filepath.Join(work, "yours"), []byte("a\nb\nC\n"), 0o644)
	cases := []struct {
		prog  string
		args  []string
		stdin []byte
	}{
		{"/bin/bash", []string{"-c", "seq 1 1000 | sort -r | head -3"}, nil},
		{"/bin/sh", []string{"-c", "echo hi | cat; (exit 7); echo $?; sh -c 'exit 3'; echo $?; false | true; echo $?"}, nil},
		{"/bin/sh", []string{"-c", "x=$(echo sub); echo $x $(ls src | wc -l); exit 4"}, nil},
		{"/bin/sh", []string{"-c", "sh -c 'kill -9 $$'; echo $?"}, nil},
		// (sorted: natively, the background jobs' order varies)
		{"/bin/bash", []string{"-c", "{ for i in 1 2 3; do echo $i & done; wait; echo done; } | sort"}, nil},
		{"/usr/bin/find", []string{"src", "-name", "*.c", "-exec", "wc", "-l", "{}", "+"}, nil},
		{"/usr/bin/xargs", []string{"-n1", "echo"}, []byte("a b\nc d\n")},
		{"/usr/bin/diff3", []string{"mine", "older", "yours"}, nil},
		{"/bin/sh", []string{"-c", "tar czf t.tgz src && mkdir -p x && tar xzf t.tgz -C x && tar tzvf t.tgz --utc && find x | sort && rm -r x t.tgz"}, nil},
		{"/usr/bin/python3", []string{"-c", "import subprocess; print(subprocess.run(['echo', 'hi'], capture_output=True).stdout)"}, nil},
		{"/usr/bin/python3", []string{"-c", "import subprocess; print(subprocess.run(['sh', '-c', 'exit 5']).returncode)"}, nil},
		// posix_spawn (CLONE_VM|CLONE_VFORK): a failed exec is reported
		// through the memory the child shares with its parent.
		{"/usr/bin/python3", []string{"-c", "import os\ntry: os.posix_spawn('/nonexistent', ['x'], {})\nexcept OSError as e: print(e.errno)\npid = os.posix_spawn('/bin/sh', ['sh', '-c', 'exit 4'], {}); print(os.waitpid(pid, 0)[1] >> 8)"}, nil},
		// kill between processes: default actions, existence, ESRCH.
		{"/bin/sh", []string{"-c", "sleep 10 & kill $!; wait $!; echo $?"}, nil},
		{"/bin/sh", []string{"-c", "sleep 10 & kill -0 $! && echo alive; kill -9 $!; wait; echo $?; kill -0 99999; echo $?"}, nil},
		{"/bin/sh", []string{"-c", "mkdir repo && cd repo && git init -q && echo hi > f && git add f && " +
			"GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z git -c user.name=a -c user.email=a@b commit -q -m first && " +
			"git log --oneline && git status --short && cd .. && rm -rf repo"}, nil},
		// make runs gcc, which runs cc1, as and collect2, which runs ld.
		{"/bin/sh", []string{"-c", "cd proj && make -j2 && ./p; echo $?; rm -f *.o p"}, nil},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.prog)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			compare(t, c.stdin, work, c.prog, c.args...)
		})
	}
	// A process tree runs the same every time.
	var first string
	for i := 0; i < 3; i++ {
		out := run(t, nil, work, emuprofBin, append(emuArgs("--trace-digest"), "/bin/bash", "-c", "seq 1 1000 | sort -r | head -3")...)
		if out.code != 0 || out.stdout != "999\n998\n997\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
		}
		if d := digestOf(t, out); i == 0 {
			first = d
		} else if d != first {
			t.Errorf("run %d: trace digest %s, first run %s", i+1, d, first)
		}
	}
}

// TestProcessGroups checks process groups and sessions against native
// runs: the pgrp guest (setpgid, getpgid, getpgrp, setsid, getsid with
// Linux's checks, in a session of its own), bash's job control without a
// terminal (set -m: setpgid in parent and child), setsid(1), and an
// interactive bash on a terminal (script(1)'s pty), which moves each job
// into its own group and makes it the terminal's foreground (tcsetpgrp).
func TestProcessGroups(t *testing.T) {
	for _, v := range variants {
		t.Run("pgrp/"+v, func(t *testing.T) {
			compare(t, nil, t.TempDir(), guestBin(t, v, "pgrp"))
		})
	}
	work := t.TempDir()
	for _, c := range []string{
		"set -m; (exit 3) & wait $!; echo $?; cat /dev/null | true; echo ok",
		"/usr/bin/setsid -w /bin/sh -c 'exit 4'; echo $?",
	} {
		t.Run(c, func(t *testing.T) { compare(t, nil, work, "/bin/bash", "-c", c) })
	}
	// On a terminal: "[1] PID", the job's end, the echo.
	want := regexp.MustCompile(`^\[1\] [0-9]+\r\n\[1\]\+  Done +sleep 0\r\nx\r\n$`)
	job := "/bin/bash --norc -ic 'true | cat; sleep 0 & wait; echo x'"
	for _, cmdline := range []string{job, emuprofBin + " run --quiet -- " + job} { // (no status line on the pty)
		out := run(t, nil, work, "/usr/bin/script", "-qec", cmdline, "/dev/null")
		if out.code != 0 || !want.MatchString(out.stdout) {
			t.Errorf("script -qec %q: exit %d, output %q, stderr %q", cmdline, out.code, out.stdout, out.stderr)
		}
	}
}

// TestMakeJobs runs make -j2 over five compilation units: with two jobs
// running, make waits for a child in pselect6 with SIGCHLD unblocked by
// the call's mask only, so the signal must interrupt the wait.
func TestMakeJobs(t *testing.T) {
	work := t.TempDir()
	files := map[string]string{
		"h.h":      "int f1(int);int f2(int);int f3(int);int f4(int);\n",
		"main.c":   "#include <stdio.h>\n#include \"h.h\"\nint main(void) { printf(\"%d\\n\", f1(3)+f2(4)+f3(5)+f4(6)); return 0; }\n",
		"Makefile": "OBJS = main.o f1.o f2.o f3.o f4.o\np: $(OBJS)\n\tgcc -o p $(OBJS)\n%.o: %.c h.h\n\tgcc -O2 -c $<\n",
	}
	for i := 1; i <= 4; i++ {
		files[fmt.Sprintf("f%d.c", i)] = fmt.Sprintf("#include \"h.h\"\nint f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n", i, i)
	}
	old := mustTime("2020-03-04T05:06:07Z")
	for name, text := range files {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	compare(t, nil, work, "/bin/sh", "-c", "make -j2 && ./p; echo $?; rm -f *.o p")
}
