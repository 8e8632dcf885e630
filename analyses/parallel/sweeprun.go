package parallel

// The runs of --cpus-sweep: the one analysis of the package that profiles
// the program several times. The command gives it the means to profile once.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ProfileOnce profiles the program once, whole, with cpus virtual CPUs,
// writing the profiles into dir; mute: the guest's stdout is discarded
// (stdout holds the program's output once, as natively: the first run's).
type ProfileOnce func(cpus int, dir string, mute bool) error

// RunSweep carries out `emuprof parallel --cpus-sweep 1,2,4,8`: the guest
// runs once per core count, each run writing into OUT/cpusN, and the runs
// are compared (makespan, speedup, idleness: "does it scale, and where does
// it stop?", issue 13) in OUT/<app>_parallel_sweep.json and on stderr,
// which also gets emuprof's own text. It returns the last run's error.
func RunSweep(counts []int, out, app string, once ProfileOnce, stderr io.Writer) error {
	var runs []SweepRun
	var last error
	for i, n := range counts {
		dir := filepath.Join(out, fmt.Sprintf("cpus%d", n))
		fmt.Fprintf(stderr, "== --cpus %d\n", n)
		last = once(n, dir, i > 0)
		data, err := os.ReadFile(filepath.Join(dir, app+"_parallel.json"))
		if err != nil {
			if last != nil {
				return last
			}
			return err
		}
		var r Result
		if err := json.Unmarshal(data, &r); err != nil {
			return err
		}
		runs = append(runs, SweepRun{CPUs: n, Result: &r})
	}
	rows, stop := Sweep(runs)
	js, err := json.MarshalIndent(struct {
		Rows []SweepRow `json:"runs"`
		Stop int        `json:"stops_after"`
	}{rows, stop}, "", " ")
	if err != nil {
		return err
	}
	p := filepath.Join(out, app+"_parallel_sweep.json")
	if err := os.WriteFile(p, append(js, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "==")
	if err := WriteSweep(stderr, runs); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "emuprof: wrote %s\n", p)
	return last
}
