package causal

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"emuprof/loader"
)

// pointKind says how a progress point is recognised in the stream.
type pointKind uint8

const (
	pointSymbol pointKind = iota // each Call of a routine with this name
	pointLine                    // each entry into a source line (file:line)
	pointAddr                    // each execution of the instruction at an address
	pointCoz                     // each execution of a Coz macro site (addrs, link-time)
	pointEnd                     // the run's end (Config.RunEnd)
)

// RunEndPoint names the progress point of Config.RunEnd.
const RunEndPoint = "(end of the run)"

// spec is one progress point location, parsed from --progress or one half of
// --latency (Coz §4.5: breakpoint progress points, given on the command line,
// no source change needed).
type spec struct {
	text string
	kind pointKind
	name string // symbol, or file (suffix-matched against DWARF paths)
	line int
	addr uint64
	// addrs are the instructions of a Coz macro's sites that read its
	// _initialized flag, one execution per visit (cozmacros.go).
	addrs []uint64
}

// parseSpec reads SYMBOL, FILE:LINE or 0xADDRESS.
func parseSpec(s string) (spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return spec{}, fmt.Errorf("empty progress point")
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		a, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return spec{}, fmt.Errorf("bad address %q", s)
		}
		return spec{text: s, kind: pointAddr, addr: a}, nil
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil && n > 0 {
			return spec{text: s, kind: pointLine, name: s[:i], line: n}, nil
		}
	}
	return spec{text: s, kind: pointSymbol, name: s}, nil
}

// fileMatches says whether a DWARF file path is the file a user named:
// equal, or ending in "/"+name.
func fileMatches(path, name string) bool {
	return path == name || strings.HasSuffix(path, "/"+name)
}

// point is a progress point's counters. A throughput point uses begin only;
// a latency point counts arrivals (begin) and departures (end) and keeps
// the time integral of the requests in flight for Little's law (Coz §4.5).
type point struct {
	name       string
	latency    bool
	begin, end spec
	arrivals   int64
	departures int64
	// first and last are the virtual times of the first and the last
	// arrival (Observe mode reports them).
	first, last int64
	// sumArr and sumDep are the sums of the virtual times of the arrivals
	// and of the departures: once every item has departed, their
	// difference over the count is the exact mean latency, whatever the
	// order of departures (Observe mode reports it).
	sumArr, sumDep int64
	// area is the time integral of the requests in flight (arrivals −
	// departures) up to lastT, in ns: over an experiment, divided by its
	// length, the mean number in flight L of Little's law L = λW.
	area, lastT int64
	// removed is the part of the integral inside the delays inserted
	// (the in-flight count times each increase of the global delay
	// count, ×scale): the effective time of the virtual speedup has none.
	removed int64
}

// areaAt is the integral of the requests in flight up to now.
func (pt *point) areaAt(now int64) int64 {
	return pt.area + (pt.arrivals-pt.departures)*(now-pt.lastT)
}

// CheckPoints says which progress point of cfg names nothing in the
// executable at path: a SYMBOL that is no function of its symbol tables
// (defined, or imported from a shared library), or a FILE:LINE that no row
// of its DWARF line table is on. A point that can never be visited makes a
// run of 0 experiments, so it is refused before the run. Addresses and a
// program that cannot be read are not checked. objs gives the files (nil:
// loader.Open).
func CheckPoints(cfg Config, objs loader.Opener, path string) error {
	var specs []spec
	for _, s := range cfg.Progress {
		sp, err := parseSpec(s)
		if err != nil {
			return err
		}
		specs = append(specs, sp)
	}
	for _, s := range cfg.Latency {
		b, e, ok := cutComma(s)
		if !ok {
			return errf("--latency %q: want BEGIN,END", s)
		}
		for _, h := range []string{b, e} {
			sp, err := parseSpec(h)
			if err != nil {
				return err
			}
			specs = append(specs, sp)
		}
	}
	if len(specs) == 0 || path == "" {
		return nil
	}
	exe, err := loader.OpenFrom(objs, path)
	if err != nil || exe.ELF() == nil {
		return nil // the loader says what is wrong with it
	}
	// The objects a point may be in: the executable and the libraries it
	// names (found where the dynamic loader looks by default).
	files := []*loader.Object{exe}
	needed, _ := exe.ELF().ImportedLibraries()
	for _, n := range needed {
		for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib", "/lib"} {
			if lib, err := loader.OpenFrom(objs, filepath.Join(dir, n)); err == nil && lib.ELF() != nil {
				files = append(files, lib)
				break
			}
		}
	}
	var syms map[string]bool
	var lines map[string]map[int]bool // file path -> lines with code
	for _, sp := range specs {
		switch sp.kind {
		case pointSymbol:
			if syms == nil {
				syms = map[string]bool{}
				for _, o := range files {
					elfFuncs(o, syms)
				}
			}
			if !syms[sp.name] {
				return errf("progress point %q: %s has no function of that name", sp.text, filepath.Base(path))
			}
		case pointLine:
			if lines == nil {
				if lines, err = lineTable(exe); err != nil {
					return errf("progress point %q: %s has no line table (%v); build it with -g", sp.text, filepath.Base(path), err)
				}
				for _, o := range files[1:] {
					if ls, err := lineTable(o); err == nil {
						for k, v := range ls {
							lines[k] = v
						}
					}
				}
			}
			known := false
			for file, ls := range lines {
				if fileMatches(file, sp.name) && ls[sp.line] {
					known = true
					break
				}
			}
			if !known {
				return errf("progress point %q: no code of %s is on that line", sp.text, filepath.Base(path))
			}
		}
	}
	return nil
}

// elfFuncs adds to out the names of the functions an ELF file defines or
// imports (undefined dynamic symbols: a call goes to the library's).
func elfFuncs(o *loader.Object, out map[string]bool) {
	for _, get := range []func() ([]elf.Symbol, error){o.Symbols, o.DynamicSymbols} {
		ss, _ := get()
		for _, s := range ss {
			t := elf.ST_TYPE(s.Info)
			if t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC || t == elf.STT_NOTYPE && s.Section == elf.SHN_UNDEF {
				name, _, _ := strings.Cut(s.Name, "@") // versioned imports
				out[name] = true
			}
		}
	}
}

// lineTable returns the lines that have code, per source file, of an
// object's DWARF.
func lineTable(o *loader.Object) (out map[string]map[int]bool, err error) {
	defer func() {
		if recover() != nil {
			out, err = nil, errf("corrupt DWARF")
		}
	}()
	d, err := o.DWARF()
	if err != nil {
		return nil, err
	}
	out = map[string]map[int]bool{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.File == nil || le.Line <= 0 {
				continue
			}
			m := out[le.File.Name]
			if m == nil {
				m = map[int]bool{}
				out[le.File.Name] = m
			}
			m[le.Line] = true
		}
		r.SkipChildren()
	}
	return out, nil
}
