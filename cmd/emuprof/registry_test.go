package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every analysis's flags are its own: none shadows a run flag, a profile
// flag or another analysis's flag (pflag's AddFlagSet would silently drop
// the second one), and every analysis has an alias command.
func TestRegistryFlagsDistinct(t *testing.T) {
	base := &cobra.Command{Use: "x"}
	var f profileFlags
	f.run.register(base)
	base.Flags().String("out", "", "")
	base.Flags().String("analyses", "", "")
	base.Flags().Bool("sync-analyses", false, "")
	base.Flags().String("analysis-thread", "", "")
	owner := map[string]string{}
	base.Flags().VisitAll(func(fl *pflag.Flag) { owner[fl.Name] = "run" })
	names := map[string]bool{}
	for _, p := range registry {
		if p.Name == "" || names[p.Name] || p.Flags == nil {
			t.Fatalf("plugin %q: empty, duplicate or without flags", p.Name)
		}
		names[p.Name] = true
		fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
		if p.Flags(fs) == nil {
			t.Errorf("%s: no factory", p.Name)
		}
		fs.VisitAll(func(fl *pflag.Flag) {
			if o, ok := owner[fl.Name]; ok {
				t.Errorf("flag --%s of %s is also %s's", fl.Name, p.Name, o)
			}
			owner[fl.Name] = p.Name
		})
	}
	cmds := map[string]bool{}
	root := &cobra.Command{Use: "emuprof"}
	for _, p := range registry {
		root.AddCommand(aliasCommand(p, nil))
	}
	for _, c := range root.Commands() {
		cmds[c.Name()] = true
	}
	for n := range names {
		if !cmds[n] {
			t.Errorf("no command for analysis %s", n)
		}
	}
}

// `emuprof profile --analyses trms` is `emuprof trms`: the same files, byte
// for byte; analyses on their own thread or on the emulation thread give
// the same bytes too; an unknown analysis is one line and exit 2.
func TestProfileCommand(t *testing.T) {
	prog := guestBin(t, "glibc-dynamic", "condvar_pc")
	var outs []map[string]string
	for _, args := range [][]string{
		{"trms"},
		{"profile", "--analyses", "trms"},
		{"trms", "--analysis-thread", "off"},
		{"trms", "--analysis-thread", "on"},
	} {
		dir := t.TempDir()
		a := append(append(args, "--cct", "--out", dir, "--clear-env", "--"), prog, "60")
		if out := run(t, nil, dir, emuprofBin, a...); out.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, out.code, out.stderr)
		}
		files := filesIn(t, dir)
		if len(files) < 3 {
			t.Fatalf("%v: files %v", args, files)
		}
		outs = append(outs, files)
	}
	for i := 1; i < len(outs); i++ {
		if !maps.Equal(outs[0], outs[i]) {
			t.Errorf("run %d wrote different files than `emuprof trms`", i)
		}
	}
	out := run(t, nil, t.TempDir(), emuprofBin, "profile", "--analyses", "trms,nope", "--", prog)
	if out.code != 2 || strings.Count(out.stderr, "\n") != 1 || !strings.Contains(out.stderr, `unknown analysis "nope"`) {
		t.Errorf("unknown analysis: exit %d, stderr %q", out.code, out.stderr)
	}
}

// The analyses' own thread gets larger event buffers than the emulation
// thread (asyncBufferEvents), so runs of blocks are cut at other places
// in the stream: parallel, paths and callgrind must still write the same
// bytes.
// mutex_counter 4 20000 makes about 120,000 Block events: 30 batches on
// one thread, 2 on two.
func TestAnalysisThreadSameBytes(t *testing.T) {
	prog := guestBin(t, "glibc-static", "mutex_counter")
	for _, cmd := range []string{"parallel", "paths", "callgrind"} {
		var outs []map[string]string
		for _, mode := range []string{"off", "on"} {
			dir := t.TempDir()
			if out := run(t, nil, dir, emuprofBin, cmd, "--analysis-thread", mode, "--out", dir, "--clear-env", "--", prog, "4", "20000"); out.code != 0 {
				t.Fatalf("%s --analysis-thread %s: exit %d: %s", cmd, mode, out.code, out.stderr)
			}
			outs = append(outs, filesIn(t, dir))
		}
		if len(outs[0]) < 3 || !maps.Equal(outs[0], outs[1]) {
			t.Errorf("%s: --analysis-thread on wrote other files than off (%d and %d files)", cmd, len(outs[0]), len(outs[1]))
		}
	}
}

// filesIn returns the contents of the files in dir, by name.
func filesIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
