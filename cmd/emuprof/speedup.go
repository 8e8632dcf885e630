package main

// Actual speedups (emuprof run --speedup FILE:LINE=PCT) and the runs
// causal --validate makes with them.

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"emuprof/analyses/causal"
	"emuprof/analyses/platform"
	"emuprof/guest"
	"emuprof/loader"
	"emuprof/trace"
)

// speedup parses --speedup: the emulator's per-instruction speedup (nil
// without any) and a function that warns, after the run, about each
// speedup that matched no executed instruction.
func (f *runFlags) speedup(syms trace.Symbols) (func(uint64) int, func(), error) {
	if len(f.speedups) == 0 {
		return nil, func() {}, nil
	}
	var sps []causal.Speedup
	for _, s := range f.speedups {
		sp, err := causal.ParseSpeedup(s)
		if err != nil {
			return nil, nil, &exitError{code: 2, msg: err.Error()}
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

// rerunner is an analysis that runs the program again (causal --validate).
type rerunner interface{ SetRerun(causal.Rerun) }

// setRerun gives every analysis of pipe that asks for it the means to run
// the program again as configured, in a separate whole emulation.
func setRerun(pipe *platform.Pipeline, cfg guest.Config, f *runFlags) {
	for _, inst := range pipe.Instances() {
		if r, ok := inst.(rerunner); ok {
			r.SetRerun(func(speedup string, obs platform.Factory) (int64, error) {
				return rerun(cfg, *f, speedup, obs)
			})
		}
	}
}

// rerun runs the program once, with one actual speedup (none if "") and
// the analysis obs makes (if not nil); the guest's output is discarded.
func rerun(cfg guest.Config, f runFlags, speedup string, obs platform.Factory) (int64, error) {
	f.stats, f.traceDigest, f.strace = false, false, false
	f.rerun = true     // its instructions count on the first run's status line
	if speedup != "" { // on top of the run's own --speedup, if any
		f.speedups = append(slices.Clone(f.speedups), speedup)
	}
	cfg.TraceDigest, cfg.Analyses, cfg.TimeControl = false, nil, nil
	cfg.Follow = nil // the rerun's analysis follows its first process only
	cfg.Stdin, cfg.Stdout, cfg.Stderr = strings.NewReader(""), io.Discard, io.Discard
	cfg.StdinTTY, cfg.StdoutTTY, cfg.StderrTTY = false, false, false
	cfg.HostStd = [3]*os.File{}
	syms := loader.NewSymbolTable()
	cfg.Symbols = syms
	var pipeline func(*trace.BlockTable) *platform.Pipeline
	var needs trace.Needs
	if obs != nil {
		env := platform.NewEnv(syms, cfg.Program, cfg.Args)
		env.Pid = cfg.Pid
		env.Sched = schedConfig(cfg)
		inst, err := obs(env)
		if err != nil {
			return 0, err
		}
		insts := []platform.Instance{inst}
		needs = platform.NeedsOf(insts)
		pipeline = func(blocks *trace.BlockTable) *platform.Pipeline {
			return platform.NewPipeline(env, blocks, insts, false)
		}
	}
	res, err := executeWith(cfg, &f, pipeline, needs)
	switch {
	case res == nil:
		return 0, err
	case res.Partial:
		return 0, fmt.Errorf("the run with --speedup %q did not finish: %s", speedup, res.Reason)
	}
	return res.Makespan, nil
}

// progressFlags are run's --progress points (causal's point syntax).
type progressFlags struct{ progress, latency []string }

func (p *progressFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&p.progress, "progress", nil, "with --speedup: count a progress point, SYMBOL (each call), FILE:LINE (each entry) or 0xADDR (each execution), and report its rate; repeatable")
	cmd.Flags().StringArrayVar(&p.latency, "latency", nil, "with --speedup: count latency progress points BEGIN,END; repeatable")
}

// runObserved is `emuprof run` with --speedup or --progress: it reports
// the virtual duration and the progress points' visits and periods.
func runObserved(cfg guest.Config, f *runFlags, p *progressFlags) error {
	var pipeline func(*trace.BlockTable) *platform.Pipeline
	var needs trace.Needs
	var observed func() []causal.PointObservation
	if len(p.progress)+len(p.latency) > 0 {
		syms := loader.NewSymbolTable()
		cfg.Symbols = syms
		env := platform.NewEnv(syms, cfg.Program, cfg.Args)
		env.Pid = cfg.Pid
		env.Sched = schedConfig(cfg)
		var fac platform.Factory
		fac, observed = causal.Observer(causal.Config{Progress: p.progress, Latency: p.latency})
		inst, err := fac(env)
		if err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
		insts := []platform.Instance{inst}
		needs = platform.NeedsOf(insts)
		pipeline = func(blocks *trace.BlockTable) *platform.Pipeline {
			return platform.NewPipeline(env, blocks, insts, false)
		}
	}
	res, err := executeWith(cfg, f, pipeline, needs)
	if res == nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "emuprof: virtual duration %d ns\n", res.Makespan)
	if observed != nil {
		for _, o := range observed() {
			fmt.Fprintf(os.Stderr, "emuprof: progress point %s: %d visits", o.Name, o.Arrivals)
			if o.Latency {
				fmt.Fprintf(os.Stderr, ", %d departures", o.Departures)
			}
			if per := o.PeriodNs(); !math.IsNaN(per) {
				fmt.Fprintf(os.Stderr, ", one every %.1f ns from the first (%d ns) to the last (%d ns), %.1f per virtual second", per, o.FirstNs, o.LastNs, 1e9/per)
			}
			if lat := o.MeanLatencyNs(); !math.IsNaN(lat) {
				fmt.Fprintf(os.Stderr, ", mean latency %.1f ns", lat)
			}
			fmt.Fprintln(os.Stderr)
		}
	}
	return err
}
