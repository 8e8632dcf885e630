package loader

import (
	"debug/elf"
	"encoding/binary"
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
	patchAll := func(at map[int][]byte) []byte {
		b := minimalELF()
		for off, v := range at {
			copy(b[off:], v)
		}
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
		{write("i386", patchAll(map[int][]byte{4: {byte(elf.ELFCLASS32)}, 18: {3, 0}})), "not an x86-64 ELF (machine i386, 32-bit)"},
		{write("s390x", patchAll(map[int][]byte{5: {byte(elf.ELFDATA2MSB)}, 18: {0, 22}})), "not an x86-64 ELF (machine s390, big-endian)"},
		{write("ppc", patchAll(map[int][]byte{4: {1}, 5: {2}, 18: {0, 20}})), "not an x86-64 ELF (machine PowerPC, 32-bit big-endian)"},
		{write("unknown", patch(18, 0x34, 0x12)), "not an x86-64 ELF (machine 0x1234)"},
		{write("type", patch(16, 0, 0xfe)), "not an executable (ELF type 0xfe00)"},
		{write("phnum0", patch(56, 0, 0)), "truncated or corrupt ELF: no program headers"},
		{write("phent", patch(54, 32, 0)), "truncated or corrupt ELF: program header size 32, want 56"},
		{write("x32", patchAll(map[int][]byte{4: {1}, 54: {32, 0}})), "32-bit ELF (x32) is not supported"},
		{write("phoff", patch(32, 0xf0, 0xff)), "truncated or corrupt ELF: program headers [0xfff0, +0x70) beyond end of file"},
		{write("interp-nonul", interpELF(0xd0, 8)), "PT_INTERP not NUL-terminated"},
		{write("interp-short", interpELF(0x127, 1)), "PT_INTERP of 1 bytes (Linux takes 2 to 4096)"},
		{write("interp-long", interpELF(0, 4097)), "PT_INTERP of 4097 bytes (Linux takes 2 to 4096)"},
		{write("interp-out", interpELF(0x120, 0x1000)), "PT_INTERP outside the file"},
		{write("interp-empty", interpELF(0x12e, 2)), "PT_INTERP empty"},
		// PT_INTERP is read in a loop of its own before the PT_LOADs
		// (ENOEXEC, not the SIGSEGV of the bad PT_LOAD before it).
		{write("interp-after-bad-load", patchAll(map[int][]byte{
			0x40 + 32: {0, 0, 0, 0, 0, 1}, // the first PT_LOAD's p_filesz past the end of the file
			0x40 + 56: interpELF(0, 5000)[0x40+56 : 0x40+112],
		})), "PT_INTERP of 5000 bytes"},
		{write("arm64", patch(18, 183, 0)), "not an x86-64 ELF (machine AArch64)"},
		{write("rel", patch(16, byte(elf.ET_REL), 0)), "not an executable (ELF type REL)"},
		{write("core", patch(16, byte(elf.ET_CORE), 0)), "not an executable (ELF type CORE)"},
		{write("short", minimalELF()[:40]), "truncated or corrupt ELF: file too short for an ELF header (40 bytes)"},
		{write("noload", noLoads), "no loadable segments"},
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

// interpELF is minimalELF with its second program header turned into a
// PT_INTERP of the file bytes [off, off+size).
func interpELF(off, size uint64) []byte {
	b := minimalELF()
	ph := b[64+56:]
	binary.LittleEndian.PutUint32(ph, uint32(elf.PT_INTERP))
	binary.LittleEndian.PutUint64(ph[8:], off)
	binary.LittleEndian.PutUint64(ph[32:], size)
	binary.LittleEndian.PutUint64(ph[40:], size)
	return b
}

// What Linux runs, emuprof loads: the kernel reads the header and program
// headers as x86-64's (EI_CLASS and EI_DATA are not looked at) and never the
// section headers, so a table past the end of the file or a bad e_shstrndx
// only costs the symbols (e_shstrndx: only the section names). A
// NUL-terminated PT_INTERP is the C string it starts with. Natively, each of
// these prints hello, world (checked on Linux 6.x).
func TestOpenWhatLinuxRuns(t *testing.T) {
	le := binary.LittleEndian
	patch := func(f func(b []byte)) []byte {
		b := minimalELF()
		f(b)
		return b
	}
	tests := []struct {
		name    string
		data    []byte
		symbols bool
		interp  string
	}{
		{"shoff past EOF", patch(func(b []byte) { le.PutUint64(b[0x28:], uint64(len(b))+4096) }), false, ""},
		{"bad shstrndx", patch(func(b []byte) { le.PutUint16(b[0x3e:], 999) }), true, ""},
		{"bad shentsize", patch(func(b []byte) { le.PutUint16(b[0x3a:], 13) }), false, ""},
		{"huge shnum", patch(func(b []byte) { le.PutUint16(b[0x3c:], 0xffff) }), false, ""},
		{"EI_DATA big-endian", patch(func(b []byte) { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB) }), true, ""},
		{"EI_CLASS 32", patch(func(b []byte) { b[elf.EI_CLASS] = byte(elf.ELFCLASS32) }), true, ""},
		{"EI_CLASS 0", patch(func(b []byte) { b[elf.EI_CLASS] = 0 }), true, ""},
		{"EI_VERSION 9", patch(func(b []byte) { b[elf.EI_VERSION] = 9 }), true, ""},
		{"e_version 7", patch(func(b []byte) { le.PutUint32(b[0x14:], 7) }), true, ""},
		{"interp with NULs", interpELF(0x121, 14), true, "_start"},
	}
	for _, tc := range tests {
		o, err := OpenBytes(tc.name, tc.data)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if o.Entry != 0x4000b0 || o.Phnum != 2 || o.PhdrVaddr != 0x400040 || o.Interp != tc.interp {
			t.Errorf("%s: entry %#x phnum %d phdr %#x interp %q", tc.name, o.Entry, o.Phnum, o.PhdrVaddr, o.Interp)
		}
		if tc.interp != "" {
			continue // the second PT_LOAD is gone
		}
		if l, err := Plan(o, nil); err != nil {
			t.Errorf("%s: plan: %v", tc.name, err)
		} else {
			checkMappings(t, l)
		}
		st := NewSymbolTable()
		lo, hi := o.Span()
		if err := st.AddObjectFrom(o, 0, lo, hi); err != nil {
			t.Fatal(err)
		}
		if a, ok := st.FuncAddr("_start"); (ok && a == 0x4000b0) != tc.symbols {
			t.Errorf("%s: symbol _start at %#x (%v), want found: %v", tc.name, a, ok, tc.symbols)
		}
	}
}

// Like execve, a file without execute permission is refused before it is
// read (EACCES), as are directories; root needs one execute bit.
func TestCheckExec(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want string
	}{
		{0o755, ""},
		{0o644, "permission denied (not executable)"},
		{0o000, "permission denied (not executable)"},
	} {
		p := filepath.Join(dir, tc.mode.String())
		if err := os.WriteFile(p, minimalELF(), tc.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, tc.mode)
		err := CheckExec(p)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.mode, err)
			}
			continue
		}
		if err == nil || err.Error() != p+": "+tc.want {
			t.Errorf("%v: got %v, want %q", tc.mode, err, p+": "+tc.want)
		}
	}
	if err := CheckExec(dir); err == nil || !strings.HasSuffix(err.Error(), ": is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, _, err := ResolveProgram(filepath.Join(dir, "-rw-r--r--"), nil, "/"); err == nil ||
		!strings.HasSuffix(err.Error(), "permission denied (not executable)") {
		t.Errorf("ResolveProgram of a file without x: %v", err)
	}
}
