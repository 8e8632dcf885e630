package callgrind

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
	"emuprof/trace"
)

// Plugin registers the analysis with the platform.
var Plugin = platform.Plugin{
	Name:  "callgrind",
	Short: "Instructions per function, line, address and call edge, as callgrind.out.<pid> for KCachegrind",
	Long: `Counts every instruction and basic block the program runs per function, source line and
instruction address, and every call edge with its count and inclusive cost, and writes them in
valgrind's Callgrind format: callgrind.out.<pid> (callgrind.out.<program>_<pid> for each process
image --follow adds), which KCachegrind, qcachegrind and callgrind_annotate read
(callgrind_annotate --inclusive=yes --auto=yes callgrind.out.<pid>). Events: Ir (instructions)
and Bb (basic blocks). Its total is the run's instruction count (emuprof run --stats), exactly.
emuprof profile runs it by default; any other command adds it with --callgrind.`,
	Flags:  func(*pflag.FlagSet) platform.Factory { return factory },
	Render: RenderHTML,
}

// FilePrefix begins the names of the files the analysis writes.
const FilePrefix = "callgrind.out."

func factory(env *platform.Env) (platform.Instance, error) {
	i := &instance{env: env}
	i.prof = New(env.Block, env.Routines, env.CCT)
	if m, ok := env.Symbols.(trace.Mapper); ok {
		i.prof.SetMapper(m)
	}
	return i, nil
}

type instance struct {
	env     *platform.Env
	prof    *Profile
	partial string
}

func (i *instance) Needs() trace.Needs         { return i.prof.Needs() }
func (i *instance) Events(batch []trace.Event) { i.prof.Events(batch) }
func (i *instance) Finish()                    { i.prof.Finish() }
func (i *instance) MarkPartial(reason string)  { i.partial = reason }

// fileName is callgrind.out.<pid> for the first process image, as
// valgrind names it, and callgrind.out.<stem> for a followed image (its
// pid is not enough: an exec keeps it).
func (i *instance) fileName() string {
	if i.env.App != "" {
		return FilePrefix + i.env.App
	}
	return fmt.Sprintf("%s%d", FilePrefix, i.env.Pid)
}

// CheckOutput checks, before the run, that the files can be created in dir.
func (i *instance) CheckOutput(dir string) error {
	if err := platform.CheckFileName(dir, i.fileName()); err != nil {
		return err
	}
	return platform.CheckFileName(dir, i.env.AppName()+SpeedscopeSuffix)
}

// Write writes callgrind.out.<pid> and <app>_callgrind.speedscope.json
// into dir, each on its own (a full disk may take one and not the other).
func (i *instance) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	path := filepath.Join(dir, i.fileName())
	h := Header{Pid: i.env.Pid, Command: strings.Join(i.env.Args, " "), Partial: i.partial}
	err := report.WriteFileAtomic(path, func(w io.Writer) error { return i.prof.Write(w, h) })
	if err == nil {
		out = append(out, path)
	} else {
		err = fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	ss := filepath.Join(dir, i.env.AppName()+SpeedscopeSuffix)
	if e := report.WriteFileAtomic(ss, func(w io.Writer) error { return i.prof.WriteSpeedscope(w, i.env.AppName()) }); e != nil {
		return out, errors.Join(err, fmt.Errorf("%s: %w", filepath.Base(ss), e))
	}
	return append(out, ss), err
}

// Summary prints nothing: the file is for KCachegrind and callgrind_annotate.
func (i *instance) Summary(io.Writer) error { return nil }

// Section is not used: the plugin has a Render.
func (i *instance) Section() (title, body string, err error) { return "", "", nil }
