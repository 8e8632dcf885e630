package main

// #! chains (issue 31.9): Linux runs an exec through up to 5 scripts
// (fs/exec.c: handlers at depths 0..5) and fails the 6th with ELOOP.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptChainDepth(t *testing.T) {
	dir := t.TempDir()
	prev, cat := "/bin/cat", "" // cat prints each script of s4's chain
	for i := 0; i <= 5; i++ {
		if i <= 4 {
			cat += "#!" + prev + "\n"
		}
		p := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.WriteFile(p, []byte("#!"+prev+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		prev = p
	}
	// s4 is a chain of 5 scripts, s5 of 6.
	script := fmt.Sprintf("%s/s4; echo $?; %s/s5; echo $?", dir, dir)
	o := compare(t, nil, dir, "/bin/sh", "-c", script)
	if o.stdout != cat+"0\n127\n" {
		t.Errorf("stdout %q", o.stdout)
	}
	// As the program given to emuprof, too.
	e := run(t, nil, dir, emuprofBin, append(emuArgs(), filepath.Join(dir, "s4"))...)
	if e.code != 0 || e.stdout != cat {
		t.Errorf("emuprof run s4: exit %d, stdout %q, stderr %q", e.code, e.stdout, e.stderr)
	}
}

// #! lines longer than the kernel's 256-byte buffer (issue 31.9): without
// a newline in it the line ends before its last byte, and only an
// interpreter name that may have been cut is refused (ENOEXEC, which the
// shell answers by running the file itself), as fs/binfmt_script.c.
func TestLongScriptLine(t *testing.T) {
	dir := t.TempDir()
	lines := map[string]string{
		"argcut":  "#!/bin/echo " + strings.Repeat("a", 286) + "\n",
		"argpast": "#!/bin/echo" + strings.Repeat(" ", 290) + "b\n",
		"namecut": "#!" + strings.Repeat("/", 290) + "bin/echo\n",
		"blank":   "#!" + strings.Repeat(" ", 300) + "\n",
		"tab":     "#!/bin/echo\t" + strings.Repeat("c", 300) + "\n",
	}
	var script string
	for _, name := range []string{"argcut", "argpast", "namecut", "blank", "tab"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(lines[name]), 0o755); err != nil {
			t.Fatal(err)
		}
		script += "./" + name + "; echo " + name + " $?; "
	}
	compare(t, nil, dir, "/bin/sh", "-c", script)
}
