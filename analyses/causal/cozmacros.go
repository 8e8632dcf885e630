package causal

// Coz's source-level progress points (§4.5): COZ_PROGRESS,
// COZ_PROGRESS_NAMED(name), COZ_BEGIN(name) and COZ_END(name) of Coz's
// coz.h. Each expands, at its call site, to two static variables,
// _initialized and _counter; the first execution of the site asks the
// profiler for a counter (_call_coz_get_counter(type, name), through a weak
// dlsym of "_coz_get_counter") and stores it in _counter, and every
// execution increments *_counter if there is one. Without Coz, no counter
// exists and nothing is incremented, but every execution of the site still
// reads _initialized. So the sites are found in the main executable
// without running it: DWARF names the two variables (declared on the
// macro's line) and their addresses; a visit is an execution of an
// instruction that reads that site's _initialized (cmpb $0 or movzbl,
// RIP-relative); the counter type and the name are the arguments loaded
// (mov $TYPE, %edi; lea NAME(%rip), %reg) before the store into _counter.
// Throughput sites become throughput points named by their name; BEGIN and
// END sites of one name become a latency point of that name.

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"sort"

	"emuprof/loader"
)

// cozGetCounter is the symbol coz.h's counter request looks up (dlsym): a
// string loaded next to the name's, never a point's name.
const cozGetCounter = "_coz_get_counter"

// cozSite is one macro call site.
type cozSite struct {
	typ   int64  // 1 throughput, 2 begin, 3 end
	name  string // the counter's name
	reads []uint64
	// nameReg is the register the name is passed from (-1: none seen),
	// when its load is not next to the request; text and textBase are
	// the code section of the request.
	nameReg  int
	prio     bool // named from the store after the request's indirect call
	text     []byte
	textBase uint64
}

// hoistedName finds the name of a site whose name was loaded into a
// register before the loop (gcc hoists it): the nearest lea NAME(%rip) into
// that register before the site's first read of _initialized, in the same
// code section.
func hoistedName(s *cozSite, rel func([]byte, uint64, int, int) uint64, cstring func(uint64) string) string {
	r := s.reads[0]
	if r < s.textBase || r >= s.textBase+uint64(len(s.text)) {
		return ""
	}
	end := int(r - s.textBase)
	for q := end - 7; q >= max(0, end-4096); q-- {
		d := s.text
		if (d[q] == 0x48 || d[q] == 0x4c) && d[q+1] == 0x8d && d[q+2]&0xc7 == 0x05 &&
			int(d[q+2]>>3&7)|int(d[q]&4)<<1 == s.nameReg {
			if n := cstring(rel(d, s.textBase, q, 7)); n != cozGetCounter {
				return n
			}
		}
	}
	return ""
}

