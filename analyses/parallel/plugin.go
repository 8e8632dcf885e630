package parallel

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
)

// SweepFlag is the name of the flag that asks for a --cpus sweep.
const SweepFlag = "cpus-sweep"

// Plugin registers the analysis with the platform.
var Plugin = platform.Plugin{
	Name:  "parallel",
	Short: "Work, idleness, overhead and lock-wait blame per calling context (HPCToolkit), as pprof",
	Long: `Attributes every virtual nanosecond of a multithreaded run (HPCToolkit, PPoPP'09): work per
calling context; idleness, the share of the --cpus virtual cores left idle while a context
works (n_idle/n_w per unit of work, exact, not sampled); overhead, the work spent in the
parallel runtime (pthreads, libgomp) charged to the context that entered it; spin-waiting;
and lock-wait blame, the time threads spend blocked on a lock charged to the context that
released it. Work + idleness + idleness while no thread works = cores × makespan, exactly.
Prints Table 1's verdict for the program and its hot contexts, and writes
<app>_parallel.pb.gz (pprof, with the objects' mappings: go tool pprof -top
-sample_index=idleness FILE, -list, -disasm), <app>_parallel.speedscope.json (one profile per
metric, for speedscope) and <app>_parallel.json. Contexts are logical: a thread's calls follow the context that created
it, and runtime frames are collapsed into the call that entered the runtime.`,
	Flags:  flags,
	InTime: platform.Always,
	Render: RenderHTML,
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var cfg Config
	fs.StringVar(&cfg.IdleBase, "idle-base", "cores", "parallel: idleness counts idle cores (TM09) or idle threads (HPCToolkit's code): cores|threads")
	fs.StringVar(&cfg.Spin, "spin", "idle", "parallel: spin-waiting in the runtime is idleness or overhead: idle|overhead")
	fs.Float64Var(&cfg.IdleThreshold, "idle-threshold", DefaultIdleThreshold, "parallel: Table 1's high idleness, as a fraction of a context's work + idleness")
	fs.Float64Var(&cfg.OverheadThreshold, "overhead-threshold", DefaultOverheadThreshold, "parallel: Table 1's high overhead, as a fraction of a context's work + idleness")
	fs.IntVar(&cfg.Hot, "hot", DefaultHot, "parallel: contexts classified in the summary (and rows of its tables)")
	// --cpus-sweep is carried out by the command, which runs the guest once
	// per core count (SweepFlag); the analysis of each run ignores it.
	fs.String(SweepFlag, "", "parallel: run once per core count (e.g. 1,2,4,8), each into OUT/cpusN, and compare makespan, speedup and idleness")
	fs.BoolVar(&cfg.SweepAtEnd, "parallel-sweep-at-end", false, "parallel: testing: keep the whole timeline until the end instead of sweeping it as the run goes")
	_ = fs.MarkHidden("parallel-sweep-at-end")
	return func(env *platform.Env) (platform.Instance, error) {
		c := cfg
		switch {
		case c.IdleBase != "cores" && c.IdleBase != "threads":
			return nil, platform.BadFlag("idle-base", c.IdleBase, "want cores or threads")
		case c.Spin != "idle" && c.Spin != "overhead":
			return nil, platform.BadFlag("spin", c.Spin, "want idle or overhead")
		case !(c.IdleThreshold > 0 && c.IdleThreshold <= 1):
			return nil, platform.BadFlag("idle-threshold", c.IdleThreshold, "want a fraction in (0, 1]")
		case !(c.OverheadThreshold > 0 && c.OverheadThreshold <= 1):
			return nil, platform.BadFlag("overhead-threshold", c.OverheadThreshold, "want a fraction in (0, 1]")
		case c.Hot < 1:
			return nil, platform.BadFlag("hot", c.Hot, "want at least 1")
		}
		s := env.Sched.Defaults()
		c.CPUs, c.Quantum, c.NsPerInsn, c.MaxInsnNs = s.CPUs, s.Quantum, s.NsPerInsn, s.MaxInsnNs
		c.App = env.AppName()
		c.Command = strings.Join(env.Args, " ")
		a, err := New(c, env)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}

func (a *Analysis) files() []string {
	return []string{a.cfg.App + "_parallel.pb.gz", a.cfg.App + "_parallel.json", a.cfg.App + "_parallel.speedscope.json"}
}

// CheckOutput checks, before the run, that the files can be created in dir.
func (a *Analysis) CheckOutput(dir string) error {
	for _, f := range a.files() {
		if err := platform.CheckFileName(dir, f); err != nil {
			return err
		}
	}
	return nil
}

// Write writes <app>_parallel.pb.gz, <app>_parallel.speedscope.json and
// <app>_parallel.json into dir
// (created if need be).
func (a *Analysis) Write(dir string) ([]string, error) {
	if a.res == nil {
		return nil, fmt.Errorf("parallel: no results (the run did not finish the stream)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Each file on its own: a full disk may refuse one and take the other.
	var out []string
	pbPath := filepath.Join(dir, a.files()[0])
	pbErr := report.WriteFileAtomic(pbPath, a.res.WritePprof)
	if pbErr == nil {
		out = append(out, pbPath)
	}
	ssPath := filepath.Join(dir, a.files()[2])
	ssErr := report.WriteFileAtomic(ssPath, func(w io.Writer) error { return a.res.WriteSpeedscope(w, a.cfg.App) })
	if ssErr == nil {
		out = append(out, ssPath)
	}
	pbErr = errors.Join(pbErr, ssErr)
	jsPath := filepath.Join(dir, a.files()[1])
	replaced := false
	if err := report.WriteFileAtomic(jsPath, func(w io.Writer) (err error) {
		replaced, err = a.res.writeJSON(w)
		return err
	}); err != nil {
		return out, errors.Join(pbErr, err)
	}
	out = append(out, jsPath)
	// The result reads back from its JSON as it is, unless a string was
	// not UTF-8 (json.Marshal writes \ufffd for each bad byte): then the
	// report reads the file, as `emuprof report` would.
	a.res.jsonFile = ""
	if !replaced {
		a.res.jsonFile = jsPath
	}
	return out, pbErr
}

var _ platform.LiveRenderer = (*Analysis)(nil)

// RenderLive is RenderHTML during the run that wrote files: the section of
// the JSON file Write wrote is drawn from the result in memory rather than
// read back and parsed, the same bytes (TestRenderLiveIsRenderHTML).
func (a *Analysis) RenderLive(files []string) (*report.Section, error) {
	return renderHTML(files, a.res)
}

// Summary prints the text summary.
func (a *Analysis) Summary(w io.Writer) error {
	if a.res == nil {
		return nil
	}
	return a.res.Summary(w, a.cfg.Hot)
}

// Section is the summary, preformatted, for the HTML report.
func (a *Analysis) Section() (title, body string, err error) {
	var b bytes.Buffer
	if err := a.Summary(&b); err != nil {
		return "", "", err
	}
	return "Work, idleness and overhead (HPCToolkit)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}
