package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/defaults"
	"emuprof/loader"
	"emuprof/session"
	"emuprof/trace"
)

// profileFlags are the flags of every profiling command: the run flags,
// the output directory, and each registered analysis's own flags.
type profileFlags struct {
	run  runFlags
	out  string
	list string
	sync bool
	// analysisThread: on 2-CPU machines the engine and the analyses slow
	// each other down more than they overlap (docs/PERFORMANCE.md), so
	// auto keeps them on one thread there.
	analysisThread string
	follow         string // --follow: children or none
	listFiles      bool   // --list-files: name every file written, not only their count
	callgrind      bool   // --callgrind: run the callgrind analysis too (callgrind.go)
	factories      map[string]platform.Factory
	pluginFlags    map[string]*pflag.FlagSet // each analysis's own flags
	fs             *pflag.FlagSet            // the command's flags, for the run record (report.go)
}

func (f *profileFlags) register(cmd *cobra.Command, plugins []platform.Plugin, withList bool) {
	cmd.Flags().SetInterspersed(false)
	f.run.register(cmd)
	fl := cmd.Flags()
	f.fs = fl
	fl.StringVar(&f.out, "out", defaults.Out, "directory for the profiles")
	fl.StringVar(&f.analysisThread, "analysis-thread", defaults.AnalysisThread, "run the analyses on a thread of their own: on, off, or auto (on with 4 or more host CPUs); output is the same either way")
	fl.StringVar(&f.follow, "follow", defaults.Follow, "profile the processes the program starts, each image on its own (<program>_<pid>_... files, written when it exits or execs): children, or none (the first process only)")
	fl.BoolVar(&f.listFiles, "list-files", false, "name every file written (default: how many, and where)")
	fl.BoolVar(&f.sync, "sync-analyses", false, "benchmarking only: same as --analysis-thread off")
	_ = fl.MarkHidden("sync-analyses")
	if withList {
		fl.StringVar(&f.list, "analyses", "", "comma-separated analyses to run in one emulation: "+pluginNames()+" (default: "+defaultNote()+")")
	}
	f.factories = map[string]platform.Factory{}
	f.pluginFlags = map[string]*pflag.FlagSet{}
	for _, p := range plugins {
		fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
		f.factories[p.Name] = p.Flags(fs)
		f.pluginFlags[p.Name] = fs
		fl.AddFlagSet(fs)
	}
	f.registerCallgrind(plugins)
	cmd.SetUsageFunc(f.usage)
}

// usage lists the command's flags by kind: the analyses' own first, then
// the profiling flags, then the flags of every run.
func (f *profileFlags) usage(cmd *cobra.Command) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Usage:\n  %s\n", cmd.UseLine())
	own := map[string]bool{}
	for _, p := range registry {
		fs, ok := f.pluginFlags[p.Name]
		if !ok || !fs.HasFlags() {
			continue
		}
		fs.VisitAll(func(fl *pflag.Flag) { own[fl.Name] = true })
		fmt.Fprintf(w, "\n%s flags:\n%s", p.Name, fs.FlagUsages())
	}
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var runFlags runFlags
	runFlags.registerInto(run)
	general := pflag.NewFlagSet("profile", pflag.ContinueOnError)
	runs := pflag.NewFlagSet("runs", pflag.ContinueOnError)
	cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		switch {
		case own[fl.Name]:
		case run.Lookup(fl.Name) != nil:
			runs.AddFlag(fl)
		default:
			general.AddFlag(fl)
		}
	})
	fmt.Fprintf(w, "\nProfile flags:\n%s", general.FlagUsages())
	fmt.Fprintf(w, "\nRun flags (as emuprof run):\n%s", runs.FlagUsages())
	return nil
}

