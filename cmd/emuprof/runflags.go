package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"emuprof/defaults"
	"emuprof/guest"
	"emuprof/session"
	"emuprof/syscalls"
	"emuprof/timemodel"
	"emuprof/trace"
)

// runFlags are the flags every command that runs a guest accepts: how
// the run is carried out (session.Options) and what the guest is (config).
type runFlags struct {
	session.Options
	sysroot     string
	env         []string
	clearEnv    bool
	seed        uint64
	pid         int
	maxInsns    uint64
	maxMemory   string
	memLimit    string
	unsupported string
	net         string // --net
	traceDigest bool
	timeModel   string // --time-model ("": the command's default, modelName)
	// inTime says the command's answer is a duration (causal, parallel,
	// run --stats or --speedup...): its default time model is then the
	// reference core's.
	inTime    bool
	cpus      int
	quantum   uint64
	schedSeed uint64
	memHooks  bool
	// dryFS and fsOverlay keep the guest's file changes in an overlay
	// (syscalls.Overlay): a temporary one, discarded, or one in the given
	// directory, saved for `paths --copies` to commit; ov is it.
	dryFS     bool
	fsOverlay string
	ov        *syscalls.Overlay
}

func (f *runFlags) register(cmd *cobra.Command) { f.registerInto(cmd.Flags()) }

func (f *runFlags) registerInto(fl *pflag.FlagSet) {
	fl.StringVar(&f.net, "net", "run", "the network the guest sees: run (sockets between the run's processes only; other addresses ENETUNREACH or ECONNREFUSED) or host (TCP also to and from the host's addresses, through the host: the run is then not reproducible)")
	fl.StringVar(&f.sysroot, "sysroot", defaults.Sysroot, "directory where the program's interpreter and libraries (and absolute paths) resolve")
	fl.StringArrayVar(&f.env, "env", nil, "set a guest environment variable K=V (repeatable)")
	fl.BoolVar(&f.clearEnv, "clear-env", false, "start the guest with an empty environment (then add --env)")
	fl.Uint64Var(&f.seed, "seed", defaults.Seed, "seed of the guest's randomness (getrandom, AT_RANDOM)")
	fl.IntVar(&f.pid, "pid", defaults.Pid, "the guest's process id")
	fl.Uint64Var(&f.maxInsns, "max-insns", 0, "stop the guest after this many instructions (0: no limit)")
	fl.StringVar(&f.maxMemory, "max-memory", defaults.MaxMemory, "most memory a guest process may use (accessible pages; reservations are free): more gets ENOMEM, as from Linux; bytes or K, M, G, T")
	fl.StringVar(&f.memLimit, "memory-limit", "", "most memory emuprof may use for the run: the guest memory of all its processes plus the analyses' (trms's shadow memory); past it the run stops, profiles written partial, exit 137; bytes or K, M, G, T, 0 for none (default: 3/4 of the host's memory)")
	fl.StringVar(&f.unsupported, "unsupported", defaults.Unsupported, "what an unsupported syscall does: stop (exit 2) or enosys (return -ENOSYS, warn at the end)")
	fl.BoolVar(&f.traceDigest, "trace-digest", false, "print a hash of the executed block sequence and syscall results")
	fl.BoolVar(&f.Stats, "stats", false, "print the virtual duration and per-thread figures")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "no live status line on stderr (shown only when stderr is a terminal, for runs longer than a second)")
	fl.IntVar(&f.cpus, "cpus", defaults.CPUs, "virtual CPUs: at most this many threads advance in the same virtual time")
	fl.StringVar(&f.timeModel, "time-model", "", "virtual time: insns (1 ns per instruction), zen4 (instruction classes, caches, branches and kernel costs of an AMD Zen 4 core: docs/TIME-MODEL.md) or a table file in zen4's format (default: zen4 where the answer is a duration, causal, parallel, profile, trms's time cost, run --stats or --speedup; insns otherwise)")
	fl.Uint64Var(&f.quantum, "quantum", defaults.Quantum, "scheduling quantum in guest instructions")
	fl.Uint64Var(&f.schedSeed, "sched-seed", 0, "perturb the schedule deterministically (0: unperturbed)")
	fl.BoolVar(&f.Bare, "bare-engine", false, "benchmarking only: no block hook (no virtual time, no scheduling, one thread)")
	_ = fl.MarkHidden("bare-engine")
	fl.BoolVar(&f.memHooks, "bench-mem-hooks", false, "benchmarking only: install the block and memory hooks and discard their events")
	_ = fl.MarkHidden("bench-mem-hooks")
	fl.BoolVar(&f.NoFold, "no-fold", false, "testing only: one Block event per block and one event per memory access even where the analyses take runs of blocks and merged accesses (the profiles are the same)")
	_ = fl.MarkHidden("no-fold")
	fl.BoolVar(&f.Strace, "strace", false, "print every system call the guest makes, with its result, to stderr")
	fl.BoolVar(&f.dryFS, "dry-fs", false, "the guest's file changes go to a private temporary overlay, discarded at the end: the real file system is left untouched")
	fl.StringVar(&f.fsOverlay, "fs-overlay", "", "internal (paths --copies): keep the guest's file changes in an overlay in this directory")
	_ = fl.MarkHidden("fs-overlay")
	fl.DurationVar(&f.StatusDelay, "status-delay", defaults.StatusDelay, "testing only: how long a run goes before its status line appears")
	fl.DurationVar(&f.StatusEvery, "status-every", defaults.StatusEvery, "testing only: how often the status line is redrawn")
	_ = fl.MarkHidden("status-delay")
	_ = fl.MarkHidden("status-every")
	fl.StringArrayVar(&f.Speedups, "speedup", nil, "actually speed up a source line (FILE:LINE=PCT) or an address range (0xLO-0xHI=PCT): its instructions cost PCT % less virtual time; repeatable")
}

