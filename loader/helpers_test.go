package loader

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Test binaries built from testdata/prog.c by TestMain, by flavour.
var (
	builtDir  string
	built     = map[string]string{} // flavour -> path
	buildErrs = map[string]string{} // flavour -> why it is missing
)

var flavours = map[string][]string{
	"static":     {"-static", "-no-pie"},
	"static-pie": {"-static-pie"},
	"dynamic":    {"-pie", "-fPIE"},
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		for f := range flavours {
			buildErrs[f] = "gcc not found"
		}
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "loader-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	builtDir = dir
	for f, flags := range flavours {
		out := filepath.Join(dir, "prog-"+f)
		args := append([]string{"-g", "-O0", "-o", out, filepath.Join("testdata", "prog.c")}, flags...)
		if msg, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			buildErrs[f] = fmt.Sprintf("gcc %s: %v: %s", strings.Join(flags, " "), err, msg)
			continue
		}
		built[f] = out
	}
	return m.Run()
}

// testBinary returns the path of a test binary. Only a Linux host can build
// one (gcc makes Mach-O on macOS): elsewhere the test is skipped; on Linux a
// missing binary fails the test, naming what to install.
func testBinary(t *testing.T, flavour string) string {
	t.Helper()
	p, ok := built[flavour]
	if !ok {
		if runtime.GOOS != "linux" {
			t.Skipf("x86-64 Linux test binaries are built on Linux only (%s: %s)", flavour, buildErrs[flavour])
		}
		t.Fatalf("no %s test binary: %s\n(needs gcc and libc6-dev: `make deps` or apt-get install gcc libc6-dev)",
			flavour, buildErrs[flavour])
	}
	return p
}

// hostTool returns the path of a program the tests run on the host,
// failing the test when it is missing, with the Debian package to install.
func hostTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: apt-get install %s (`make deps` does)", name, pkg)
	}
	return p
}

// sourceLine returns the line of testdata/prog.c marked "LINE:name".
func sourceLine(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "prog.c"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), "LINE:"+name+" ") {
			return n
		}
	}
	t.Fatalf("no LINE:%s in prog.c", name)
	return 0
}

// elfSymbol returns the link-time value of a symbol, read independently of
// the code under test.
func elfSymbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// memory reads n bytes at addr from the mappings of l, failing when a byte
// is not mapped.
func memory(t *testing.T, l *Layout, addr uint64, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	for i := range out {
		a := addr + uint64(i)
		found := false
		for _, m := range l.Mappings {
			if a >= m.Addr && a < m.Addr+m.Size {
				found = true
				if off := a - m.Addr; off >= m.DataOff && off-m.DataOff < uint64(len(m.Data)) {
					out[i] = m.Data[off-m.DataOff]
				}
				break
			}
		}
		if !found {
			t.Fatalf("address %#x not mapped", a)
		}
	}
	return out
}

// checkMappings checks the invariants every Layout must keep.
func checkMappings(t testing.TB, l *Layout) {
	t.Helper()
	for i, m := range l.Mappings {
		if m.Addr%PageSize != 0 || m.Size%PageSize != 0 || m.Size == 0 {
			t.Fatalf("mapping %d not page-aligned: %#x+%#x", i, m.Addr, m.Size)
		}
		if m.DataOff > m.Size || uint64(len(m.Data)) > m.Size-m.DataOff {
			t.Fatalf("mapping %d: data [%#x, +%#x) beyond size %#x", i, m.DataOff, len(m.Data), m.Size)
		}
		if i > 0 && l.Mappings[i-1].Addr+l.Mappings[i-1].Size > m.Addr {
			t.Fatalf("mappings %d and %d overlap or are unsorted", i-1, i)
		}
	}
}

// minimalELF returns a small static x86-64 executable made by hand: a text
// segment with _start (size 9) and helper (size 0), a data segment with a
// BSS, and a .symtab.
func minimalELF() []byte {
	const (
		base     = 0x400000
		textOff  = 0xb0
		dataOff  = 0xd0
		symOff   = 0xd8
		strOff   = symOff + 3*24
		shstrOff = strOff + 16
	)
	strtab := "\x00_start\x00helper\x00\x00"
	shstrtab := "\x00.text\x00.data\x00.symtab\x00.strtab\x00.shstrtab\x00"
	shOff := (shstrOff + len(shstrtab) + 7) &^ 7

	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
	w(elf.Header64{
		Ident:     [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)},
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(elf.EM_X86_64),
		Version:   uint32(elf.EV_CURRENT),
		Entry:     base + textOff,
		Phoff:     64,
		Shoff:     uint64(shOff),
		Ehsize:    64,
		Phentsize: 56,
		Phnum:     2,
		Shentsize: 64,
		Shnum:     6,
		Shstrndx:  5,
	})
	w(elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 0, Vaddr: base, Paddr: base,
		Filesz: dataOff, Memsz: dataOff, Align: PageSize})
	w(elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W), Off: dataOff, Vaddr: base + 0x1000 + dataOff,
		Paddr: base + 0x1000 + dataOff, Filesz: 8, Memsz: 0x100, Align: PageSize})
	for b.Len() < textOff {
		b.WriteByte(0)
	}
	b.Write([]byte{0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05}) // _start: exit(0)
	for b.Len() < textOff+0x10 {
		b.WriteByte(0xcc)
	}
	b.WriteByte(0xc3) // helper: ret
	for b.Len() < dataOff {
		b.WriteByte(0xcc)
	}
	b.WriteString("DATADATA")
	w(elf.Sym64{})
	w(elf.Sym64{Name: 1, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 1, Value: base + textOff, Size: 9})
	w(elf.Sym64{Name: 8, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 1, Value: base + textOff + 0x10})
	b.WriteString(strtab)
	b.WriteString(shstrtab)
	for b.Len() < shOff {
		b.WriteByte(0)
	}
	w(elf.Section64{})
	w(elf.Section64{Name: 1, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR),
		Addr: base + textOff, Off: textOff, Size: dataOff - textOff, Addralign: 16})
	w(elf.Section64{Name: 7, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC | elf.SHF_WRITE),
		Addr: base + 0x1000 + dataOff, Off: dataOff, Size: 8, Addralign: 8})
	w(elf.Section64{Name: 13, Type: uint32(elf.SHT_SYMTAB), Off: symOff, Size: 3 * 24, Link: 4, Info: 1, Addralign: 8, Entsize: 24})
	w(elf.Section64{Name: 21, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(strtab)), Addralign: 1})
	w(elf.Section64{Name: 29, Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstrtab)), Addralign: 1})
	return b.Bytes()
}
