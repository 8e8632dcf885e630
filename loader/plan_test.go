package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkExe checks what every planned executable must satisfy: AT_PHDR
// points at the program headers, each segment's file bytes are mapped at
// its address and its BSS is zero (including the tail of the page where
// the file bytes end), and brk starts above everything.
func checkExe(t *testing.T, o *Object, l *Layout) {
	t.Helper()
	checkMappings(t, l)
	phdrs := o.data[o.PhOff : o.PhOff+o.Phnum*o.Phent]
	if got := memory(t, l, l.Phdr, len(phdrs)); !bytes.Equal(got, phdrs) {
		t.Errorf("AT_PHDR %#x does not hold the program headers", l.Phdr)
	}
	if l.Phent != 56 || l.Phnum != o.Phnum {
		t.Errorf("phent %d phnum %d", l.Phent, l.Phnum)
	}
	sawBSS := false
	for _, p := range o.Loads {
		start := p.Vaddr + l.ExeBase
		if got := memory(t, l, start, int(p.Filesz)); !bytes.Equal(got, o.data[p.Off:p.Off+p.Filesz]) {
			t.Errorf("segment at %#x: wrong file bytes", start)
		}
		if p.Memsz > p.Filesz {
			sawBSS = true
			end := pageUp(start + p.Memsz)
			bss := memory(t, l, start+p.Filesz, int(end-(start+p.Filesz)))
			if !bytes.Equal(bss, make([]byte, len(bss))) {
				t.Errorf("segment at %#x: BSS not zero", start)
			}
		}
		if l.BrkStart < start+p.Memsz || l.BrkStart%PageSize != 0 {
			t.Errorf("brk %#x below segment end %#x", l.BrkStart, start+p.Memsz)
		}
	}
	if !sawBSS {
		t.Errorf("test binary has no BSS")
	}
}

