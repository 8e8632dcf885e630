package paths

// paths --copies K: P3's K copies run as K concurrent emulations, each a
// child emuprof running --copy i/K of one plan (issue 11 point 5, spec
// §5.2), and their shards are merged. The run layer (platform.Runs) runs
// the children; this file is paths' rule for them.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
)

// copiesMode is paths' multi-run mode (Plugin.MultiRun).
var copiesMode = &platform.MultiRunMode{Flag: CopiesFlag, Parse: parseCopies}

// parseCopies returns the MultiRun of --copies K (nil without it).
func parseCopies(fs *pflag.FlagSet, alone bool) (platform.MultiRun, error) {
	fl := fs.Lookup(CopiesFlag)
	if fl == nil || fl.Value.String() == "0" {
		return nil, nil
	}
	k, err := strconv.Atoi(fl.Value.String())
	if err != nil || k < 1 || k > 64 {
		return nil, &platform.ExitError{Code: 2, Msg: fmt.Sprintf("--%s %s: want 1 to 64 copies", CopiesFlag, fl.Value)}
	}
	if !alone {
		return nil, &platform.ExitError{Code: 2, Msg: fmt.Sprintf("--%s works with the paths analysis alone (emuprof paths)", CopiesFlag)}
	}
	for _, name := range []string{"copy", "p3", "plan-out"} {
		if g := fs.Lookup(name); g != nil && g.Changed {
			return nil, &platform.ExitError{Code: 2, Msg: fmt.Sprintf("--%s: not with --%s (the copies are planned for you)", name, CopiesFlag)}
		}
	}
	return func(runs platform.Runs, program []string) error {
		c := &copyRuns{runs: runs, k: k, program: program}
		return c.run()
	}, nil
}

// copyRuns is one --copies K: without --plan, a planning run (--p3 K
// --plan-out) comes first. The guest's stdout and stderr are those of
// copy 0 (every copy must print the same bytes).
//
// The copies must not see each other's file changes (issue 11 point 5):
// every run, the planning run included, keeps them in a private overlay
// over the untouched files, and once all copies have finished, copy 0's
// overlay is applied to the file system, so it ends as one native run
// would leave it; with --dry-fs nothing is applied.
type copyRuns struct {
	runs     platform.Runs
	k        int
	program  []string
	work     string // the runs' private files
	planPath string
	planned  string // the planning run's profile ("" with --plan)
	results  []platform.ChildResult
}

func (c *copyRuns) run() error {
	if len(c.program) == 0 {
		return &platform.ExitError{Code: 2, Msg: "no program given (usage: emuprof paths --copies K [flags] -- PROGRAM ARGS...)"}
	}
	work, err := c.runs.Prepare(CopiesFlag, "plan")
	if err != nil {
		return err
	}
	c.work = work
	if err := c.plan(); err != nil {
		return err
	}
	pf, digest, err := ReadPlan(c.planPath, c.k)
	if err != nil {
		return &platform.ExitError{Code: 2, Msg: err.Error()}
	}
	c.runCopies()
	if err := c.keepFiles(); err != nil {
		return err
	}
	shards, err := c.shards()
	if err != nil {
		return err
	}
	c.runs.Stdout().Write(c.results[0].Stdout)
	pr, out, err := c.merge(pf, digest, shards)
	if err != nil {
		return err
	}
	if err := c.summary(pr, out); err != nil {
		return err
	}
	if code := c.results[0].Code; code != 0 {
		return &platform.ExitError{Code: code}
	}
	return nil
}

// plan finds the plan: --plan's, or one a planning run writes (next to the
// profile once the copies have run: a guest that lists its directory,
// --out's default, must not see it appear between the planning run and
// the copies).
func (c *copyRuns) plan() error {
	if p, _ := c.runs.Flag("plan"); p != "" {
		c.planPath = p
		return nil
	}
	c.planPath = filepath.Join(c.work, filepath.Base(c.program[0])+"_paths.plan.json")
	phase := fmt.Sprintf("planning run (P3 for %d copies)", c.k)
	status := c.runs.Progress()
	status.SetPhase(phase)
	status.Start()
	r := c.runs.Run(platform.ChildRun{
		Flags: []string{"--p3=" + strconv.Itoa(c.k), "--plan-out=" + c.planPath},
		Out:   filepath.Join(c.work, "plan"), Overlay: filepath.Join(c.work, "fs-plan")})
	status.Stop()
	if r.Err != nil || r.Code != 0 && !fileExists(c.planPath) {
		c.runs.Stderr().Write(r.Stderr)
		return fmt.Errorf("--copies: the planning run failed: %v", r.ErrOr())
	}
	fmt.Fprintf(c.runs.Stderr(), "emuprof: %s: %.2f s host CPU, %.2f s wall\n", phase, r.CPU.Seconds(), r.Wall.Seconds())
	c.planned = filepath.Join(c.work, "plan", FileName(c.program[0]))
	return nil
}

