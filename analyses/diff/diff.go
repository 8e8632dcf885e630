// Package diff compares two profiles of emuprof (two --out directories,
// or two profile files) metric by metric, per program, routine and line,
// and checks gate conditions on the changes (`emuprof diff --fail-if`).
// Both runs are exact and deterministic, so any change is a change of the
// program or its input: there is no noise to filter.
package diff

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/callgrind"
	"emuprof/analyses/trms"
)

// Metrics, in the order they are printed. Each has a program total
// (key "") and per-routine values; insns also per line ("file.c:12",
// the file's base name, so that checkouts in other directories compare).
const (
	Insns    = "insns"    // instructions: program, routine (inclusive), line (callgrind)
	Self     = "self"     // a routine's own instructions (callgrind)
	Calls    = "calls"    // times a routine was called (callgrind)
	Exponent = "exponent" // a routine's worst-case cost growth exponent over input size (trms, TRMS fit)
	Paths    = "paths"    // distinct acyclic paths executed (paths)
	PathRuns = "pathruns" // path executions (paths)
	Idleness = "idleness" // idle-core ns while a routine or a line works (parallel)
)

// MetricNames lists the metrics in order.
var MetricNames = []string{Insns, Self, Calls, Exponent, Paths, PathRuns, Idleness}

// Kind of key a value is for.
type Kind string

// Kinds of keys.
const (
	Program Kind = "program"
	Routine Kind = "routine"
	LineKey Kind = "line"
)

// Key names what a value measures.
type Key struct {
	Kind Kind
	Name string // routine name or file:line; "" for the program
}

// Profile is one side of a diff: every metric's values.
type Profile struct {
	Source string
	Values map[string]map[Key]float64 // metric -> key -> value
	Files  []string                   // the files read
}

func (p *Profile) set(metric string, k Key, v float64) {
	m := p.Values[metric]
	if m == nil {
		m = map[Key]float64{}
		p.Values[metric] = m
	}
	m[k] += v
}

// Load reads the profiles at path: an --out directory (every profile in
// it), its report.html (the directory's profiles), or one profile file
// (callgrind.out.*, a .aprof file, *_paths.json, *_parallel.json).
func Load(path string) (*Profile, error) {
	if filepath.Base(path) == "report.html" {
		path = filepath.Dir(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var files []string
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	} else {
		files = []string{path}
	}
	p := &Profile{Source: path, Values: map[string]map[Key]float64{}}
	var rms, drms []*trms.Report
	for _, f := range files {
		base := filepath.Base(f)
		var err error
		used := true
		switch {
		case strings.HasPrefix(base, callgrind.FilePrefix):
			err = p.loadCallgrind(f)
		case strings.HasSuffix(base, "_drms.aprof") || strings.HasSuffix(base, "_rms.aprof"):
			var r *trms.Report
			if r, err = trms.ReadReportFile(f); err == nil {
				if r.Input == trms.InputDRMS {
					drms = append(drms, r)
				} else {
					rms = append(rms, r)
				}
			}
		case strings.HasSuffix(base, "_paths.json"):
			err = p.loadPaths(f)
		case strings.HasSuffix(base, "_parallel.json"):
			err = p.loadParallel(f)
		default:
			used = false
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if used {
			p.Files = append(p.Files, f)
		}
	}
	if err := p.loadTRMS(rms, drms); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("%s: no emuprof profile (callgrind.out.*, *.aprof, *_paths.json, *_parallel.json)", path)
	}
	return p, nil
}

func (p *Profile) loadCallgrind(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := callgrind.Parse(f)
	if err != nil {
		return err
	}
	p.set(Insns, Key{Program, ""}, float64(s.Total.Ir))
	for name, fc := range s.Fns {
		k := Key{Routine, name}
		p.set(Insns, k, float64(fc.Inclusive.Ir))
		p.set(Self, k, float64(fc.Self.Ir))
		p.set(Calls, k, float64(fc.Calls))
		p.set(Calls, Key{Program, ""}, float64(fc.Calls))
	}
	for l, c := range s.Lines {
		if l.Line == 0 || l.File == "???" {
			continue
		}
		p.set(Insns, Key{LineKey, fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line)}, float64(c.Ir))
	}
	return nil
}

