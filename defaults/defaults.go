// Package defaults is the one table of emuprof's default settings. The
// command's flags and their help text, the run record, and the packages
// that fill in a zero field of their configuration (sched, guest,
// analyses/platform, session) all read it, so that a default is changed
// in one place.
package defaults

import "time"

// The CPU model (package sched): at most CPUs threads advance in the same
// virtual time, a thread runs Quantum instructions before the scheduler
// may pick another, and an instruction takes NsPerInsn virtual ns.
const (
	CPUs      = 8     // --cpus
	Quantum   = 10000 // --quantum, in guest instructions
	NsPerInsn = 1     // without a --time-model
)

// The guest.
const (
	Pid         = 1000 // --pid: the first process's id
	Seed        = 1    // --seed: of getrandom and AT_RANDOM
	Sysroot     = "/"  // --sysroot
	Unsupported = "stop"
	// MaxMemory is --max-memory: the most memory one guest process may
	// back, fixed rather than taken from the host, so that runs behave
	// alike everywhere (mm.DefaultLimit is the same in bytes).
	MaxMemory = "8G"
)

// MemoryLimit is --memory-limit's default for a host with host bytes of
// memory (0: unknown, then none): three quarters of it, for the whole run.
func MemoryLimit(host uint64) uint64 { return host / 4 * 3 }

// How the run is carried out.
const (
	// AnalysisThread is --analysis-thread: auto runs the analyses on a
	// thread of their own with AsyncHostCPUs or more host CPUs.
	AnalysisThread = "auto"
	AsyncHostCPUs  = 4
	// AsyncBufferEvents is the engine's event buffer when the analyses
	// run on a thread of their own: a hand-over per batch, and 65,536
	// events (2.5 MB) make 16 times fewer than the 4,096 that suit one
	// thread (docs/PERFORMANCE.md).
	AsyncBufferEvents = 1 << 16
	// Follow is --follow: every process image gets its own analyses.
	Follow = "children"
	// Out is --out: the directory of the profiles.
	Out = "."
)

// The live status line: how long a run goes before it appears, and how
// often it is redrawn (the hidden --status-delay and --status-every).
const (
	StatusDelay = time.Second
	StatusEvery = 250 * time.Millisecond
)
