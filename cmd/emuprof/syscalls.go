package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"emuprof/syscalls"
)

func syscallsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "syscalls",
		Short: "List the Linux system calls emuprof emulates and how fully",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "nr\tname\tsupport\tnote")
			for _, e := range syscalls.Table() {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", e.Nr, e.Name, e.Support, e.Note)
			}
			return tw.Flush()
		},
	}
}
