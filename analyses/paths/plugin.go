package paths

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
	"emuprof/trace"
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
	Flags:    flags,
	Render:   RenderHTML,
	MultiRun: copiesMode,
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var top int
	var p3 P3Config
	fs.IntVar(&top, "paths-top", 10, "paths: hottest paths in the summary")
	fs.IntVar(&p3.K, "p3", 0, "paths: P3 over K copies: plan the partition, measure each copy, merge (0: Ball-Larus only)")
	fs.BoolVar(&p3.PBL, "pbl", false, "paths: with --p3, plan PBL (whole procedures per copy) instead of P3")
	fs.StringVar(&p3.PlanOut, "plan-out", "", "paths: with --p3 K, also write P3's plan for K copies to this file (input of --copy and --copies)")
	var cost, callers string
	fs.StringVar(&cost, "p3-cost", "profile", "paths: P3's task cost: profile (probe executions on the planning run's paths) or static (probes, as the paper)")
	fs.StringVar(&callers, "p3-callers", "one", "paths: P3 partitions procedures with at most one caller (one, as the paper) or any")
	var copySpec, planPath string
	fs.StringVar(&copySpec, "copy", "", "paths: run copy I of K (I/K, 0-based) of the plan given by --plan, as its own emulation, and write its shard <app>_paths.copyIofK.json (join shards with emuprof merge)")
	fs.StringVar(&planPath, "plan", "", "paths: the plan file (--plan-out) for --copy or --copies")
	fs.IntVar(&p3.Copies, CopiesFlag, 0, "paths: run P3's K copies as K concurrent emulations (child emuprof processes, each --copy i/K) and merge their shards; plans first with a planning run unless --plan is given")
	return func(env *platform.Env) (platform.Instance, error) {
		if env.App != "" && (copySpec != "" || p3.PlanOut != "") {
			// A process the program started (a followed image): P3's plan
			// and its copies cover the first process, whose routines the
			// plan holds; a child is profiled with Ball-Larus alone, the
			// same in the planning run and every copy. Its own plan or
			// shard would overwrite the first process's (same file) and
			// a copy would check the child's CFGs against the plan of
			// another process (fork guests refused with "CFG differs").
			p := New(Options{Symbols: env.Symbols, Block: env.Block, Routines: env.Routines, CCT: env.CCT, LastSP: env.Tracker().LastSP})
			return &instance{Profiler: p, program: env.Program, app: env.AppName(), top: top}, nil
		}
		if copySpec != "" {
			i, k, err := ParseCopy(copySpec)
			if err != nil {
				return nil, platform.BadFlag("copy", copySpec, "%v", err)
			}
			if planPath == "" {
				return nil, platform.BadFlag("copy", copySpec, "needs --plan FILE (written by --p3 K --plan-out FILE)")
			}
			if p3.K != 0 {
				return nil, platform.BadFlag("p3", p3.K, "not with --copy (the plan says how many copies)")
			}
			pf, digest, err := ReadPlan(planPath, k)
			if err != nil {
				return nil, platform.BadFlag("plan", planPath, "%v", err)
			}
			cr, err := NewCopyRun(i, pf, digest)
			if err != nil {
				return nil, platform.BadFlag("copy", copySpec, "%v", err)
			}
			p := New(Options{Symbols: env.Symbols, Block: env.Block, SPFrames: true})
			p.Copy = cr
			return &instance{Profiler: p, program: env.Program, app: env.AppName(), top: top}, nil
		}
		switch cost {
		case "static", "profile":
			p3.Profile = cost == "profile"
		default:
			return nil, platform.BadFlag("p3-cost", cost, "want static or profile")
		}
		switch callers {
		case "one", "any":
			p3.AnyCallers = callers == "any"
		default:
			return nil, platform.BadFlag("p3-callers", callers, "want one or any")
		}
		if p3.PlanOut != "" && p3.K == 0 {
			return nil, platform.BadFlag("plan-out", p3.PlanOut, "needs --p3 K")
		}
		if p3.K < 0 || p3.K > 64 {
			return nil, platform.BadFlag("p3", p3.K, "want 1 to 64 copies")
		}
		if p3.PBL && p3.K == 0 {
			return nil, platform.BadFlag("pbl", true, "needs --p3 K")
		}
		p := New(Options{Symbols: env.Symbols, Block: env.Block, Routines: env.Routines, CCT: env.CCT, LastSP: env.Tracker().LastSP})
		p.P3 = p3
		return &instance{Profiler: p, program: env.Program, app: env.AppName(), top: top}, nil
	}
}

