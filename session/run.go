package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"emuprof/analyses/platform"
	"emuprof/cpu"
	"emuprof/defaults"
	"emuprof/emu"
	"emuprof/guest"
	"emuprof/internal/stophook"
	"emuprof/loader"
	"emuprof/trace"
)

// Run runs the guest of cfg as o says and reports how it ended; when
// pipeline is not nil, it builds the analysis pipeline over the engine's
// block table and the guest feeds it. The error is the one that makes
// emuprof exit with the guest's status (an *ExitError).
func Run(cfg guest.Config, f *Options, pipeline func(*trace.BlockTable) *platform.Pipeline, needs trace.Needs) (*guest.Result, error) {
	needs = runNeeds(&cfg, needs)
	if cfg.Symbols == nil {
		cfg.Symbols = loader.NewSymbolTable()
	}
	nsPerInsn := cfg.NsPerInsn
	if nsPerInsn <= 0 {
		nsPerInsn = defaults.NsPerInsn
	}
	resume := func() {} // a rerun's: starts the first run's line again, after this run's messages
	if f.IsRerun {
		defer func() { resume() }()
		defer f.Status.beginRun()()
	}
	hooks, blockSyms := engineOptions(cfg, f, needs, pipeline != nil, nsPerInsn)
	speedup, warnSpeedup, err := f.speedup(cfg.Symbols)
	if err != nil {
		return nil, err
	}
	defer warnSpeedup()
	first := hooks
	first.Symbols, first.Speedup, first.BlockFilter = blockSyms, speedup, needs.BlockFilter
	cfg.Speedup = speedup
	engine, err := emu.New(first)
	if err != nil {
		return nil, fmt.Errorf("starting the emulator: %w", err)
	}
	defer engine.Close()
	otherEngines(&cfg, f, hooks, needs, blockSyms != nil, nsPerInsn)
	var pipe *platform.Pipeline
	if pipeline != nil {
		pipe = startPipeline(&cfg, f, pipeline(engine.Blocks()), engine, needs)
	}
	signal.Ignore(syscall.SIGPIPE) // writes to a closed pipe fail with EPIPE from now on, instead of killing emuprof
	defer f.Stops.during(engine.Stop)()
	interruptible(&cfg, f)
	// The live status line: counted per run slice, drawn by a ticker;
	// the guest's writes to the terminal erase it first.
	if !f.IsRerun {
		f.Status = NewStatus(os.Stderr, f, nsPerInsn)
		defer f.Status.Stop()
	}
	showStatus(&cfg, f, pipe)
	res, err := loadAndRun(cfg, f, engine, pipe)
	if err != nil {
		return nil, err
	}
	// The line goes before anything else is said on stderr.
	if f.IsRerun {
		resume = f.Status.Pause()
	} else {
		f.Status.Stop()
	}
	f.Stops.adjust(res)
	return res, finish(cfg, f, res, pipe)
}

// runNeeds is what the engine must report: what the analyses need (set on
// cfg), and what the trace digest and the time model need beside.
func runNeeds(cfg *guest.Config, needs trace.Needs) trace.Needs {
	cfg.Needs = needs
	if cfg.TraceDigest {
		needs.Blocks = true
	}
	if cfg.TimeModel != nil {
		// The model prices every block and access (timemodel.Model).
		needs.Blocks, needs.Memory = true, true
	}
	return needs
}

// engineOptions are the analyses' hooks, for the first process and the
// followed ones, and the symbols that name blocks (nil: none, when no
// analysis sees them).
func engineOptions(cfg guest.Config, f *Options, needs trace.Needs, analyses bool, nsPerInsn int64) (emu.Options, trace.Symbols) {
	var blockSyms trace.Symbols
	if needs.Blocks && (len(cfg.Analyses) > 0 || analyses) {
		blockSyms = cfg.Symbols
	}
	hooks := emu.Options{Memory: needs.Memory, Blocks: needs.Blocks, StackPointer: needs.Blocks,
		Bare: f.Bare, NsPerInsn: nsPerInsn, Lines: needs.Lines, Replay: true, // with --no-fold too: the analysis reads the flags, runs or not
		Encoding: needs.Encoding}
	hooks.BlockFilter = nil // only the first process's engine filters blocks
	if f.AsyncAnalyses {
		hooks.BufferEvents = defaults.AsyncBufferEvents
	}
	if f.NoFold || cfg.TimeModel != nil { // a time model prices every block and access
		hooks.Fold, hooks.FoldCycles, hooks.MergeMemory, hooks.Replay, hooks.RepeatEvents = nil, nil, false, false, false
	}
	return hooks, blockSyms
}

