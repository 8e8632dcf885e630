package platform

// Multi-run modes: an analysis whose measurement is several runs of the
// program, each a separate emuprof process (paths --copies: P3's copies
// run concurrently and merged). The analysis declares it with
// Plugin.MultiRun; the run layer (package session) gives it the Runs
// service and the command only parses flags.

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
)

// ExitError carries an exit status out of a run or a command.
type ExitError struct {
	Code int
	Msg  string // printed as "emuprof: Msg" when non-empty
}

func (e *ExitError) Error() string { return e.Msg }

// MultiRun carries out an analysis's multi-run mode on program (its
// argv; empty when none was given) with the run layer's services.
type MultiRun func(runs Runs, program []string) error

// MultiRunMode, a Plugin field, declares a multi-run mode.
type MultiRunMode struct {
	Flag string // the analysis's flag that asks for it (messages name it)
	// Parse reads the command's parsed flags and returns the MultiRun
	// when they ask for one (nil otherwise), or an error for flags that
	// do not go with it. alone says whether the analysis is the only one
	// selected.
	Parse func(fs *pflag.FlagSet, alone bool) (MultiRun, error)
}

// Runs is the run layer's service to a MultiRun: runs of the program in
// child emuprof processes configured as the command was.
type Runs interface {
	// Flag is the value of the command's flag name, and whether it was
	// given.
	Flag(name string) (value string, given bool)
	// Prepare makes the output directory and a private work directory
	// (removed once the MultiRun returns) and reads stdin once, to be
	// replayed to every run. The runs share the command's flags but
	// those named in perRun and the run layer's own (--out, --dry-fs,
	// --fs-overlay), which ChildRun sets.
	Prepare(perRun ...string) (work string, err error)
	// Run runs the program in a child emuprof and waits for it; it is
	// safe for concurrent use.
	Run(r ChildRun) ChildResult
	// Commit applies the file changes a run kept in overlay to the file
	// system (nothing with --dry-fs).
	Commit(overlay string) error
	// OutDir is --out.
	OutDir() string
	// Progress is the live status line (the children's own stderr is
	// captured: it is the only one).
	Progress() Progress
	// Stdout takes the guest's output; Stderr emuprof's messages;
	// Summary the summary (it ends quietly when the reader goes away).
	Stdout() io.Writer
	Stderr() io.Writer
	Summary() io.Writer
}

// ChildRun is one run of a MultiRun: the analysis's flags for it, its
// --out and its --fs-overlay (a private overlay of its file changes).
type ChildRun struct {
	Flags   []string
	Out     string
	Overlay string
}

// ChildResult is what a child emuprof did.
type ChildResult struct {
	Code           int   // the guest's exit status (2 with Err: emuprof's)
	Err            error // it could not run, or failed in emuprof itself
	Stdout, Stderr []byte
	CPU, Wall      time.Duration // host time, for the summary only
}

// ErrOr is Err, or the exit status when that is not 0 and Err is nil.
func (r *ChildResult) ErrOr() error {
	if r.Err != nil {
		return r.Err
	}
	return fmt.Errorf("exit status %d", r.Code)
}

// Progress is the live status line of a MultiRun.
type Progress interface {
	SetPhase(phase string)
	// Count adds a counter of total things to the line; done counts one.
	Count(what string, total int) (done func())
	Start()
	Stop()
}
