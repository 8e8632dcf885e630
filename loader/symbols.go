package loader

import (
	"bytes"
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"emuprof/loader/cfi"
	"emuprof/trace"
)

// SymbolTable names guest addresses. Every ELF object mapped into the guest
// (the executable, the interpreter, each library mmapped later) is added with
// its load bias. Lookups are safe for concurrent use with each other and
// with AddObject.
type SymbolTable struct {
	mu   sync.Mutex                 // serializes writers
	objs atomic.Pointer[symObjects] // copy-on-write snapshot
	last atomic.Pointer[symObject]  // object of the last lookup
	// opened holds every object file the table has seen, by path, so
	// that each is parsed once (its DWARF above all) for the symbols and
	// for the analyses that read the files (Open); guarded by mu.
	opened map[string]*Object
}

type symObjects struct {
	byAddr  []*symObject // sorted by lo, non-overlapping
	byAdded []*symObject // in order of addition
}

// symObject is one object at one place in the guest.
type symObject struct {
	path, base   string
	bias, lo, hi uint64
	addrs, ends  []uint64 // function [start, end), guest addresses, sorted
	names        []string
	kinds        []trace.RoutineKind
	byName       map[string]uint64 // every function name, aliases too
	last         atomic.Int64      // index of the last symbol hit
	removed      atomic.Bool       // replaced by an overlapping object
	file         *elf.File
	obj          *Object // for its DWARF
	linesOnce    sync.Once
	lines        lineTable
	cfiOnce      sync.Once
	cfi          *cfi.Table    // .eh_frame, read on the first unwind (unwind.go)
	text         trace.Mapping // the code segment's mapping, guest addresses
}

// Location of a pc.
type Location struct {
	Object     string // base name, e.g. "libc.so.6"
	ObjectPath string
	Func       string
	FuncAddr   uint64
	Offset     uint64 // pc - FuncAddr
	File       string // source file as recorded in DWARF
	Line       int
	Known      bool // pc lies in some object
}

// NewSymbolTable returns an empty table.
func NewSymbolTable() *SymbolTable { return &SymbolTable{} }

// AddObject opens the ELF file at path and adds it: bias is its load
// address minus its link-time address, [lo, hi) the guest range it occupies.
// Adding the same path at the same bias again does nothing.
func (t *SymbolTable) AddObject(path string, bias, lo, hi uint64) error {
	if t.has(path, bias) {
		return nil
	}
	o, err := t.Open(path)
	if err != nil {
		return err
	}
	return t.AddObjectFrom(o, bias, lo, hi)
}

// Open returns the object file at path as the table has it (the one the
// guest mapped, when it was added), else opens it and keeps it. Analyses
// that read object files (code, DWARF) get them here, so that no file is
// parsed twice in a run.
func (t *SymbolTable) Open(path string) (*Object, error) {
	t.mu.Lock()
	o := t.opened[path]
	t.mu.Unlock()
	if o != nil {
		return o, nil
	}
	o, err := Open(path)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keep(o), nil
}

// Opener gives object files by path, each parsed once: a SymbolTable.
type Opener interface {
	Open(path string) (*Object, error)
}

// OpenFrom returns the object file at path from syms if it is an Opener
// (the run's SymbolTable, behind trace.Symbols), else reads it (Open). It
// is how analyses get object files.
func OpenFrom(syms any, path string) (*Object, error) {
	if op, ok := syms.(Opener); ok {
		return op.Open(path)
	}
	return Open(path)
}

// keep returns the object kept for o's path if it holds the same bytes (its
// parsed tables are then o's), else keeps o. The caller holds t.mu.
func (t *SymbolTable) keep(o *Object) *Object {
	if k := t.opened[o.Path]; k != nil && (k == o || bytes.Equal(k.data, o.data)) {
		return k
	}
	if t.opened == nil {
		t.opened = map[string]*Object{}
	}
	t.opened[o.Path] = o
	return o
}

