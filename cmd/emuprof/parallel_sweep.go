package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"emuprof/analyses/parallel"
)

// cpusSweep carries out `emuprof parallel --cpus-sweep 1,2,4,8`: the guest
// runs once per core count, each run writing into OUT/cpusN, and the runs
// are compared (makespan, speedup, idleness: "does it scale, and where does
// it stop?", issue 13). It reports whether a sweep was asked for.
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
	out, app := f.out, filepath.Base(args[0])
	var runs []parallel.SweepRun
	var last error
	// stdout is the program's, once: the first run's; emuprof's own
	// text goes to stderr.
	for i, n := range counts {
		f.run.cpus = n
		f.run.MuteStdout = i > 0
		f.out = filepath.Join(out, fmt.Sprintf("cpus%d", n))
		fmt.Fprintf(os.Stderr, "== --cpus %d\n", n)
		last = f.profile(list, args)
		data, err := os.ReadFile(filepath.Join(f.out, app+"_parallel.json"))
		if err != nil {
			if last != nil {
				return true, last
			}
			return true, err
		}
		var r parallel.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return true, err
		}
		runs = append(runs, parallel.SweepRun{CPUs: n, Result: &r})
	}
	rows, stop := parallel.Sweep(runs)
	js, err := json.MarshalIndent(struct {
		Rows []parallel.SweepRow `json:"runs"`
		Stop int                 `json:"stops_after"`
	}{rows, stop}, "", " ")
	if err != nil {
		return true, err
	}
	p := filepath.Join(out, app+"_parallel_sweep.json")
	if err := os.WriteFile(p, append(js, '\n'), 0o644); err != nil {
		return true, err
	}
	fmt.Fprintln(os.Stderr, "==")
	if err := parallel.WriteSweep(os.Stderr, runs); err != nil {
		return true, err
	}
	fmt.Fprintf(os.Stderr, "emuprof: wrote %s\n", p)
	return true, last
}
