package main

import (
	"github.com/spf13/cobra"

	"emuprof/analyses/trms"
)

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
