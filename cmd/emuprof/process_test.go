package main

// Processes (issue 9): #! scripts, exec, and later fork, wait and pipelines,
// compared with native runs.

import (
	"bytes"
	"compress/gzip"
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
		{"/bin/zcat", []string{"f.gz"}}, // Debian's zcat is a #! /bin/sh script
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
		m := regexp.MustCompile(`trace digest ([0-9a-f]+)`).FindStringSubmatch(out.stderr)
		if out.code != 0 || out.stdout != "1\n" || m == nil {
			t.Fatalf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
		}
		return m[1]
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("trace digests differ: %s, %s", a, b)
	}
}
