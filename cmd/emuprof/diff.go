package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"emuprof/analyses/diff"
	"emuprof/analyses/report"
	"emuprof/session"
)

// diffVerdict is the JSON file `emuprof diff` writes.
type diffVerdict struct {
	Old        string         `json:"old"`
	New        string         `json:"new"`
	Pass       bool           `json:"pass"`
	Reason     string         `json:"reason,omitempty"` // the first failed condition's
	Conditions []diff.Verdict `json:"conditions"`
	Compared   int            `json:"compared"`
	Metrics    []string       `json:"metrics"`
	Changes    []diff.Change  `json:"changes"`
}

func diffCommand() *cobra.Command {
	var failIf []string
	var jsonPath string
	var top int
	cmd := &cobra.Command{
		Use:   "diff [--fail-if COND]... OLD NEW",
		Short: "Compare two profiles (--out directories or profile files) per program, routine and line; gate CI on the changes",
		Long: `Compares two runs' profiles: two --out directories (every profile in them), their report.html
files, or two profile files (callgrind.out.<pid>, .aprof, <app>_paths.json, <app>_parallel.json).
Prints every value that
changed: instructions of the program, each routine (inclusive) and each line (insns), a routine's
own instructions (self) and calls (calls), from callgrind.out.*; the growth exponent of a
routine's worst-case cost over its input size (exponent, trms); distinct paths and path
executions (paths, pathruns); idleness in ns per routine and line (idleness, parallel). Both runs
are exact, so a
difference is a change of the program or its input, never noise.

--fail-if METRIC[WHAT]OP LIMIT (repeatable) exits with status 1 and one line naming the
condition and the change when the change satisfies it: insns>+1% (the program's instructions
grew by more than 1 %), insns[main]>+2% (routine main, inclusive), insns[*]>+5% (any routine),
insns[wf.c:31]>1000 (a line, absolute), exponent[str_tolower]>+0.2, idleness>+10%. The verdict
(conditions, changes) is written as JSON to --json.`,
		Args: cobra.ArbitraryArgs, // counted in RunE, after the flags' values are checked
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return &exitError{Code: 2, Msg: fmt.Sprintf("diff: want OLD and NEW (two --out directories or two profile files), got %d argument(s)", len(args))}
			}
			var conds []diff.Condition
			for _, s := range failIf {
				c, err := diff.ParseCondition(s)
				if err != nil {
					return &exitError{Code: 2, Msg: "diff: --fail-if " + err.Error()}
				}
				conds = append(conds, c)
			}
			old, err := diff.Load(args[0])
			if err != nil {
				return &exitError{Code: 2, Msg: "diff: " + err.Error()}
			}
			new, err := diff.Load(args[1])
			if err != nil {
				return &exitError{Code: 2, Msg: "diff: " + err.Error()}
			}
			res := diff.Compare(old, new)
			v := diffVerdict{Old: args[0], New: args[1], Pass: true, Compared: res.Compared, Metrics: res.Metrics,
				Changes: res.Changes, Conditions: []diff.Verdict{}}
			if v.Changes == nil {
				v.Changes = []diff.Change{}
			}
			for _, c := range conds {
				cv, err := diff.Check(c, old, new)
				if err != nil {
					return &exitError{Code: 2, Msg: "diff: --fail-if " + err.Error()}
				}
				v.Conditions = append(v.Conditions, cv)
				if cv.Failed && v.Pass {
					v.Pass, v.Reason = false, cv.Condition+": "+cv.Reason
				}
			}
			if err := res.WriteText(session.NewQuietWriter(os.Stdout), top); err != nil {
				return err
			}
			if jsonPath != "" && (len(conds) > 0 || cmd.Flags().Changed("json")) {
				if err := report.WriteFileAtomic(jsonPath, func(w io.Writer) error {
					enc := json.NewEncoder(w)
					enc.SetEscapeHTML(false) // conditions hold > and <
					enc.SetIndent("", " ")
					return enc.Encode(&v)
				}); err != nil {
					return &exitError{Code: 2, Msg: fmt.Sprintf("diff: --json %s: %v", jsonPath, session.HostErr(err))}
				}
			}
			if !v.Pass {
				return &exitError{Code: 1, Msg: "diff: failed " + v.Reason}
			}
			if len(conds) > 0 {
				var names []string
				for _, c := range conds {
					names = append(names, c.Text)
				}
				fmt.Fprintf(os.Stderr, "emuprof: diff: passed %s\n", strings.Join(names, ", "))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&failIf, "fail-if", nil, "exit 1 when a change satisfies METRIC[WHAT]OP LIMIT: insns>+1%, insns[main]>+2%, insns[*]>+5%, exponent[f]>+0.2 (repeatable)")
	fl.StringVar(&jsonPath, "json", "emuprof-diff.json", "write the verdict and the changes here as JSON (with --fail-if, or when given)")
	fl.IntVar(&top, "top", 20, "rows printed per metric and kind (program, routine, line); 0: all")
	return cmd
}
