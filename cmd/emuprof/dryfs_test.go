package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Under `run --dry-fs` the guest sees its own file changes as natively (a
// counter file deleted and created again, an appended log, a rename into
// place, read back by a second run of the guest and by sort -o and cat in
// the same process tree), in every build flavour (the dynamic one with
// lazy binding), and the real directory is left as it was.
func TestDryFSGuest(t *testing.T) {
	old := time.Unix(1_600_000_000, 0)
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "pathsfs")
			script := prog + "; " + prog + "; sort -r -o log.txt log.txt; cat state.txt log.txt; md5sum out/data; ls -R"
			setup := func() string {
				d := t.TempDir()
				writeFile(t, filepath.Join(d, "state.txt"), "2\n")
				writeFile(t, filepath.Join(d, "log.txt"), "earlier\n")
				return d
			}
			nat := run(t, nil, setup(), "/bin/sh", "-c", script)
			if nat.code != 0 || !strings.Contains(nat.stdout, "state 3 sum") {
				t.Fatalf("native: exit %d, stdout %q, stderr %q", nat.code, nat.stdout, nat.stderr)
			}
			dir := setup()
			start := fsTree(t, dir, old)
			emu := run(t, nil, dir, emuprofBin, append(emuArgs("--dry-fs"), "/bin/sh", "-c", script)...)
			if emu.code != 0 || emu.stdout != nat.stdout {
				t.Errorf("--dry-fs: exit %d, stdout\n%s\nnative\n%s\nstderr %s", emu.code, emu.stdout, nat.stdout, emu.stderr)
			}
			if now := fsTree(t, dir, old); !slices.Equal(now, start) {
				t.Errorf("--dry-fs changed the directory:\n%s\nwas\n%s", strings.Join(now, "\n"), strings.Join(start, "\n"))
			}
		})
	}
}
