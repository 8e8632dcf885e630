package trms

import (
	"emuprof/defaults"
	"fmt"
)

// Cost metrics.
const (
	CostBlocks = "blocks" // basic blocks executed (aprof's bb-count)
	CostInsns  = "insns"  // guest instructions executed
	CostTime   = "time"   // virtual ns (the --time-model's)
)

// Config selects what the profiler measures and how reports are labelled.
type Config struct {
	// Resolution is the memory resolution k in bytes (PLDI'12 §5): an
	// access touches every k-aligned cell it covers. 1, 2, 4, 8 or 16;
	// 0 means 4.
	Resolution int
	// Cost is CostBlocks (default), CostInsns or CostTime.
	Cost string
	// NsPerInsn converts instructions to virtual ns for CostTime (0: 1).
	// BlockInsns, when set, gives a block's instruction count: a time
	// model priced the run and a Block event's Size is its cost in ns.
	NsPerInsn  int64
	BlockInsns func(id uint32) uint32
	// CounterBits is the width of the global timestamp counter, 8 to 64
	// (0 means 32, aprof's choice). Widths up to 32 store timestamps in 32
	// bits. Overflows are handled by renumbering (TRMS Fig. 13); tests use
	// tiny widths to force it.
	CounterBits int
	// CCT adds per-calling-context tuples (aprof --collect-cct).
	CCT bool
	// SingleReport merges the threads' profiles into one report per metric
	// (aprof --single-log) instead of one per thread: emuprof's default
	// (--per-thread turns it off), so that a program of 2,000 threads
	// writes one pair of reports, not 2,000; the per-thread split is in
	// the JSON.
	SingleReport bool
	// Pid names a single report (<app>_<pid>_<k>_...): the process's, as
	// its first thread's tid, so that a single-threaded program's files
	// are named alike either way; 0: "all".
	Pid int
	// Command is the profiled command line (report line "f"), App the
	// stem of the output files' names (<app>_...), Program the executable
	// as run (line "a", like aprof's: the path given, or found in PATH;
	// App if empty), ExeMTime its modification time (line "e").
	Command  string
	App      string
	Program  string
	ExeMTime int64
}

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	switch c.Resolution {
	case 0:
		c.Resolution = 4
	case 1, 2, 4, 8, 16:
	default:
		return c, fmt.Errorf("trms: memory resolution %d: want 1, 2, 4, 8 or 16", c.Resolution)
	}
	switch c.Cost {
	case "":
		c.Cost = CostBlocks
	case CostBlocks, CostInsns, CostTime:
	default:
		return c, fmt.Errorf("trms: cost metric %q: want %q, %q or %q", c.Cost, CostBlocks, CostInsns, CostTime)
	}
	if c.NsPerInsn <= 0 {
		c.NsPerInsn = defaults.NsPerInsn
	}
	switch {
	case c.CounterBits == 0:
		c.CounterBits = 32
	case c.CounterBits < 8 || c.CounterBits > 64:
		return c, fmt.Errorf("trms: counter width %d bits: want 8 to 64", c.CounterBits)
	}
	return c, nil
}

// metricName is the aprof name of the cost metric (report line "m").
func (c *Config) metricName() string {
	switch c.Cost {
	case CostInsns:
		return "instr-count"
	case CostTime:
		return "virtual-ns"
	}
	return "bb-count"
}
