package paths

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
)

// fakeRuns is a platform.Runs whose child runs answer as told, recording
// what they were asked.
type fakeRuns struct {
	t      *testing.T
	work   string
	flags  map[string]string
	answer func(platform.ChildRun) platform.ChildResult
	mu     sync.Mutex
	perRun []string
	asked  []platform.ChildRun
	stderr bytes.Buffer
}

func (r *fakeRuns) Flag(name string) (string, bool) { v, ok := r.flags[name]; return v, ok }
func (r *fakeRuns) Prepare(perRun ...string) (string, error) {
	r.perRun = perRun
	return r.work, nil
}
func (r *fakeRuns) Run(c platform.ChildRun) platform.ChildResult {
	r.mu.Lock()
	r.asked = append(r.asked, c)
	r.mu.Unlock()
	return r.answer(c)
}
func (r *fakeRuns) Commit(string) error         { return nil }
func (r *fakeRuns) OutDir() string              { return r.t.TempDir() }
func (r *fakeRuns) Progress() platform.Progress { return nopProgress{} }
func (r *fakeRuns) Stdout() io.Writer           { return io.Discard }
func (r *fakeRuns) Stderr() io.Writer           { return &r.stderr }
func (r *fakeRuns) Summary() io.Writer          { return io.Discard }

type nopProgress struct{}

func (nopProgress) SetPhase(string)          {}
func (nopProgress) Count(string, int) func() { return func() {} }
func (nopProgress) Start()                   {}
func (nopProgress) Stop()                    {}

func copiesFlags(t *testing.T, args ...string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("paths", pflag.ContinueOnError)
	flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestParseCopiesFlags(t *testing.T) {
	if mr, err := parseCopies(copiesFlags(t), true); mr != nil || err != nil {
		t.Fatalf("without --copies: %v, %v; want no multi-run", mr != nil, err)
	}
	for _, c := range []struct {
		args  []string
		alone bool
		want  string
	}{
		{[]string{"--copies", "65"}, true, "--copies 65: want 1 to 64 copies"},
		{[]string{"--copies", "2"}, false, "--copies works with the paths analysis alone"},
		{[]string{"--copies", "2", "--p3", "2"}, true, "--p3: not with --copies"},
	} {
		mr, err := parseCopies(copiesFlags(t, c.args...), c.alone)
		var ee *platform.ExitError
		if mr != nil || !errors.As(err, &ee) || ee.Code != 2 || !strings.HasPrefix(ee.Msg, c.want) {
			t.Errorf("%v alone=%v: %v; want exit 2 %q", c.args, c.alone, err, c.want)
		}
	}
}

// A planning run that fails stops --copies before any copy runs, with the
// planning run's stderr; it was asked for P3 with K copies.
func TestCopiesPlanningRunFails(t *testing.T) {
	mr, err := parseCopies(copiesFlags(t, "--copies", "3"), true)
	if err != nil || mr == nil {
		t.Fatalf("--copies 3: %v", err)
	}
	r := &fakeRuns{t: t, work: t.TempDir(), answer: func(platform.ChildRun) platform.ChildResult {
		return platform.ChildResult{Code: 1, Stderr: []byte("boom\n")}
	}}
	err = mr(r, []string{"/bin/prog"})
	if err == nil || !strings.Contains(err.Error(), "the planning run failed: exit status 1") {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(r.perRun, []string{CopiesFlag, "plan"}) {
		t.Errorf("per-run flags %v", r.perRun)
	}
	if len(r.asked) != 1 || !slices.Equal(r.asked[0].Flags, []string{"--p3=3", "--plan-out=" + filepath.Join(r.work, "prog_paths.plan.json")}) {
		t.Errorf("runs asked: %+v; want one planning run", r.asked)
	}
	if r.stderr.String() != "boom\n" {
		t.Errorf("stderr %q; want the planning run's", r.stderr.String())
	}
}

func TestCopiesWithoutProgram(t *testing.T) {
	mr, _ := parseCopies(copiesFlags(t, "--copies", "2"), true)
	r := &fakeRuns{t: t, work: t.TempDir()}
	var ee *platform.ExitError
	if err := mr(r, nil); !errors.As(err, &ee) || ee.Code != 2 || len(r.asked) != 0 {
		t.Fatalf("no program: %v, %d runs", err, len(r.asked))
	}
}
