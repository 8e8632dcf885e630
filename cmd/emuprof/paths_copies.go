package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"emuprof/analyses/paths"
	"emuprof/analyses/report"
	"emuprof/session"
	"emuprof/syscalls"
)

// pathsCopies carries out `emuprof paths --copies K`: P3's K copies run as
// K concurrent emulations, each a child emuprof running `--copy i/K` of one
// plan (issue 11 point 5, spec §5.2), and their shards are merged. Without
// --plan, a planning run (--p3 K --plan-out) comes first. stdin is read
// once and replayed to every run from a file; the guest's stdout and
// stderr are those of copy 0 (every copy must print the same bytes). It
// reports whether --copies was given.
//
// The copies must not see each other's file changes (issue 11 point 5):
// every run, the planning run included, keeps them in a private overlay
// (syscalls.Overlay) over the untouched files, and once all copies have
// finished, copy 0's overlay is applied to the file system, so it ends as
// one native run would leave it; with --dry-fs nothing is applied.
func (f *profileFlags) pathsCopies(list string, args []string) (bool, error) {
	fl := f.fs.Lookup(paths.CopiesFlag)
	if fl == nil || fl.Value.String() == "0" {
		return false, nil
	}
	k, err := strconv.Atoi(fl.Value.String())
	if err != nil || k < 1 || k > 64 {
		return true, &exitError{Code: 2, Msg: fmt.Sprintf("--%s %s: want 1 to 64 copies", paths.CopiesFlag, fl.Value)}
	}
	if list != paths.Plugin.Name {
		return true, &exitError{Code: 2, Msg: fmt.Sprintf("--%s works with the paths analysis alone (emuprof paths)", paths.CopiesFlag)}
	}
	for _, name := range []string{"copy", "p3", "plan-out"} {
		if g := f.fs.Lookup(name); g != nil && g.Changed {
			return true, &exitError{Code: 2, Msg: fmt.Sprintf("--%s: not with --%s (the copies are planned for you)", name, paths.CopiesFlag)}
		}
	}
	if len(args) == 0 {
		return true, &exitError{Code: 2, Msg: "no program given (usage: emuprof paths --copies K [flags] -- PROGRAM ARGS...)"}
	}
	self, err := os.Executable()
	if err != nil {
		return true, err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return true, fmt.Errorf("--out %s: %v", f.out, session.HostErr(err))
	}
	// The runs' private files (replayed stdin, shards, file overlays) live
	// outside the guest's working directory (--out defaults to it): a
	// guest that lists or archives it must not see the copies' files.
	work, err := os.MkdirTemp("", "emuprof-paths-copies-")
	if err != nil {
		return true, fmt.Errorf("--copies: a temporary directory: %v", session.HostErr(err))
	}
	defer os.RemoveAll(work)
	// The flags every run shares: those given, but the ones this command
	// sets per run.
	var common []string
	skip := map[string]bool{paths.CopiesFlag: true, "plan": true, "out": true, "dry-fs": true, "fs-overlay": true}
	f.fs.Visit(func(g *pflag.Flag) {
		if skip[g.Name] {
			return
		}
		if sv, ok := g.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				common = append(common, "--"+g.Name+"="+v)
			}
			return
		}
		common = append(common, "--"+g.Name+"="+g.Value.String())
	})
	// stdin is read once and replayed (issue 11: every copy sees the same
	// input), as what it is: a regular file stays that file (the guest
	// sees its inode, size and offset), anything else comes through a pipe.
	var stdin stdinSource
	switch {
	case syscalls.HostStdinClosed():
	case session.IsTerminal(os.Stdin):
		fmt.Fprintln(os.Stderr, "emuprof: --copies: stdin is a terminal; the copies read no input (redirect it from a file or a pipe)")
	default:
		if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
			if p, err := filepath.EvalSymlinks(os.Stdin.Name()); err == nil {
				if off, err := os.Stdin.Seek(0, io.SeekCurrent); err == nil {
					stdin = stdinSource{path: p, offset: off}
					break
				}
			}
		}
		stdin = stdinSource{path: filepath.Join(work, "stdin"), pipe: true}
		in, err := os.Create(stdin.path)
		if err != nil {
			return true, err
		}
		_, err = io.Copy(in, os.Stdin)
		if cerr := in.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return true, fmt.Errorf("reading stdin: %v", err)
		}
	}
	planPath, planned := "", ""
	// The children's own stderr is captured: this line is the only one.
	status := session.NewStatus(os.Stderr, &f.run.Options, 1)
	if g := f.fs.Lookup("plan"); g != nil && g.Value.String() != "" {
		planPath = g.Value.String()
	} else {
		// Written next to the profile once the copies have run: a guest
		// that lists its directory (--out's default) must not see it
		// appear between the planning run and the copies.
		planPath = filepath.Join(work, filepath.Base(args[0])+"_paths.plan.json")
		argv := append([]string{"paths"}, common...)
		argv = append(argv, "--p3="+strconv.Itoa(k), "--plan-out="+planPath, "--out="+filepath.Join(work, "plan"),
			"--fs-overlay="+filepath.Join(work, "fs-plan"), "--")
		argv = append(argv, args...)
		status.SetPhase(fmt.Sprintf("planning run (P3 for %d copies)", k))
		status.Start()
		r := runChild(self, argv, stdin)
		status.Stop()
		if r.err != nil || r.code != 0 && !fileExists(planPath) {
			os.Stderr.Write(r.stderr.Bytes())
			return true, fmt.Errorf("--copies: the planning run failed: %v", r.errOr())
		}
		fmt.Fprintf(os.Stderr, "emuprof: planning run (P3 for %d copies): %.2f s host CPU, %.2f s wall\n", k, r.cpu.Seconds(), r.wall.Seconds())
		planned = filepath.Join(work, "plan", paths.FileName(args[0]))
	}
	pf, digest, err := paths.ReadPlan(planPath, k)
	if err != nil {
		return true, &exitError{Code: 2, Msg: err.Error()}
	}
	results := make([]childResult, k)
	status.SetPhase(fmt.Sprintf("running %d copies of the program", k))
	done := status.Counter("copies done", k)
	status.Start()
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			argv := append([]string{"paths"}, common...)
			argv = append(argv, "--copy="+strconv.Itoa(i)+"/"+strconv.Itoa(k), "--plan="+planPath,
				"--out="+filepath.Join(work, "copy"+strconv.Itoa(i)), "--fs-overlay="+overlayDir(work, i), "--")
			argv = append(argv, args...)
			results[i] = runChild(self, argv, stdin)
			done.Done()
		}()
	}
	wg.Wait()
	status.Stop()
	// Every copy kept its file changes in its own overlay, over the same
	// untouched files; copy 0's reach the file system now, once (not with
	// --dry-fs, nor when copy 0 failed in emuprof itself).
	if g := f.fs.Lookup("dry-fs"); (g == nil || g.Value.String() != "true") && results[0].err == nil {
		if err := syscalls.CommitOverlay(overlayDir(work, 0)); err != nil {
			return true, fmt.Errorf("--copies: applying copy 0's file changes: %v", err)
		}
	}
	if planned != "" {
		data, err := os.ReadFile(planPath)
		if err == nil {
			err = report.WriteBytesAtomic(filepath.Join(f.out, filepath.Base(planPath)), data)
		}
		if err != nil {
			return true, fmt.Errorf("--copies: keeping the plan: %v", err)
		}
	}
	var shards []*paths.Shard
	for i, r := range results {
		if r.err != nil {
			os.Stderr.Write(r.stderr.Bytes())
			return true, fmt.Errorf("--copies: copy %d: %v", i, r.err)
		}
		if i > 0 && (!bytes.Equal(r.stdout.Bytes(), results[0].stdout.Bytes()) || r.code != results[0].code) {
			return true, fmt.Errorf("--copies: copy %d printed other output or exited otherwise (%d) than copy 0 (%d): the copies diverged", i, r.code, results[0].code)
		}
		sh, err := paths.ReadShard(filepath.Join(work, "copy"+strconv.Itoa(i), paths.ShardName(args[0], i, k)))
		if err != nil {
			os.Stderr.Write(r.stderr.Bytes())
			return true, fmt.Errorf("--copies: copy %d wrote no shard: %v", i, err)
		}
		shards = append(shards, sh)
	}
	os.Stdout.Write(results[0].stdout.Bytes())
	pr, err := paths.MergeShards(pf, digest, shards)
	if err != nil {
		return true, &exitError{Code: 2, Msg: err.Error()}
	}
	out := filepath.Join(f.out, paths.FileName(args[0]))
	if err := writeProfile(out, pr); err != nil {
		return true, err
	}
	if planned != "" {
		// The planning run measured the same copies inside one emulation:
		// the merge of the real copies must give its profile exactly.
		a, err1 := os.ReadFile(out)
		b, err2 := os.ReadFile(planned)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			return true, &exitError{Code: 2, Msg: fmt.Sprintf("--copies: the merged profile %s differs from the planning run's (a bug: please report it)", out)}
		}
	}
	summary := session.NewQuietWriter(os.Stderr) // stdout is the guest's
	if err := pr.Summary(summary, 10); err != nil {
		return true, err
	}
	fmt.Fprintf(summary, "%6s %14s %12s %10s\n", "copy", "probe hits", "host CPU s", "wall s")
	for i, r := range results {
		fmt.Fprintf(summary, "%6d %14d %12.2f %10.2f\n", i, pr.ProbeHits[i], r.cpu.Seconds(), r.wall.Seconds())
	}
	fmt.Fprintf(os.Stderr, "emuprof: wrote %s (merged from %d copies run concurrently)\n", out, k)
	if c := results[0].code; c != 0 {
		return true, &exitError{Code: c}
	}
	return true, nil
}