// config builds the guest configuration for PROGRAM ARGS.
func (f *runFlags) config(args []string) (guest.Config, error) {
	if len(args) == 0 {
		return guest.Config{}, &exitError{Code: 2, Msg: "no program given (usage: emuprof run [flags] -- PROGRAM ARGS...)"}
	}
	if err := f.validate(); err != nil {
		return guest.Config{}, err
	}
	maxMem, _ := maxMemory(f.maxMemory) // validated
	model, err := timemodel.Load(f.modelName())
	if err != nil {
		return guest.Config{}, &exitError{Code: 2, Msg: "--time-model: " + err.Error()}
	}
	memLimit, _ := memoryLimit(f.memLimit)
	prog := args[0]
	if !strings.Contains(prog, "/") {
		if p, err := lookPath(prog); err == nil {
			prog = p
		}
	}
	env := os.Environ()
	if f.clearEnv {
		env = nil
	}
	env = append(env, f.env...)
	cwd, err := os.Getwd()
	if err != nil {
		return guest.Config{}, fmt.Errorf("getting the working directory: %w", err)
	}
	if f.dryFS || f.fsOverlay != "" {
		dir := f.fsOverlay
		if dir == "" {
			if dir, err = os.MkdirTemp("", "emuprof-dry-fs-"); err != nil {
				return guest.Config{}, fmt.Errorf("--dry-fs: %w", err)
			}
		}
		if f.ov, err = syscalls.NewOverlay(dir, f.sysroot); err != nil {
			return guest.Config{}, err
		}
	}
	return guest.Config{
		Overlay: f.ov,
		Program: prog, Args: args, Env: env, Sysroot: f.sysroot, Cwd: cwd,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StdinTTY: session.IsTerminal(os.Stdin), StdoutTTY: session.IsTerminal(os.Stdout), StderrTTY: session.IsTerminal(os.Stderr),
		Pid: f.pid, Uid: os.Getuid(), Gid: os.Getgid(), Seed: f.seed,
		UnsupportedENOSYS: f.unsupported == "enosys", MaxInsns: f.maxInsns, MaxMemory: maxMem,
		MemoryLimit: memLimit, HostNet: f.net == "host",
		CPUs: f.cpus, Quantum: f.quantum, SchedSeed: f.schedSeed, TraceDigest: f.traceDigest,
		TimeModel:   model,
		StdinClosed: syscalls.HostStdinClosed(), // `emuprof ... <&-`: the guest's fd 0 is closed too
		// Regular files are the guest's as they are (syscalls/stdio.go).
		HostStd: [3]*os.File{os.Stdin, os.Stdout, os.Stderr},
	}, nil
}

