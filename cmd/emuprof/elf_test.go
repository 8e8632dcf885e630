package main

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
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

// The malformed-ELF campaign's last differences (scripts/elf-campaign.py,
// seed 7), each with the status of its native run: a file cut short inside
// its text, whose data segment has no file bytes, runs on Linux until it
// touches a page past the end of the file (SIGBUS, 135; emuprof said
// SIGSEGV); cut short inside a segment whose BSS tail execve must zero,
// it dies in execve (SIGSEGV, 139); its PT_GNU_RELRO turned into a
// read-only PT_LOAD maps over .data (Linux maps each PT_LOAD in turn with
// MAP_FIXED), so the first store there faults (139; emuprof gave the pages
// the union of the protections and ran it to its end).
func TestELFCampaignLeftovers(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	base, err := os.ReadFile(guestBin(t, "glibc-static", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(strings.NewReader(string(base)))
	if err != nil {
		t.Fatal(err)
	}
	phoff := le.Uint64(base[0x20:])
	header := func(b []byte, typ elf.ProgType, flags elf.ProgFlag) []byte { // the first such program header
		for i, p := range f.Progs {
			if p.Type == typ && p.Flags&flags == flags {
				return b[phoff+uint64(i)*56:]
			}
		}
		t.Fatalf("hello has no %v %v segment", typ, flags)
		return nil
	}
	text := header(base, elf.PT_LOAD, elf.PF_X)
	cut := le.Uint64(text[8:]) + le.Uint64(text[32:])/2 // in the middle of the text
	for _, c := range []struct {
		name  string
		patch func(b []byte) []byte
		want  int
	}{
		{"text-cut-data-empty", func(b []byte) []byte {
			le.PutUint64(header(b, elf.PT_LOAD, elf.PF_W)[32:], 0)
			return b[:cut]
		}, 135},
		{"text-cut", func(b []byte) []byte { return b[:cut] }, 139},
		{"relro-load", func(b []byte) []byte {
			le.PutUint32(header(b, elf.PT_GNU_RELRO, 0), uint32(elf.PT_LOAD))
			return b
		}, 139},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.patch(slices.Clone(base)), 0o755); err != nil {
			t.Fatal(err)
		}
		native := run(t, nil, dir, p)
		emu := run(t, nil, dir, emuprofBin, "run", "--", p)
		noGoTrace(t, c.name, emu.stderr)
		if native.code != c.want || emu.code != c.want || native.stdout != emu.stdout {
			t.Errorf("%s: native exit %d, emuprof %d (stderr %q), want %d; stdout native %q, emuprof %q", c.name, native.code, emu.code, emu.stderr, c.want, native.stdout, emu.stdout)
		}
	}
}
