// Package loader turns x86-64 Linux ELF files into what the emulator needs to
// start a process and to name what it runs:
//
//   - Open parses and validates an executable, interpreter or library;
//   - Plan lays out the executable and its interpreter in guest memory as
//     Linux does with ASLR disabled;
//   - BuildStack builds the initial stack (strings, argv, envp, auxv) as
//     Linux's create_elf_tables does;
//   - SymbolTable maps guest addresses to object, function and source line
//     for every object mapped into the guest.
//
// It uses only debug/elf and debug/dwarf and no host-specific API. Malformed
// input never panics: every problem with a file is a *BadInputError, one line
// naming the file.
package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// BadInputError reports an unusable input file. Callers map it to a
// "bad input" exit status; Error is one line starting with the path.
type BadInputError struct {
	Path   string
	Reason string
}

func (e *BadInputError) Error() string { return e.Path + ": " + e.Reason }

func badInput(path, format string, args ...any) error {
	return &BadInputError{Path: path, Reason: oneLine(fmt.Sprintf(format, args...))}
}

func corrupt(path, format string, args ...any) error {
	return badInput(path, "truncated or corrupt ELF: "+format, args...)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// maxUserAddr bounds every address a segment may use: x86-64 user space with
// 4-level paging ends below 1<<47.
const maxUserAddr = 0x7ffffffff000

// Object is a parsed ELF file (executable, interpreter or library).
type Object struct {
	Path      string
	Type      elf.Type // ET_EXEC or ET_DYN
	Entry     uint64   // unrelocated e_entry
	Interp    string   // PT_INTERP contents ("" if none)
	PhOff     uint64   // file offset of the program header table (e_phoff)
	Phent     uint64   // size of one program header (e_phentsize)
	Phnum     uint64   // number of program headers
	PhdrVaddr uint64   // unrelocated address of the program headers
	Loads     []elf.ProgHeader

	data []byte    // the whole file; mapping data aliases it
	file *elf.File // for symbols and DWARF
}

// Span returns the unrelocated, page-aligned address range [lo, hi) covered
// by the object's PT_LOAD segments. Add the load bias for guest addresses.
func (o *Object) Span() (lo, hi uint64) {
	lo = ^uint64(0)
	for _, p := range o.Loads {
		lo = min(lo, pageDown(p.Vaddr))
		hi = max(hi, pageUp(p.Vaddr+p.Memsz))
	}
	return lo, hi
}

// Open reads and validates an ELF file.
func Open(path string) (*Object, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if fi.IsDir() {
		return nil, badInput(path, "is a directory")
	}
	if !fi.Mode().IsRegular() {
		return nil, badInput(path, "not a regular file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	return OpenBytes(path, data)
}

func fileError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return badInput(path, "no such file")
	case errors.Is(err, fs.ErrPermission):
		return badInput(path, "permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return badInput(path, "cannot read: %v", err)
}

// OpenBytes is Open on a file already in memory; name is used in errors and
// symbol names. The Object keeps data (mappings alias it): do not modify it.
func OpenBytes(name string, data []byte) (o *Object, err error) {
	defer func() {
		// debug/elf can panic on some corrupt inputs.
		if r := recover(); r != nil {
			o, err = nil, corrupt(name, "%v", r)
		}
	}()
	if err := checkHeader(name, data); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, corrupt(name, "%v", err)
	}
	le := binary.LittleEndian
	o = &Object{
		Path:  name,
		Type:  f.Type,
		Entry: f.Entry,
		PhOff: le.Uint64(data[0x20:]),
		Phent: uint64(le.Uint16(data[0x36:])),
		Phnum: uint64(len(f.Progs)),
		data:  data,
		file:  f,
	}
	if o.Phnum > 0 && o.Phent != 56 {
		return nil, corrupt(name, "program header size %d, want 56", o.Phent)
	}
	if o.Phnum*o.Phent > 65536 { // Linux's limit
		return nil, corrupt(name, "too many program headers (%d)", o.Phnum)
	}
	size := uint64(len(data))
	hasPhdr, hasInterp := false, false
	for i, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if err := checkLoad(&p.ProgHeader, size); err != "" {
				return nil, corrupt(name, "segment %d: %s", i, err)
			}
			if p.Memsz > 0 {
				o.Loads = append(o.Loads, p.ProgHeader)
			}
		case elf.PT_INTERP:
			if hasInterp { // Linux uses the first one
				continue
			}
			hasInterp = true
			if p.Off > size || p.Filesz > size-p.Off {
				return nil, corrupt(name, "PT_INTERP outside the file")
			}
			s := data[p.Off : p.Off+p.Filesz]
			if i := bytes.IndexByte(s, 0); i >= 0 {
				s = s[:i]
			}
			if len(s) == 0 {
				return nil, corrupt(name, "empty PT_INTERP")
			}
			o.Interp = string(s)
		case elf.PT_PHDR:
			if !hasPhdr {
				hasPhdr = true
				o.PhdrVaddr = p.Vaddr
			}
		}
	}
	if len(o.Loads) == 0 {
		return nil, badInput(name, "no loadable segments")
	}
	if !hasPhdr {
		// Like Linux: the PT_LOAD whose file bytes contain e_phoff.
		for _, p := range o.Loads {
			if p.Off <= o.PhOff && o.PhOff-p.Off < p.Filesz {
				o.PhdrVaddr = o.PhOff - p.Off + p.Vaddr
				break
			}
		}
	}
	return o, nil
}

