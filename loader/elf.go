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
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// BadInputError reports an unusable input file. Callers map it to a
// "bad input" exit status; Error is one line starting with the path.
type BadInputError struct {
	Path   string
	Reason string
	Err    error // what it is, when callers must tell (fs.ErrPermission), or nil
	// Killed is nonzero for a file Linux's execve accepts and then cannot
	// map: past execve's point of no return the kernel kills the process
	// with this signal (SIGSEGV) instead of failing the call.
	Killed int
}

func (e *BadInputError) Error() string { return e.Path + ": " + e.Reason }

// Unwrap returns Err.
func (e *BadInputError) Unwrap() error { return e.Err }

func badInput(path, format string, args ...any) error {
	return &BadInputError{Path: path, Reason: oneLine(fmt.Sprintf(format, args...))}
}

func corrupt(path, format string, args ...any) error {
	return badInput(path, "truncated or corrupt ELF: "+format, args...)
}

// sigSEGV is the signal Linux kills a process with when its new image cannot
// be mapped (load_elf_binary after begin_new_exec).
const sigSEGV = 11

// killedBy marks err, a *BadInputError, as a problem binfmt_elf finds only
// while mapping the segments, after the point of no return: the process
// dies of SIGSEGV.
func killedBy(err error) error {
	err.(*BadInputError).Killed = sigSEGV
	return err
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

	dwarfOnce sync.Once
	dwarf     *dwarf.Data // parsed on the first DWARF call
	dwarfErr  error
	symtab    symbolsOnce // .symtab
	dynsym    symbolsOnce // .dynsym
}

// symbolsOnce is one symbol table of an object, read on first use. debug/elf
// rereads a table at every call, and DynamicSymbols writes into its File
// (symbol versions): reading it once also makes it safe to share.
type symbolsOnce struct {
	once sync.Once
	syms []elf.Symbol
	err  error
}

func (s *symbolsOnce) get(f *elf.File, read func(*elf.File) ([]elf.Symbol, error)) ([]elf.Symbol, error) {
	s.once.Do(func() {
		if f == nil {
			s.err = errors.New("no section headers")
			return
		}
		defer func() {
			if recover() != nil {
				s.syms, s.err = nil, errors.New("corrupt symbol table")
			}
		}()
		s.syms, s.err = read(f)
	})
	return s.syms, s.err
}

// Symbols is the object's .symtab (elf.File.Symbols), read once; callers
// must not modify it.
func (o *Object) Symbols() ([]elf.Symbol, error) { return o.symtab.get(o.file, (*elf.File).Symbols) }

// DynamicSymbols is the object's .dynsym (elf.File.DynamicSymbols), read
// once; callers must not modify it.
func (o *Object) DynamicSymbols() ([]elf.Symbol, error) {
	return o.dynsym.get(o.file, (*elf.File).DynamicSymbols)
}

// Data is the whole file as read. It must not be modified.
func (o *Object) Data() []byte { return o.data }

// ELF is the file's section view (sections, relocations), or nil if its
// section headers cannot be read; the program headers (Loads) are what the
// kernel reads and are always there. Read its symbols with Symbols and
// DynamicSymbols, which read each table once.
func (o *Object) ELF() *elf.File { return o.file }

