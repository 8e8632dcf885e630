package causal

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"emuprof/analyses/tracetest"
)

// viewerCurves runs Coz's own viewer code (testdata/cozviewer: an excerpt
// of plasma-umass/coz viewer/js/profile.js) under Node.js on a profile.coz
// and returns its warnings and its curves: line -> point -> speedup % ->
// progress speedup.
func viewerCurves(t *testing.T, coz []byte) ([]string, map[string]map[string]map[int]float64) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "profile.coz")
	if err := os.WriteFile(f, coz, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", "../../testdata/cozviewer/check.js", f).Output()
	if err != nil {
		t.Fatalf("node (scripts/deps.sh installs nodejs): %v", err)
	}
	var res struct {
		Warnings []string
		Lines    []struct {
			Name   string
			Points []struct {
				Name         string
				Measurements []struct {
					Speedup         float64
					ProgressSpeedup float64 `json:"progress_speedup"`
				}
			}
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("viewer output %q: %v", out, err)
	}
	m := map[string]map[string]map[int]float64{}
	for _, l := range res.Lines {
		m[l.Name] = map[string]map[int]float64{}
		for _, p := range l.Points {
			c := map[int]float64{}
			for _, x := range p.Measurements {
				c[int(math.Round(100*x.Speedup))] = x.ProgressSpeedup
			}
			m[l.Name][p.Name] = c
		}
	}
	return res.Warnings, m
}

// TestCozViewerReadsProfiles: Coz's viewer loads the profile.coz of an
// in-run profile, in both formats, without a warning, and computes from it
// the curves our JSON has before the phase correction (it does none),
// within the rounding of durations to whole ns (the trace's experiments
// last a few hundred ns); latency points load too.
func TestCozViewerReadsProfiles(t *testing.T) {
	tr := tracetest.New(syms{})
	loop(tr, 2000)
	p := newProf(t, Config{Progress: []string{"done", "p.c:20"}, FixedSpeedup: -1, Seed: 3}, tr, &fakeClock{})
	p.Events(tr.Events)
	p.Finish()
	prof := p.Build()
	// Coz's format has durations in whole ns: each period is off by at
	// most 0.5 ns per experiment, relatively 0.5/duration.
	minDur := int64(math.MaxInt64)
	for _, x := range p.Experiments() {
		minDur = min(minDur, x.Duration)
	}
	tol := 1.0 / float64(minDur)
	for _, legacy := range []bool{false, true} {
		var b bytes.Buffer
		if err := CozProfile(&b, p.Experiments(), p.Runtime(), legacy); err != nil {
			t.Fatal(err)
		}
		warn, got := viewerCurves(t, b.Bytes())
		if len(warn) > 0 {
			t.Errorf("legacy %v: viewer warnings %q", legacy, warn)
		}
		n := 0
		for _, l := range prof.Lines {
			for _, c := range l.Curve {
				for i, name := range prof.Points {
					if c.PhaseA[i] == nil {
						continue
					}
					v, ok := got[l.Line][name][c.Speedup]
					if !ok {
						t.Errorf("legacy %v: the viewer has no %s / %s at %d %%", legacy, l.Line, name, c.Speedup)
						continue
					}
					n++
					if math.Abs(v-*c.PhaseA[i]) > tol {
						t.Errorf("legacy %v: %s / %s at %d %%: viewer %.8f, ours %.8f", legacy, l.Line, name, c.Speedup, v, *c.PhaseA[i])
					}
				}
			}
		}
		if n < 60 {
			t.Errorf("legacy %v: %d values compared", legacy, n)
		}
	}
	// A latency point (BEGIN = the call of done, END = line 10).
	tr = tracetest.New(syms{})
	loop(tr, 500)
	p = newProf(t, Config{Latency: []string{"done,p.c:10"}, FixedSpeedup: -1, Seed: 3}, tr, &fakeClock{})
	p.Events(tr.Events)
	p.Finish()
	var b bytes.Buffer
	if err := CozProfile(&b, p.Experiments(), p.Runtime(), false); err != nil {
		t.Fatal(err)
	}
	warn, got := viewerCurves(t, b.Bytes())
	if len(warn) > 0 || len(got) == 0 {
		t.Errorf("latency profile: warnings %q, %d lines", warn, len(got))
	}
}