// overlayDir is where copy i keeps its file changes (syscalls.Overlay).
func overlayDir(work string, i int) string {
	return filepath.Join(work, "fs"+strconv.Itoa(i))
}

// childResult is what a child emuprof did.
type childResult struct {
	code           int
	err            error // it could not run, or failed in emuprof itself
	stdout, stderr bytes.Buffer
	cpu, wall      time.Duration
}

func (r *childResult) errOr() error {
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("exit status %d", r.code)
}

// stdinSource is the copies' standard input: the file at path from offset,
// given as that file or, with pipe, through a pipe; none when path is "".
type stdinSource struct {
	path   string
	offset int64
	pipe   bool
}

// runChild runs emuprof with argv and stdin (none: empty input).
func runChild(self string, argv []string, stdin stdinSource) (r childResult) {
	cmd := exec.Command(self, argv...)
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if stdin.path != "" {
		in, err := os.Open(stdin.path)
		if err == nil {
			_, err = in.Seek(stdin.offset, io.SeekStart)
		}
		if err != nil {
			r.err = err
			return r
		}
		defer in.Close()
		cmd.Stdin = in
		if stdin.pipe {
			cmd.Stdin = struct{ io.Reader }{in} // not an *os.File: exec makes a pipe
		}
	}
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		r.code, r.err = 2, fmt.Errorf("%s", bytes.TrimSpace(lastLine(r.stderr.Bytes())))
	case errors.As(err, &ee):
		r.code = ee.ExitCode() // the guest's exit status
	case err != nil:
		r.err = err
	}
	return r
}

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeProfile(path string, pr *paths.Profile) error {
	data, err := pr.Marshal()
	if err != nil {
		return err
	}
	return report.WriteBytesAtomic(path, data)
}