// otherEngines sets how the engines of the guest's other processes are
// made: followed ones with the analyses' hooks (follow.go), the others
// without (the analyses follow the first process).
func otherEngines(cfg *guest.Config, f *Options, hooks emu.Options, needs trace.Needs, nameBlocks bool, nsPerInsn int64) {
	if fw, _ := cfg.Follow.(*Follower); fw != nil {
		fw.newEngine = func(syms *loader.SymbolTable) (*emu.Engine, error) {
			o := hooks
			if nameBlocks {
				o.Symbols = syms
			}
			return emu.New(o)
		}
	}
	memory := cfg.TimeModel != nil // a time model prices their accesses too
	cfg.NewCPU = func() (cpu.CPU, error) {
		e, err := emu.New(emu.Options{Blocks: needs.Blocks, Memory: memory, Bare: f.Bare, NsPerInsn: nsPerInsn})
		if err != nil {
			return nil, err
		}
		return f.Status.CPU(e), nil
	}
}

// startPipeline makes pipe the guest's analyses: with the rerun service,
// the time control it asks for, and the follower's first process.
func startPipeline(cfg *guest.Config, f *Options, pipe *platform.Pipeline, engine *emu.Engine, needs trace.Needs) *platform.Pipeline {
	setRerun(pipe, *cfg, f)
	cfg.Analyses = append(cfg.Analyses, pipe)
	if needs.TimeControl {
		cfg.TimeControl = pipe.Sync
	}
	if fw, _ := cfg.Follow.(*Follower); fw != nil {
		fw.start(guest.Image{Pid: cfg.Pid, Parent: cfg.Pid - 1, Program: cfg.Program, Args: cfg.Args}, engine, cfg.Symbols, pipe.Instances(), pipe)
		if needs.TimeControl {
			cfg.TimeControl = fw.sync
		}
	}
	return pipe
}

// interruptible makes the guest's waits end at emuprof's stop signals: a
// guest waiting for input or blocked writing to a full pipe stops too.
func interruptible(cfg *guest.Config, f *Options) {
	stops := f.Stops
	cfg.Interrupt = stops.interrupt
	if cfg.Stdin != nil {
		cfg.Stdin = newInterruptibleReader(cfg.Stdin, stops.interrupt)
	}
	if f.MuteStdout {
		cfg.Stdout, cfg.StdoutTTY = io.Discard, false
	}
	if cfg.Stdout != nil {
		cfg.Stdout = newInterruptibleWriter(cfg.Stdout, stops.interrupt)
		f.Stdout = cfg.Stdout // the summaries too, after the run
	}
	if cfg.Stderr != nil {
		cfg.Stderr = newInterruptibleWriter(cfg.Stderr, stops.interrupt)
	}
	if stophook.Enabled() && cfg.Stdout != nil { // tests: a stop mid-run, at the guest's first output
		cfg.Stdout = &firstWrite{w: cfg.Stdout, at: func() { stops.raiseAt("output") }}
	}
	if f.Strace {
		cfg.Strace = os.Stderr
	}
	if stophook.Wants("syscall:") { // tests: a stop after the guest's Nth system call (ld.so's, for a dynamic guest)
		cfg.Strace = &syscallMoments{w: cfg.Strace, at: func(n int) { stops.raiseAt("syscall:" + strconv.Itoa(n)) }}
	}
}

// syscallMoments counts the strace lines the guest writes, one a system
// call, and calls at with each line's number before passing it on to w
// (nil: none).
type syscallMoments struct {
	w  io.Writer
	n  int
	at func(n int)
}

