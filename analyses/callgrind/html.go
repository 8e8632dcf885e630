package callgrind

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/analyses/report"
)

// Rows and files the section shows.
const (
	htmlRoutines = 25
	htmlFiles    = 3
)

// RenderHTML is the callgrind section of report.html: per process image,
// the busiest routines (own and inclusive instructions, calls), the
// instructions per calling context as a flame graph (from
// <app>_callgrind.speedscope.json), and the hottest source files
// annotated with each line's instructions and those of the calls it makes
// (from callgrind.out.*).
func RenderHTML(files []string) (*report.Section, error) {
	var cgs, sss []string
	for _, f := range files {
		switch base := filepath.Base(f); {
		case strings.HasPrefix(base, FilePrefix):
			cgs = append(cgs, f)
		case strings.HasSuffix(base, SpeedscopeSuffix):
			sss = append(sss, f)
		}
	}
	if len(cgs) == 0 && len(sss) == 0 {
		return nil, nil
	}
	slices.Sort(cgs)
	slices.Sort(sss)
	sec := &report.Section{ID: "callgrind", Title: "Instructions per routine, line and calling context"}
	var b strings.Builder
	b.WriteString("<p class=\"note\">Every instruction the program ran, per routine, calling context and source line, exactly: the callgrind.out files open in KCachegrind and <code>callgrind_annotate</code>, the speedscope files in speedscope.</p>\n")
	for i, path := range sss {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		names, parent, self, err := ReadFlame(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		fl := report.Flame{ID: fmt.Sprintf("callgrind-flame-%d", i), Metrics: []string{"instructions"}, Units: []string{"instructions"}}
		for j := range names {
			fl.Nodes = append(fl.Nodes, report.FlameNode{Parent: parent[j], Name: report.Demangle(names[j]), Self: []float64{self[j]}})
		}
		fmt.Fprintf(&b, "<h3>Instructions per calling context: %s</h3>\n", report.Esc(filepath.Base(path)))
		b.WriteString(fl.HTML())
	}
	for _, path := range cgs {
		if err := renderCallgrind(&b, sec, path); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	sec.HTML = b.String()
	return sec, nil
}

func renderCallgrind(b *strings.Builder, sec *report.Section, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	s, err := Parse(f)
	f.Close()
	if err != nil {
		return err
	}
	if s.Partial != "" {
		sec.Partial = append(sec.Partial, s.Partial)
	}
	fmt.Fprintf(b, "<h3>%s: %d instructions, %d blocks</h3>\n", report.Esc(filepath.Base(path)), s.Total.Ir, s.Total.Bb)
	names := make([]string, 0, len(s.Fns))
	for n := range s.Fns {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(s.Fns[y].Self.Ir, s.Fns[x].Self.Ir), cmp.Compare(x, y))
	})
	t := report.HTMLTable{Header: []string{"routine", "own instructions", "%", "with callees", "%", "calls"},
		Numeric: []bool{false, true, true, true, true, true}, Sortable: true}
	share := func(v uint64) report.Cell {
		p := 100 * float64(v) / float64(max(s.Total.Ir, 1))
		return report.Num(p, fmt.Sprintf("%.1f", p))
	}
	for _, n := range names[:min(len(names), htmlRoutines)] {
		fc := s.Fns[n]
		t.Add(report.Txt(report.Demangle(n)), report.Int(fc.Self.Ir), share(fc.Self.Ir), report.Int(fc.Inclusive.Ir), share(fc.Inclusive.Ir), report.Int(fc.Calls))
	}
	b.WriteString(t.HTML())
	sums := map[string]float64{}
	for l, c := range s.Lines {
		sums[l.File] += float64(c.Ir)
	}
	for _, file := range report.HotFiles(sums, htmlFiles) {
		v := report.SourceView{File: file, Columns: []string{"instructions", "with calls"}, Values: map[int][]float64{}}
		for l, c := range s.Lines {
			if l.File == file {
				v.Values[l.Line] = []float64{float64(c.Ir), float64(c.Ir)}
			}
		}
		for l, c := range s.LineCalls {
			if l.File == file {
				row := v.Values[l.Line]
				if row == nil {
					row = []float64{0, 0}
				}
				row[1] += float64(c.Ir)
				v.Values[l.Line] = row
			}
		}
		fmt.Fprintf(b, "<h4>%s: %s of the instructions</h4>\n", report.Esc(file), htmlPct(sums[file], float64(s.Total.Ir)))
		b.WriteString(v.HTML())
	}
	return nil
}

func htmlPct(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*part/whole)
}