// AddObjectFrom is AddObject for an object already opened. Function symbols
// come from .symtab and .dynsym; the DWARF line table is read on the first
// line lookup in the object. Damaged symbol or debug tables are ignored. An
// object overlapping objects added before replaces them.
func (t *SymbolTable) AddObjectFrom(o *Object, bias, lo, hi uint64) error {
	if o == nil {
		return errors.New("loader: AddObjectFrom: nil object")
	}
	if lo >= hi {
		return fmt.Errorf("loader: %s: empty guest range [%#x, %#x)", o.Path, lo, hi)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.has(o.Path, bias) {
		return nil
	}
	o = t.keep(o)
	n := newSymObject(o, bias, lo, hi)
	next := &symObjects{}
	if old := t.objs.Load(); old != nil {
		for _, x := range old.byAdded {
			if x.lo < hi && lo < x.hi {
				x.removed.Store(true)
				continue
			}
			next.byAdded = append(next.byAdded, x)
		}
	}
	next.byAdded = append(next.byAdded, n)
	next.byAddr = slices.Clone(next.byAdded)
	slices.SortFunc(next.byAddr, func(a, b *symObject) int { return cmp.Compare(a.lo, b.lo) })
	t.objs.Store(next)
	return nil
}

// AddLayout adds the executable and the interpreter of l.
func (t *SymbolTable) AddLayout(l *Layout) error {
	lo, hi := l.Exe.Span()
	if err := t.AddObjectFrom(l.Exe, l.ExeBase, lo+l.ExeBase, hi+l.ExeBase); err != nil {
		return err
	}
	if l.Interp == nil {
		return nil
	}
	lo, hi = l.Interp.Span()
	return t.AddObjectFrom(l.Interp, l.InterpBase, lo+l.InterpBase, hi+l.InterpBase)
}

func (t *SymbolTable) has(path string, bias uint64) bool {
	if s := t.objs.Load(); s != nil {
		for _, x := range s.byAdded {
			if x.path == path && x.bias == bias {
				return true
			}
		}
	}
	return false
}

// Lookup returns what is known about pc, source line included.
func (t *SymbolTable) Lookup(pc uint64) Location { return t.lookup(pc, true) }

func (t *SymbolTable) lookup(pc uint64, withLine bool) Location {
	o := t.object(pc)
	if o == nil {
		return Location{}
	}
	loc := Location{Object: o.base, ObjectPath: o.path, Known: true}
	if i, ok := o.symbol(pc); ok {
		loc.Func, loc.FuncAddr, loc.Offset = o.names[i], o.addrs[i], pc-o.addrs[i]
	}
	if withLine {
		loc.File, loc.Line = o.line(pc)
	}
	return loc
}

// Format names pc: "main+0x16 (prog)", "main (prog)" at the entry,
// "0x401136 (prog)" without symbol, "0x401136" outside every object.
func (t *SymbolTable) Format(pc uint64) string { return t.format(pc, false) }

// FormatLong is Format plus " at file.c:12" when the DWARF line is known.
func (t *SymbolTable) FormatLong(pc uint64) string { return t.format(pc, true) }

func (t *SymbolTable) format(pc uint64, long bool) string {
	return formatLoc(t.lookup(pc, long), pc)
}

// formatLoc renders loc, the location of pc.
func formatLoc(loc Location, pc uint64) string {
	var s string
	switch {
	case !loc.Known:
		return fmt.Sprintf("%#x", pc)
	case loc.Func == "":
		s = fmt.Sprintf("%#x (%s)", pc, loc.Object)
	case loc.Offset == 0:
		s = fmt.Sprintf("%s (%s)", loc.Func, loc.Object)
	default:
		s = fmt.Sprintf("%s+%#x (%s)", loc.Func, loc.Offset, loc.Object)
	}
	if loc.Line > 0 {
		s += fmt.Sprintf(" at %s:%d", path.Base(loc.File), loc.Line)
	}
	return s
}

// Routine implements trace.Symbols: the function containing pc, or, when
// no symbol covers pc, a routine entered at pc named "object!0x1234", where
// 0x1234 is pc's link-time address in the object (what objdump shows). The
// object is named by the path it was loaded from, as aprof does.
func (t *SymbolTable) Routine(pc uint64) (trace.Routine, bool) {
	o := t.object(pc)
	if o == nil {
		return trace.Routine{}, false
	}
	if i, ok := o.symbol(pc); ok {
		return trace.Routine{Entry: o.addrs[i], Name: o.names[i], Object: o.path, Kind: o.kinds[i]}, true
	}
	return trace.Routine{Entry: pc, Name: o.base + "!0x" + strconv.FormatUint(pc-o.bias, 16), Object: o.path}, true
}

// Line implements trace.Symbols: the DWARF source position of pc.
func (t *SymbolTable) Line(pc uint64) (file string, line int, ok bool) {
	o := t.object(pc)
	if o == nil {
		return "", 0, false
	}
	file, line = o.line(pc)
	return file, line, line > 0
}

// LineRange is Line plus end, the first address after pc whose source
// position may differ (the start of the next row of another file:line, or
// the end of the object): a block that ends by then lies on one line.
func (t *SymbolTable) LineRange(pc uint64) (file string, line int, end uint64, ok bool) {
	o := t.object(pc)
	if o == nil {
		return "", 0, pc + 1, false
	}
	o.linesOnce.Do(o.loadLines)
	lt := &o.lines
	i := floor(lt.addrs, pc)
	j := i + 1
	if i >= 0 && !lt.rows[i].end {
		r := lt.rows[i]
		file, line = lt.files[r.file], int(r.line)
		for j < len(lt.rows) && !lt.rows[j].end && lt.rows[j].file == r.file && lt.rows[j].line == r.line {
			j++
		}
	}
	end = o.hi
	if j < len(lt.addrs) && lt.addrs[j] < end {
		end = lt.addrs[j]
	}
	return file, line, end, line > 0
}

// FuncAddr returns the guest address of the function called name, searching
// objects in the order they were added (the executable first).
func (t *SymbolTable) FuncAddr(name string) (uint64, bool) {
	if s := t.objs.Load(); s != nil {
		for _, o := range s.byAdded {
			if a, ok := o.byName[name]; ok {
				return a, true
			}
		}
	}
	return 0, false
}

// LineAddrs returns the guest addresses where a statement of file:line
// starts, for every row of the DWARF line tables. file matches a recorded
// path equal to it or ending in "/"+file.
func (t *SymbolTable) LineAddrs(file string, line int) []uint64 {
	var out []uint64
	if s := t.objs.Load(); s != nil {
		for _, o := range s.byAdded {
			o.linesOnce.Do(o.loadLines)
			out = append(out, o.lines.addrsOf(file, line)...)
		}
	}
	return out
}

// object returns the object containing pc, or nil.
func (t *SymbolTable) object(pc uint64) *symObject {
	if o := t.last.Load(); o != nil && o.lo <= pc && pc < o.hi && !o.removed.Load() {
		return o
	}
	s := t.objs.Load()
	if s == nil {
		return nil
	}
	lo, hi := 0, len(s.byAddr) // first object with hi > pc
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.byAddr[m].hi <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(s.byAddr) || pc < s.byAddr[lo].lo {
		return nil
	}
	o := s.byAddr[lo]
	t.last.Store(o)
	return o
}

// symbol returns the index of the function containing pc.
func (o *symObject) symbol(pc uint64) (int, bool) {
	if i := o.last.Load(); i < int64(len(o.addrs)) && o.addrs[i] <= pc && pc < o.ends[i] {
		return int(i), true
	}
	i := floor(o.addrs, pc)
	if i < 0 || pc >= o.ends[i] {
		return 0, false
	}
	o.last.Store(int64(i))
	return i, true
}

// floor returns the index of the last element <= v in sorted xs, or -1.
func floor(xs []uint64, v uint64) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if xs[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

type rawSym struct {
	addr, size uint64
	name       string
	rank       int // lower is the better name among aliases
	kind       trace.RoutineKind
}

func newSymObject(o *Object, bias, lo, hi uint64) *symObject {
	n := &symObject{
		path:   o.Path,
		base:   filepath.Base(o.Path),
		bias:   bias,
		lo:     lo,
		hi:     hi,
		byName: map[string]uint64{},
		file:   o.file,
		obj:    o,
		text:   textMapping(o, bias, lo, hi),
	}
	syms := functionSymbols(o, filepath.Base(o.Path), bias, lo, hi)
	slices.SortFunc(syms, func(a, b rawSym) int {
		return cmp.Or(
			cmp.Compare(a.addr, b.addr),
			cmp.Compare(a.rank, b.rank),
			cmp.Compare(leadingUnderscores(a.name), leadingUnderscores(b.name)),
			cmp.Compare(len(a.name), len(b.name)),
			strings.Compare(a.name, b.name))
	})
	var sizes []uint64
	for _, s := range syms {
		if _, ok := n.byName[s.name]; !ok {
			n.byName[s.name] = s.addr
		}
		if k := len(n.addrs) - 1; k >= 0 && n.addrs[k] == s.addr {
			sizes[k] = max(sizes[k], s.size) // an alias
			continue
		}
		n.addrs = append(n.addrs, s.addr)
		n.names = append(n.names, s.name)
		n.kinds = append(n.kinds, s.kind)
		sizes = append(sizes, s.size)
	}
	n.ends = make([]uint64, len(n.addrs))
	for i, a := range n.addrs {
		switch {
		case sizes[i] == 0 && i+1 < len(n.addrs):
			n.ends[i] = n.addrs[i+1] // size 0 extends to the next symbol
		case sizes[i] == 0 || sizes[i] > hi-a:
			n.ends[i] = hi
		default:
			n.ends[i] = a + sizes[i]
		}
		// Ranges must not overlap (an FDE spanning all of .plt is an alias
		// of PLT0): the last-hit cache in symbol would otherwise answer
		// differently from the binary search, depending on the previous pc.
		if i+1 < len(n.addrs) {
			n.ends[i] = min(n.ends[i], n.addrs[i+1])
		}
	}
	return n
}

// textMapping returns where o's first executable segment lies in the
// guest, page-aligned as Linux maps it (what pprof's mappings describe),
// or [lo, hi) from offset 0 if it has none.
func textMapping(o *Object, bias, lo, hi uint64) trace.Mapping {
	m := trace.Mapping{Start: lo, Limit: hi, File: o.Path, Bias: bias}
	if o.file != nil {
		m.BuildID = buildID(o.file)
	}
	for _, p := range o.Loads {
		if p.Flags&elf.PF_X != 0 {
			down := p.Vaddr - pageDown(p.Vaddr)
			m.Start, m.Limit, m.Offset = bias+p.Vaddr-down, bias+pageUp(p.Vaddr+p.Memsz), p.Off-min(p.Off, down)
			break
		}
	}
	return m
}

// buildID returns the hex GNU build id of f (.note.gnu.build-id), or "".
func buildID(f *elf.File) string {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return ""
	}
	d, err := sec.Data()
	if err != nil || len(d) < 16 {
		return ""
	}
	bo := f.ByteOrder
	namesz, descsz, typ := bo.Uint32(d), bo.Uint32(d[4:]), bo.Uint32(d[8:])
	off := 12 + (uint64(namesz)+3)&^3
	if typ != 3 || string(d[12:min(12+uint64(namesz), uint64(len(d)))]) != "GNU\x00" || off+uint64(descsz) > uint64(len(d)) {
		return "" // NT_GNU_BUILD_ID with owner "GNU"
	}
	return hex.EncodeToString(d[off : off+uint64(descsz)])
}

// Mapping implements trace.Mapper: the object containing pc, where it
// lies in the guest and in its file.
func (t *SymbolTable) Mapping(pc uint64) (trace.Mapping, bool) {
	o := t.object(pc)
	if o == nil {
		return trace.Mapping{}, false
	}
	return o.text, true
}

// LineStart implements trace.Mapper: the lowest address of the
// function containing pc whose line-table row names pc's file and line.
func (t *SymbolTable) LineStart(pc uint64) uint64 {
	o := t.object(pc)
	if o == nil {
		return 0
	}
	i, ok := o.symbol(pc)
	if !ok {
		return 0
	}
	file, line := o.line(pc)
	if line == 0 {
		return 0
	}
	lo, hi := o.addrs[i], o.ends[i]
	lt := &o.lines
	for j := max(floor(lt.addrs, lo), 0); j < len(lt.addrs) && lt.addrs[j] < hi; j++ {
		if r := lt.rows[j]; !r.end && int(r.line) == line && lt.files[r.file] == file {
			return max(lt.addrs[j], lo)
		}
	}
	return 0
}

// functionSymbols returns the code symbols of o inside the guest range
// [lo, hi), at guest addresses.
func functionSymbols(o *Object, base string, bias, lo, hi uint64) (out []rawSym) {
	f := o.file
	if f == nil {
		return nil
	}
	defer func() { _ = recover() }() // corrupt tables: keep what was read
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
			if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
				continue
			}
			rank := 0
			switch typ {
			case elf.STT_FUNC, elf.STT_GNU_IFUNC:
			case elf.STT_NOTYPE:
				if s.Size == 0 || bind == elf.STB_LOCAL || !isCode(f, s.Section) {
					continue
				}
				rank = 4
			default:
				continue
			}
			switch bind {
			case elf.STB_GLOBAL:
			case elf.STB_WEAK:
				rank++
			default:
				rank += 2
			}
			a := s.Value + bias
			if a < lo || a >= hi {
				continue
			}
			out = append(out, rawSym{addr: a, size: s.Size, name: s.Name, rank: rank})
		}
	}
	if syms, err := o.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := o.DynamicSymbols(); err == nil {
		add(syms)
	}
	// Functions without a symbol (internal functions of stripped libraries)
	// still have unwind info: name them by address, below every real name.
	// An FDE that starts inside a named function describes part of it
	// (clone3's child, which starts with the return address undefined):
	// the function keeps its name there, as in gdb.
	named := slices.Clone(out)
	slices.SortFunc(named, func(a, b rawSym) int { return cmp.Compare(a.addr, b.addr) })
	inside := func(g uint64) bool {
		i, _ := slices.BinarySearchFunc(named, g, func(s rawSym, g uint64) int { return cmp.Compare(s.addr, g) })
		for j := i - 1; j >= 0 && j >= i-8; j-- {
			if named[j].addr < g && g < named[j].addr+named[j].size {
				return true
			}
		}
		return false
	}
	starts, sizes := ehFrameFunctions(f)
	for i, a := range starts {
		if g := a + bias; g >= lo && g < hi && !inside(g) {
			out = append(out, rawSym{addr: g, size: sizes[i], name: base + "!0x" + strconv.FormatUint(a, 16), rank: 9})
		}
	}
	// PLT stubs have no symbols; without these a size-0 symbol before them
	// (often _init) would swallow every call through the PLT. They are
	// linker stubs, transparent to call tracking.
	lazy := hasJumpSlots(f)
	for _, sec := range f.Sections {
		if strings.HasPrefix(sec.Name, ".plt") && sec.Flags&elf.SHF_EXECINSTR != 0 && sec.Size > 0 {
			a := sec.Addr + bias
			if a < lo || a >= hi {
				continue
			}
			size := sec.Size
			if sec.Name == ".plt" && lazy && isLazyPLT0(sec) && size > plt0Size {
				out = append(out, rawSym{addr: a, size: plt0Size, name: "[.plt0]", rank: 8, kind: trace.LazyBindingStub})
				a, size = a+plt0Size, size-plt0Size
			}
			out = append(out, rawSym{addr: a, size: size, name: "[" + sec.Name + "]", rank: 8, kind: trace.LinkerStub})
		}
	}
	return out
}