// instance adapts a Profiler to the platform.
type instance struct {
	*Profiler
	program string
	app     string // file name stem (platform.Env.AppName)
	top     int
	prof    *Profile // computed once the run is over
}

// NewInstance returns a platform instance of p for program.
func NewInstance(p *Profiler, program string, top int) platform.Instance {
	return &instance{Profiler: p, program: program, app: filepath.Base(program), top: top}
}

func (i *instance) profile() (*Profile, error) {
	if i.prof == nil {
		pr, err := i.Profile(i.program)
		if err != nil {
			return nil, err
		}
		i.prof = pr
	}
	return i.prof, nil
}

func (i *instance) MarkPartial(reason string) {
	i.Profiler.MarkPartial(reason)
	i.prof = nil
}

func (i *instance) Needs() trace.Needs {
	if cr := i.Copy; cr != nil {
		return trace.Needs{
			Wants:    trace.Wants{Blocks: true, Threads: true, Syscalls: true},
			Encoding: trace.Encoding{BlockFilter: cr.Wants},
		}
	}
	return trace.Needs{Wants: trace.Wants{Blocks: true, Calls: true, Threads: true}, Encoding: trace.Encoding{CallMarks: i.CallMarks()}}
}

// CopiesFlag is the flag that runs P3's copies as separate emulations
// (handled by the command, which starts them).
const CopiesFlag = "copies"

// ParseCopy parses "I/K" (0 <= I < K <= 64).
func ParseCopy(s string) (i, k int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			k, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || k < 1 || k > 64 || i < 0 || i >= k {
		return 0, 0, fmt.Errorf("want I/K with 0 <= I < K <= 64")
	}
	return i, k, nil
}

// FileName is the name of the profile of program.
func FileName(program string) string { return filepath.Base(program) + "_paths.json" }

func (i *instance) Write(dir string) ([]string, error) {
	if i.Copy != nil {
		sh, err := i.shard(i.program)
		if err != nil {
			return nil, err
		}
		data, err := json.MarshalIndent(sh, "", " ")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, ShardName(i.program, i.Copy.I, i.Copy.File.K))
		if err := report.WriteBytesAtomic(path, append(data, '\n')); err != nil {
			return nil, err // not in the files written
		}
		return []string{path}, nil
	}
	pr, err := i.profile()
	if err != nil {
		return nil, err
	}
	data, err := pr.Marshal()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, i.app+"_paths.json")
	if err := report.WriteBytesAtomic(path, data); err != nil {
		return nil, err
	}
	return []string{path}, nil
}

func (i *instance) Summary(w io.Writer) error {
	if i.Copy != nil {
		// A copy's stdout is the guest's alone: the copies' outputs are
		// compared (--copies), and the merge prints the summary.
		return nil
	}
	pr, err := i.profile()
	if err != nil {
		return err
	}
	return pr.Summary(w, i.top)
}

func (i *instance) Section() (title, body string, err error) {
	if i.Copy != nil {
		return "Path profile (P3 copy)", "<p>One copy of a P3 plan: its shard is merged by emuprof merge.</p>", nil
	}
	var b bytes.Buffer
	pr, err := i.profile()
	if err != nil {
		return "", "", err
	}
	if err := pr.Summary(&b, i.top); err != nil {
		return "", "", err
	}
	return "Path profile (Ball-Larus)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}

// CheckOutput implements platform.OutputChecker: the profile's name must
// fit the file system.
func (i *instance) CheckOutput(dir string) error {
	if i.Copy != nil {
		return platform.CheckFileName(dir, ShardName(i.program, i.Copy.I, i.Copy.File.K))
	}
	return platform.CheckFileName(dir, FileName(i.program))
}
