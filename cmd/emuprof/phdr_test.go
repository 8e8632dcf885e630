package main

// AT_PHDR (issue 31.9): Linux computes it from e_phoff and the PT_LOAD
// holding it, never from PT_PHDR, so an ELF with a wrong PT_PHDR runs.

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func TestWrongPTPHDR(t *testing.T) {
	d, err := os.ReadFile(guestBin(t, "glibc-static", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	phoff, phent, phnum := le.Uint64(d[32:]), uint64(le.Uint16(d[54:])), uint64(le.Uint16(d[56:]))
	patched := false
	for i := range phnum {
		h := d[phoff+i*phent:]
		if le.Uint32(h) == 4 { // PT_NOTE becomes a PT_PHDR at an unmapped address
			le.PutUint32(h, 6)
			le.PutUint64(h[16:], 0x1000)
			patched = true
			break
		}
	}
	if !patched {
		t.Fatal("hello has no PT_NOTE to turn into a PT_PHDR")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "badphdr")
	if err := os.WriteFile(prog, d, 0o755); err != nil {
		t.Fatal(err)
	}
	if o := compare(t, nil, dir, prog); o.code != 0 || o.stdout != "hello, world\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}
