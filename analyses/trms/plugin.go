package trms

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
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
	Flags:  flags,
	Render: RenderHTML,
	InTime: costIsTime,
}

// costIsTime: --cost time is a duration.
func costIsTime(fs *pflag.FlagSet) bool {
	f := fs.Lookup("cost")
	return f != nil && f.Value.String() == CostTime
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var cfg Config
	var top int
	var perThread bool
	fs.IntVar(&cfg.Resolution, "resolution", 4, "trms: memory resolution k in bytes: 1, 2, 4, 8 or 16")
	fs.StringVar(&cfg.Cost, "cost", "blocks", "trms: cost metric: blocks (basic blocks), insns (instructions) or time (virtual ns, in the --time-model's time)")
	fs.BoolVar(&cfg.CCT, "cct", false, "trms: also collect per-calling-context tuples")
	fs.BoolVar(&perThread, "per-thread", false, "trms: one pair of .aprof reports per thread (aprof's layout) instead of one per process with every thread merged")
	fs.IntVar(&top, "top", 15, "trms: routines in the summary")
	fs.IntVar(&cfg.CounterBits, "counter-bits", 32, "trms: width of the global timestamp counter (testing: small widths force renumbering)")
	_ = fs.MarkHidden("counter-bits")
	return func(env *platform.Env) (platform.Instance, error) {
		c := cfg
		switch c.Resolution {
		case 1, 2, 4, 8, 16:
		default:
			return nil, platform.BadFlag("resolution", c.Resolution, "want a memory resolution of 1, 2, 4, 8 or 16 bytes")
		}
		if c.Cost != CostBlocks && c.Cost != CostInsns && c.Cost != CostTime {
			return nil, platform.BadFlag("cost", c.Cost, "want %s, %s or %s", CostBlocks, CostInsns, CostTime)
		}
		c.NsPerInsn = env.Sched.NsPerInsn
		if env.Sched.Timed {
			c.BlockInsns = func(id uint32) uint32 {
				if b := env.Block(id); b != nil {
					return b.Insns
				}
				return 0
			}
		}
		if c.CounterBits < 8 || c.CounterBits > 64 {
			return nil, platform.BadFlag("counter-bits", c.CounterBits, "want 8 to 64 bits")
		}
		c.SingleReport, c.Pid = !perThread, env.Pid
		c.Command = strings.Join(env.Args, " ")
		c.App = env.AppName()
		c.Program = env.Program
		if st, err := os.Stat(env.Program); err == nil {
			c.ExeMTime = st.ModTime().Unix()
		}
		p, err := New(c, env.Routines())
		if err != nil {
			return nil, err
		}
		p.TakeCallMarks(env.CCT())
		// Thread ids count up from the pid: allow one more digit.
		maxTid := uint32(min(max(env.Pid, 1000)*10, 4194303))
		return &instance{p, top, maxTid}, nil
	}
}

// instance adapts a Profiler to the platform's Reporter.
type instance struct {
	*Profiler
	top    int
	maxTid uint32 // the largest thread id CheckOutput plans for
}

func (i *instance) Write(dir string) ([]string, error) { return i.WriteDir(dir) }

// CheckOutput checks, before the run, that the longest names WriteDir may
// use can be created in dir (a program name of 240 bytes cannot), for
// thread ids up to ten times the pid.
func (i *instance) CheckOutput(dir string) error {
	longest := &Report{Threads: []uint32{i.maxTid}, Resolution: i.cfg.Resolution, Input: InputDRMS}
	for _, name := range []string{i.ReportFileName(longest), i.fileBase() + "_trms.json"} {
		if err := platform.CheckFileName(dir, name); err != nil {
			if errors.Is(err, platform.ErrNameTooLong) {
				return fmt.Errorf("trms: report name %w (the program's name is too long: profile it through a shorter link)", err)
			}
			return fmt.Errorf("trms: %w", err)
		}
	}
	return nil
}

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