// mergePathShards is `emuprof merge --plan PLAN -o OUT SHARD...` for paths
// shards (--copy i/K runs, perhaps on other machines).
func mergePathShards(out, plan string, files []string, datas [][]byte) error {
	if plan == "" {
		return &exitError{Code: 2, Msg: "merge: paths shards need --plan FILE (the plan the copies ran)"}
	}
	var shards []*paths.Shard
	for i, f := range files {
		sh, err := paths.ParseShard(f, datas[i])
		if err != nil {
			return &exitError{Code: 2, Msg: "merge: " + err.Error()}
		}
		shards = append(shards, sh)
	}
	if len(shards) == 0 {
		return &exitError{Code: 2, Msg: "merge: no shards"}
	}
	pf, digest, err := paths.ReadPlan(plan, shards[0].K)
	if err != nil {
		return &exitError{Code: 2, Msg: "merge: " + err.Error()}
	}
	pr, err := paths.MergeShards(pf, digest, shards)
	if err != nil {
		return &exitError{Code: 2, Msg: err.Error()}
	}
	if err := writeProfile(out, pr); err != nil {
		return &exitError{Code: 2, Msg: fmt.Sprintf("merge: %v", err)}
	}
	return pr.Summary(session.NewQuietWriter(os.Stdout), 10)
}
