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

	"github.com/spf13/cobra"
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string // printed as "emuprof: msg" when non-empty
}

func (e *exitError) Error() string { return e.msg }

// gcFloor: see main.
const gcFloor = 32 << 20

func main() {
	// A floor under the collector's heap goal: a pointer-free block that
	// is never touched (no memory behind it, nothing to scan), so that the
	// goal is at least twice its size. A short run then collects once or
	// not at all instead of at every 4 MB; a large one hardly notices.
	floor := make([]byte, gcFloor)
	root := &cobra.Command{
		Use:           "emuprof",
		Short:         "Deterministic, emulator-based profiler for x86-64 Linux programs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCommand(), profileCommand(), mergeCommand(), reportCommand(), syscallsCommand())
	for _, p := range registry {
		root.AddCommand(aliasCommand(p))
	}
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of emuprof itself (profiling the profiler)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	err := root.Execute()
	pprof.StopCPUProfile()
	runtime.KeepAlive(floor)
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "emuprof: "+ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "emuprof: "+err.Error())
	os.Exit(2)
}