func pluginNames() string {
	var names []string
	for _, p := range registry {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// defaultNote describes the default list of --analyses.
func defaultNote() string {
	var all, opt []string
	for _, p := range registry {
		if flags, ok := optIn[p.Name]; ok {
			opt = append(opt, p.Name+" when --"+strings.Join(flags, " or --")+" is given")
		} else {
			all = append(all, p.Name)
		}
	}
	return strings.Join(append(all, opt...), ", ")
}

// defaults is the list `emuprof profile` runs without --analyses: every
// analysis, less those of optIn whose flags were not given.
func (f *profileFlags) defaults() string {
	var names []string
	for _, p := range registry {
		need, ok := optIn[p.Name]
		given := !ok
		for _, n := range need {
			if fl := f.fs.Lookup(n); fl != nil && fl.Changed {
				given = true
			}
		}
		if given {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ",")
}

// selected returns the analyses named in a comma-separated list, in
// registry order, each once.
func (f *profileFlags) selected(list string) ([]platform.Plugin, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if _, ok := f.factories[n]; !ok {
			return nil, &exitError{Code: 2, Msg: fmt.Sprintf("unknown analysis %q (known: %s)", n, pluginNames())}
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, &exitError{Code: 2, Msg: "no analysis given (--analyses " + pluginNames() + ")"}
	}
	var out []platform.Plugin
	for _, p := range registry {
		if want[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}

// profile runs the guest once under the analyses named in list, then
// writes every analysis's outputs (atomically, marked partial when the run
// did not finish) and prints their summaries.
func (f *profileFlags) profile(list string, args []string) error {
	list = f.withCallgrind(list)
	plugins, err := f.selected(list)
	if err != nil {
		return err
	}
	if err := f.unusedFlags(plugins); err != nil {
		return err
	}
	if sweep, err := f.cpusSweep(list, args); sweep {
		return err
	}
	if mr, name, mode, err := multiRun(plugins, f.fs, list); mr != nil || err != nil {
		if err != nil {
			return err
		}
		return session.RunMany(f.fs, &f.run.Options, name, mode, f.out, mr, args)
	}
	var async bool
	switch f.analysisThread {
	case "on":
		async = true
	case "off":
	case "auto":
		async = runtime.NumCPU() >= defaults.AsyncHostCPUs
	default:
		return &exitError{Code: 2, Msg: fmt.Sprintf("--analysis-thread must be on, off or auto, not %q", f.analysisThread)}
	}
	if f.sync {
		async = false
	}
	f.run.AsyncAnalyses = async
	following, err := followFlag(f.follow)
	if err != nil {
		return err
	}
	for _, p := range plugins {
		if p.InTime != nil && p.InTime(f.pluginFlags[p.Name]) {
			f.run.inTime = true
		}
	}
	cfg, err := f.run.config(args)
	if err != nil {
		return err
	}
	defer f.run.finishFS()
	syms := loader.NewSymbolTable()
	cfg.Symbols = syms
	env := platform.NewEnv(syms, cfg.Program, args)
	env.Pid = cfg.Pid
	env.Sched = session.SchedConfig(cfg)
	var insts []platform.Instance
	for _, p := range plugins {
		inst, err := f.factories[p.Name](env)
		if err != nil {
			return factoryError(p.Name, err)
		}
		insts = append(insts, inst)
	}
	if err := checkOutput(f.out, insts); err != nil {
		return err
	}
	var fw *session.Follower
	if following {
		fw = session.NewFollower(plugins, f.factories, f.out, &f.run.Options, async, env.Sched)
		cfg.Follow = fw
	}
	res, runErr := session.Run(cfg, &f.run.Options, func(blocks *trace.BlockTable) *platform.Pipeline {
		return platform.NewPipeline(env, blocks, insts, async)
	}, platform.NeedsOf(insts))
	if res == nil {
		return runErr // nothing ran: bad input
	}
	// The status line again while the analyses write (causal --exact and
	// --validate run the program again there), until the messages.
	f.run.Status.SetPhase("writing the profiles")
	f.run.Status.Start()
	defer f.run.Status.Stop()
	// checkOutput found out creatable; every analysis writes into it.
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %v", f.out, session.HostErr(err))
	}
	outs := session.WriteProfiles(f.out, plugins, insts, fw, res)
	ps, err := session.WriteReport(f.out, session.RunInfo{Version: Version(), Flags: f.fs, CPUs: f.run.cpus, Args: args, TimeModel: f.run.modelName()},
		plugins, insts, outs.Paths, res)
	outs.Paths = append(outs.Paths, ps...)
	if err != nil {
		outs.Fail("HTML report", err)
	}
	paths, failures := outs.Paths, outs.Failures
	f.run.Status.Stop()
	for _, msg := range failures {
		fmt.Fprintln(os.Stderr, "emuprof: "+msg)
	}
	if fw != nil {
		fw.PrintProcesses(os.Stderr)
	}
	// The summaries are emuprof's text, so they go to stderr: stdout is
	// the guest's alone (`emuprof trms -- xz -c f > f.xz`).
	summary := session.NewQuietWriter(os.Stderr) // `2>&1 | head`: the files are written, the rest is not wanted
	for _, inst := range insts {
		if err := inst.Summary(summary); err != nil {
			return err
		}
	}
	wroteFiles(paths, f.out, f.listFiles)
	if len(failures) > 0 && runErr == nil {
		// The program's own status stays visible: exit 2 says only
		// that outputs are missing.
		return &exitError{Code: 2, Msg: fmt.Sprintf("%d output(s) not written (the program exited with status %d)", len(failures), res.ExitStatus)}
	}
	return runErr
}

// unusedFlags refuses a flag of an analysis that does not run: it would
// change nothing.
func (f *profileFlags) unusedFlags(run []platform.Plugin) error {
	runs := map[string]bool{}
	for _, p := range run {
		runs[p.Name] = true
	}
	for _, p := range registry {
		fs, ok := f.pluginFlags[p.Name]
		if !ok || runs[p.Name] {
			continue
		}
		var given string
		fs.VisitAll(func(fl *pflag.Flag) {
			if g := f.fs.Lookup(fl.Name); given == "" && g != nil && g.Changed {
				given = fl.Name
			}
		})
		if given != "" {
			return &exitError{Code: 2, Msg: fmt.Sprintf("--%s is a flag of the %s analysis, which does not run here (--analyses ...,%s)", given, p.Name, p.Name)}
		}
	}
	return nil
}

// wroteFiles says, in one line, how many files were written into dir,
// and with list names each on a line of its own: a run of 2,000 threads
// or processes must not print a line of 150 KB.
func wroteFiles(paths []string, dir string, list bool) {
	switch {
	case len(paths) == 0:
	case list:
		fmt.Fprintf(os.Stderr, "emuprof: wrote %s:\n", session.Plural(int64(len(paths)), "file"))
		for _, p := range paths {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
		}
	default:
		page := "" // the file to open is named
		for _, p := range paths {
			if filepath.Base(p) == "report.html" {
				page = ", the page " + p
			}
		}
		fmt.Fprintf(os.Stderr, "emuprof: wrote %s to %s%s (--list-files names them)\n", session.Plural(int64(len(paths)), "file"), dir, page)
	}
}

// factoryError is the one line of an analysis that refused its flags.
func factoryError(name string, err error) error {
	var fe *platform.FlagError
	msg := err.Error()
	if !errors.As(err, &fe) && !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg
	}
	return &exitError{Code: 2, Msg: msg}
}

// checkOutput says, before the guest starts, whether the profiles can be
// written into out: out must be a directory or not exist yet (WriteDir
// creates it), the directory that holds the files (or its nearest existing
// ancestor) must take new files, and every analysis that can check its
// own file names (platform.OutputChecker) must accept them.
func checkOutput(out string, insts []platform.Instance) error {
	bad := func(format string, args ...any) error {
		return &exitError{Code: 2, Msg: "--out " + out + ": " + fmt.Sprintf(format, args...)}
	}
	dir := out
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				if dir == out {
					return bad("not a directory")
				}
				return bad("%s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return bad("%v", session.HostErr(err))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return bad("%v", session.HostErr(err))
		}
		dir = parent
	}
	probe, err := os.CreateTemp(dir, ".emuprof-probe-*")
	if err != nil {
		return bad("cannot create files in %s: %v", dir, session.HostErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	for _, inst := range insts {
		if c, ok := inst.(platform.OutputChecker); ok {
			if err := c.CheckOutput(dir); err != nil {
				return bad("%v", err)
			}
		}
	}
	return nil
}

func profileCommand(stops *session.Stopper) *cobra.Command {
	f := profileFlags{run: runFlags{Options: session.Options{Stops: stops}}}
	cmd := &cobra.Command{
		Use:   "profile [--analyses LIST] [flags] -- PROGRAM ARGS...",
		Short: "Run several analyses in one emulation (default: " + defaultNote() + ")",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list := f.list
			if !cmd.Flags().Changed("analyses") {
				list = f.defaults()
			}
			return f.profile(list, args)
		},
	}
	f.register(cmd, registry, true)
	return cmd
}

// aliasCommand is `emuprof NAME`: profile --analyses NAME.
func aliasCommand(p platform.Plugin, stops *session.Stopper) *cobra.Command {
	f := profileFlags{run: runFlags{Options: session.Options{Stops: stops}}}
	cmd := &cobra.Command{
		Use:   p.Name + " [flags] -- PROGRAM ARGS...",
		Short: p.Short,
		Long:  p.Long,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.profile(p.Name, args)
		},
	}
	f.register(cmd, []platform.Plugin{p}, false)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return foreignFlag(p.Name, err) })
	return cmd
}

