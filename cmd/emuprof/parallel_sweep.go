package main

import (
	"fmt"
	"os"
	"path/filepath"

	"emuprof/analyses/parallel"
)

// cpusSweep carries out `emuprof parallel --cpus-sweep 1,2,4,8`
// (parallel.RunSweep), each run a whole profile with other --cpus. It
// reports whether a sweep was asked for.
func (f *profileFlags) cpusSweep(list string, args []string) (bool, error) {
	fl := f.fs.Lookup(parallel.SweepFlag)
	if fl == nil || fl.Value.String() == "" {
		return false, nil
	}
	counts, err := parallel.ParseCPUList(fl.Value.String())
	if err != nil {
		return true, &exitError{Code: 2, Msg: fmt.Sprintf("--%s %s: %v", parallel.SweepFlag, fl.Value, err)}
	}
	if list != parallel.Plugin.Name {
		return true, &exitError{Code: 2, Msg: fmt.Sprintf("--%s works with the parallel analysis alone (emuprof parallel)", parallel.SweepFlag)}
	}
	if len(args) == 0 {
		return true, &exitError{Code: 2, Msg: "no program given (usage: emuprof parallel [flags] -- PROGRAM ARGS...)"}
	}
	_ = fl.Value.Set("")
	return true, parallel.RunSweep(counts, f.out, filepath.Base(args[0]), func(cpus int, dir string, mute bool) error {
		f.run.cpus, f.run.MuteStdout, f.out = cpus, mute, dir
		return f.profile(list, args)
	}, os.Stderr)
}
