package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"emuprof/analyses"
	"emuprof/analyses/trms"
	"emuprof/loader"
)

func trmsCommand() *cobra.Command {
	var f runFlags
	var (
		resolution  int
		cost        string
		cct, single bool
		out         string
		top         int
		counterBits int
	)
	cmd := &cobra.Command{
		Use:   "trms [flags] -- PROGRAM ARGS...",
		Short: "Input-sensitive profile: RMS and TRMS per routine (aprof, aprof-trms)",
		Long: `Runs the program and measures, for every routine activation, its cost and its input size:
the read memory size (RMS, PLDI'12) and the threaded read memory size (TRMS), which also counts
input that other threads and the kernel (read, mmap...) wrote. Writes aprof version-6 reports
(<app>_<thread>_<k>_rms.aprof and _drms.aprof), a JSON profile, and a summary on stdout.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.config(args)
			if err != nil {
				return err
			}
			syms := loader.NewSymbolTable()
			cfg.Symbols = syms
			var mtime int64
			if st, err := os.Stat(cfg.Program); err == nil {
				mtime = st.ModTime().Unix()
			}
			prof, err := trms.New(trms.Config{Resolution: resolution, Cost: cost, CounterBits: counterBits,
				CCT: cct, SingleReport: single, Command: strings.Join(args, " "),
				App: filepath.Base(cfg.Program), ExeMTime: mtime}, syms)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			res, runErr := execute(cfg, []analyses.Analysis{prof}, prof.Needs(), &f)
			if res == nil {
				return runErr // nothing ran: bad input
			}
			if res.Partial {
				prof.MarkPartial(res.Reason)
			}
			paths, err := prof.WriteDir(out)
			if err != nil {
				return fmt.Errorf("writing the profile: %w", err)
			}
			if err := prof.Summary(os.Stdout, top); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "emuprof: wrote %s\n", strings.Join(paths, ", "))
			return runErr
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&resolution, "resolution", 4, "memory resolution k in bytes: 1, 2, 4, 8 or 16")
	fl.StringVar(&cost, "cost", "blocks", "cost metric: blocks (basic blocks) or insns (instructions)")
	fl.BoolVar(&cct, "cct", false, "also collect per-calling-context tuples")
	fl.BoolVar(&single, "single-report", false, "merge all threads into one report per metric")
	fl.StringVar(&out, "out", ".", "directory for the reports")
	fl.IntVar(&top, "top", 15, "routines in the summary")
	fl.IntVar(&counterBits, "counter-bits", 32, "width of the global timestamp counter (testing: small widths force renumbering)")
	_ = fl.MarkHidden("counter-bits")
	return cmd
}

func mergeCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge -o OUT REPORT.aprof...",
		Short: "Merge aprof reports of several runs (aprof's incremental mode)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: 2, msg: "merge: -o OUT is required"}
			}
			if err := trms.MergeFiles(out, args...); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "merged report to write")
	return cmd
}
