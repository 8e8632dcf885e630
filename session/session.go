// Package session is the run layer between the command line and the guest
// runtime: it runs a program with analyses (the engine, the analysis
// pipeline, the Follower of processes, the live status line and the stop
// signals), runs it again for an analysis that asks (platform.Rerunner:
// causal --exact and --validate), carries out an analysis's multi-run mode
// in child emuprofs (platform.MultiRun: paths --copies), writes the
// analyses' files, the run record and report.html, and says how the run
// ended. The command turns flags into an Options and a guest.Config and
// calls Run.
package session

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"emuprof/analyses/platform"
)

// Options are how a run is carried out, beside what the guest is
// (guest.Config). Run fills in Status and Stdout.
type Options struct {
	Stops  *Stopper  // emuprof's stop signals (stops.go)
	Stdout io.Writer // emuprof's stdout once the run started (stopwrite.go); nil: os.Stdout
	Stats  bool      // print the virtual duration and per-thread figures
	Quiet  bool      // no live status line
	NoFold bool      // no runs of blocks as one event (tests compare)
	Status *Status   // the run's status line (status.go), nil if none
	// AsyncAnalyses: the analyses run on a thread of their own; the
	// engine's event buffers are then larger.
	AsyncAnalyses bool
	// IsRerun: this run is one an analysis makes after the first (causal
	// --exact, --validate); it feeds the first run's status line.
	IsRerun  bool
	Bare     bool     // benchmarking only: no block hook
	Strace   bool     // every system call on stderr
	Speedups []string // actual speedups, FILE:LINE=PCT or 0xLO-0xHI=PCT
	// MuteStdout: the guest's stdout is discarded (a sweep's runs after
	// the first: stdout holds the program's output once, as natively).
	MuteStdout bool
	// StatusDelay and StatusEvery time the status line (tests make it
	// appear at once, so that no verdict waits on the host).
	StatusDelay, StatusEvery time.Duration
}

// ExitError carries an exit status out of a run or a command (analyses
// return it too).
type ExitError = platform.ExitError

// HostErr is err without the operation and path os adds ("stat x: ...").
func HostErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsTerminal asks the host whether f is a terminal (/dev/null is a
// character device but not a terminal: programs like pigz behave
// differently).
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// ShellJoin quotes args as a shell would need them.
func ShellJoin(args []string) string {
	var out []string
	for _, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") == "" {
			out = append(out, a)
		} else {
			out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
	}
	return strings.Join(out, " ")
}
