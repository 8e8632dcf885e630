package causal

import (
	"bytes"
	"emuprof/loader"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/calls"
	"emuprof/analyses/platform"
	"emuprof/analyses/report"
)

// Plugin registers causal profiling with the platform.
var Plugin = platform.Plugin{
	Name:  "causal",
	Short: "Causal profile: what speeding up each line would gain (Coz, SOSP'15), exact in virtual time",
	Long: `Runs Coz's performance experiments in one run: each experiment selects a source line
and a virtual speedup (0, 5 ... 100 %); every execution of that line pauses every other
thread by the speedup times its cost, exactly, in virtual time, and the rate of visits to
the progress points (--progress SYMBOL|FILE:LINE|0xADDR, each call, entry or execution;
--latency BEGIN,END for Little's law; Coz's COZ_PROGRESS/COZ_BEGIN/COZ_END macros are
found in the executable) measures the effect. --context splits a line by caller; --exact
runs one whole execution per (line, speedup) pair, --shard I/K a share of them (emuprof merge
joins the shards). Writes profile.coz (Coz's format, for its viewer), <app>_causal.json
(curves per line) and a summary per line.`,
	Flags:  flags,
	InTime: platform.Always,
	Render: RenderHTML,
}

func flags(fs *pflag.FlagSet) platform.Factory {
	var cfg Config
	var legacy bool
	var top int
	fs.StringArrayVar(&cfg.Progress, "progress", nil, "causal: throughput progress point: SYMBOL (each call), FILE:LINE (each entry) or 0xADDR (each execution); repeatable; auto (the default without --latency or Coz macros): a routine the run calls at a regular period, else end to end")
	fs.StringArrayVar(&cfg.Latency, "latency", nil, "causal: latency progress points BEGIN,END (Little's law); repeatable")
	fs.StringVar(&cfg.Scope, "scope", "", "causal: glob of the source files whose lines experiments speed up (default: the main executable's)")
	fs.StringVar(&cfg.FixedLine, "fixed-line", "", "causal: speed up only this FILE:LINE, or a set FILE:LINE+FILE:LINE... sped up together (every execution of any of its lines pauses the other threads)")
	fs.IntVar(&cfg.FixedSpeedup, "fixed-speedup", -1, "causal: use only this speedup, in percent")
	fs.BoolVar(&cfg.EndToEnd, "end-to-end", false, "causal: one experiment over the whole run (needs --fixed-line)")
	fs.IntVar(&cfg.MinVisits, "min-visits", 5, "causal: progress-point visits an experiment needs")
	fs.IntVar(&cfg.Warmup, "warmup", 0, "causal: visits of the first progress point at an experiment's speedup always left unmeasured (before --settle's windows)")
	fs.IntVar(&cfg.Settle, "settle", 1, "causal: measure an experiment once its progress rates over two successive windows of --min-visits visits agree within this percent at --min-visits successive visits (adaptive warm-up; 0: off)")
	fs.Int64Var(&cfg.MinNs, "experiment-ns", 0, "causal: minimal virtual length of an experiment, inserted delays taken out, in ns (while several threads run, at least 10 times twice the quantum)")
	fs.BoolVar(&cfg.NoCallees, "no-callees", false, "causal: charge a line with its own instructions only, not the out-of-scope code it calls")
	fs.Uint64Var(&cfg.Seed, "causal-seed", 1, "causal: seed of the experiment sequence")
	fs.BoolVar(&legacy, "legacy-format", false, "causal: write profile.coz in Coz's tab-separated form")
	fs.IntVar(&top, "causal-top", 20, "causal: lines in the summary")
	ex := registerExact(fs)
	fs.BoolVar(&cfg.Context, "context", false, "causal: attribute a line within its routine's calling context, one \"FILE:LINE <- CALLER\" per caller (Coz issue 78)")
	fs.IntVar(&cfg.Validate, "validate", 0, "causal: check the predictions of the top N lines by actual speedups, one whole run per line and speedup (5/25/50/100 %)")
	return func(env *platform.Env) (platform.Instance, error) {
		if cfg.Validate < 0 {
			return nil, platform.BadFlag("validate", itoa(cfg.Validate), "want a number of lines, 0 or more")
		}
		if cfg.Settle < 0 {
			return nil, platform.BadFlag("settle", itoa(cfg.Settle), "want a percentage, 0 (off) or more")
		}
		auto := len(cfg.Progress) == 1 && cfg.Progress[0] == AutoPoint
		if auto {
			cfg.Progress = nil
		}
		if len(cfg.Progress)+len(cfg.Latency) == 0 && !cfg.EndToEnd && !cfg.Observe {
			if sites, _, _ := cozSites(envObjects(env), env.Program); len(sites) == 0 {
				// No progress point: found in the run (--progress
				// auto, the default), else the whole run is the unit
				// of work, so each (line, speedup) is a whole run
				// (--exact).
				if ex.on && auto {
					return nil, platform.BadFlag("progress", AutoPoint, "not with --exact (give the point, or no --progress for the end-to-end profile)")
				}
				auto = !ex.on
				cfg.RunEnd, ex.on = true, true
			} else {
				auto = false // the program's own COZ_PROGRESS points
			}
		} else {
			auto = false
		}
		if env.App == "" { // the main program (a followed image may not hold the points)
			if err := CheckPoints(cfg, envObjects(env), env.Program); err != nil {
				return nil, err
			}
		}
		if inst, err := ex.instance(cfg, env, legacy, top); inst != nil || err != nil {
			if x, ok := inst.(*exactInstance); ok && auto && err == nil && env.App == "" {
				return &autoInstance{exactInstance: x, find: newFinder(x.Profiler, envOptions(env)), cfg: cfg, env: env,
					legacy: legacy, top: top}, nil
			}
			return inst, err
		}
		p, err := New(cfg, envOptions(env))
		if err != nil {
			return nil, err
		}
		coz := "profile.coz"
		if env.App != "" { // a followed process image: its own name
			coz = env.App + "_profile.coz"
		}
		return &instance{Profiler: p, legacy: legacy, top: top, app: env.AppName(), coz: coz, args: env.Args}, nil
	}
}

