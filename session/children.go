package session

// The run layer's side of an analysis's multi-run mode (platform.MultiRun,
// paths --copies): each run a child emuprof with the command's flags,
// stdin read once and replayed to every run, file changes kept in private
// overlays.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/syscalls"
)

// RunMany carries out mr, an analysis's multi-run mode, on program: fs is
// the command's parsed flags (every child gets them), analysis the
// command that runs it (emuprof ANALYSIS), mode the flag that asked for
// mr (for messages), out --out.
func RunMany(fs *pflag.FlagSet, f *Options, analysis, mode, out string, mr platform.MultiRun, program []string) error {
	r := &childRuns{fs: fs, analysis: analysis, mode: mode, out: out, program: program,
		status: NewStatus(os.Stderr, f, 1)}
	defer func() {
		if r.work != "" {
			os.RemoveAll(r.work)
		}
	}()
	return mr(r, program)
}

// childRuns is the platform.Runs of one RunMany.
type childRuns struct {
	fs       *pflag.FlagSet
	analysis string
	mode     string
	out      string
	program  []string
	status   *Status
	self     string   // this emuprof's executable
	work     string   // the runs' private files
	common   []string // the flags every run shares
	stdin    stdinSource
}

func (r *childRuns) Flag(name string) (string, bool) {
	g := r.fs.Lookup(name)
	if g == nil {
		return "", false
	}
	return g.Value.String(), g.Changed
}

func (r *childRuns) Prepare(perRun ...string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	r.self = self
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return "", fmt.Errorf("--out %s: %v", r.out, HostErr(err))
	}
	// The runs' private files (replayed stdin, results, file overlays)
	// live outside the guest's working directory (--out defaults to it):
	// a guest that lists or archives it must not see them.
	if r.work, err = os.MkdirTemp("", "emuprof-"+r.analysis+"-"+r.mode+"-"); err != nil {
		return "", fmt.Errorf("--%s: a temporary directory: %v", r.mode, HostErr(err))
	}
	skip := map[string]bool{"out": true, "dry-fs": true, "fs-overlay": true}
	for _, name := range perRun {
		skip[name] = true
	}
	r.common = givenFlags(nil, r.fs, skip)
	if r.stdin, err = replayStdin(r.work, r.mode); err != nil {
		return "", err
	}
	return r.work, nil
}

// replayStdin reads stdin once, to be replayed to every run (every copy
// sees the same input), as what it is: a regular file stays that file
// (the guest sees its inode, size and offset), anything else is kept in
// work and comes through a pipe.
func replayStdin(work, mode string) (stdinSource, error) {
	switch {
	case syscalls.HostStdinClosed():
		return stdinSource{}, nil
	case IsTerminal(os.Stdin):
		fmt.Fprintf(os.Stderr, "emuprof: --%s: stdin is a terminal; the copies read no input (redirect it from a file or a pipe)\n", mode)
		return stdinSource{}, nil
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		if p, err := filepath.EvalSymlinks(os.Stdin.Name()); err == nil {
			if off, err := os.Stdin.Seek(0, io.SeekCurrent); err == nil {
				return stdinSource{path: p, offset: off}, nil
			}
		}
	}
	s := stdinSource{path: filepath.Join(work, "stdin"), pipe: true}
	in, err := os.Create(s.path)
	if err != nil {
		return s, err
	}
	_, err = io.Copy(in, os.Stdin)
	if cerr := in.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s, fmt.Errorf("reading stdin: %v", err)
	}
	return s, nil
}

func (r *childRuns) Run(c platform.ChildRun) platform.ChildResult {
	argv := append([]string{r.analysis}, r.common...)
	argv = append(argv, c.Flags...)
	argv = append(argv, "--out="+c.Out, "--fs-overlay="+c.Overlay, "--")
	argv = append(argv, r.program...)
	return runChild(r.self, argv, r.stdin)
}

func (r *childRuns) Commit(overlay string) error {
	if v, _ := r.Flag("dry-fs"); v == "true" {
		return nil
	}
	return syscalls.CommitOverlay(overlay)
}

func (r *childRuns) OutDir() string              { return r.out }
func (r *childRuns) Progress() platform.Progress { return statusProgress{r.status} }
func (r *childRuns) Stdout() io.Writer           { return os.Stdout }
func (r *childRuns) Stderr() io.Writer           { return os.Stderr }
func (r *childRuns) Summary() io.Writer          { return NewQuietWriter(os.Stderr) } // stdout is the guest's

// statusProgress is a Status as a platform.Progress.
type statusProgress struct{ s *Status }

func (p statusProgress) SetPhase(phase string) { p.s.SetPhase(phase) }
func (p statusProgress) Start()                { p.s.Start() }
func (p statusProgress) Stop()                 { p.s.Stop() }
func (p statusProgress) Count(what string, total int) func() {
	return p.s.Counter(what, total).Done
}

// stdinSource is the runs' standard input: the file at path from offset,
// given as that file or, with pipe, through a pipe; none when path is "".
type stdinSource struct {
	path   string
	offset int64
	pipe   bool
}

// runChild runs emuprof with argv and stdin (none: empty input).
func runChild(self string, argv []string, stdin stdinSource) (r platform.ChildResult) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(self, argv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin.path != "" {
		in, err := os.Open(stdin.path)
		if err == nil {
			_, err = in.Seek(stdin.offset, io.SeekStart)
		}
		if err != nil {
			r.Err = err
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
	r.Wall = time.Since(start)
	if cmd.ProcessState != nil {
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.Bytes()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		r.Code, r.Err = 2, fmt.Errorf("%s", bytes.TrimSpace(lastLine(r.Stderr)))
	case errors.As(err, &ee):
		r.Code = ee.ExitCode() // the guest's exit status
	case err != nil:
		r.Err = err
	}
	return r
}

// givenFlags appends to args the flags given on fs but those in skip, as
// --NAME=VALUE (a slice flag once per value).
func givenFlags(args []string, fs *pflag.FlagSet, skip map[string]bool) []string {
	fs.Visit(func(g *pflag.Flag) {
		if skip[g.Name] {
			return
		}
		if sv, ok := g.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+g.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+g.Name+"="+g.Value.String())
	})
	return args
}

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
