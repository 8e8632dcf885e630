package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"emuprof/analyses/causal"
	"emuprof/analyses/paths"
	"emuprof/analyses/trms"
	"emuprof/session"
)

func mergeCommand(stops *session.Stopper) *cobra.Command {
	var out, plan string
	cmd := &cobra.Command{
		Use:   "merge -o OUT REPORT.aprof... | merge --plan PLAN -o OUT SHARD.json... | merge -o DIR CAUSAL-SHARD.json...",
		Short: "Merge aprof reports of several runs (aprof's incremental mode), the shards of P3's copies (emuprof paths --copy), or the shards of causal --exact --shard (into DIR)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{Code: 2, Msg: "merge: -o OUT is required"}
			}
			datas, err := readInputs(args, stops.Interrupt())
			if err != nil {
				return err
			}
			if paths.IsShard(datas[0]) {
				return mergePathShards(out, plan, args, datas)
			}
			if causal.IsShard(datas[0]) {
				files, summary, err := causal.MergeShards(out, args, datas)
				if err != nil {
					return &exitError{Code: 2, Msg: err.Error()}
				}
				fmt.Print(summary)
				for _, f := range files {
					fmt.Fprintf(os.Stderr, "emuprof: wrote %s\n", f)
				}
				return nil
			}
			if err := trms.MergeData(out, args, datas); err != nil {
				return &exitError{Code: 2, Msg: err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "merged report to write")
	cmd.Flags().StringVar(&plan, "plan", "", "paths shards: the plan file the copies ran (--plan-out)")
	return cmd
}

// readInputs reads each input once (a FIFO or `<(cmd)` has no second
// reading). A stop while an input is awaited (a FIFO nobody writes) ends
// the merge there: nothing was written yet.
func readInputs(args []string, stop <-chan struct{}) ([][]byte, error) {
	done := make(chan error, 1)
	datas := make([][]byte, len(args))
	go func() {
		for i, a := range args {
			data, err := os.ReadFile(a)
			if err != nil {
				done <- &exitError{Code: 2, Msg: fmt.Sprintf("merge: %s: %v", a, session.HostErr(err))}
				return
			}
			datas[i] = data
		}
		done <- nil
	}()
	select {
	case err := <-done:
		return datas, err
	case <-stop:
		return nil, &exitError{Code: 2} // main says the stop and exits 128+signal
	}
}

// mergePathShards is `emuprof merge --plan PLAN -o OUT SHARD...` for paths
// shards (--copy i/K runs, perhaps on other machines).
func mergePathShards(out, plan string, files []string, datas [][]byte) error {
	if plan == "" {
		return &exitError{Code: 2, Msg: "merge: paths shards need --plan FILE (the plan the copies ran)"}
	}
	var shards []*paths.Shard
	for i, f := range files {
		sh, err := paths.ParseShard(f, datas[i])
		if err != nil {
			return &exitError{Code: 2, Msg: "merge: " + err.Error()}
		}
		shards = append(shards, sh)
	}
	if len(shards) == 0 {
		return &exitError{Code: 2, Msg: "merge: no shards"}
	}
	pf, digest, err := paths.ReadPlan(plan, shards[0].K)
	if err != nil {
		return &exitError{Code: 2, Msg: "merge: " + err.Error()}
	}
	pr, err := paths.MergeShards(pf, digest, shards)
	if err != nil {
		return &exitError{Code: 2, Msg: err.Error()}
	}
	if err := paths.WriteProfile(out, pr); err != nil {
		return &exitError{Code: 2, Msg: fmt.Sprintf("merge: %v", err)}
	}
	return pr.Summary(session.NewQuietWriter(os.Stdout), 10)
}
