package main

// ETXTBSY (issue 31.4): a running executable cannot be opened for writing
// or truncated, by its own process or another of the run, as on Linux.
// The shell is a copy in a temp dir: we run as root, and a write that got
// through would change it.

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRunningExecutableBusy(t *testing.T) {
	src, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"native", "emuprof"} {
		dir := t.TempDir()
		sh := filepath.Join(dir, "sh")
		if err := os.WriteFile(sh, src, 0o755); err != nil {
			t.Fatal(err)
		}
		// The shell appends to itself (open O_WRONLY|O_APPEND) and a
		// child truncates it (truncate(2)) while it runs.
		script := "echo x >> " + sh + "; echo rc=$?; truncate -s 0 " + sh + "; echo rc=$?"
		var o outcome
		if who == "native" {
			o = run(t, nil, dir, sh, "-c", script)
		} else {
			o = run(t, nil, dir, emuprofBin, append(emuArgs(), sh, "-c", script)...)
		}
		want := "rc=2\nrc=1\n"
		if o.stdout != want || !bytes.Contains([]byte(o.stderr), []byte("Text file busy")) {
			t.Errorf("%s: stdout %q, stderr %q; want %q and ETXTBSY", who, o.stdout, o.stderr, want)
		}
		if got, err := os.ReadFile(sh); err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: the running shell's file changed (%d bytes, %v)", who, len(got), err)
		}
	}
}