// modelName is the --time-model in effect: the flag's, else the command's
// default. A duration is only right under a model of a real core (the
// validation in docs/TIME-MODEL.md: insns misses memory and kernel costs
// by up to 60 points); elsewhere insns costs nothing and changes no answer.
func (f *runFlags) modelName() string {
	switch {
	case f.timeModel != "":
		return f.timeModel
	case f.inTime:
		return timemodel.Zen4
	}
	return timemodel.Insns
}

// Bounds of the run flags.
const (
	maxCPUs    = 1024    // CPU_SETSIZE: what a cpu_set_t holds (more: sched_getaffinity fails with EINVAL in glibc's CPU_* macros' size)
	maxQuantum = 1 << 40 // the scheduler draws quanta up to twice this
	maxPid     = 4194303 // PID_MAX_LIMIT - 1: Linux's largest process id
)

// validate checks every run flag before anything starts: a bad value is one
// line naming the flag, and exit status 2.
func (f *runFlags) validate() error {
	bad := func(format string, args ...any) error {
		return &exitError{Code: 2, Msg: fmt.Sprintf(format, args...)}
	}
	if f.net != "run" && f.net != "host" {
		return bad("--net must be run or host, not %q", f.net)
	}
	if f.unsupported != "stop" && f.unsupported != "enosys" {
		return bad("--unsupported must be stop or enosys, not %q", f.unsupported)
	}
	if f.StatusDelay < 0 || f.StatusEvery <= 0 {
		return bad("--status-delay %v, --status-every %v: want a delay of 0 or more and a positive interval", f.StatusDelay, f.StatusEvery)
	}
	if f.cpus < 1 || f.cpus > maxCPUs {
		return bad("--cpus %d: want 1 to %d virtual CPUs", f.cpus, maxCPUs)
	}
	if f.quantum < 1 || f.quantum > maxQuantum {
		return bad("--quantum %d: want 1 to %d instructions", f.quantum, uint64(maxQuantum))
	}
	if _, err := maxMemory(f.maxMemory); err != nil {
		return bad("%v", err)
	}
	if _, err := memoryLimit(f.memLimit); err != nil {
		return bad("%v", err)
	}
	if f.pid < 1 || f.pid > maxPid {
		return bad("--pid %d: want a process id from 1 to %d", f.pid, maxPid)
	}
	for _, kv := range f.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad("--env %q: want NAME=VALUE", kv)
		}
	}
	st, err := os.Stat(f.sysroot)
	switch {
	case err != nil:
		return bad("--sysroot %s: %v", f.sysroot, session.HostErr(err))
	case !st.IsDir():
		return bad("--sysroot %s: not a directory", f.sysroot)
	}
	return nil
}

// lookPath finds a program on the host PATH (the guest sees the same files).
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// finishFS ends the run's overlay, if any: --fs-overlay's is saved for
// its commit, --dry-fs's removed.
func (f *runFlags) finishFS() {
	switch {
	case f.ov == nil:
	case f.fsOverlay != "":
		if err := f.ov.Save(); err != nil {
			fmt.Fprintln(os.Stderr, "emuprof:", err)
		}
	default:
		_ = os.RemoveAll(f.ov.Dir())
	}
}

func runCommand(stops *session.Stopper) *cobra.Command {
	f := runFlags{Options: session.Options{Stops: stops}}
	var progress progressFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- PROGRAM ARGS...",
		Short: "Run a program on the emulator, like running it natively, deterministically",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.inTime = f.Stats || len(f.Speedups)+len(progress.progress)+len(progress.latency) > 0
			cfg, err := f.config(args)
			if err != nil {
				return err
			}
			defer f.finishFS()
			if len(f.Speedups)+len(progress.progress)+len(progress.latency) > 0 {
				return runObserved(cfg, &f, &progress)
			}
			var needs trace.Needs
			if f.memHooks {
				needs = trace.Needs{Wants: trace.Wants{Blocks: true, Memory: true}}
			}
			_, err = session.Run(cfg, &f.Options, nil, needs)
			return err
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	progress.register(cmd)
	return cmd
}