func (s *syscallMoments) Write(p []byte) (int, error) {
	s.n++
	s.at(s.n)
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

// showStatus puts the status line between the guest and the terminal, and
// has it count the analyses' work.
func showStatus(cfg *guest.Config, f *Options, pipe *platform.Pipeline) {
	cfg.Stdout = f.Status.Writer(cfg.Stdout, cfg.StdoutTTY)
	cfg.Stderr = f.Status.Writer(cfg.Stderr, cfg.StderrTTY)
	if pipe != nil && f.Status != nil && !f.IsRerun {
		for _, in := range pipe.Instances() {
			f.Status.Watch(in)
		}
		cfg.Analyses = append([]trace.Analysis{statusPhase{f.Status}}, cfg.Analyses...)
	}
}

// loadAndRun loads the guest on engine and runs it; a guest that cannot
// be loaded is bad input (exit status 2), or killed as Linux would.
func loadAndRun(cfg guest.Config, f *Options, engine *emu.Engine, pipe *platform.Pipeline) (*guest.Result, error) {
	proc, err := guest.Load(cfg, f.Status.CPU(engine))
	if err != nil {
		if bad := (*loader.BadInputError)(nil); errors.As(err, &bad) && bad.Killed != 0 {
			// Linux execs it and kills it before its first instruction.
			return nil, &ExitError{Code: 128 + bad.Killed, Msg: fmt.Sprintf("guest killed by %s: %v (execve took it, then could not map it)", guest.SignalName(bad.Killed), err)}
		}
		return nil, &ExitError{Code: 2, Msg: err.Error()}
	}
	if !f.IsRerun {
		f.Status.Start()
	}
	f.Stops.raiseAt("load") // tests: a stop before the first instruction
	return runGuest(proc, pipe), nil
}

// finish says how the run ended, on stderr, and returns the error that
// carries the guest's exit status.
func finish(cfg guest.Config, f *Options, res *guest.Result, pipe *platform.Pipeline) error {
	if pipe != nil && pipe.Err() != nil {
		// A bug in an analysis: its results are lost, the run is not.
		fmt.Fprintf(os.Stderr, "emuprof: internal error: %v\n", pipe.Err())
		if res.ExitStatus == 0 {
			res.ExitStatus = 2
		}
	}
	if len(res.Unsupported) > 0 {
		fmt.Fprintf(os.Stderr, "emuprof: warning: unsupported syscalls answered with ENOSYS: %s\n", strings.Join(res.Unsupported, ", "))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(os.Stderr, "emuprof: warning: %s\n", w)
	}
	if cfg.TraceDigest {
		fmt.Fprintf(os.Stderr, "emuprof: trace digest %s\n", res.Digest)
	}
	if f.Stats {
		printStats(os.Stderr, res)
	}
	if res.Reason != "" {
		fmt.Fprintln(os.Stderr, "emuprof: "+res.Reason)
		for _, l := range res.Report {
			fmt.Fprintln(os.Stderr, l)
		}
	}
	if res.ExitStatus != 0 {
		return &ExitError{Code: res.ExitStatus}
	}
	return nil
}

// runGuest runs the guest. A Go panic in the runtime (a bug in emuprof, not
// in the guest) ends the run as an internal error, in one line naming where
// it happened, and the analyses still finish and write what they have.
func runGuest(proc *guest.Process, pipe *platform.Pipeline) (res *guest.Result) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		res = &guest.Result{ExitStatus: 2, Partial: true,
			Reason: fmt.Sprintf("internal error: %v at %s (a bug in emuprof: please report it)", r, panicSite())}
		if pipe != nil {
			func() {
				defer func() { _ = recover() }()
				pipe.Finish()
			}()
		}
	}()
	return proc.Run()
}

// panicSite names the function and line that panicked, from a deferred
// call during the panic: the first frame outside the runtime.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			return fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return "?"
		}
	}
}

func printStats(w io.Writer, res *guest.Result) {
	fmt.Fprintf(w, "emuprof: virtual duration %d ns (makespan), %d instructions\n", res.Makespan, res.Insns)
	if res.TimeModel.Blocks > 0 {
		fmt.Fprintf(w, "emuprof: time model: %s\n", res.TimeModel)
	}
	if res.Forks > 0 {
		fmt.Fprintf(w, "emuprof: %d processes created, %d bytes of memory copied for them\n", res.Forks, res.ForkBytes)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tid\tclock ns\tinstructions\tblocks\tswitches\tfutex waits\t")
	sort.Slice(res.Threads, func(i, j int) bool { return res.Threads[i].Tid < res.Threads[j].Tid })
	for _, t := range res.Threads {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", t.Tid, t.Clock, t.Insns, t.Blocks, t.Switches, t.FutexWaits)
	}
	tw.Flush()
}
