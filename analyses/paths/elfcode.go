package paths

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/loader"
	"emuprof/trace"
)

// elfImage is an object file as the loader read it: its loadable segments (for
// code and read-only data, such as jump tables) and the names it gives
// addresses (for the load bias and for the targets of PLT stubs).
type elfImage struct {
	data  []byte
	typ   elf.Type
	segs  []elfSeg
	syms  map[string][]uint64 // function name -> link-time values
	secs  map[string]uint64   // section name -> link-time address
	slots map[uint64]string   // GOT slot (link-time) -> function name (R_X86_64_JUMP_SLOT, GLOB_DAT)
}

type elfSeg struct{ vaddr, filesz, off uint64 }

// newELFImage indexes an object the loader opened.
func newELFImage(o *loader.Object) (*elfImage, error) {
	f, data := o.ELF(), o.Data()
	if f == nil {
		return nil, fmt.Errorf("%s: no readable section headers", o.Path)
	}
	img := &elfImage{data: data, typ: o.Type, syms: map[string][]uint64{}, secs: map[string]uint64{}, slots: map[uint64]string{}}
	for _, p := range o.Loads {
		if p.Off+p.Filesz <= uint64(len(data)) {
			img.segs = append(img.segs, elfSeg{p.Vaddr, p.Filesz, p.Off})
		}
	}
	addSyms := func(syms []elf.Symbol) {
		for _, s := range syms {
			if s.Value != 0 && s.Name != "" && s.Section != elf.SHN_UNDEF {
				img.syms[s.Name] = append(img.syms[s.Name], s.Value)
			}
		}
	}
	if syms, err := o.Symbols(); err == nil {
		addSyms(syms)
	}
	dyn, _ := o.DynamicSymbols()
	addSyms(dyn)
	for _, s := range f.Sections {
		img.secs[s.Name] = s.Addr
		if s.Type != elf.SHT_RELA || (s.Name != ".rela.plt" && s.Name != ".rela.dyn") {
			continue
		}
		rel, err := s.Data()
		if err != nil {
			continue
		}
		for off := 0; off+24 <= len(rel); off += 24 {
			where := binary.LittleEndian.Uint64(rel[off:])
			info := binary.LittleEndian.Uint64(rel[off+8:])
			typ := elf.R_X86_64(elf.R_TYPE64(info))
			sym := int(elf.R_SYM64(info))
			if (typ == elf.R_X86_64_JMP_SLOT || typ == elf.R_X86_64_GLOB_DAT) && sym > 0 && sym <= len(dyn) {
				img.slots[where] = dyn[sym-1].Name
			}
		}
	}
	return img, nil
}

// read returns up to n bytes at link-time address a.
func (img *elfImage) read(a uint64, n int) []byte {
	for _, s := range img.segs {
		if a >= s.vaddr && a < s.vaddr+s.filesz {
			off := s.off + (a - s.vaddr)
			end := min(off+uint64(n), s.off+s.filesz)
			return img.data[off:end]
		}
	}
	return nil
}

// linkAddr returns the link-time address of the routine named name (as the
// loader's symbol table names it), if it tells.
func (img *elfImage) linkAddr(name string, guest uint64) (uint64, bool) {
	if i := strings.LastIndex(name, "!0x"); i >= 0 {
		if a, err := strconv.ParseUint(name[i+3:], 16, 64); err == nil {
			return a, true
		}
	}
	if strings.HasPrefix(name, "[.plt") {
		sec := strings.Trim(name, "[]")
		if sec == ".plt0" {
			sec = ".plt"
		}
		if a, ok := img.secs[sec]; ok {
			return a, true
		}
	}
	vals := img.syms[name]
	// Several local symbols may share a name: the bias of a shared object
	// is page-aligned, so the page offset must agree.
	for _, v := range vals {
		if v&0xfff == guest&0xfff {
			return v, true
		}
	}
	return 0, false
}

// objCode is an object's image at its load bias: Code at guest addresses.
type objCode struct {
	img  *elfImage
	bias uint64
}

