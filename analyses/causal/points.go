package causal

import (
	"fmt"
	"strconv"
	"strings"
)

// pointKind says how a progress point is recognised in the stream.
type pointKind uint8

const (
	pointSymbol pointKind = iota // each Call of a routine with this name
	pointLine                    // each entry into a source line (file:line)
	pointAddr                    // each execution of the instruction at an address
	pointCoz                     // each execution of a Coz macro site (addrs, link-time)
)

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