func TestPlanStatic(t *testing.T) {
	path := testBinary(t, "static")
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != elf.ET_EXEC || o.Interp != "" {
		t.Fatalf("type %v interp %q", o.Type, o.Interp)
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.ExeBase != 0 || l.InterpBase != 0 || l.Entry != o.Entry || l.ExeEntry != o.Entry {
		t.Errorf("base %#x interp base %#x entry %#x exe entry %#x, want 0 0 %#x", l.ExeBase, l.InterpBase, l.Entry, l.ExeEntry, o.Entry)
	}
	if l.Phdr != o.Loads[0].Vaddr+o.PhOff { // no PT_PHDR: first PT_LOAD has offset 0
		t.Errorf("phdr %#x", l.Phdr)
	}
	checkExe(t, o, l)
}

func TestPlanStaticPIE(t *testing.T) {
	o, err := Open(testBinary(t, "static-pie"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != elf.ET_DYN || o.Interp != "" {
		t.Fatalf("type %v interp %q", o.Type, o.Interp)
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.ExeBase != PIEBase || l.Entry != PIEBase+o.Entry || l.ExeEntry != l.Entry || l.InterpBase != 0 {
		t.Errorf("base %#x entry %#x exe entry %#x interp base %#x", l.ExeBase, l.Entry, l.ExeEntry, l.InterpBase)
	}
	if l.Phdr != PIEBase+o.PhdrVaddr || o.PhdrVaddr != o.PhOff {
		t.Errorf("phdr %#x (vaddr %#x)", l.Phdr, o.PhdrVaddr)
	}
	checkExe(t, o, l)
}

func TestPlanDynamic(t *testing.T) {
	path := testBinary(t, "dynamic")
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != elf.ET_DYN || o.Interp != "/lib64/ld-linux-x86-64.so.2" {
		t.Fatalf("type %v interp %q", o.Type, o.Interp)
	}
	var phdr *elf.ProgHeader
	f, _ := elf.Open(path)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_PHDR {
			phdr = &p.ProgHeader
		}
	}
	if phdr == nil || o.PhdrVaddr != phdr.Vaddr {
		t.Fatalf("PT_PHDR %v, PhdrVaddr %#x", phdr, o.PhdrVaddr)
	}
	if _, err := Plan(o, nil); err == nil || !strings.Contains(err.Error(), "interpreter") {
		t.Errorf("Plan without interpreter: %v", err)
	}
	ip, err := ResolveInterp(path, o.Interp, "/")
	if err != nil {
		t.Fatalf("%v (the host's dynamic loader: apt-get install libc6)", err)
	}
	interp, err := Open(ip)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Plan(o, interp)
	if err != nil {
		t.Fatal(err)
	}
	if l.ExeBase != PIEBase || l.ExeEntry != PIEBase+o.Entry || l.Phdr != PIEBase+phdr.Vaddr {
		t.Errorf("base %#x entry %#x phdr %#x", l.ExeBase, l.ExeEntry, l.Phdr)
	}
	if l.InterpBase != InterpBase || l.Entry != InterpBase+interp.Entry || l.Interp != interp {
		t.Errorf("interp base %#x entry %#x", l.InterpBase, l.Entry)
	}
	checkExe(t, o, l)
	ilo, ihi := interp.Span()
	if got := memory(t, l, InterpBase, 4); string(got) != elf.ELFMAG {
		t.Errorf("no ELF header at the interpreter base: %q", got)
	}
	if _, hi := o.Span(); l.BrkStart != PIEBase+hi || l.BrkStart > InterpBase+ilo {
		t.Errorf("brk %#x (interp at [%#x, %#x))", l.BrkStart, InterpBase+ilo, InterpBase+ihi)
	}
}

// Two segments sharing a page: the page gets both data pieces and the
// second's protection (Linux maps it over the first with MAP_FIXED: the
// campaign's extra read-only PT_LOAD over .data faults natively); the
// second segment's BSS follows as anonymous pages.
func TestPlanSharedPage(t *testing.T) {
	data := bytes.Repeat([]byte{0xee}, 0x1000)
	copy(data, bytes.Repeat([]byte{0xaa}, 0x800))
	copy(data[0x900:], bytes.Repeat([]byte{0xbb}, 0x100))
	o := &Object{
		Path: "shared",
		Type: elf.ET_EXEC,
		Loads: []elf.ProgHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0x400000, Filesz: 0x800, Memsz: 0x800},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x900, Vaddr: 0x400900, Filesz: 0x100, Memsz: 0x2000},
		},
		data: data,
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMappings(t, l)
	if len(l.Mappings) != 2 {
		t.Fatalf("got %d mappings, want 2: %+v", len(l.Mappings), l.Mappings)
	}
	m0, m1 := l.Mappings[0], l.Mappings[1]
	if m0.Addr != 0x400000 || m0.Size != 0x1000 || m0.Prot != ProtRead|ProtWrite || m0.Name != "shared" {
		t.Errorf("shared page: %#x+%#x prot %d name %q", m0.Addr, m0.Size, m0.Prot, m0.Name)
	}
	if m1.Addr != 0x401000 || m1.Size != 0x2000 || m1.Prot != ProtRead|ProtWrite || m1.Name != "" || len(m1.Data) != 0 {
		t.Errorf("bss: %#x+%#x prot %d name %q", m1.Addr, m1.Size, m1.Prot, m1.Name)
	}
	// As Linux maps it: the first segment's file page whole (it has no
	// BSS), then the second's, the same page, whose BSS tail padzero
	// clears.
	want := make([]byte, 0x1000)
	copy(want, data[:0xa00])
	if got := memory(t, l, 0x400000, 0x1000); !bytes.Equal(got, want) {
		t.Errorf("shared page content wrong")
	}
	if l.BrkStart != 0x403000 {
		t.Errorf("brk %#x", l.BrkStart)
	}
}

// The BSS of a segment that ends mid-page must not show the file bytes that
// follow the segment in the file; the bytes before it in its first page
// are the file's, as elf_map maps whole file pages.
func TestPlanBSSTail(t *testing.T) {
	data := bytes.Repeat([]byte{0xff}, 0x3000)
	o := &Object{
		Path: "tail",
		Type: elf.ET_DYN,
		Loads: []elf.ProgHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0, Filesz: 0x1000, Memsz: 0x1000},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x1e00, Vaddr: 0x2e00, Filesz: 0x10, Memsz: 0x1300},
		},
		data: data,
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMappings(t, l)
	got := memory(t, l, PIEBase+0x2000, 0x2000)
	want := make([]byte, 0x2000)
	copy(want, data[0x1000:0x1e10])
	if !bytes.Equal(got, want) {
		t.Errorf("data page content wrong")
	}
	for _, m := range l.Mappings {
		if m.Addr == PIEBase+0x2000 && (m.FileOff != 0x1000 || m.Name != "tail") {
			t.Errorf("data page named %q at offset %#x", m.Name, m.FileOff)
		}
	}
	if l.BrkStart != PIEBase+0x5000 {
		t.Errorf("brk %#x", l.BrkStart)
	}
}

// The rest of a segment's last file page is what elf_map maps there, the
// file's bytes (and zeros past the end of the file), unless padzero clears
// it: only for a writable segment with a BSS. A read-only one keeps them
// (padzero fails and execve goes on: the campaign's mutant whose first
// PT_LOAD had p_filesz 1 ran natively and crashed under emuprof), so does
// one without a BSS.
func TestPlanPageTails(t *testing.T) {
	data := bytes.Repeat([]byte{0xcc}, 0x2800)
	o := &Object{
		Path: "tails",
		Type: elf.ET_EXEC,
		Loads: []elf.ProgHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0, Vaddr: 0x400000, Filesz: 1, Memsz: 0x518},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x1000, Vaddr: 0x401000, Filesz: 0x10, Memsz: 0x10},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2000, Vaddr: 0x402000, Filesz: 0x10, Memsz: 0x20},
		},
		data: data,
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMappings(t, l)
	want := bytes.Repeat([]byte{0xcc}, 0x3000)
	clear(want[0x2010:])       // padzero
	clear(want[0x2800:0x3000]) // past the end of the file
	if got := memory(t, l, 0x400000, 0x3000); !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("byte at %#x is %#x, want %#x", 0x400000+i, got[i], want[i])
			}
		}
	}
}

