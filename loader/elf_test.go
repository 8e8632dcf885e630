package loader

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenMinimal(t *testing.T) {
	o, err := OpenBytes("min", minimalELF())
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != elf.ET_EXEC || o.Entry != 0x4000b0 || o.Interp != "" || len(o.Loads) != 2 {
		t.Fatalf("got type %v entry %#x interp %q loads %d", o.Type, o.Entry, o.Interp, len(o.Loads))
	}
	if o.PhOff != 64 || o.Phent != 56 || o.Phnum != 2 || o.PhdrVaddr != 0x400040 {
		t.Fatalf("phdrs: off %d ent %d num %d vaddr %#x", o.PhOff, o.Phent, o.Phnum, o.PhdrVaddr)
	}
	if lo, hi := o.Span(); lo != 0x400000 || hi != 0x402000 {
		t.Fatalf("span [%#x, %#x)", lo, hi)
	}
}

func TestOpenBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	patch := func(off int, bytes ...byte) []byte {
		b := minimalELF()
		copy(b[off:], bytes)
		return b
	}
	noLoads := patch(0x40, 2, 0, 0, 0) // first phdr becomes PT_DYNAMIC...
	copy(noLoads[0x40+56:], []byte{4}) // ...and the second PT_NOTE
	tests := []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "is a directory"},
		{write("text", []byte("#!/bin/sh\necho hi\n")), "not an ELF file"},
		{write("empty", nil), "not an ELF file"},
		{write("elf32", patch(4, byte(elf.ELFCLASS32))), "32-bit ELF, only x86-64 (ELF64) is supported"},
		{write("arm64", patch(18, 183, 0)), "not an x86-64 ELF (machine AArch64)"},
		{write("rel", patch(16, byte(elf.ET_REL), 0)), "not an executable (ELF type REL)"},
		{write("core", patch(16, byte(elf.ET_CORE), 0)), "not an executable (ELF type CORE)"},
		{write("short", minimalELF()[:40]), "truncated or corrupt ELF: file too short for an ELF header (40 bytes)"},
		{write("noload", noLoads), "no loadable segments"},
		{write("cut", minimalELF()[:0xd4]), "truncated or corrupt ELF: "},
	}
	for _, tc := range tests {
		_, err := Open(tc.path)
		var bad *BadInputError
		if !errors.As(err, &bad) {
			t.Errorf("%s: got %v (%T), want a *BadInputError", tc.path, err, err)
			continue
		}
		if bad.Path != tc.path || !strings.HasPrefix(err.Error(), tc.path+": "+tc.want) {
			t.Errorf("got %q, want %q", err, tc.path+": "+tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
	}
}

// Every prefix of a real ELF gives a one-line *BadInputError or an object,
// never a panic.
func TestOpenPrefixes(t *testing.T) {
	inputs := map[string][]byte{"min": minimalELF()}
	for _, f := range []string{"static", "dynamic"} {
		if p, ok := built[f]; ok {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			inputs[f] = data
		}
	}
	for name, data := range inputs {
		for n := 0; n <= 512 && n <= len(data); n++ {
			o, err := OpenBytes(name, data[:n])
			if err != nil {
				var bad *BadInputError
				if !errors.As(err, &bad) || !strings.HasPrefix(err.Error(), name+": ") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s[:%d]: bad error %q (%T)", name, n, err, err)
				}
				continue
			}
			if l, err := Plan(o, nil); err == nil {
				checkMappings(t, l)
			}
		}
	}
}
