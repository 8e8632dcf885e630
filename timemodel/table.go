// Package timemodel is emuprof's virtual-time cost model (--time-model): what
// a block of guest instructions, a memory access, a branch, a system call
// costs on a reference x86-64 core, in virtual nanoseconds. It is pure,
// deterministic Go: the same event sequence always costs the same.
//
// The model is a sum of costs: each instruction its class's effective cycles
// (computed once per translated block), each memory access the latency of
// the first cache level that holds its line (a set-associative LRU
// hierarchy with a sequential-stream prefetcher and cross-core coherence),
// each mispredicted branch the pipeline refill, and each kernel operation a
// fixed cost. Misses overlap each other by one average (mlp), and the work
// of the instructions after a miss, up to a reorder buffer's worth, hides
// behind it (Model's shadow); there is no data flow nor out-of-order
// scheduling beyond that; docs/TIME-MODEL.md says where that matters.
package timemodel

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Zen4 is the reference core's table (zen4.table), the default model.
//
//go:embed zen4.table
var zen4 []byte

// Names of the built-in models (--time-model).
const (
	Insns = "insns" // 1 ns per instruction, nothing else: the model before this package
	Zen4  = "zen4"  // the reference core
)

// Table is one core's constants. Cycle counts are in hundredths of a cycle
// (centicycles), so that 0.33 cycles is exact; kernel costs are in ns.
type Table struct {
	Name string
	MHz  int64

	Int, Mul, Div, FP, SIMD, FPDiv, String, Atomic, Serial, Pause int64 // centicycles
	FuseCmp, FuseALU                                              bool  // a CMP/TEST, an ALU op + jcc is one op

	BranchBits      int
	BranchPenalty   int64 // centicycles
	IndirectBits    int   // log2 of the path-keyed indirect entries
	IndirectHistory int   // indirect targets in the path (0: last target only)

	Line                    int
	L1Size, L1Ways          int
	L2Size, L2Ways          int
	L3Size, L3Ways          int
	L2Latency, L3Latency    int64 // centicycles
	MemLatency              int64 // centicycles
	MLP                     int64 // hundredths: misses in flight on average
	PrefetchStreams         int
	PrefetchCost            int64 // centicycles: a prefetched line from memory
	PrefetchCacheCost       int64 // centicycles: a prefetched line that L2 or L3 held
	ROB                     int   // reorder buffer entries: instructions that can issue under a miss (0: no overlap)
	CoherenceLatency        int64 // centicycles
	CoherenceWindow         int64 // ns: a core that writes a line at least this often keeps writing it
	CoherenceContended      int64 // centicycles: a load of a line both cores keep writing
	CoherenceLocked         int64 // centicycles: a locked instruction on a line another core keeps writing
	Syscall, FutexWake      int64 // ns
	FutexWait, Switch       int64 // ns
	Slice                   int64 // ns: the kernel's time slice among threads that share a CPU
	PageFault, BytesPer1000 int64 // ns
}

// Load returns the table a --time-model value names: "zen4", or a file in
// zen4.table's format. "insns" has no table (nil, nil).
func Load(name string) (*Table, error) {
	switch name {
	case Insns:
		return nil, nil
	case Zen4, "":
		return Parse(bytes.NewReader(zen4), "zen4")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w (want %s, %s or a table file)", err, Insns, Zen4)
	}
	defer f.Close()
	return Parse(f, name)
}

