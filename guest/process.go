package guest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"emuprof/cpu"
	"emuprof/loader"
	"emuprof/mm"
	"emuprof/sched"
	"emuprof/syscalls"
	"emuprof/timemodel"
	"emuprof/trace"
)

// Layout of the initial stack, like Linux without ASLR.
const (
	stackTop  = 0x7ffffffff000
	stackSize = 8 << 20
)

// Result is what a run produced.
type Result struct {
	ExitStatus  int    // the guest's exit status, 128+signal if killed
	Signal      int    // the signal that killed the guest (0: exited)
	Reason      string // one line when the run did not end by a normal exit
	Report      []string
	Digest      string // --trace-digest
	Makespan    int64  // virtual ns
	Threads     []ThreadStats
	Insns       uint64
	Unsupported []string // syscalls answered with ENOSYS
	Warnings    []string // what the kernel could not emulate exactly
	Partial     bool     // stopped early: crash, limit, interrupt, deadlock
	// TimeModel sums what the time model charged in every process
	// (--time-model; zero without).
	TimeModel timemodel.Stats
	// Forks counts the processes created; ForkBytes the memory copied
	// for them.
	Forks, ForkBytes uint64
}

// ThreadStats are per-thread figures for --stats.
type ThreadStats struct {
	Tid                                 int
	Clock                               int64
	Insns, Blocks, Switches, FutexWaits uint64
}

// ExitDeadlock is the exit code of a run that ended in a deadlock.
const ExitDeadlock = 3

// Process is one guest process being run.
type Process struct {
	cfg    Config
	cpu    cpu.CPU
	as     *mm.AddressSpace
	kernel *syscalls.Kernel
	model  *timemodel.Model // --time-model; nil: NsPerInsn per instruction
	syms   *loader.SymbolTable
	sched  *sched.Scheduler
	layout *loader.Layout

	m       *machine // what all the processes of the run share
	sysRegs cpu.Regs // registers of the syscall being handled
	task    task     // the thread making it (task.go)
	threads map[int]*threadState
	digest  hash.Hash
	scratch [8]byte

	exited     bool
	exitStatus int

	// Process tree (fork.go).
	pid      int
	parent   *Process // nil: the first process, or an orphan
	children []*Process
	zombie   bool          // exited, not yet waited for
	wstatus  int           // wait status once exited
	vforker  *sched.Thread // the parent thread a vfork suspended
	sharedVM bool          // CLONE_VM child that has not exec'd (fork.go)
	borrows  bool          // vfork child running in its parent's memory, until exec (fork.go)

	// Followed images (follow.go).
	execs      int    // execs done by this process
	name       string // the program's name as exec'd (Linux's comm: a symlink's own name)
	forkParent int    // the pid of the process that forked it (0: the first)

	pgid, sid int // process group and session (pgrp.go)
}

type threadState struct {
	ctx     cpu.Context
	blocked bool // parked inside syscall nr
	nr      uint64
	// retry re-executes the syscall when the wait times out too
	// (syscalls.ReadyWait).
	retry bool
	sig   sigThread // signal.go
	tsc   int64     // the last rdtsc under a time model: the TSC never stands still
	// kernelNs is what the time model charged for the kernel's work in
	// the thread's current system call, until its Syscall event.
	kernelNs int64
}

