package paths

import (
	"bytes"
	"html"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"emuprof/analyses"
	"emuprof/analyses/platform"
)

// Plugin registers path profiling with the platform.
var Plugin = platform.Plugin{
	Name:  "paths",
	Short: "Acyclic path profile: Ball-Larus paths per routine, with their source lines",
	Long: `Counts every acyclic intra-procedural path (Ball-Larus, MICRO'96) of every routine that
executes, in the executable and its libraries. Each routine's CFG is disassembled from its
object file (jump tables included) and completed with the transitions the run takes; the
output says which. Loops end a path at every back edge; calls do not end paths. Writes
<app>_paths.json (per routine: paths with their ids, counts, blocks and source lines) and
prints the hottest paths.`,
	Flags: flags,
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var top int
	fs.IntVar(&top, "paths-top", 10, "paths: hottest paths in the summary")
	return func(env *platform.Env) (platform.Instance, error) {
		p := New(Options{Symbols: env.Symbols, Block: env.Block, Routines: env.Routines})
		return &instance{Profiler: p, program: env.Program, top: top}, nil
	}
}

// instance adapts a Profiler to the platform.
type instance struct {
	*Profiler
	program string
	top     int
	prof    *Profile // computed once the run is over
}

// NewInstance returns a platform instance of p for program.
func NewInstance(p *Profiler, program string, top int) platform.Instance {
	return &instance{Profiler: p, program: program, top: top}
}

func (i *instance) profile() *Profile {
	if i.prof == nil {
		i.prof = i.Profile(i.program)
	}
	return i.prof
}

func (i *instance) MarkPartial(reason string) {
	i.Profiler.MarkPartial(reason)
	i.prof = nil
}

func (i *instance) Needs() analyses.Needs {
	return analyses.Needs{Blocks: true, Calls: true, Threads: true}
}

// FileName is the name of the profile of program.
func FileName(program string) string { return filepath.Base(program) + "_paths.json" }

func (i *instance) Write(dir string) ([]string, error) {
	data, err := i.profile().Marshal()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName(i.program))
	if err := writeFileAtomic(path, data); err != nil {
		return nil, err
	}
	return []string{path}, nil
}

func (i *instance) Summary(w io.Writer) error { return i.profile().Summary(w, i.top) }

func (i *instance) Section() (title, body string, err error) {
	var b bytes.Buffer
	if err := i.profile().Summary(&b, i.top); err != nil {
		return "", "", err
	}
	return "Path profile (Ball-Larus)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}
