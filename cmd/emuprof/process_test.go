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
