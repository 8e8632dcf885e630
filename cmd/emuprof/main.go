// Command emuprof runs an unmodified x86-64 Linux program on an emulator it
// fully controls and profiles it deterministically. This package only wires
// flags to the guest runtime and the analyses.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"emuprof/internal/stophook"
	"emuprof/session"
)

// exitError carries an exit code out of a command.
type exitError = session.ExitError

// gcFloor: see main.
const gcFloor = 32 << 20

func main() {
	// First of all: a stop signal from here to the last file written
	// ends emuprof as documented (stops.go), never by the default action.
	stops := session.WatchStops()
	stophook.At("start")
	// No sampling of the heap's allocations (a stack walk every 512 KB
	// allocated) but under --memprofile, which asks for all of them. The
	// rate must be set before the first allocation it is to apply to,
	// so before the flags are parsed.
	if slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == "--memprofile" || strings.HasPrefix(a, "--memprofile=") }) {
		runtime.MemProfileRate = 1
	} else {
		runtime.MemProfileRate = 0
	}
	// A floor under the collector's heap goal: a pointer-free block that
	// is never touched (no memory behind it, nothing to scan), so that the
	// goal is at least twice its size. A short run then collects once or
	// not at all instead of at every 4 MB; a large one hardly notices.
	floor := make([]byte, gcFloor)
	preferHugeHeapPages()
	root := rootCommand(stops)
	var cpuProfile, memProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of emuprof itself (profiling the profiler)")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a Go profile of every allocation emuprof itself makes (profiling the profiler)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	check := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return err
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	stophook.At("parse")
	err := root.Execute()
	pprof.StopCPUProfile()
	if memProfile != "" {
		if werr := writeAllocProfile(memProfile); werr != nil && err == nil {
			err = werr
		}
	}
	runtime.KeepAlive(floor)
	code := 0
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ee.Msg != "" {
			fmt.Fprintln(os.Stderr, "emuprof: "+ee.Msg)
		}
		code = ee.Code
	default:
		fmt.Fprintln(os.Stderr, "emuprof: "+err.Error())
		code = 2
	}
	// A stop that no run reported (it came after the guest ended, or no
	// guest ran): everything was written all the same; the status is
	// the signal's.
	if sig := stops.Finish(); sig != 0 && !stops.Reported() {
		fmt.Fprintln(os.Stderr, "emuprof: "+session.StopReason(int(sig)))
		code = 128 + int(sig)
	}
	os.Exit(code)
}

// rootCommand is emuprof's command tree; stops are its stop signals.
func rootCommand(stops *session.Stopper) *cobra.Command {
	root := &cobra.Command{
		Use:           "emuprof",
		Short:         "Deterministic, emulator-based profiler for x86-64 Linux programs",
		Version:       Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkFlagValues(cmd.Flags())
		},
	}
	root.AddCommand(runCommand(stops), profileCommand(stops), mergeCommand(stops), reportCommand(), syscallsCommand(), diffCommand())
	for _, p := range registry {
		root.AddCommand(aliasCommand(p, stops))
	}
	return root
}

// writeAllocProfile writes every allocation made since main saw
// --memprofile.
func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	runtime.GC() // the profile holds what the last collection published
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("memprofile: %w", err)
	}
	return f.Close()
}
