package main

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// emuprof runs the ELF files Linux runs and refuses those it refuses. The
// files are hello with its header patched: Linux reads the header and the
// program headers as x86-64's (EI_CLASS and EI_DATA are not looked at),
// never the section headers (emuprof refused e_shoff past the end of the
// file and a bad e_shstrndx), and refuses a PT_INTERP that does not end
// with a NUL and a file without execute permission. A file for another
// machine is named by its own header (a big-endian one was
// "ALPHA_STD+15831").
func TestELFAcceptedLikeLinux(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	variant := func(name, from string, mode os.FileMode, patch func(b []byte)) string {
		data, err := os.ReadFile(guestBin(t, from, "hello"))
		if err != nil {
			t.Fatal(err)
		}
		patch(data)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	runs := []string{
		variant("shoff-past-eof", "glibc-static", 0o755, func(b []byte) { le.PutUint64(b[0x28:], uint64(len(b))+1<<20) }),
		variant("bad-shstrndx", "glibc-static", 0o755, func(b []byte) { le.PutUint16(b[0x3e:], 999) }),
		variant("big-endian-flag", "glibc-static", 0o755, func(b []byte) { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB) }),
		variant("class32-flag", "glibc-static-pie", 0o755, func(b []byte) { b[elf.EI_CLASS] = byte(elf.ELFCLASS32) }),
		variant("dynamic-no-sections", "glibc-dynamic", 0o755, func(b []byte) {
			le.PutUint64(b[0x28:], 0)
			le.PutUint16(b[0x3c:], 0)
			le.PutUint16(b[0x3e:], 0)
		}),
	}
	for _, p := range runs {
		if out := compare(t, nil, dir, p); out.code != 0 || out.stdout != "hello, world\n" {
			t.Errorf("%s: exit %d, stdout %q", filepath.Base(p), out.code, out.stdout)
		}
	}
	interpNoNUL := variant("interp-no-nul", "glibc-dynamic", 0o755, func(b []byte) {
		f, err := elf.NewFile(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		off := le.Uint64(b[0x20:])
		for i, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				le.PutUint64(b[off+uint64(i)*56+32:], p.Filesz-1) // drop the NUL
			}
		}
	})
	refused := []struct{ prog, want string }{
		{interpNoNUL, interpNoNUL + ": PT_INTERP not NUL-terminated"},
		{variant("no-x", "glibc-static", 0o644, func([]byte) {}), filepath.Join(dir, "no-x") + ": permission denied (not executable)"},
		{variant("s390x", "glibc-static", 0o755, func(b []byte) {
			b[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
			binary.BigEndian.PutUint16(b[18:], uint16(elf.EM_S390))
		}), filepath.Join(dir, "s390x") + ": not an x86-64 ELF (machine s390, big-endian)"},
		{variant("i386", "glibc-static", 0o755, func(b []byte) {
			b[elf.EI_CLASS] = byte(elf.ELFCLASS32)
			le.PutUint16(b[18:], uint16(elf.EM_386))
		}), filepath.Join(dir, "i386") + ": not an x86-64 ELF (machine i386, 32-bit)"},
		{variant("ppc", "glibc-static", 0o755, func(b []byte) {
			b[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
			binary.BigEndian.PutUint16(b[18:], uint16(elf.EM_PPC64))
		}), filepath.Join(dir, "ppc") + ": not an x86-64 ELF (machine PowerPC64, big-endian)"},
	}
	for _, tc := range refused {
		out := run(t, nil, dir, emuprofBin, "run", "--", tc.prog)
		noGoTrace(t, tc.prog, out.stderr)
		if out.code != 2 || out.stdout != "" || out.stderr != "emuprof: "+tc.want+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", filepath.Base(tc.prog), out.code, out.stdout, out.stderr, "emuprof: "+tc.want)
		}
	}
}

// The malformed-ELF campaign's last difference but one
// (scripts/elf-campaign.py, seed 7): hello with its PT_GNU_RELRO turned into
// a read-only PT_LOAD over .data. Linux maps each PT_LOAD in turn with
// MAP_FIXED over the ones before, so the first store to .data faults
// (SIGSEGV, 139); emuprof gave the shared pages the union of the
// protections and ran it to its end.
func TestELFLaterLoadWins(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	b, err := os.ReadFile(guestBin(t, "glibc-static", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	relro := -1
	for i, p := range f.Progs {
		if p.Type == elf.PT_GNU_RELRO {
			relro = i
		}
	}
	if relro < 0 {
		t.Fatal("hello has no PT_GNU_RELRO")
	}
	le.PutUint32(b[le.Uint64(b[0x20:])+uint64(relro)*56:], uint32(elf.PT_LOAD))
	p := filepath.Join(dir, "relro-load")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	native := run(t, nil, dir, p)
	emu := run(t, nil, dir, emuprofBin, "run", "--", p)
	noGoTrace(t, "relro-load", emu.stderr)
	if native.code != 139 || emu.code != 139 || !strings.Contains(emu.stderr, "SIGSEGV") || native.stdout != emu.stdout {
		t.Errorf("native exit %d, emuprof %d (stderr %q), want 139 for both; stdout native %q, emuprof %q", native.code, emu.code, emu.stderr, native.stdout, emu.stdout)
	}
}