// plt0Size is the size of the x86-64 PLT0 stub (System V psABI §A.2.1;
// the IBT variant of binutils has the same size).
const plt0Size = 16

// hasJumpSlots reports whether f has R_X86_64_JUMP_SLOT relocations, the
// GOT entries that lazy binding fills in. A static-pie's .plt also starts
// with a PLT0, never used: its .rela.plt holds IRELATIVE relocations only.
func hasJumpSlots(f *elf.File) bool {
	sec := f.Section(".rela.plt")
	if sec == nil || sec.Type != elf.SHT_RELA {
		return false
	}
	data, err := sec.Data()
	if err != nil {
		return false
	}
	const relaSize = 24
	for off := 0; off+relaSize <= len(data); off += relaSize {
		info := f.ByteOrder.Uint64(data[off+8:])
		if elf.R_X86_64(elf.R_TYPE64(info)) == elf.R_X86_64_JMP_SLOT {
			return true
		}
	}
	return false
}

// isLazyPLT0 reports whether .plt starts with PLT0, the lazy-binding entry
// stub "push GOT+8(%rip); jmp *GOT+16(%rip)": its first instruction is
// ff 35 (push r/m64, rip-relative). The .plt of a static program (IRELATIVE
// stubs only) starts with a jmp or endbr64 instead.
func isLazyPLT0(sec *elf.Section) bool {
	var b [2]byte
	if _, err := sec.ReadAt(b[:], 0); err != nil {
		return false
	}
	return b[0] == 0xff && b[1] == 0x35
}