func envOptions(env *platform.Env) Options {
	return Options{Block: env.Block, Clock: env.Clock(), NsPerInsn: env.Sched.NsPerInsn, Quantum: env.Sched.Defaults().Quantum, Program: env.Program, Objects: envObjects(env), Timed: env.Sched.Timed,
		RoutineName: func(id uint32) string { return env.Routines().Get(calls.RoutineID(id)).Name }}
}

// envObjects is the run's source of object files: its symbol table when
// that is one (it parses each file once), else nil.
func envObjects(env *platform.Env) loader.Opener {
	op, _ := env.Symbols.(loader.Opener)
	return op
}

type instance struct {
	*Profiler
	legacy bool
	top    int
	app    string   // file name stem (platform.Env.AppName)
	coz    string   // the Coz profile's file name
	args   []string // the program's command line (the exact mode's command)
	prof   *Profile
	rerun  platform.Rerun
	valid  *Validation
	vErr   error
	note   string // --progress auto's evidence, after the run's own note
}

func (i *instance) profile() *Profile {
	if i.prof == nil {
		i.prof = i.Build()
		i.prof.Validation = i.valid
		i.prof.Note = strings.TrimPrefix(i.shortNote()+"\n"+i.note, "\n")
		i.prof.Note = strings.TrimSuffix(i.prof.Note, "\n")
	}
	return i.prof
}

// SetRerun gives the instance the means to run the program again, for
// --validate.
func (i *instance) SetRerun(r platform.Rerun) { i.rerun = r }

// runValidation runs --validate's checks once, for a finished run.
func (i *instance) runValidation() error {
	if i.cfg.Validate <= 0 || i.valid != nil || i.vErr != nil || i.partial != "" {
		return i.vErr
	}
	if i.rerun == nil {
		i.vErr = errf("--validate: this command cannot run the program again")
		return i.vErr
	}
	i.valid, i.vErr = i.validate(i.profile(), i.cfg.Validate, i.rerun)
	i.prof = nil
	return i.vErr
}

func (i *instance) MarkPartial(reason string) {
	i.Profiler.MarkPartial(reason)
	i.prof = nil
}

// FileName is our JSON profile's name for program.
func FileName(program string) string { return filepath.Base(program) + "_causal.json" }

// Write writes the profiles; with --validate it first runs the
// validation runs (they need the finished profile), whose results go into
// our JSON and the summary.
func (i *instance) Write(dir string) ([]string, error) {
	if err := i.runValidation(); err != nil {
		return nil, err
	}
	var coz bytes.Buffer
	if err := CozProfile(&coz, i.Experiments(), i.Runtime(), i.legacy); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(i.profile(), "", " ")
	if err != nil {
		return nil, err
	}
	var out []string
	var errs []error // each file on its own: a full disk may take the next
	for _, f := range []struct {
		name string
		data []byte
	}{{i.coz, coz.Bytes()}, {i.app + "_causal.json", append(data, '\n')}} {
		path := filepath.Join(dir, f.name)
		if err := writeAtomic(path, f.data); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, path)
	}
	return out, errors.Join(errs...)
}

// writeAtomic writes data to path atomically, creating its directory.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return report.WriteBytesAtomic(path, data)
}

func (i *instance) Summary(w io.Writer) error { return i.profile().Summary(w, i.top) }

func (i *instance) Section() (title, body string, err error) {
	var b bytes.Buffer
	if err := i.profile().Summary(&b, i.top); err != nil {
		return "", "", err
	}
	return "Causal profile (Coz)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}

// shortNote says, when the run was too short for in-run experiments to give
// the hottest line a curve (a verdict told from zero needs its 0 % spread
// and a few speedups), so, with the command of the exact mode, whose whole
// runs need no repetition; "" otherwise.
func (i *instance) shortNote() string {
	if i.partial != "" || i.hasFix || i.cfg.EndToEnd {
		return ""
	}
	var hot int32
	for id := int32(1); id < int32(len(i.lines)); id++ {
		if i.lines[id].cost > i.lines[hot].cost || hot == 0 {
			hot = id
		}
	}
	if hot == 0 {
		return ""
	}
	name := i.lineName(hot)
	for _, l := range i.prof.Lines {
		if l.Line == name && l.Noise >= 0 && len(l.Curve) >= 4 {
			return ""
		}
	}
	cmd := []string{"emuprof", "causal", "--exact"}
	for _, pt := range i.cfg.Progress {
		cmd = append(cmd, "--progress", shellQuote(pt))
	}
	for _, pt := range i.cfg.Latency {
		cmd = append(cmd, "--latency", shellQuote(pt))
	}
	cmd = append(cmd, "--", shellQuote(i.opt.Program))
	if len(i.args) > 1 {
		for _, a := range i.args[1:] {
			cmd = append(cmd, shellQuote(a))
		}
	}
	return fmt.Sprintf("the run is too short for in-run experiments to give the hottest line, %s, a curve (%d experiments in all); the exact mode runs the program once per line and speedup: %s",
		name, len(i.done), strings.Join(cmd, " "))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