// checkHeader checks what Linux checks before loading, in an order that
// gives the most useful message (the machine before any parse error).
func checkHeader(name string, b []byte) error {
	if len(b) < 4 || string(b[:4]) != elf.ELFMAG {
		return badInput(name, "not an ELF file")
	}
	if len(b) <= elf.EI_CLASS {
		return corrupt(name, "file too short (%d bytes)", len(b))
	}
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		return badInput(name, "32-bit ELF, only x86-64 (ELF64) is supported")
	default:
		return corrupt(name, "bad ELF class %d", b[elf.EI_CLASS])
	}
	if len(b) < 64 {
		return corrupt(name, "file too short for an ELF header (%d bytes)", len(b))
	}
	var bo binary.ByteOrder
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return corrupt(name, "bad ELF data encoding %d", b[elf.EI_DATA])
	}
	if m := elf.Machine(bo.Uint16(b[18:])); m != elf.EM_X86_64 {
		return badInput(name, "not an x86-64 ELF (machine %s)", machineName(m))
	}
	if bo == binary.BigEndian {
		return corrupt(name, "big-endian x86-64 ELF")
	}
	if t := elf.Type(bo.Uint16(b[16:])); t != elf.ET_EXEC && t != elf.ET_DYN {
		return badInput(name, "not an executable (ELF type %s)", strings.TrimPrefix(t.String(), "ET_"))
	}
	return nil
}

// checkLoad returns what is wrong with a PT_LOAD header, or "".
func checkLoad(p *elf.ProgHeader, fileSize uint64) string {
	switch {
	case p.Filesz > p.Memsz:
		return fmt.Sprintf("file size %#x exceeds memory size %#x", p.Filesz, p.Memsz)
	case p.Off > fileSize || p.Filesz > fileSize-p.Off:
		return fmt.Sprintf("file range [%#x, %#x) beyond end of file (%#x)", p.Off, p.Off+p.Filesz, fileSize)
	case p.Vaddr > maxUserAddr || p.Memsz > maxUserAddr-p.Vaddr:
		return fmt.Sprintf("address range [%#x, +%#x) outside the 47-bit user address space", p.Vaddr, p.Memsz)
	}
	return ""
}

func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_AARCH64:
		return "AArch64"
	case elf.EM_ARM:
		return "ARM"
	case elf.EM_386:
		return "i386"
	case elf.EM_RISCV:
		return "RISC-V"
	case elf.EM_PPC64:
		return "PowerPC64"
	case elf.EM_PPC:
		return "PowerPC"
	case elf.EM_S390:
		return "s390"
	case elf.EM_LOONGARCH:
		return "LoongArch"
	case elf.EM_NONE:
		return "none"
	}
	return strings.TrimPrefix(m.String(), "EM_")
}