func isCode(f *elf.File, i elf.SectionIndex) bool {
	return int(i) < len(f.Sections) && f.Sections[i].Flags&elf.SHF_EXECINSTR != 0
}

func leadingUnderscores(s string) int { return len(s) - len(strings.TrimLeft(s, "_")) }

// lineTable is a DWARF line table at guest addresses, sorted by address.
type lineTable struct {
	addrs []uint64
	rows  []lineRow
	files []string
}

type lineRow struct {
	file int32
	line int32
	end  bool // end of a sequence: no line from here
	stmt bool // a recommended breakpoint location
}

func (o *symObject) line(pc uint64) (string, int) {
	o.linesOnce.Do(o.loadLines)
	lt := &o.lines
	i := floor(lt.addrs, pc)
	if i < 0 || lt.rows[i].end {
		return "", 0
	}
	return lt.files[lt.rows[i].file], int(lt.rows[i].line)
}

// addrsOf returns the addresses where a statement of file:line starts and
// which Lookup attributes to that line.
func (lt *lineTable) addrsOf(file string, line int) []uint64 {
	var out []uint64
	match := make([]bool, len(lt.files))
	for i, f := range lt.files {
		match[i] = f == file || strings.HasSuffix(f, "/"+file)
	}
	for i, r := range lt.rows {
		a := lt.addrs[i]
		if r.end || !r.stmt || int(r.line) != line || !match[r.file] {
			continue
		}
		if i+1 < len(lt.addrs) && lt.addrs[i+1] == a {
			continue // an empty row: the next one owns the address
		}
		if n := len(out); n == 0 || out[n-1] != a {
			out = append(out, a)
		}
	}
	return out
}