// loadTRMS takes each routine's TRMS growth exponent from the reports of
// the first program (a run that followed children has one set per image).
func (p *Profile) loadTRMS(rms, drms []*trms.Report) error {
	if len(rms) == 0 || len(drms) == 0 {
		return nil
	}
	same := func(rs []*trms.Report) []*trms.Report {
		var out []*trms.Report
		for _, r := range rs {
			if trms.Mergeable(rs[0], r) == nil {
				out = append(out, r)
			}
		}
		return out
	}
	r, err := trms.Merge(same(rms)...)
	if err != nil {
		return err
	}
	d, err := trms.Merge(same(drms)...)
	if err != nil {
		return err
	}
	rows, err := trms.Summarize(r, d)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.TRMSFit != nil {
			p.Values[Exponent] = orNew(p.Values[Exponent])
			p.Values[Exponent][Key{Routine, row.Name}] = row.TRMSFit.C
		}
	}
	return nil
}

func orNew(m map[Key]float64) map[Key]float64 {
	if m == nil {
		return map[Key]float64{}
	}
	return m
}

func (p *Profile) loadPaths(path string) error {
	var prof struct {
		Routines []struct {
			Name  string `json:"name"`
			Paths []struct {
				Count json.Number `json:"count"`
			} `json:"paths"`
		} `json:"routines"`
	}
	if err := readJSON(path, &prof); err != nil {
		return err
	}
	for _, r := range prof.Routines {
		k := Key{Routine, r.Name}
		p.set(Paths, k, float64(len(r.Paths)))
		p.set(Paths, Key{Program, ""}, float64(len(r.Paths)))
		for _, pt := range r.Paths {
			n, _ := strconv.ParseFloat(pt.Count.String(), 64)
			p.set(PathRuns, k, n)
			p.set(PathRuns, Key{Program, ""}, n)
		}
	}
	return nil
}

func (p *Profile) loadParallel(path string) error {
	var res struct {
		Total struct {
			Idleness int64 `json:"idleness"`
		} `json:"total"`
		Contexts []struct {
			Routine string `json:"routine"`
			Self    struct {
				Idleness int64 `json:"idleness"`
			} `json:"self"`
		} `json:"contexts"`
		Lines []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Metrics struct {
				Idleness int64 `json:"idleness"`
			} `json:"metrics"`
		} `json:"lines"`
	}
	if err := readJSON(path, &res); err != nil {
		return err
	}
	p.set(Idleness, Key{Program, ""}, float64(res.Total.Idleness))
	for _, c := range res.Contexts {
		p.set(Idleness, Key{Routine, c.Routine}, float64(c.Self.Idleness))
	}
	for _, l := range res.Lines {
		if l.File != "" && l.Line > 0 {
			p.set(Idleness, Key{LineKey, fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line)}, float64(l.Metrics.Idleness))
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Change is one value that differs between the two profiles.
type Change struct {
	Metric string  `json:"metric"`
	Kind   Kind    `json:"kind"`
	Name   string  `json:"name,omitempty"`
	Old    float64 `json:"old"`
	New    float64 `json:"new"`
	Delta  float64 `json:"delta"`
	// Percent is the relative change, Delta/Old in %; absent when Old
	// is 0.
	Percent *float64 `json:"percent,omitempty"`
}

// Result is the comparison of two profiles.
type Result struct {
	Old, New string
	Changes  []Change // sorted: metric, kind (program, routine, line), |percent| then |delta| descending, name
	Compared int      // values compared
	Metrics  []string // metrics present on both sides
}

// Compare compares old and new: every value of a metric both have.
func Compare(old, new *Profile) *Result {
	r := &Result{Old: old.Source, New: new.Source}
	for _, m := range MetricNames {
		om, nm := old.Values[m], new.Values[m]
		if om == nil || nm == nil {
			continue
		}
		r.Metrics = append(r.Metrics, m)
		keys := map[Key]bool{}
		for k := range om {
			keys[k] = true
		}
		for k := range nm {
			keys[k] = true
		}
		for k := range keys {
			r.Compared++
			o, n := om[k], nm[k]
			if o == n {
				continue
			}
			c := Change{Metric: m, Kind: k.Kind, Name: k.Name, Old: o, New: n, Delta: n - o}
			if o != 0 {
				pct := 100 * (n - o) / math.Abs(o)
				c.Percent = &pct
			}
			r.Changes = append(r.Changes, c)
		}
	}
	kindOrder := map[Kind]int{Program: 0, Routine: 1, LineKey: 2}
	slices.SortFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(slices.Index(MetricNames, a.Metric), slices.Index(MetricNames, b.Metric)),
			cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]),
			cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)),
			cmp.Compare(a.Name, b.Name))
	})
	return r
}

// Value returns a metric's values on both sides for k (ok: the metric is
// in both profiles).
func values(old, new *Profile, metric string) (om, nm map[Key]float64, ok bool) {
	om, nm = old.Values[metric], new.Values[metric]
	return om, nm, om != nil && nm != nil
}
