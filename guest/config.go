// Package guest runs one guest process: it loads the program, drives the
// CPU slice by slice under the scheduler, dispatches system calls to the
// emulated kernel, reports crashes and deadlocks with symbolized stacks, and
// feeds the event stream to the enabled analyses. It owns no CPU itself (the
// cpu.CPU comes from package emu), so it builds without cgo.
package guest

import (
	"io"
	"os"

	"emuprof/cpu"
	"emuprof/defaults"
	"emuprof/loader"
	"emuprof/syscalls"
	"emuprof/timemodel"
	"emuprof/trace"
)

// Config describes one run.
type Config struct {
	Program string   // path of the executable on the host
	Args    []string // argv, argv[0] included
	Env     []string // envp
	Sysroot string   // where PT_INTERP and absolute guest paths resolve ("/" default)
	Cwd     string   // the guest's working directory (host path)
	// Overlay, when set, keeps the guest's file changes in a private
	// copy-on-write layer (syscalls.Overlay) instead of the real files.
	Overlay *syscalls.Overlay
	// HostNet lets TCP reach the host's network (syscalls.Config.HostNet).
	HostNet bool

	// HostStd are the host files behind fds 0-2: regular files are given
	// to the guest as files (syscalls.Config).
	HostStd [3]*os.File

	Stdin                          io.Reader
	Stdout, Stderr                 io.Writer
	StdinTTY, StdoutTTY, StderrTTY bool
	StdinClosed                    bool   // the guest starts with fd 0 closed
	Pid                            int    // default 1000
	Uid, Gid                       int    // reported identity
	Seed                           uint64 // getrandom / AT_RANDOM PRNG seed
	EpochNanos                     int64  // CLOCK_REALTIME at virtual time 0
	UnsupportedENOSYS              bool   // return -ENOSYS for unknown syscalls instead of stopping
	MaxInsns                       uint64 // stop a runaway guest (0: no limit)
	MaxMemory                      uint64 // most bytes of memory a process may back (0: mm.DefaultLimit); more: ENOMEM
	// MemoryLimit stops the run (ExitMemoryLimit, profiles partial) when
	// the memory of all its processes and of the analyses that report
	// theirs (trace.MemoryUser) exceeds it (0: no limit).
	MemoryLimit uint64
	CPUs        int    // virtual CPUs (default 8)
	Quantum     uint64 // scheduling quantum in instructions (default 10000)
	SchedSeed   uint64 // 0: unperturbed schedule
	NsPerInsn   int64  // virtual ns per instruction (default 1)
	// TimeModel, when set, prices virtual time with this core's table
	// (--time-model) instead of NsPerInsn per instruction; the engines
	// must then report Block, Read and Write events, unfolded.
	TimeModel *timemodel.Table
	// Speedup is the first engine's actual speedups (emu.Options.Speedup,
	// emuprof run --speedup), which the time model applies to its costs.
	Speedup     func(addr uint64) int
	TraceDigest bool // hash the executed block sequence and syscall results
	Analyses    []trace.Analysis
	Needs       trace.Needs // hooks the analyses need
	// TimeControl, when set, is called before every scheduling decision:
	// it waits for the analyses to catch up with the stream and returns
	// the clock delays they asked for (causal profiling), applied then.
	TimeControl func() []trace.Delay
	Interrupt   <-chan struct{} // closed on Ctrl-C: stop and keep what was collected
	// Strace, when set, receives one line per system call (debugging).
	Strace io.Writer
	// NewCPU starts the engine of a process the guest creates (fork,
	// vfork, clone without CLONE_THREAD); nil: those fail with ENOSYS.
	NewCPU func() (cpu.CPU, error)
	// Follow, when set, gives every process image analyses of its own
	// (children at fork, new images at exec: follow.go); nil: the
	// analyses follow the first process only.
	Follow Follower
	// Symbols receives the symbols of every object mapped into the guest
	// (analyses name routines with it); created by Load when nil.
	Symbols *loader.SymbolTable
}

func (c *Config) defaults() {
	if c.Pid == 0 {
		c.Pid = defaults.Pid
	}
	if c.CPUs <= 0 {
		c.CPUs = defaults.CPUs
	}
	if c.Quantum == 0 {
		c.Quantum = defaults.Quantum
	}
	if c.NsPerInsn <= 0 {
		c.NsPerInsn = defaults.NsPerInsn
	}
	if c.Sysroot == "" {
		c.Sysroot = defaults.Sysroot
	}
	if c.EpochNanos == 0 {
		// 2026-01-01T00:00:00Z: a fixed, plausible wall clock.
		c.EpochNanos = 1767225600 * 1e9
	}
}
