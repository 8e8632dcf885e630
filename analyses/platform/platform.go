// Package platform is what every analysis runs on: the environment it gets
// (symbols, the table of translated blocks, the shared call-tracking stage
// with its routines and calling contexts, a clock it may bend), the Plugin
// description through which it is registered once and offered on the
// command line, the Reporter contract for its outputs, and the Pipeline that
// delivers one emulation's event stream to several analyses on a goroutine
// of their own.
package platform

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"emuprof/analyses/calls"
	"emuprof/analyses/report"
	"emuprof/defaults"
	"emuprof/trace"
)

// Env is an analysis's view of the run it profiles. The methods that depend
// on the stream (Block, Routines, CCT) are for use from Events and Finish,
// on the analyses' goroutine.
type Env struct {
	// Symbols names guest code (routine, object, file:line).
	Symbols trace.Symbols
	// Program is the path of the profiled program, Args its command line.
	Program string
	Args    []string
	// Pid is the guest's process id (its thread ids count up from it).
	Pid int
	// App, when set, is the stem of the analysis's file names
	// (<app>_...): a followed process image's is <program>_<pid>
	// (issue 9); empty: the program's base name (see AppName).
	App string
	// Sched is the run's CPU model (--cpus, --quantum, ns per
	// instruction), for analyses that reconstruct the global timeline.
	Sched SchedConfig

	stage *calls.Stage
	view  trace.BlockView
	clock *clock
}

// NewEnv returns the environment of a run of program with args.
func NewEnv(syms trace.Symbols, program string, args []string) *Env {
	return &Env{Symbols: syms, Program: program, Args: args, stage: calls.NewStage(), clock: &clock{}}
}

// AppName is the stem of the analysis's file names: App, or the base name
// of Program.
func (e *Env) AppName() string {
	if e.App != "" {
		return e.App
	}
	return filepath.Base(e.Program)
}

// SchedConfig is the CPU model the scheduler applies to the run (package
// sched): at most CPUs threads advance in the same virtual time, a block of
// n instructions takes n×NsPerInsn virtual ns, and a thread runs at most
// 2×Quantum instructions (or one larger block) before the scheduler picks
// again, unless it is alone. Zero fields mean the defaults (see Defaults).
type SchedConfig struct {
	CPUs      int
	Quantum   uint64
	NsPerInsn int64
	// Timed says that a time model prices the run (--time-model): a
	// Block event's Size is then its cost in virtual ns, not its
	// instruction count (the block table has that), NsPerInsn is 1, and
	// one instruction costs at most MaxInsnNs ns.
	Timed     bool
	MaxInsnNs int64
}

// Defaults returns c with zero fields set to the scheduler's defaults
// (package defaults: 8 CPUs, a quantum of 10000 instructions, 1 ns per
// instruction).
func (c SchedConfig) Defaults() SchedConfig {
	if c.CPUs <= 0 {
		c.CPUs = defaults.CPUs
	}
	if c.Quantum == 0 {
		c.Quantum = defaults.Quantum
	}
	if c.NsPerInsn <= 0 {
		c.NsPerInsn = defaults.NsPerInsn
	}
	if c.MaxInsnNs < c.NsPerInsn {
		c.MaxInsnNs = c.NsPerInsn
	}
	return c
}

// Block returns the block with id id (a Block event's Event.Block), as
// recorded when it was first translated.
func (e *Env) Block(id uint32) *trace.BlockInfo { return e.view.Get(id) }

// Routines is the routine table of the call-tracking stage: Call and Return
// events' Event.Block index it.
func (e *Env) Routines() *calls.Routines { return e.stage.Routines() }

// CCT is the calling context tree of the call-tracking stage: Call and
// Return events' Event.Aux are its node ids.
func (e *Env) CCT() *calls.CCT { return e.stage.Tracker().CCT() }

// Tracker is the call-tracking stage's tracker (its shadow stacks).
func (e *Env) Tracker() *calls.Tracker { return e.stage.Tracker() }

// Clock returns the clock through which an analysis bends virtual time.
// Only analyses whose Needs say TimeControl may use it.
func (e *Env) Clock() Clock { return e.clock }

// Clock lets an analysis delay threads, as if they paused: causal
// profiling's virtual speedups. Delays requested while handling a batch are
// applied before the scheduler's next decision, in the order requested, so
// runs stay deterministic.
type Clock interface {
	Delay(tid uint32, ns int64)
}

type clock struct{ pending []trace.Delay }

func (c *clock) Delay(tid uint32, ns int64) {
	if ns > 0 {
		c.pending = append(c.pending, trace.Delay{Tid: tid, Ns: ns})
	}
}

// Reporter is what an analysis gives back after the run.
type Reporter interface {
	// MarkPartial records that the run did not finish (crash, deadlock,
	// limit, interrupt), with the reason; outputs must say so.
	MarkPartial(reason string)
	// Write writes the analysis's files into dir, each atomically (a
	// temporary file renamed into place), and returns their paths.
	Write(dir string) ([]string, error)
	// Summary prints the human view of the results.
	Summary(w io.Writer) error
	// Section is the analysis's part of the HTML report: a title and a
	// self-contained HTML fragment. The report uses Plugin.Render instead
	// when the plugin has one (the page is then the same whether built
	// during the run or later by emuprof report).
	Section() (title, html string, err error)
}