// cozSites returns the Coz macro sites of the executable at path (link-time
// addresses) and whether it is position independent; none if it has no
// DWARF or no macro. objs gives the file (nil: loader.Open).
func cozSites(objs loader.Opener, path string) (sites []cozSite, pie bool, syms map[string]uint64) {
	defer func() {
		if recover() != nil { // corrupt DWARF or code: no macro found
			sites = nil
		}
	}()
	o, err := loader.OpenFrom(objs, path)
	if err != nil || o.ELF() == nil {
		return nil, false, nil
	}
	f := o.ELF()
	d, err := o.DWARF()
	if err != nil {
		return nil, false, nil
	}
	type declKey struct {
		cu         dwarf.Offset
		file, line int64
	}
	type pair struct{ init, counter uint64 }
	found := map[declKey]*pair{}
	var order []declKey
	r := d.Reader()
	var cu dwarf.Offset
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			cu = e.Offset
			continue
		}
		if e.Tag != dwarf.TagVariable {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if name != "_initialized" && name != "_counter" {
			continue
		}
		loc, _ := e.Val(dwarf.AttrLocation).([]byte)
		if len(loc) != 9 || loc[0] != 0x03 { // DW_OP_addr
			continue
		}
		addr := binary.LittleEndian.Uint64(loc[1:])
		file, _ := e.Val(dwarf.AttrDeclFile).(int64)
		line, _ := e.Val(dwarf.AttrDeclLine).(int64)
		k := declKey{cu, file, line}
		pr := found[k]
		if pr == nil {
			pr = &pair{}
			found[k] = pr
			order = append(order, k)
		}
		if name == "_initialized" {
			pr.init = addr
		} else {
			pr.counter = addr
		}
	}
	byInit := map[uint64]*cozSite{}
	byCounter := map[uint64]*cozSite{}
	for _, k := range order {
		pr := found[k]
		if pr.init == 0 || pr.counter == 0 {
			continue // another variable of these names (coz.h's own)
		}
		s := &cozSite{typ: 1, nameReg: -1}
		byInit[pr.init], byCounter[pr.counter] = s, s
	}
	if len(byInit) == 0 {
		return nil, false, nil
	}
	cstring := func(a uint64) string {
		for _, sec := range f.Sections {
			if sec.Type != elf.SHT_PROGBITS || a < sec.Addr || a >= sec.Addr+sec.Size {
				continue
			}
			data, err := sec.Data()
			if err != nil {
				return ""
			}
			b := data[a-sec.Addr:]
			for i, c := range b {
				if c == 0 {
					return string(b[:i])
				}
			}
		}
		return ""
	}
	rel := func(data []byte, base uint64, p, n int) uint64 { // RIP-relative target of the n-byte instruction at p ending in its disp32
		return base + uint64(p+n) + uint64(int64(int32(binary.LittleEndian.Uint32(data[p+n-4:]))))
	}
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_EXECINSTR == 0 || sec.Type != elf.SHT_PROGBITS {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		base := sec.Addr
		for p := 0; p+8 <= len(data); p++ {
			switch {
			case data[p] == 0x80 && data[p+1] == 0x3d && data[p+6] == 0: // cmpb $0, disp32(%rip): the imm8 follows the disp32
				if s := byInit[rel(data, base, p, 6)+1]; s != nil {
					s.reads = append(s.reads, base+uint64(p))
				}
			case data[p] == 0x0f && data[p+1] == 0xb6 && data[p+2]&0xc7 == 0x05: // movzbl disp32(%rip), %r32
				if s := byInit[rel(data, base, p, 7)]; s != nil {
					s.reads = append(s.reads, base+uint64(p))
				}
			case (data[p] == 0x48 || data[p] == 0x4c) && data[p+1] == 0x89 && data[p+2]&0xc7 == 0x05: // mov %r64, disp32(%rip)
				s := byCounter[rel(data, base, p, 7)]
				if s == nil {
					continue
				}
				// The arguments of the counter's request, just before:
				// the nearest mov $TYPE, %edi and lea NAME(%rip), %reg.
				// The request's own store follows its indirect call
				// (fn(type, name)); another store of the site (no
				// counter function: 0) tells nothing, and code near it
				// (an assert's strings) must not name the site.
				indirect := false
				for q := max(0, p-16); q+2 <= p; q++ {
					if data[q] == 0xff && data[q+1]&0xf8 == 0xd0 {
						indirect = true
					}
				}
				if s.prio && !indirect {
					continue
				}
				if indirect && !s.prio {
					s.prio, s.name, s.nameReg, s.typ = true, "", -1, 1
				}
				typed := false
				for q := p - 1; q >= max(0, p-64); q-- {
					if data[q] == 0xbf && q+5 <= p && !typed {
						if v := int64(binary.LittleEndian.Uint32(data[q+1:])); v >= 1 && v <= 3 {
							s.typ, typed = v, true
						}
					}
					// mov %r64, %rsi: the name comes in a register
					// (gcc hoists its load out of the loop).
					if q+3 <= p && (data[q] == 0x48 || data[q] == 0x4c) && data[q+1] == 0x89 && data[q+2]&0xc7 == 0xc6 && s.nameReg < 0 && s.name == "" {
						s.nameReg = int(data[q+2]>>3&7) | int(data[q]&4)<<1
					}
					// lea NAME(%rip), %reg; not the dlsym of the
					// counter function, which the request makes first.
					if q+7 <= p && (data[q] == 0x48 || data[q] == 0x4c) && data[q+1] == 0x8d && data[q+2]&0xc7 == 0x05 && s.name == "" {
						if n := cstring(rel(data, base, q, 7)); n != cozGetCounter {
							s.name = n
						}
					}
				}
				s.text, s.textBase = data, base
			}
		}
	}
	syms = map[string]uint64{}
	if ss, err := o.Symbols(); err == nil {
		for _, s := range ss {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				syms[s.Name] = s.Value
			}
		}
	}
	for _, s := range byInit {
		if s.name == "" && s.nameReg >= 0 && len(s.reads) > 0 {
			s.name = hoistedName(s, rel, cstring)
		}
		if len(s.reads) > 0 && s.name != "" {
			sites = append(sites, *s)
		}
	}
	sort.Slice(sites, func(i, j int) bool { return sites[i].reads[0] < sites[j].reads[0] })
	return sites, f.Type == elf.ET_DYN, syms
}

// addCozPoints adds the progress points of the program's Coz macros, in the
// order of the names' first sites: a throughput point per
// COZ_PROGRESS(_NAMED) name, then a latency point per COZ_BEGIN/COZ_END
// name (so that, without --progress, experiments are delimited by a
// throughput point when there is one).
func (p *Profiler) addCozPoints(objs loader.Opener, path string) {
	sites, pie, syms := cozSites(objs, path)
	if len(sites) == 0 {
		return
	}
	p.cozPIE, p.cozSyms = pie, syms
	type acc struct {
		thr, begin, end []uint64
	}
	byName := map[string]*acc{}
	var names []string
	for _, s := range sites {
		a := byName[s.name]
		if a == nil {
			a = &acc{}
			byName[s.name] = a
			names = append(names, s.name)
		}
		switch s.typ {
		case 2:
			a.begin = append(a.begin, s.reads...)
		case 3:
			a.end = append(a.end, s.reads...)
		default:
			a.thr = append(a.thr, s.reads...)
		}
	}
	for _, n := range names {
		if a := byName[n]; len(a.thr) > 0 {
			p.points = append(p.points, point{name: n, begin: spec{text: n, kind: pointCoz, addrs: a.thr}})
		}
	}
	for _, n := range names {
		if a := byName[n]; len(a.begin) > 0 && len(a.end) > 0 {
			p.points = append(p.points, point{name: n, latency: true,
				begin: spec{text: n, kind: pointCoz, addrs: a.begin}, end: spec{text: n, kind: pointCoz, addrs: a.end}})
		}
	}
}