// DWARF returns the object's debug information, parsed once however many
// analyses ask: the line tables (SymbolTable), Coz's macro sites and the
// progress points' lines (package causal). Its Reader and LineReader may be
// used from several goroutines at once: debug/dwarf parses the units and
// their abbreviations in dwarf.New and only reads them afterwards (Type is
// not safe so, and none uses it). Corrupt DWARF is an error, not a panic;
// the errors do not name the file (the caller does).
func (o *Object) DWARF() (*dwarf.Data, error) {
	o.dwarfOnce.Do(func() {
		if o.file == nil {
			o.dwarfErr = errors.New("no section headers")
			return
		}
		defer func() {
			if recover() != nil {
				o.dwarf, o.dwarfErr = nil, errors.New("corrupt DWARF")
			}
		}()
		o.dwarf, o.dwarfErr = o.file.DWARF()
	})
	return o.dwarf, o.dwarfErr
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
//
// It accepts what Linux's binfmt_elf accepts and refuses what it refuses:
// the ELF header and the program headers are read as x86-64 reads them
// (little-endian, 64-bit, whatever EI_CLASS and EI_DATA say: the kernel
// checks neither), section headers do not matter (a damaged section table
// only loses the symbols), and PT_INTERP must be a NUL-terminated path of 2
// to PATH_MAX bytes.
func OpenBytes(name string, data []byte) (o *Object, err error) {
	defer func() {
		// Nothing below should panic; a bug must still not crash the run.
		if r := recover(); r != nil {
			o, err = nil, corrupt(name, "%v", r)
		}
	}()
	if err := checkHeader(name, data); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	o = &Object{
		Path:  name,
		Type:  elf.Type(le.Uint16(data[16:])),
		Entry: le.Uint64(data[24:]),
		PhOff: le.Uint64(data[32:]),
		Phent: uint64(le.Uint16(data[54:])),
		Phnum: uint64(le.Uint16(data[56:])),
		data:  data,
	}
	if o.Phent != phdrSize {
		if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS32 {
			return nil, badInput(name, "32-bit ELF (x32) is not supported, only x86-64 (ELF64)")
		}
		return nil, corrupt(name, "program header size %d, want %d", o.Phent, phdrSize)
	}
	if o.Phnum == 0 {
		return nil, corrupt(name, "no program headers")
	}
	if o.Phnum*o.Phent > 65536 { // Linux's limit
		return nil, corrupt(name, "too many program headers (%d)", o.Phnum)
	}
	size := uint64(len(data))
	if o.PhOff > size || o.Phnum*phdrSize > size-o.PhOff {
		return nil, corrupt(name, "program headers [%#x, +%#x) beyond end of file (%#x)", o.PhOff, o.Phnum*phdrSize, size)
	}
	phdr := func(i uint64) elf.ProgHeader {
		b := data[o.PhOff+i*phdrSize:]
		return elf.ProgHeader{
			Type: elf.ProgType(le.Uint32(b)), Flags: elf.ProgFlag(le.Uint32(b[4:])),
			Off: le.Uint64(b[8:]), Vaddr: le.Uint64(b[16:]), Paddr: le.Uint64(b[24:]),
			Filesz: le.Uint64(b[32:]), Memsz: le.Uint64(b[40:]), Align: le.Uint64(b[48:]),
		}
	}
	// PT_INTERP first, as load_elf_binary's first loop over the headers:
	// a bad one is ENOEXEC before any PT_LOAD is looked at (a bad PT_LOAD
	// kills the process later, past the point of no return).
	for i := range o.Phnum {
		if p := phdr(i); p.Type == elf.PT_INTERP {
			interp, err := interpPath(&p, data)
			if err != "" {
				return nil, badInput(name, "PT_INTERP %s", err)
			}
			o.Interp = interp
			break // Linux uses the first one
		}
	}
	for i := range o.Phnum {
		if p := phdr(i); p.Type == elf.PT_LOAD {
			if err := checkLoad(&p, size); err != "" {
				return nil, killedBy(corrupt(name, "segment %d: %s", i, err))
			}
			if p.Memsz > 0 {
				o.Loads = append(o.Loads, p)
			}
		}
	}
	if len(o.Loads) == 0 {
		// Linux maps nothing and jumps to the entry point.
		return nil, killedBy(badInput(name, "no loadable segments"))
	}
	// AT_PHDR, as Linux computes it: the address of e_phoff in the PT_LOAD
	// whose file bytes contain it (the last such), whatever PT_PHDR says; 0
	// when no segment holds the program headers.
	for _, p := range o.Loads {
		if p.Off <= o.PhOff && o.PhOff-p.Off < p.Filesz {
			o.PhdrVaddr = o.PhOff - p.Off + p.Vaddr
		}
	}
	o.file = sectionFile(data)
	return o, nil
}

// phdrSize is the size of an ELF64 program header.
const phdrSize = 56

// pathMax is PATH_MAX: the longest PT_INTERP Linux reads.
const pathMax = 4096

// interpPath returns the interpreter's path in a PT_INTERP segment, or
// what is wrong with it, as Linux checks it: 2 to PATH_MAX bytes inside the
// file, the last one NUL; the path is the C string they start with.
func interpPath(p *elf.ProgHeader, data []byte) (string, string) {
	size := uint64(len(data))
	switch {
	case p.Filesz < 2 || p.Filesz > pathMax:
		return "", fmt.Sprintf("of %d bytes (Linux takes 2 to %d)", p.Filesz, pathMax)
	case p.Off > size || p.Filesz > size-p.Off:
		return "", "outside the file"
	}
	s := data[p.Off : p.Off+p.Filesz]
	if s[len(s)-1] != 0 {
		return "", "not NUL-terminated"
	}
	s = s[:bytes.IndexByte(s, 0)]
	if len(s) == 0 {
		return "", "empty"
	}
	return string(s), ""
}

// sectionFile parses the section headers for symbols and DWARF, as well as
// they can be: debug/elf reads the header as EI_CLASS and EI_DATA say and
// refuses a bad e_shstrndx or a table past the end of the file, which the
// kernel ignores. It tries the file as x86-64 reads it, then without
// section names, then gives up (nil: no symbols).
func sectionFile(data []byte) *elf.File {
	var hdr [64]byte
	copy(hdr[:], data)
	hdr[elf.EI_CLASS], hdr[elf.EI_DATA] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB)
	hdr[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint32(hdr[20:], uint32(elf.EV_CURRENT)) // e_version
	tries := []func(){
		func() {},
		func() { binary.LittleEndian.PutUint16(hdr[62:], 0) }, // e_shstrndx: no names
	}
	for _, patch := range tries {
		patch()
		if f := tryNewFile(&patchedReader{data: data, hdr: hdr}); f != nil {
			return f
		}
	}
	return nil
}

func tryNewFile(r io.ReaderAt) (f *elf.File) {
	defer func() {
		if recover() != nil { // debug/elf can panic on some corrupt inputs
			f = nil
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil
	}
	return f
}

// patchedReader reads data with its first 64 bytes replaced by hdr.
type patchedReader struct {
	data []byte
	hdr  [64]byte
}

func (r *patchedReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if off < int64(len(r.hdr)) {
		copy(p, r.hdr[off:min(int64(len(r.hdr)), int64(len(r.data)))])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// checkHeader checks what Linux checks before reading the program headers
// (the magic, e_machine, e_type, all read as x86-64 reads them), and names
// what a file for another machine is made for, in the byte order and class
// its header declares.
func checkHeader(name string, b []byte) error {
	if len(b) < 4 || string(b[:4]) != elf.ELFMAG {
		return badInput(name, "not an ELF file")
	}
	if len(b) < 64 {
		return corrupt(name, "file too short for an ELF header (%d bytes)", len(b))
	}
	if m := elf.Machine(binary.LittleEndian.Uint16(b[18:])); m != elf.EM_X86_64 {
		return badInput(name, "not an x86-64 ELF (%s)", describeMachine(b))
	}
	if t := elf.Type(binary.LittleEndian.Uint16(b[16:])); t != elf.ET_EXEC && t != elf.ET_DYN {
		return badInput(name, "not an executable (ELF type %s)", typeName(t))
	}
	return nil
}

// describeMachine names the machine an ELF header declares, read in its
// declared byte order, with its class and byte order when they are not
// x86-64's: "machine AArch64", "machine i386, 32-bit", "machine s390,
// 64-bit big-endian".
func describeMachine(b []byte) string {
	var bo binary.ByteOrder = binary.LittleEndian
	var notes []string
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		notes = append(notes, "32-bit")
	default:
		notes = append(notes, fmt.Sprintf("class %d", b[elf.EI_CLASS]))
	}
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
		notes = append(notes, "big-endian")
	default:
		notes = append(notes, fmt.Sprintf("byte order %d", b[elf.EI_DATA]))
	}
	s := "machine " + machineName(elf.Machine(bo.Uint16(b[18:])))
	if len(notes) > 0 {
		s += ", " + strings.Join(notes, " ")
	}
	return s
}

// typeName names an ELF type ("REL", "CORE", "0xfe00").
func typeName(t elf.Type) string {
	switch t {
	case elf.ET_NONE, elf.ET_REL, elf.ET_EXEC, elf.ET_DYN, elf.ET_CORE:
		return strings.TrimPrefix(t.String(), "ET_")
	}
	return fmt.Sprintf("%#x", uint16(t))
}

// maxFileOff is the largest offset a mapping of a regular file may reach
// (file_mmap_ok's MAX_LFS_FILESIZE).
const maxFileOff = 1<<63 - 1

// checkLoad returns what is wrong with a PT_LOAD header, or "".
func checkLoad(p *elf.ProgHeader, fileSize uint64) string {
	switch {
	case p.Filesz > p.Memsz:
		return fmt.Sprintf("file size %#x exceeds memory size %#x", p.Filesz, p.Memsz)
	case p.Off+p.Filesz < p.Off || p.Off+p.Filesz > maxFileOff:
		// Past the end of the file is fine (elf_map's mmap maps pages
		// that are SIGBUS when touched), past what a file can hold not.
		return fmt.Sprintf("file range [%#x, +%#x) beyond the largest file offset", p.Off, p.Filesz)
	case p.Vaddr > maxUserAddr || p.Memsz > maxUserAddr-p.Vaddr:
		return fmt.Sprintf("address range [%#x, +%#x) outside the 47-bit user address space", p.Vaddr, p.Memsz)
	case p.Filesz > 0 && p.Off%PageSize != p.Vaddr%PageSize:
		// elf_map's mmap offset, p_offset less p_vaddr's page offset,
		// is not a page's: EINVAL after the point of no return.
		return fmt.Sprintf("file offset %#x and address %#x at different offsets in their pages", p.Off, p.Vaddr)
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
	case elf.EM_SPARCV9:
		return "SPARC V9"
	case elf.EM_MIPS:
		return "MIPS"
	case elf.EM_IA_64:
		return "IA-64"
	}
	if n := m.String(); !strings.Contains(n, "+") && !strings.HasPrefix(n, "Machine(") {
		return strings.TrimPrefix(n, "EM_")
	}
	return fmt.Sprintf("%#x", uint16(m)) // debug/elf's "ALPHA_STD+15831" names nothing
}