// Instance is one analysis set up for one run.
type Instance interface {
	trace.Analysis
	Reporter
	// Needs says which events the analysis consumes.
	Needs() trace.Needs
}

// Rerun is the run layer's service to an analysis that needs more than one
// run: it runs the program once more, whole, in a separate emulation
// configured as the first run, with the actual speedups (--speedup
// values, applied together; none for none) and the analysis obs makes in
// it (nil: none), and returns the run's virtual duration.
type Rerun func(speedups []string, obs Factory) (durationNs int64, err error)

// Rerunner is implemented by an Instance that runs the program again
// (causal --exact and --validate): the run layer (package session) gives
// it the Rerun service before the guest starts.
type Rerunner interface {
	SetRerun(Rerun)
}

// Factory creates an analysis for a run, from the flag values captured
// when its flags were registered. It is called before the guest starts:
// it must validate the analysis's flags there, and an error it returns
// stops emuprof with exit status 2 and one line (a *FlagError names the
// flag: see BadFlag).
type Factory func(env *Env) (Instance, error)

// FlagError is a bad value of an analysis's flag, reported by the command
// as the one line "emuprof: --FLAG VALUE: REASON".
type FlagError struct {
	Flag   string // the flag's name, without the dashes
	Value  string
	Reason string
}

func (e *FlagError) Error() string { return fmt.Sprintf("--%s %s: %s", e.Flag, e.Value, e.Reason) }

// BadFlag returns the *FlagError of flag (its name, without dashes) whose
// value is value.
func BadFlag(flag string, value any, format string, args ...any) error {
	return &FlagError{Flag: flag, Value: fmt.Sprint(value), Reason: fmt.Sprintf(format, args...)}
}

// OutputChecker is implemented by an Instance that can tell, before the
// guest starts, whether its files can be written into dir (a directory the
// command has already found writable): names too long for the file system,
// for example. An error stops emuprof with exit status 2 and one line,
// instead of losing the profile after the run. CheckFileName does the
// check for one file name.
type OutputChecker interface {
	CheckOutput(dir string) error
}

// LiveRenderer is implemented by an Instance whose plugin has a Render
// and that can draw the same section of report.html from its results in
// memory, during the run that wrote files, instead of reading them back.
type LiveRenderer interface {
	RenderLive(files []string) (*report.Section, error)
}

// nameMax is the longest file name Linux and macOS file systems take.
const nameMax = 255

// ErrNameTooLong is what CheckFileName's error wraps when the name is too
// long for the file system.
var ErrNameTooLong = errors.New("file name too long")

// CheckFileName says whether a file called name can be created in dir and
// written atomically (a temporary file renamed into place): it creates,
// then removes, a probe file with a name as long as name.
func CheckFileName(dir, name string) error {
	short := name
	if len(short) > 40 {
		short = short[:32] + "..."
	}
	if len(name) > nameMax {
		return fmt.Errorf("%s: %d bytes, more than a file system takes (%d): %w", short, len(name), nameMax, ErrNameTooLong)
	}
	probe := fmt.Sprintf(".emuprof-probe-%d-", os.Getpid())
	if len(probe) < len(name) {
		probe += strings.Repeat("x", len(name)-len(probe))
	}
	p := filepath.Join(dir, probe)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%s: %d bytes, more than the file system of %s takes: %w", short, len(name), dir, ErrNameTooLong)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create %s in %s: %v", short, dir, err)
	}
	f.Close()
	return os.Remove(p)
}

// Plugin describes an analysis to the command line: adding an analysis is
// its package plus one line in the registry (cmd/emuprof/registry.go).
type Plugin struct {
	Name  string // e.g. "trms": the --analyses name and the alias command
	Short string // one line for the command list
	Long  string // the alias command's description
	// Flags registers the analysis's own flags on fs and returns the
	// factory that reads them. Flag names must not collide with other
	// analyses' (the registry test checks).
	Flags func(fs *pflag.FlagSet) Factory
	// Render, optional, builds the analysis's section of report.html from
	// the files it wrote: files are paths (those written by the run, or
	// every file of the directory emuprof report reads); it picks its own
	// and returns nil when there are none. It must be deterministic (the
	// same bytes for the same files) and self-contained (no external
	// references). Without it, the report uses Reporter.Section during
	// the run and omits the analysis when re-rendering.
	Render func(files []string) (*report.Section, error)
	// MultiRun, optional, declares a mode in which the analysis measures
	// several runs of the program instead of one (multirun.go).
	MultiRun *MultiRunMode
	// InTime, optional, says whether the analysis's answer, with the flags
	// of fs (its own, parsed), is a duration: then the run's default time
	// model is the reference core's (timemodel.Zen4), which predicts the
	// host, instead of insns (docs/TIME-MODEL.md).
	InTime func(fs *pflag.FlagSet) bool
}

// Always is an InTime for an analysis whose answer is always a duration.
func Always(*pflag.FlagSet) bool { return true }
