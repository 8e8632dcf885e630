package parallel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RunSweep profiles once per core count into OUT/cpusN, mutes the guest's
// stdout after the first run, and compares the runs' results in
// <app>_parallel_sweep.json.
func TestRunSweep(t *testing.T) {
	out := t.TempDir()
	var dirs []string
	var mutes []bool
	once := func(cpus int, dir string, mute bool) error {
		dirs, mutes = append(dirs, dir), append(mutes, mute)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		js, _ := json.Marshal(Result{Makespan: int64(1200 / cpus)})
		return os.WriteFile(filepath.Join(dir, "app_parallel.json"), js, 0o644)
	}
	var stderr bytes.Buffer
	if err := RunSweep([]int{1, 2, 4}, out, "app", once, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]string{filepath.Join(out, "cpus1"), filepath.Join(out, "cpus2"), filepath.Join(out, "cpus4")}); fmt.Sprint(dirs) != want {
		t.Errorf("profiled into %v, want %s", dirs, want)
	}
	if fmt.Sprint(mutes) != "[false true true]" {
		t.Errorf("mute %v, want the first run's stdout only", mutes)
	}
	data, err := os.ReadFile(filepath.Join(out, "app_parallel_sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []SweepRow `json:"runs"`
	}
	if err := json.Unmarshal(data, &got); err != nil || len(got.Rows) != 3 || got.Rows[2].Speedup != 4 {
		t.Errorf("sweep %s (%v): want 3 rows, a speedup of 4 on 4 cores", data, err)
	}
	if !strings.Contains(stderr.String(), "== --cpus 4\n") {
		t.Errorf("stderr %q: no header of the 4-core run", stderr.String())
	}
}

// A run that wrote no result ends the sweep with its own error.
func TestRunSweepFailedRun(t *testing.T) {
	bad := errors.New("guest crashed")
	err := RunSweep([]int{1, 2}, t.TempDir(), "app", func(int, string, bool) error { return bad }, &bytes.Buffer{})
	if !errors.Is(err, bad) {
		t.Errorf("err %v, want the run's", err)
	}
}
