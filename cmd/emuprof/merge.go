package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"emuprof/analyses/causal"
	"emuprof/analyses/paths"
	"emuprof/analyses/trms"
)

func mergeCommand() *cobra.Command {
	var out, plan string
	cmd := &cobra.Command{
		Use:   "merge -o OUT REPORT.aprof... | merge --plan PLAN -o OUT SHARD.json... | merge -o DIR CAUSAL-SHARD.json...",
		Short: "Merge aprof reports of several runs (aprof's incremental mode), the shards of P3's copies (emuprof paths --copy), or the shards of causal --exact --shard (into DIR)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: 2, msg: "merge: -o OUT is required"}
			}
			// Each input is read once: a FIFO or `<(cmd)` has no second reading.
			datas := make([][]byte, len(args))
			for i, a := range args {
				data, err := os.ReadFile(a)
				if err != nil {
					return &exitError{code: 2, msg: fmt.Sprintf("merge: %s: %v", a, hostErr(err))}
				}
				datas[i] = data
			}
			if paths.IsShard(datas[0]) {
				return mergePathShards(out, plan, args, datas)
			}
			if causal.IsShard(datas[0]) {
				files, summary, err := causal.MergeShards(out, args, datas)
				if err != nil {
					return &exitError{code: 2, msg: err.Error()}
				}
				fmt.Print(summary)
				for _, f := range files {
					fmt.Fprintf(os.Stderr, "emuprof: wrote %s\n", f)
				}
				return nil
			}
			if err := trms.MergeData(out, args, datas); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "merged report to write")
	cmd.Flags().StringVar(&plan, "plan", "", "paths shards: the plan file the copies ran (--plan-out)")
	return cmd
}
