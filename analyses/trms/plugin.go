package trms

import (
	"bytes"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
)

// Plugin registers input-sensitive profiling with the platform.
var Plugin = platform.Plugin{
	Name:  "trms",
	Short: "Input-sensitive profile: RMS and TRMS per routine (aprof, aprof-trms)",
	Long: `Measures, for every routine activation, its cost and its input size: the read memory
size (RMS, PLDI'12) and the threaded read memory size (TRMS), which also counts input that
other threads and the kernel (read, mmap...) wrote. Writes aprof version-6 reports
(<app>_<thread>_<k>_rms.aprof and _drms.aprof), a JSON profile, and a summary on stdout.`,
	Flags: flags,
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var cfg Config
	var top int
	fs.IntVar(&cfg.Resolution, "resolution", 4, "trms: memory resolution k in bytes: 1, 2, 4, 8 or 16")
	fs.StringVar(&cfg.Cost, "cost", "blocks", "trms: cost metric: blocks (basic blocks) or insns (instructions)")
	fs.BoolVar(&cfg.CCT, "cct", false, "trms: also collect per-calling-context tuples")
	fs.BoolVar(&cfg.SingleReport, "single-report", false, "trms: merge all threads into one report per metric")
	fs.IntVar(&top, "top", 15, "trms: routines in the summary")
	fs.IntVar(&cfg.CounterBits, "counter-bits", 32, "trms: width of the global timestamp counter (testing: small widths force renumbering)")
	_ = fs.MarkHidden("counter-bits")
	return func(env *platform.Env) (platform.Instance, error) {
		c := cfg
		c.Command = strings.Join(env.Args, " ")
		c.App = filepath.Base(env.Program)
		if st, err := os.Stat(env.Program); err == nil {
			c.ExeMTime = st.ModTime().Unix()
		}
		p, err := New(c, env.Routines())
		if err != nil {
			return nil, err
		}
		return &instance{p, top}, nil
	}
}

// instance adapts a Profiler to the platform's Reporter.
type instance struct {
	*Profiler
	top int
}

func (i *instance) Write(dir string) ([]string, error) { return i.WriteDir(dir) }

func (i *instance) Summary(w io.Writer) error { return i.Profiler.Summary(w, i.top) }

// Section is the summary table, preformatted, until the report renders
// plots (issue 14).
func (i *instance) Section() (title, body string, err error) {
	var b bytes.Buffer
	if err := i.Profiler.Summary(&b, i.top); err != nil {
		return "", "", err
	}
	return "Input-sensitive profile (RMS, TRMS)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}
