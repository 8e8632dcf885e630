package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"emuprof/analyses/report"
	"emuprof/session"
)

// version is emuprof's version, as the report shows it.
const version = "0.1.0-dev"

// Version is version with the commit it was built from, when the build
// recorded one.
func Version() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}

// reportCommand is `emuprof report DIR`: report.html again, from the files
// in DIR (written by profile, by a single analysis, or by merge).
func reportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Write DIR/report.html from the profiles in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			entries, err := os.ReadDir(dir)
			if err != nil {
				return &exitError{Code: 2, Msg: "report: " + dir + ": " + session.HostErr(err).Error()}
			}
			var files []string
			for _, e := range entries {
				if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
					files = append(files, filepath.Join(dir, e.Name()))
				}
			}
			page := session.BuildPage(registry, files, nil, nil)
			if len(page.Sections) == 0 {
				return &exitError{Code: 2, Msg: "report: no profiles in " + dir}
			}
			path := filepath.Join(dir, session.ReportFileName)
			if err := report.WriteFileAtomic(path, func(w io.Writer) error {
				_, err := page.WriteTo(w)
				return err
			}); err != nil {
				return err
			}
			for _, n := range page.Notes {
				if strings.HasPrefix(n, "No ") && strings.Contains(n, " section: ") { // the missing sections
					fmt.Fprintln(os.Stderr, "emuprof: warning: report: "+n)
				}
			}
			fmt.Fprintf(os.Stderr, "emuprof: wrote %s\n", path)
			return nil
		},
	}
}