// loadLines reads the DWARF line tables of the object, if any.
func (o *symObject) loadLines() {
	type entry struct {
		addr uint64
		row  lineRow
	}
	var entries []entry
	fileIdx := map[string]int32{}
	var files []string
	func() {
		defer func() { _ = recover() }() // corrupt DWARF: keep what was read
		d, err := o.obj.DWARF()
		if err != nil {
			return
		}
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				return
			}
			if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit && e.Tag != dwarf.TagSkeletonUnit {
				r.SkipChildren()
				continue
			}
			r.SkipChildren()
			lr, err := d.LineReader(e)
			if err != nil || lr == nil {
				continue
			}
			// DWARF 5 directories other than 0 may be relative to the
			// compilation directory (gcc: "src" for src/x.c), which
			// debug/dwarf leaves unjoined: join them, so that file names
			// are absolute as addr2line and Coz print them.
			compDir, _ := e.Val(dwarf.AttrCompDir).(string)
			var le dwarf.LineEntry
			seqStart := len(entries) // first entry of the current sequence
			for lr.Next(&le) == nil {
				name := ""
				if le.File != nil {
					name = le.File.Name
					if name != "" && !path.IsAbs(name) && path.IsAbs(compDir) {
						name = path.Join(compDir, name)
					}
				}
				fi, ok := fileIdx[name]
				if !ok {
					fi = int32(len(files))
					fileIdx[name] = fi
					files = append(files, name)
				}
				row := entry{le.Address + o.bias, lineRow{
					file: fi, line: int32(min(le.Line, 1<<31-1)), end: le.EndSequence, stmt: le.IsStmt,
				}}
				// A row at the same address as the next row of its sequence
				// covers no code: the later row replaces it (otherwise a
				// sequence's last row would outlive its end_sequence).
				if n := len(entries); n > seqStart && entries[n-1].addr == row.addr {
					entries[n-1] = row
				} else {
					entries = append(entries, row)
				}
				if le.EndSequence {
					seqStart = len(entries)
				}
			}
		}
	}()
	// By address; at one address a sequence's end comes before another
	// sequence's start, and the last row of a sequence wins (floor picks it).
	slices.SortStableFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		switch {
		case a.row.end && !b.row.end:
			return -1
		case b.row.end && !a.row.end:
			return 1
		}
		return 0
	})
	o.lines.files = files
	o.lines.addrs = make([]uint64, len(entries))
	o.lines.rows = make([]lineRow, len(entries))
	for i, e := range entries {
		o.lines.addrs[i], o.lines.rows[i] = e.addr, e.row
	}
}