// A segment whose file range runs past the end of the file is mapped, its
// pages past the end as such (SIGBUS when touched), but where a later
// segment maps them again; its BSS starting inside such a page is SIGSEGV
// at load (padzero's EFAULT).
func TestPlanPastEOF(t *testing.T) {
	data := bytes.Repeat([]byte{0xcc}, 0x1800)
	o := &Object{
		Path: "cut",
		Type: elf.ET_EXEC,
		Loads: []elf.ProgHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0x400000, Filesz: 0x4000, Memsz: 0x4000},
			{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0x10000001000, Vaddr: 0x403000, Filesz: 0x10, Memsz: 0x10},
		},
		data: data,
	}
	l, err := Plan(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMappings(t, l)
	if want := [][2]uint64{{0x402000, 0x403000}, {0x403000, 0x404000}}; fmt.Sprint(l.PastEOF) != fmt.Sprint(want) {
		t.Errorf("past EOF %#x, want %#x", l.PastEOF, want)
	}
	want := make([]byte, 0x2000)
	copy(want, data)
	if got := memory(t, l, 0x400000, 0x2000); !bytes.Equal(got, want) {
		t.Errorf("the file's bytes, then zeros to the end of its last page: wrong")
	}
	o.Loads[1].Off, o.Loads[1].Vaddr = 0x1000, 0x401000 // the second maps the third page again
	if l, err = Plan(o, nil); err != nil || fmt.Sprint(l.PastEOF) != fmt.Sprint([][2]uint64{{0x402000, 0x404000}}) {
		t.Errorf("later segment over the first: past EOF %#x (%v)", l.PastEOF, err)
	}
	o.Loads = append(o.Loads, elf.ProgHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2010, Vaddr: 0x405010, Filesz: 0x10, Memsz: 0x100})
	_, err = Plan(o, nil)
	var bad *BadInputError
	if !errors.As(err, &bad) || bad.Killed != 11 {
		t.Errorf("BSS in a page past the end: %v", err)
	}
}

// A PT_LOAD whose file offset and address differ in their page offsets
// cannot be mapped (elf_map's mmap: EINVAL): killed, as past the point of
// no return.
func TestPlanIncongruentOffset(t *testing.T) {
	b := minimalELF()
	binary.LittleEndian.PutUint64(b[64+8:], 8) // the first PT_LOAD's p_offset
	_, err := OpenBytes("incongruent", b)
	var bad *BadInputError
	if !errors.As(err, &bad) || bad.Killed != 11 || !strings.Contains(err.Error(), "different offsets in their pages") {
		t.Fatalf("got %v", err)
	}
}

func TestPlanRejectsPageZero(t *testing.T) {
	o := &Object{Path: "low", Type: elf.ET_EXEC, data: make([]byte, 16),
		Loads: []elf.ProgHeader{{Type: elf.PT_LOAD, Flags: elf.PF_R, Vaddr: 0x1000, Filesz: 16, Memsz: 16}}}
	_, err := Plan(o, nil)
	var bad *BadInputError
	if !errors.As(err, &bad) {
		t.Fatalf("got %v", err)
	}
}

func TestResolveInterp(t *testing.T) {
	root := t.TempDir()
	_, err := ResolveInterp("prog", "/lib64/ld-linux-x86-64.so.2", root)
	want := "prog: interpreter /lib64/ld-linux-x86-64.so.2 not found in sysroot " + root
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	// Debian-like: /lib64 -> usr/lib64, and an absolute link to the target file.
	for _, d := range []string{"usr/lib64", "usr/lib/x86_64-linux-gnu"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(root, "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("usr/lib64", filepath.Join(root, "lib64")); err != nil {
		t.Fatal(err)
	}
	// Not executable: refused like open_exec refuses it (EACCES).
	if _, err := ResolveInterp("prog", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("interpreter without x: %v", err)
	}
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", filepath.Join(root, "usr/lib64/ld-linux-x86-64.so.2")); err != nil {
		t.Fatal(err)
	}
	got, err := ResolveInterp("prog", "/lib64/ld-linux-x86-64.so.2", root)
	if err != nil || got != target {
		t.Fatalf("got %q, %v, want %q", got, err, target)
	}
	// Without absolute links the joined path is kept.
	os.Remove(filepath.Join(root, "usr/lib64/ld-linux-x86-64.so.2"))
	if err := os.Symlink("../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", filepath.Join(root, "usr/lib64/ld-linux-x86-64.so.2")); err != nil {
		t.Fatal(err)
	}
	got, err = ResolveInterp("prog", "/lib64/ld-linux-x86-64.so.2", root)
	if want := filepath.Join(root, "lib64/ld-linux-x86-64.so.2"); err != nil || got != want {
		t.Fatalf("got %q, %v, want %q", got, err, want)
	}
	if _, err := ResolveInterp("prog", "/usr", root); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}