// runCopies runs the K copies concurrently.
func (c *copyRuns) runCopies() {
	c.results = make([]platform.ChildResult, c.k)
	status := c.runs.Progress()
	status.SetPhase(fmt.Sprintf("running %d copies of the program", c.k))
	done := status.Count("copies done", c.k)
	status.Start()
	var wg sync.WaitGroup
	for i := range c.k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.results[i] = c.runs.Run(platform.ChildRun{
				Flags: []string{"--copy=" + strconv.Itoa(i) + "/" + strconv.Itoa(c.k), "--plan=" + c.planPath},
				Out:   c.copyDir(i), Overlay: c.overlayDir(i)})
			done()
		}()
	}
	wg.Wait()
	status.Stop()
}

// keepFiles applies copy 0's file changes (every copy kept its own in its
// overlay, over the same untouched files) once, unless copy 0 failed in
// emuprof itself, and keeps a planning run's plan next to the profile.
func (c *copyRuns) keepFiles() error {
	if c.results[0].Err == nil {
		if err := c.runs.Commit(c.overlayDir(0)); err != nil {
			return fmt.Errorf("--copies: applying copy 0's file changes: %v", err)
		}
	}
	if c.planned == "" {
		return nil
	}
	data, err := os.ReadFile(c.planPath)
	if err == nil {
		err = report.WriteBytesAtomic(filepath.Join(c.runs.OutDir(), filepath.Base(c.planPath)), data)
	}
	if err != nil {
		return fmt.Errorf("--copies: keeping the plan: %v", err)
	}
	return nil
}

// shards reads every copy's shard, once each copy is found to have run as
// copy 0 did.
func (c *copyRuns) shards() ([]*Shard, error) {
	var shards []*Shard
	first := c.results[0]
	for i, r := range c.results {
		if r.Err != nil {
			c.runs.Stderr().Write(r.Stderr)
			return nil, fmt.Errorf("--copies: copy %d: %v", i, r.Err)
		}
		if i > 0 && (!bytes.Equal(r.Stdout, first.Stdout) || r.Code != first.Code) {
			return nil, fmt.Errorf("--copies: copy %d printed other output or exited otherwise (%d) than copy 0 (%d): the copies diverged", i, r.Code, first.Code)
		}
		sh, err := ReadShard(filepath.Join(c.copyDir(i), ShardName(c.program[0], i, c.k)))
		if err != nil {
			c.runs.Stderr().Write(r.Stderr)
			return nil, fmt.Errorf("--copies: copy %d wrote no shard: %v", i, err)
		}
		shards = append(shards, sh)
	}
	return shards, nil
}

// merge merges the shards into the profile, writes it and returns it with
// its path. The planning run measured the same copies inside one
// emulation: the merge of the real copies must give its profile exactly.
func (c *copyRuns) merge(pf *PlanFile, digest string, shards []*Shard) (*Profile, string, error) {
	pr, err := MergeShards(pf, digest, shards)
	if err != nil {
		return nil, "", &platform.ExitError{Code: 2, Msg: err.Error()}
	}
	out := filepath.Join(c.runs.OutDir(), FileName(c.program[0]))
	if err := WriteProfile(out, pr); err != nil {
		return nil, "", err
	}
	if c.planned != "" {
		a, err1 := os.ReadFile(out)
		b, err2 := os.ReadFile(c.planned)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			return nil, "", &platform.ExitError{Code: 2, Msg: fmt.Sprintf("--copies: the merged profile %s differs from the planning run's (a bug: please report it)", out)}
		}
	}
	return pr, out, nil
}

// summary prints the merged profile's summary and each copy's figures.
func (c *copyRuns) summary(pr *Profile, out string) error {
	w := c.runs.Summary()
	if err := pr.Summary(w, 10); err != nil {
		return err
	}
	fmt.Fprintf(w, "%6s %14s %12s %10s\n", "copy", "probe hits", "host CPU s", "wall s")
	for i, r := range c.results {
		fmt.Fprintf(w, "%6d %14d %12.2f %10.2f\n", i, pr.ProbeHits[i], r.CPU.Seconds(), r.Wall.Seconds())
	}
	fmt.Fprintf(c.runs.Stderr(), "emuprof: wrote %s (merged from %d copies run concurrently)\n", out, c.k)
	return nil
}

// copyDir is copy i's --out; overlayDir keeps its file changes.
func (c *copyRuns) copyDir(i int) string    { return filepath.Join(c.work, "copy"+strconv.Itoa(i)) }
func (c *copyRuns) overlayDir(i int) string { return filepath.Join(c.work, "fs"+strconv.Itoa(i)) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// WriteProfile writes pr to path atomically.
func WriteProfile(path string, pr *Profile) error {
	data, err := pr.Marshal()
	if err != nil {
		return err
	}
	return report.WriteBytesAtomic(path, data)
}
