package loader

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Prot bits of a mapping.
const (
	ProtRead  = 1
	ProtWrite = 2
	ProtExec  = 4
)

// Load addresses Linux uses on x86-64 with ASLR disabled.
const (
	PageSize   = 0x1000
	PIEBase    = 0x555555554000 // ELF_ET_DYN_BASE: ET_DYN executables
	InterpBase = 0x7ffff7fc3000 // where the interpreter (ld.so) is loaded
	minMapAddr = 0x10000        // vm.mmap_min_addr: page 0 must fault
)

// Mapping is one region to map into guest memory: page-aligned Addr and
// Size, Data copied at Addr+DataOff (len(Data) <= Size-DataOff), the rest
// zero. Data may alias the object's file bytes: do not modify it.
type Mapping struct {
	Addr, Size uint64
	Prot       int
	Data       []byte
	DataOff    uint64
	Name       string // object path; "" for anonymous (BSS-only) pages
	FileOff    uint64 // file offset of the page at Addr (for naming)
}

// Layout is the complete initial address space of a process.
type Layout struct {
	Mappings []Mapping // sorted by Addr, non-overlapping
	// PastEOF are page ranges [lo, hi) of file pages past the end of
	// their file (a segment's file range runs past it): mapped, but an
	// access there is SIGBUS (mm.AddressSpace.SetFileEnd), sorted.
	PastEOF    [][2]uint64
	Entry      uint64 // first instruction: the interpreter's entry if any
	ExeEntry   uint64 // AT_ENTRY
	ExeBase    uint64 // load bias of the executable (0 for ET_EXEC)
	InterpBase uint64 // AT_BASE (0 without interpreter)
	Phdr       uint64 // AT_PHDR
	Phent      uint64 // AT_PHENT
	Phnum      uint64 // AT_PHNUM
	BrkStart   uint64 // page-aligned end of the executable's highest segment
	Exe        *Object
	Interp     *Object
}

// Plan lays out exe, and interp when non-nil, like Linux with ASLR disabled:
// ET_DYN executables at PIEBase, ET_EXEC at their own addresses, an ET_DYN
// interpreter at InterpBase. A dynamically linked exe needs its interpreter.
func Plan(exe, interp *Object) (*Layout, error) {
	if exe == nil {
		return nil, errors.New("loader: Plan: no executable")
	}
	if exe.Interp != "" && interp == nil {
		return nil, badInput(exe.Path, "needs the interpreter %s, which was not loaded", exe.Interp)
	}
	maps, eof, bias, err := planObject(exe, PIEBase)
	if err != nil {
		return nil, err
	}
	_, hi := exe.Span()
	l := &Layout{
		Entry:    exe.Entry + bias,
		ExeEntry: exe.Entry + bias,
		ExeBase:  bias,
		Phdr:     exe.PhdrVaddr + bias,
		Phent:    exe.Phent,
		Phnum:    exe.Phnum,
		BrkStart: hi + bias,
		Exe:      exe,
	}
	if interp != nil {
		imaps, ieof, ibias, err := planObject(interp, InterpBase)
		if err != nil {
			return nil, err
		}
		eof = append(eof, ieof...)
		for _, a := range maps {
			for _, b := range imaps {
				if a.Addr < b.Addr+b.Size && b.Addr < a.Addr+a.Size {
					return nil, badInput(interp.Path, "interpreter at %#x overlaps the executable %s at %#x", b.Addr, exe.Path, a.Addr)
				}
			}
		}
		maps = append(maps, imaps...)
		l.Interp, l.InterpBase, l.Entry = interp, ibias, interp.Entry+ibias
	}
	slices.SortFunc(maps, func(a, b Mapping) int { return cmp.Compare(a.Addr, b.Addr) })
	l.Mappings = maps
	slices.SortFunc(eof, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	l.PastEOF = eof
	return l, nil
}

// planObject returns the mappings of o, its pages past the end of the file
// (Layout.PastEOF) and its load bias; an ET_DYN object starts at dynBase.
func planObject(o *Object, dynBase uint64) ([]Mapping, [][2]uint64, uint64, error) {
	if len(o.Loads) == 0 {
		return nil, nil, 0, killedBy(badInput(o.Path, "no loadable segments"))
	}
	for i := range o.Loads {
		if err := checkLoad(&o.Loads[i], uint64(len(o.data))); err != "" {
			return nil, nil, 0, killedBy(corrupt(o.Path, "segment %d: %s", i, err))
		}
	}
	lo, hi := o.Span()
	start := lo
	if o.Type == elf.ET_DYN {
		start = dynBase
	}
	bias := start - lo // wraps for ET_DYN linked above dynBase; sums wrap back
	if start < minMapAddr || start > maxUserAddr || hi-lo > maxUserAddr-start {
		return nil, nil, 0, killedBy(badInput(o.Path, "segments [%#x, %#x) cannot be mapped at %#x", lo, hi, start))
	}
	segs := make([]segment, len(o.Loads))
	for i, p := range o.Loads {
		segs[i] = segment{
			index: i,
			start: p.Vaddr + bias,
			end:   p.Vaddr + bias + p.Memsz,
			prot:  prot(p.Flags),
		}
		if p.Filesz > 0 {
			segs[i].start, segs[i].off, segs[i].data = fileBytes(o, &p, bias)
			if p.Memsz > p.Filesz && p.Flags&elf.PF_W != 0 {
				segs[i].zeroEnd = pageUp(p.Vaddr + bias + p.Filesz)
			}
			// Pages past the end of the file: from the one holding
			// its end, rounded up, to the segment's last file page.
			fileEnd := pageUp(uint64(len(o.data)))
			past := segs[i].start
			if fileEnd > segs[i].off {
				past += fileEnd - segs[i].off
			}
			if last := pageUp(p.Vaddr + bias + p.Filesz); past < last {
				if z := p.Vaddr + bias + p.Filesz; segs[i].zeroEnd > z && z%PageSize != 0 && pageDown(z) >= past {
					// padzero writes into such a page: EFAULT
					// after the point of no return.
					return nil, nil, 0, killedBy(corrupt(o.Path, "segment %d: the BSS starts in a page past the end of the file (%#x)", i, len(o.data)))
				}
				segs[i].pastEOF = [2]uint64{past, last}
			}
		}
	}
	// Segments sharing pages form a group, planned together.
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(pageDown(a.start), pageDown(b.start)) })
	var maps []Mapping
	for g := 0; g < len(segs); {
		end := pageUp(segs[g].end)
		h := g + 1
		for h < len(segs) && pageDown(segs[h].start) < end {
			end = max(end, pageUp(segs[h].end))
			h++
		}
		maps = planGroup(maps, o.Path, segs[g:h])
		g = h
	}
	return maps, pastEOF(segs), bias, nil
}