// Parse reads a table: "key value" lines, # comments. Every key must be
// given once; src names the input in errors.
func Parse(r io.Reader, src string) (*Table, error) {
	t := &Table{}
	cyc := func(p *int64) func(string) error { return func(v string) error { return centi(v, p) } }
	num := func(p *int64) func(string) error {
		return func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("want a whole number ≥ 0, not %q", v)
			}
			*p = n
			return nil
		}
	}
	size := func(p *int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("want a whole number > 0, not %q", v)
			}
			*p = n
			return nil
		}
	}
	upTo := func(most int) func(p *int) func(string) error {
		return func(p *int) func(string) error {
			return func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > most {
					return fmt.Errorf("want a whole number from 0 to %d, not %q", most, v)
				}
				*p = n
				return nil
			}
		}
	}
	count, rob := upTo(1024), upTo(1<<16)
	flag := func(p *bool) func(string) error {
		return func(v string) error {
			switch v {
			case "0", "1":
				*p = v == "1"
				return nil
			}
			return fmt.Errorf("want 0 or 1, not %q", v)
		}
	}
	keys := map[string]func(string) error{
		"name":                    func(v string) error { t.Name = v; return nil },
		"mhz":                     num(&t.MHz),
		"int":                     cyc(&t.Int),
		"mul":                     cyc(&t.Mul),
		"div":                     cyc(&t.Div),
		"fp":                      cyc(&t.FP),
		"simd":                    cyc(&t.SIMD),
		"fpdiv":                   cyc(&t.FPDiv),
		"string":                  cyc(&t.String),
		"atomic":                  cyc(&t.Atomic),
		"serial":                  cyc(&t.Serial),
		"pause":                   cyc(&t.Pause),
		"fuse.cmp":                flag(&t.FuseCmp),
		"fuse.alu":                flag(&t.FuseALU),
		"branch.bits":             size(&t.BranchBits),
		"branch.penalty":          cyc(&t.BranchPenalty),
		"branch.indirect.bits":    size(&t.IndirectBits),
		"branch.indirect.history": count(&t.IndirectHistory),
		"line":                    size(&t.Line),
		"l1.size":                 size(&t.L1Size),
		"l1.ways":                 size(&t.L1Ways),
		"l2.size":                 size(&t.L2Size),
		"l2.ways":                 size(&t.L2Ways),
		"l2.latency":              cyc(&t.L2Latency),
		"l3.size":                 size(&t.L3Size),
		"l3.ways":                 size(&t.L3Ways),
		"l3.latency":              cyc(&t.L3Latency),
		"mem.latency":             cyc(&t.MemLatency),
		"mlp":                     cyc(&t.MLP),
		"prefetch.streams":        count(&t.PrefetchStreams),
		"prefetch.cost":           cyc(&t.PrefetchCost),
		"prefetch.cost.l3":        cyc(&t.PrefetchCacheCost),
		"rob":                     rob(&t.ROB),
		"coherence.latency":       cyc(&t.CoherenceLatency),
		"coherence.window":        num(&t.CoherenceWindow),
		"coherence.contended":     cyc(&t.CoherenceContended),
		"coherence.locked":        cyc(&t.CoherenceLocked),
		"kernel.syscall":          num(&t.Syscall),
		"kernel.futex.wake":       num(&t.FutexWake),
		"kernel.futex.wait":       num(&t.FutexWait),
		"kernel.switch":           num(&t.Switch),
		"kernel.slice":            num(&t.Slice),
		"kernel.pagefault":        num(&t.PageFault),
		"kernel.bytes":            num(&t.BytesPer1000),
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		val = strings.TrimSpace(val)
		set, ok := keys[key]
		switch {
		case !ok:
			return nil, fmt.Errorf("time model %s:%d: unknown key %q", src, n, key)
		case seen[key]:
			return nil, fmt.Errorf("time model %s:%d: %s given twice", src, n, key)
		}
		if err := set(val); err != nil {
			return nil, fmt.Errorf("time model %s:%d: %s: %w", src, n, key, err)
		}
		seen[key] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("time model %s: %w", src, err)
	}
	for _, k := range []string{"name", "mhz", "int", "mul", "div", "fp", "simd", "fpdiv", "string", "atomic", "serial", "pause", "fuse.cmp", "fuse.alu",
		"branch.bits", "branch.penalty", "branch.indirect.bits", "branch.indirect.history", "line", "l1.size", "l1.ways", "l2.size", "l2.ways", "l2.latency", "l3.size",
		"l3.ways", "l3.latency", "mem.latency", "mlp", "prefetch.streams", "prefetch.cost", "prefetch.cost.l3", "rob", "coherence.latency",
		"coherence.window", "coherence.contended", "coherence.locked",
		"kernel.syscall", "kernel.futex.wake", "kernel.futex.wait", "kernel.switch", "kernel.slice", "kernel.pagefault", "kernel.bytes"} {
		if !seen[k] {
			return nil, fmt.Errorf("time model %s: %s missing", src, k)
		}
	}
	if t.MHz == 0 {
		return nil, fmt.Errorf("time model %s: mhz must be > 0", src)
	}
	if t.Slice == 0 {
		return nil, fmt.Errorf("time model %s: kernel.slice must be > 0", src)
	}
	if t.MLP < 100 {
		return nil, fmt.Errorf("time model %s: mlp must be at least 1", src)
	}
	if t.Line&(t.Line-1) != 0 || t.Line > 4096 {
		return nil, fmt.Errorf("time model %s: line %d is not a power of two up to 4096", src, t.Line)
	}
	if t.BranchBits > 24 {
		return nil, fmt.Errorf("time model %s: branch.bits %d: at most 24", src, t.BranchBits)
	}
	if t.IndirectBits > 24 || t.IndirectHistory > 64 {
		return nil, fmt.Errorf("time model %s: branch.indirect.bits %d, branch.indirect.history %d: at most 24 and 64", src, t.IndirectBits, t.IndirectHistory)
	}
	for _, c := range []struct {
		name       string
		size, ways int
	}{{"l1", t.L1Size, t.L1Ways}, {"l2", t.L2Size, t.L2Ways}, {"l3", t.L3Size, t.L3Ways}} {
		sets := c.size / t.Line / c.ways
		if sets == 0 || sets*c.ways*t.Line != c.size || sets&(sets-1) != 0 {
			return nil, fmt.Errorf("time model %s: %s: %d bytes in %d ways of %d-byte lines is not a power-of-two number of sets", src, c.name, c.size, c.ways, t.Line)
		}
	}
	return t, nil
}

// centi parses a decimal with at most two fractional digits into hundredths.
func centi(v string, p *int64) error {
	whole, frac, _ := strings.Cut(v, ".")
	if len(frac) > 2 {
		return fmt.Errorf("want at most two decimals, not %q", v)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w < 0 {
		return fmt.Errorf("want a number of cycles ≥ 0, not %q", v)
	}
	f := int64(0)
	if frac != "" {
		f, err = strconv.ParseInt((frac + "0")[:2], 10, 64)
		if err != nil || f < 0 {
			return fmt.Errorf("want a number of cycles ≥ 0, not %q", v)
		}
	}
	*p = w*100 + f
	return nil
}

// ps converts centicycles to picoseconds at the table's clock.
func (t *Table) ps(centicycles int64) int64 { return centicycles * 10000 / t.MHz }

// MaxInsnNs bounds what one instruction may cost in ns: the dearest class,
// a misprediction, two accesses from memory or another core, each on a new
// page. (Analyses size their windows with it.)
func (t *Table) MaxInsnNs() int64 {
	c := max(t.Int, t.Mul, t.Div, t.FP, t.SIMD, t.FPDiv, t.String, t.Atomic, t.Serial, t.Pause) + t.BranchPenalty +
		2*max(t.MemLatency, t.CoherenceLatency, t.L3Latency, t.CoherenceLocked)
	return t.ps(c)/1000 + 1 + 2*t.PageFault
}
