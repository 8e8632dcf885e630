package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Issue 31.7: every numeric flag of every command refuses what it cannot
// mean (a negative count, NaN, an infinity), in one line naming the flag,
// exit status 2, before the guest starts; a flag where a value should be
// (`--out --`) too. The table is every numeric flag of the command tree.
func TestEveryNumericFlagValidated(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	out := filepath.Join(work, "out")
	type tc struct{ cmd, flag, value string }
	var cases []tc
	for _, c := range rootCommand(nil).Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			var values []string
			switch f.Value.Type() {
			case "int", "int64":
				values = []string{fmt.Sprint(negativeOK[f.Name] - 1)}
			case "uint", "uint64":
				values = []string{"-1"}
			case "float64":
				values = []string{"NaN", "-1", "+Inf"}
			case "string", "stringArray":
				values = []string{"--"}
			}
			for _, v := range values {
				cases = append(cases, tc{c.Name(), f.Name, v})
			}
		})
	}
	if len(cases) < 50 {
		t.Fatalf("only %d cases: the table lost the command tree", len(cases))
	}
	for _, tc := range cases {
		args := []string{tc.cmd, "--" + tc.flag, tc.value}
		if tc.cmd != "run" && tc.cmd != "merge" && tc.cmd != "report" && tc.cmd != "syscalls" && tc.cmd != "diff" && tc.flag != "out" {
			args = append(args, "--out", out)
		}
		args = append(args, "--", hello)
		what := strings.Join(args[:3], " ")
		r := run(t, nil, work, emuprofBin, args...)
		noGoTrace(t, what, r.stderr)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.HasPrefix(r.stderr, "emuprof: ") || !strings.Contains(r.stderr, "--"+tc.flag) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming --%s", what, r.code, r.stdout, r.stderr, tc.flag)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("profiles written although a flag was bad: %d files", len(ents))
	}
}

// Issue 25.8: `emuprof NAME` takes NAME's flags and the run's, not the
// other analyses' (`trms --p3 4` changed nothing): each is refused in one
// line naming the analysis it belongs to, and so is `profile --analyses A`
// given a flag of an analysis it does not run. NAME's --help lists NAME's
// flags first, no other analysis's; `emuprof --version` says the version.
func TestAnalysisFlagsBelongToTheirCommand(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	own := map[string][]string{}
	for _, p := range registry {
		fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
		p.Flags(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				own[p.Name] = append(own[p.Name], f.Name)
			}
		})
	}
	for _, p := range registry {
		help := run(t, nil, work, emuprofBin, p.Name, "--help")
		first := strings.Index(help.stdout, " flags:\n")
		if len(own[p.Name]) == 0 { // callgrind has none: the profile flags come first
			first = strings.Index(help.stdout, "\nProfile flags:\n")
		} else if first >= 0 && !strings.HasSuffix(help.stdout[:first], "\n"+p.Name) {
			first = -1
		}
		if help.code != 0 || first < 0 {
			t.Errorf("%s --help: exit %d, the first flags are not %s's:\n%s", p.Name, help.code, p.Name, help.stdout)
		}
		for _, q := range registry {
			if q.Name == p.Name {
				continue
			}
			for _, fl := range own[q.Name] {
				if strings.Contains(help.stdout, "--"+fl+" ") {
					t.Errorf("%s --help lists --%s, a flag of %s", p.Name, fl, q.Name)
				}
			}
			if len(own[q.Name]) == 0 {
				continue
			}
			fl := own[q.Name][0]
			for _, args := range [][]string{
				{p.Name, "--" + fl, "1", "--out", work, "--", hello},
				{"profile", "--analyses", p.Name, "--" + fl, "1", "--out", work, "--", hello},
			} {
				r := run(t, nil, work, emuprofBin, args...)
				want := fmt.Sprintf("emuprof: --%s is a flag of the %s analysis", fl, q.Name)
				if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, r.code, r.stdout, r.stderr, want)
				}
			}
		}
	}
	v := run(t, nil, work, emuprofBin, "--version")
	if v.code != 0 || v.stdout != "emuprof version "+Version()+"\n" {
		t.Errorf("--version: exit %d, stdout %q", v.code, v.stdout)
	}
}