// foreignFlag names the analysis an unknown flag of `emuprof NAME` belongs
// to (`emuprof trms --p3 4`): NAME does not take the other analyses' flags.
func foreignFlag(name string, err error) error {
	flag, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	for _, p := range registry {
		fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
		p.Flags(fs)
		if p.Name != name && fs.Lookup(flag) != nil {
			return &exitError{Code: 2, Msg: fmt.Sprintf("--%s is a flag of the %s analysis, not of %s (emuprof profile --analyses %s,%s)", flag, p.Name, name, name, p.Name)}
		}
	}
	return err
}

// followFlag checks --follow.
func followFlag(v string) (bool, error) {
	switch v {
	case "children":
		return true, nil
	case "none":
		return false, nil
	}
	return false, &exitError{Code: 2, Msg: fmt.Sprintf("--follow must be children or none, not %q", v)}
}

// multiRun returns the multi-run mode the flags ask of one of plugins
// (paths --copies), with the analysis's name and the mode's flag.
func multiRun(plugins []platform.Plugin, fs *pflag.FlagSet, list string) (platform.MultiRun, string, string, error) {
	for _, p := range plugins {
		if p.MultiRun == nil {
			continue
		}
		mr, err := p.MultiRun.Parse(fs, list == p.Name)
		if mr != nil || err != nil {
			return mr, p.Name, p.MultiRun.Flag, err
		}
	}
	return nil, "", "", nil
}