// pastEOF returns the pages past the end of the file of segs, but for
// those a later segment maps again (MAP_FIXED over them: its pages win).
func pastEOF(segs []segment) [][2]uint64 {
	var out [][2]uint64
	for _, s := range segs {
		r := []span{{s.pastEOF[0], s.pastEOF[1]}}
		for _, t := range segs {
			if t.index <= s.index {
				continue
			}
			var keep []span
			for _, c := range r {
				lo, hi := pageDown(t.start), pageUp(t.end)
				if c.lo < lo {
					keep = append(keep, span{c.lo, min(c.hi, lo)})
				}
				if c.hi > hi {
					keep = append(keep, span{max(c.lo, hi), c.hi})
				}
			}
			r = keep
		}
		for _, c := range r {
			if c.lo < c.hi {
				out = append(out, [2]uint64{c.lo, c.hi})
			}
		}
	}
	return out
}

// span is a half-open address range [lo, hi).
type span struct{ lo, hi uint64 }

// fileBytes is where the file bytes of PT_LOAD p go and what they are, as
// elf_map maps them: whole pages of the file, from the one holding p_offset
// to the one holding its last byte (those bytes past the end of the file
// are zero). Only a writable segment with a BSS has the rest of its last
// file page zeroed (padzero: on a read-only page it fails, and execve goes
// on); the others keep the file's bytes there.
func fileBytes(o *Object, p *elf.ProgHeader, bias uint64) (start, off uint64, data []byte) {
	head := p.Vaddr % PageSize // p_offset's too (checkLoad)
	size := uint64(len(o.data))
	hi := p.Off + p.Filesz
	if !(p.Memsz > p.Filesz && p.Flags&elf.PF_W != 0) {
		hi = pageUp(hi)
	}
	lo := p.Off - head
	return p.Vaddr + bias - head, lo, o.data[min(lo, size):min(hi, size)] // past the end: none
}

type segment struct {
	index      int // in Object.Loads: later segments win where data overlaps
	start, end uint64
	prot       int
	off        uint64 // file offset of data
	data       []byte // file bytes, mapped at start
	// zeroEnd, when above the end of data, ends the zeros padzero writes
	// after it: they hide what an earlier segment mapped there.
	zeroEnd uint64
	pastEOF [2]uint64 // its file pages past the end of the file [lo, hi)
}

func prot(f elf.ProgFlag) int {
	p := 0
	if f&elf.PF_R != 0 {
		p |= ProtRead
	}
	if f&elf.PF_W != 0 {
		p |= ProtWrite
	}
	if f&elf.PF_X != 0 {
		p |= ProtExec
	}
	return p
}