// Load prepares a process: parses the program, maps it, builds the stack.
// Errors are one line and name the program (bad input).
func Load(cfg Config, c cpu.CPU) (*Process, error) {
	cfg.defaults()
	// A #! script runs its interpreter (binfmt_script).
	execFn := cfg.Program
	prog, args, err := loader.ResolveProgram(cfg.Program, cfg.Args, cfg.Sysroot)
	if err != nil {
		return nil, err
	}
	cfg.Program, cfg.Args = prog, args
	layout, err := planImage(cfg.Symbols, cfg.Program, cfg.Sysroot)
	if err != nil {
		return nil, err
	}
	p := &Process{cfg: cfg, cpu: c, layout: layout, threads: map[int]*threadState{}, pid: cfg.Pid, name: filepath.Base(execFn)}
	p.m = &machine{root: p, owner: map[int]*Process{}, ttySid: cfg.Pid, fgPgrp: cfg.Pid}
	p.pgid, p.sid = cfg.Pid, cfg.Pid // it leads its group and session
	p.as = mm.New(c)
	if cfg.MaxMemory > 0 {
		p.as.SetLimit(cfg.MaxMemory)
	}
	lazyTouch(c, p.as)
	p.syms = cfg.Symbols
	if p.syms == nil {
		p.syms = loader.NewSymbolTable()
	}
	var random [16]byte
	rng := rand.New(rand.NewPCG(p.cfg.Seed, 0x5eed))
	binary.LittleEndian.PutUint64(random[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(random[8:], rng.Uint64())
	if err := p.loadImage(cfg.Args, cfg.Env, execFn, random); err != nil {
		return nil, err
	}
	p.kernel = syscalls.New(p.kernelConfig(), p.as)
	p.kernel.SetCmdline(cfg.Args)
	p.bindKernel()
	p.setText()
	sc := sched.Config{CPUs: cfg.CPUs, Quantum: cfg.Quantum, NsPerInsn: cfg.NsPerInsn, Seed: cfg.SchedSeed}
	if cfg.Needs.Threads && (len(cfg.Analyses) > 0 || cfg.Follow != nil) {
		// Thread start/exit, switch, block, wake: in the stream of the
		// thread's process, when it is followed (without Follow, the
		// analyses follow the first process alone).
		sc.Trace = func(e trace.Event) {
			q := p.m.owner[int(e.Tid)]
			if q == nil || q != p && cfg.Follow == nil {
				return
			}
			if len(q.cfg.Analyses) > 0 {
				q.cpu.Emit(e)
			}
		}
	}
	p.sched = sched.New(sc)
	if cfg.TraceDigest {
		p.digest = sha256.New()
	}
	p.model = newModel(cfg, c, cfg.Speedup)
	c.SetSink(p.deliver)
	c.SetRDTSC(p.rdtsc)
	if err := p.startMain(); err != nil {
		return nil, err
	}
	return p, nil
}

// Symbols returns the symbol table of everything mapped into the guest.
func (p *Process) Symbols() *loader.SymbolTable { return p.syms }

func (p *Process) kernelConfig() syscalls.Config {
	c := p.cfg
	return syscalls.Config{
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr,
		StdinTTY: c.StdinTTY, StdoutTTY: c.StdoutTTY, StderrTTY: c.StderrTTY, StdinClosed: c.StdinClosed,
		HostStd: c.HostStd,
		Pid:     c.Pid, Uid: c.Uid, Gid: c.Gid, Seed: c.Seed, Cwd: c.Cwd, Sysroot: c.Sysroot,
		EpochNanos: c.EpochNanos, CPUs: c.CPUs, Unsupported: unsupportedPolicy(c.UnsupportedENOSYS),
		ExePath:        c.Program,
		Overlay:        c.Overlay,
		OnKernelAccess: p.kernelAccess,
		HostNet:        c.HostNet,
	}
}

func unsupportedPolicy(enosys bool) syscalls.UnsupportedPolicy {
	if enosys {
		return syscalls.FailENOSYS
	}
	return syscalls.Stop
}

// onMapFile adds the symbols of a library the guest (ld.so) maps executable.
func (p *Process) onMapFile(path string, addr, size, fileOff uint64, prot mm.Prot) {
	if prot&mm.ProtExec == 0 {
		return
	}
	o, err := loader.Open(path)
	if err != nil {
		return // not an ELF: nothing to name
	}
	// The executable mapping of a DSO covers the PT_LOAD whose file offset is fileOff.
	for _, l := range o.Loads {
		if l.Off&^0xfff == fileOff {
			bias := addr - l.Vaddr&^0xfff
			lo, hi := o.Span()
			_ = p.syms.AddObjectFrom(o, bias, lo+bias, hi+bias)
			return
		}
	}
}

func (p *Process) startMain() error {
	tid := p.cfg.Pid
	p.m.nextTid = tid + 1
	p.m.owner[tid] = p
	p.sched.Spawn(tid, nil)
	ctx, err := p.cpu.NewContext()
	if err != nil {
		return err
	}
	if err := p.cpu.Save(ctx); err != nil {
		return err
	}
	p.threads[tid] = &threadState{ctx: ctx}
	return nil
}

// deliver hands a batch to the analyses and folds it into the digest.
func (p *Process) deliver(batch []trace.Event) {
	if p.model != nil {
		p.model.Events(batch) // the model's times before anyone reads them
	}
	if p.digest != nil {
		for i := range batch {
			if batch[i].Kind == trace.KindBlock {
				p.hash(uint64(batch[i].Tid), batch[i].Addr)
			}
		}
	}
	for _, a := range p.cfg.Analyses {
		a.Events(batch)
	}
}

func (p *Process) hash(vals ...uint64) {
	for _, v := range vals {
		binary.LittleEndian.PutUint64(p.scratch[:], v)
		p.digest.Write(p.scratch[:])
	}
}

// newModel returns the time model of a process on engine c, nil without
// --time-model; speedup is the engine's actual speedups (nil: none).
func newModel(cfg Config, c cpu.CPU, speedup func(addr uint64) int) *timemodel.Model {
	if cfg.TimeModel == nil {
		return nil
	}
	m := timemodel.New(cfg.TimeModel, c.Blocks(), c.ReadMem)
	m.SetSpeedup(speedup)
	return m
}

// modelStats sums the time model's statistics over the processes.
func (p *Process) modelStats() timemodel.Stats {
	var s timemodel.Stats
	seen := map[*Process]bool{}
	for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
		if q := p.m.owner[tid]; !seen[q] && q.model != nil {
			seen[q] = true
			s.Add(q.model.Totals())
		}
	}
	if !seen[p] && p.model != nil {
		s.Add(p.model.Totals())
	}
	return s
}

// emit appends an event produced in Go (syscalls, the scheduler, kernel
// accesses) to the emulator's buffer: one stream, one order.
func (p *Process) emit(e trace.Event) {
	if len(p.cfg.Analyses) == 0 {
		return
	}
	p.cpu.Emit(e)
}

func (p *Process) kernelAccess(kind trace.Kind, addr, size uint64) {
	if !p.cfg.Needs.KernelMem {
		return
	}
	p.emit(trace.Event{Kind: kind, Addr: addr, Size: uint32(size), Tid: uint32(p.m.cur.Tid), Time: p.m.cur.Clock})
}

func (p *Process) rdtsc(sliceInsns uint64) uint64 {
	if p.m.cur == nil {
		return 0
	}
	// 1 GHz virtual TSC: one tick per virtual ns.
	if p.model != nil {
		// The model's time so far in the slice: its events priced now.
		// (A thread alone runs until its next system call: a slice can
		// be the whole program.)
		p.cpu.Drain()
		now := p.model.Now()
		if ts := p.threads[p.m.cur.Tid]; ts != nil {
			// A few instructions cost under a ns: two reads in a row
			// still differ, as on a real core.
			now = max(now, ts.tsc+1)
			ts.tsc = now
		}
		return uint64(now)
	}
	return uint64(p.m.cur.Clock + int64(sliceInsns)*p.cfg.NsPerInsn)
}

// Run runs the process to completion (or crash, deadlock, limit, interrupt).
func (p *Process) Run() *Result {
	res := p.loop()
	p.cpu.Drain()
	for _, a := range p.cfg.Analyses {
		a.Finish()
	}
	// Closing writes back shared file mappings: a failure loses data.
	if err := p.kernel.Close(); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	if p.digest != nil {
		res.Digest = fmt.Sprintf("%x", p.digest.Sum(nil))
	}
	res.Makespan = p.sched.Makespan()
	res.TimeModel = p.modelStats()
	res.Insns = p.m.insns
	for _, t := range p.sched.Threads() {
		res.Threads = append(res.Threads, ThreadStats{Tid: t.Tid, Clock: t.Clock, Insns: t.Insns, Blocks: t.Blocks, Switches: t.Switches, FutexWaits: t.FutexWaits})
	}
	// Processes left running or unreaped when the first one ended.
	closed := map[*Process]bool{p: true}
	for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
		if q := p.m.owner[tid]; !closed[q] {
			closed[q] = true
			if !q.zombie {
				why := fmt.Sprintf("the run ended before process %d did", q.pid)
				if res.Partial {
					why = res.Reason
				}
				q.endImage(why)
			}
			q.cpu.Drain()
			if err := q.kernel.Close(); err != nil {
				res.Warnings = append(res.Warnings, err.Error())
			}
			p.m.warnings = append(p.m.warnings, q.kernel.Warnings()...)
			p.m.unsupported = append(p.m.unsupported, q.kernel.Unsupported()...)
			q.cpu.Close()
		}
	}
	res.Forks, res.ForkBytes = p.m.forks, p.m.forkBytes
	res.Warnings = append(p.kernel.Warnings(), append(p.m.warnings, res.Warnings...)...)
	unsup := append(p.kernel.Unsupported(), p.m.unsupported...)
	slices.Sort(unsup)
	for _, nr := range slices.Compact(unsup) {
		res.Unsupported = append(res.Unsupported, fmt.Sprintf("%d (%s)", nr, syscalls.Name(nr)))
	}
	return res
}

// lazyTouch lets the engine c back as's MAP_NORESERVE pages on their first
// touch (mm.AddressSpace.Touch), from inside the faulting access.
func lazyTouch(c cpu.CPU, as *mm.AddressSpace) {
	if t, ok := c.(interface {
		SetTouch(func(addr, size uint64) bool)
	}); ok {
		t.SetTouch(func(addr, size uint64) bool {
			backed, _ := as.Touch(addr, size)
			return backed
		})
	}
}

// setText tells the kernel which files the process now executes (its
// program and interpreter): they cannot be written meanwhile (ETXTBSY).
func (p *Process) setText() {
	paths := []string{p.layout.Exe.Path}
	if p.layout.Interp != nil {
		paths = append(paths, p.layout.Interp.Path)
	}
	p.kernel.SetText(paths...)
}