func (c *objCode) Read(addr uint64, n int) []byte { return c.img.read(addr-c.bias, n) }

// pltTarget returns the name of the function a PLT stub at guest address
// a jumps to (jmp *slot(%rip), after an optional endbr64), if known.
func (c *objCode) pltTarget(a uint64) (string, bool) {
	b := c.Read(a, 2*maxInsn)
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa {
		b, a = b[4:], a+4
	}
	inst, err := x86asm.Decode(b, 64)
	if err != nil || inst.Op != x86asm.JMP {
		return "", false
	}
	m, ok := inst.Args[0].(x86asm.Mem)
	if !ok || m.Base != x86asm.RIP {
		return "", false
	}
	slot := a + uint64(inst.Len) + uint64(m.Disp) - c.bias
	name, ok := c.img.slots[slot]
	return name, ok
}

// Biaser is implemented by symbol tables that know the load bias of the
// object containing an address (loader.SymbolTable does).
type Biaser interface {
	Bias(pc uint64) (bias uint64, ok bool)
}

// ELFCode gives the code of guest routines from their object files, as
// the run's symbol table holds them (loader.OpenFrom). It
// is safe for use by one goroutine.
type ELFCode struct {
	Symbols trace.Symbols
	mu      sync.Mutex
	images  map[string]*elfImage
	errs    map[string]error
	bytes   uint64 // the images' file data (MemoryBytes)
}

// NewELFCode returns a code source reading objects named by syms.
func NewELFCode(syms trace.Symbols) *ELFCode {
	return &ELFCode{Symbols: syms, images: map[string]*elfImage{}, errs: map[string]error{}}
}

func (e *ELFCode) image(path string) (*elfImage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if img, ok := e.images[path]; ok {
		return img, nil
	}
	if err, ok := e.errs[path]; ok {
		return nil, err
	}
	o, err := loader.OpenFrom(e.Symbols, path)
	var img *elfImage
	if err == nil {
		img, err = newELFImage(o)
	}
	if err != nil {
		e.errs[path] = err
		return nil, err
	}
	e.images[path] = img
	e.bytes += uint64(len(img.data))
	return img, nil
}

// Bytes is what the images read so far hold.
func (e *ELFCode) Bytes() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bytes
}

// Code returns the code of routine r's object at its bias.
func (e *ELFCode) Code(r trace.Routine) (*objCode, error) {
	img, err := e.image(r.Object)
	if err != nil {
		return nil, err
	}
	if b, ok := e.Symbols.(Biaser); ok {
		if bias, ok := b.Bias(r.Entry); ok {
			return &objCode{img, bias}, nil
		}
	}
	if img.typ == elf.ET_EXEC {
		return &objCode{img, 0}, nil
	}
	la, ok := img.linkAddr(r.Name, r.Entry)
	if !ok {
		return nil, fmt.Errorf("%s: no link-time address for %s", r.Object, r.Name)
	}
	return &objCode{img, r.Entry - la}, nil
}

// noReturnNames are functions that never return to their caller: a call of
// one ends a path (spec §1.1 "Exit blocks").
var noReturnNames = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "quick_exit": true, "abort": true,
	"__stack_chk_fail": true, "__stack_chk_fail_local": true, "__chk_fail": true,
	"__fortify_fail": true, "__libc_fatal": true, "__libc_message": true,
	"__assert_fail": true, "__assert_perror_fail": true, "__malloc_assert": true,
	"longjmp": true, "_longjmp": true, "siglongjmp": true, "__longjmp_chk": true,
	"__libc_longjmp": true, "__libc_siglongjmp": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true,
	"pthread_exit": true, "__pthread_exit": true, "err": true, "errx": true,
	"verr": true, "verrx": true, "__libc_start_main": true, "__libc_start_call_main": true,
	"__libc_dynarray_at_failure": true,
}

// NoReturn reports whether name is a function that never returns.
func NoReturn(name string) bool { return noReturnNames[name] }