// planGroup appends the mappings of segments whose pages overlap. Each page
// gets the protection of the last segment covering it (protAt); the file
// bytes of every segment are kept, the rest (BSS) is zero.
func planGroup(maps []Mapping, name string, segs []segment) []Mapping {
	var bounds []uint64
	for _, s := range segs {
		bounds = append(bounds, pageDown(s.start), pageUp(s.end))
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	// Runs of pages with the same protection.
	for i := 0; i+1 < len(bounds); {
		p := protAt(segs, bounds[i], bounds[i+1])
		j := i + 1
		for j+1 < len(bounds) && protAt(segs, bounds[j], bounds[j+1]) == p {
			j++
		}
		maps = planRun(maps, name, segs, bounds[i], bounds[j], p)
		i = j
	}
	return maps
}

// protAt is the protection of pages [lo, hi): the last segment's (in
// program header order) that covers them, as load_elf_binary maps each
// PT_LOAD in turn with MAP_FIXED over what the ones before mapped.
func protAt(segs []segment, lo, hi uint64) int {
	p, last := 0, -1
	for _, s := range segs {
		if pageDown(s.start) <= lo && hi <= pageUp(s.end) && s.index > last {
			p, last = s.prot, s.index
		}
	}
	return p
}

// planRun appends the mappings of pages [lo, hi) with protection p: pages
// holding file bytes become named mappings, the others anonymous ones.
func planRun(maps []Mapping, name string, segs []segment, lo, hi uint64, p int) []Mapping {
	var pieces []segment // file bytes clipped to [lo, hi)
	for _, s := range segs {
		a, b := max(s.start, lo), min(s.start+uint64(len(s.data)), hi)
		if a < b {
			c := s
			c.start, c.off, c.data = a, s.off+(a-s.start), s.data[a-s.start:b-s.start]
			pieces = append(pieces, c)
		}
	}
	slices.SortStableFunc(pieces, func(a, b segment) int { return cmp.Compare(a.start, b.start) })
	cursor := lo
	for k := 0; k < len(pieces); {
		// A cluster: pieces less than a page apart share one mapping.
		first, end := pieces[k].start, pieces[k].start+uint64(len(pieces[k].data))
		m := k + 1
		for m < len(pieces) && pageDown(pieces[m].start) <= pageUp(end) {
			end = max(end, pieces[m].start+uint64(len(pieces[m].data)))
			m++
		}
		addr := pageDown(first)
		if cursor < addr {
			maps = append(maps, Mapping{Addr: cursor, Size: addr - cursor, Prot: p})
		}
		mp := Mapping{Addr: addr, Size: pageUp(end) - addr, Prot: p, Name: name, DataOff: first - addr}
		if c := pieces[k]; m == k+1 {
			mp.Data = c.data
		} else {
			mp.Data = make([]byte, end-first)
			cl := slices.Clone(pieces[k:m])
			slices.SortFunc(cl, func(a, b segment) int { return a.index - b.index })
			for _, c := range cl {
				copy(mp.Data[c.start-first:], c.data)
				if z := c.start + uint64(len(c.data)); z < min(c.zeroEnd, end) {
					clear(mp.Data[z-first : min(c.zeroEnd, end)-first])
				}
			}
		}
		if c := pieces[k]; c.off >= c.start-addr {
			mp.FileOff = c.off - (c.start - addr)
		}
		maps = append(maps, mp)
		cursor = mp.Addr + mp.Size
		k = m
	}
	if cursor < hi {
		maps = append(maps, Mapping{Addr: cursor, Size: hi - cursor, Prot: p})
	}
	return maps
}

// ResolveInterp finds the interpreter interp of exePath inside sysroot ("/"
// when empty): filepath.Join(sysroot, interp). Symbolic links are followed
// inside the sysroot, so that an absolute link there (Debian's
// /lib64/ld-linux-x86-64.so.2 is one) does not escape to the host's files;
// the link's target is returned when it would.
func ResolveInterp(exePath, interp, sysroot string) (string, error) {
	if sysroot == "" {
		sysroot = "/"
	}
	notFound := func(err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return badInput(exePath, "interpreter %s not found in sysroot %s", interp, sysroot)
		}
		return badInput(exePath, "interpreter %s in sysroot %s: %v", interp, sysroot, err)
	}
	p, err := resolveIn(sysroot, interp)
	if err != nil {
		return "", notFound(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", notFound(err)
	}
	if fi.IsDir() {
		return "", badInput(exePath, "interpreter %s in sysroot %s is a directory", interp, sysroot)
	}
	// binfmt_elf opens the interpreter with open_exec: a regular file the
	// caller may execute, EACCES otherwise.
	if !fi.Mode().IsRegular() || !executable(fi) {
		return "", &BadInputError{Path: exePath, Err: fs.ErrPermission,
			Reason: fmt.Sprintf("interpreter %s in sysroot %s: permission denied (not an executable file)", interp, sysroot)}
	}
	joined := filepath.Join(sysroot, interp)
	if fj, err := os.Stat(joined); err == nil && os.SameFile(fi, fj) {
		return joined, nil
	}
	return p, nil
}

// resolveIn returns the host path of the guest path name under root,
// resolving symbolic links component by component relative to root.
func resolveIn(root, name string) (string, error) {
	todo := strings.Split(name, "/")
	cur := "/" // guest path resolved so far
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		host := filepath.Join(root, filepath.FromSlash(next))
		fi, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("too many levels of symbolic links")
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return filepath.Join(root, filepath.FromSlash(cur)), nil
}

func pageDown(a uint64) uint64 { return a &^ (PageSize - 1) }
func pageUp(a uint64) uint64   { return (a + PageSize - 1) &^ (PageSize - 1) }
