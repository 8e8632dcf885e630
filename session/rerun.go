package session

// Actual speedups (--speedup FILE:LINE=PCT) and the rerun service: the
// runs an analysis makes after the first (causal --exact, --validate).

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"emuprof/analyses/causal"
	"emuprof/analyses/platform"
	"emuprof/guest"
	"emuprof/loader"
	"emuprof/trace"
)

// speedup parses Speedups: the emulator's per-instruction speedup (nil
// without any) and a function that warns, after the run, about each
// speedup that matched no executed instruction.
func (f *Options) speedup(syms trace.Symbols) (func(uint64) int, func(), error) {
	if len(f.Speedups) == 0 {
		return nil, func() {}, nil
	}
	var sps []causal.Speedup
	for _, s := range f.Speedups {
		sp, err := causal.ParseSpeedup(s)
		if err != nil {
			return nil, nil, &ExitError{Code: 2, Msg: err.Error()}
		}
		sps = append(sps, sp)
	}
	fn, matched := causal.SpeedupFunc(sps, syms)
	warn := func() {
		for i, m := range matched {
			if !m && sps[i].Pct > 0 {
				fmt.Fprintf(os.Stderr, "emuprof: warning: --speedup %s matched no executed instruction\n", sps[i].Text)
			}
		}
	}
	return fn, warn, nil
}

// setRerun gives every analysis of pipe that asks for it (a
// platform.Rerunner) the means to run the program again as configured, in
// a separate whole emulation.
func setRerun(pipe *platform.Pipeline, cfg guest.Config, f *Options) {
	for _, inst := range pipe.Instances() {
		if r, ok := inst.(platform.Rerunner); ok {
			r.SetRerun(func(speedups []string, obs platform.Factory) (int64, error) {
				return rerun(cfg, *f, speedups, obs)
			})
		}
	}
}

// rerun runs the program once, with the actual speedups (on top of the
// run's own --speedup, if any) and the analysis obs makes (if not nil); the
// guest's output is discarded.
func rerun(cfg guest.Config, f Options, speedups []string, obs platform.Factory) (int64, error) {
	f.Stats, f.Strace = false, false
	f.IsRerun = true // its instructions count on the first run's status line
	if len(speedups) > 0 {
		f.Speedups = append(slices.Clone(f.Speedups), speedups...)
	}
	cfg.TraceDigest, cfg.Analyses, cfg.TimeControl = false, nil, nil
	cfg.Follow = nil // the rerun's analysis follows its first process only
	cfg.Stdin, cfg.Stdout, cfg.Stderr = strings.NewReader(""), io.Discard, io.Discard
	cfg.StdinTTY, cfg.StdoutTTY, cfg.StderrTTY = false, false, false
	cfg.HostStd = [3]*os.File{}
	var pipeline func(*trace.BlockTable) *platform.Pipeline
	var needs trace.Needs
	if obs != nil {
		var err error
		if pipeline, needs, err = Observe(&cfg, obs); err != nil {
			return 0, err
		}
	}
	res, err := Run(cfg, &f, pipeline, needs)
	switch {
	case res == nil:
		return 0, err
	case res.Partial:
		return 0, fmt.Errorf("the run with --speedup %q did not finish: %s", strings.Join(speedups, " --speedup "), res.Reason)
	}
	return res.Makespan, nil
}

// Observe sets cfg up for one analysis, made by fac, on a fresh symbol
// table: the pipeline and needs to give Run.
func Observe(cfg *guest.Config, fac platform.Factory) (func(*trace.BlockTable) *platform.Pipeline, trace.Needs, error) {
	syms := loader.NewSymbolTable()
	cfg.Symbols = syms
	env := platform.NewEnv(syms, cfg.Program, cfg.Args)
	env.Pid = cfg.Pid
	env.Sched = SchedConfig(*cfg)
	inst, err := fac(env)
	if err != nil {
		return nil, trace.Needs{}, err
	}
	insts := []platform.Instance{inst}
	pipeline := func(blocks *trace.BlockTable) *platform.Pipeline {
		return platform.NewPipeline(env, blocks, insts, false)
	}
	return pipeline, platform.NeedsOf(insts), nil
}

// SchedConfig is the CPU model the analyses are told about: the
// scheduler's, and under a --time-model, that Block events' sizes are ns.
func SchedConfig(cfg guest.Config) platform.SchedConfig {
	s := platform.SchedConfig{CPUs: cfg.CPUs, Quantum: cfg.Quantum, NsPerInsn: cfg.NsPerInsn}
	if cfg.TimeModel != nil {
		s.NsPerInsn = 1
		s.Timed = true
		s.MaxInsnNs = cfg.TimeModel.MaxInsnNs()
	}
	return s.Defaults()
}
