package paths

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/analyses/report"
)

// RenderHTML builds the paths section of report.html from the
// <app>_paths.json files among files: per profile, the totals, the hottest
// paths (sortable) with their source lines, a chart of the busiest
// routines and their hottest paths on the source text (source.go), and the
// routines whose CFG the run had to complete.
func RenderHTML(files []string) (*report.Section, error) {
	var ps []string
	for _, f := range files {
		if strings.HasSuffix(f, "_paths.json") {
			ps = append(ps, f)
		}
	}
	slices.Sort(ps)
	if len(ps) == 0 {
		return nil, nil
	}
	sec := &report.Section{ID: "paths", Title: "Path profile (Ball-Larus)"}
	var b strings.Builder
	for _, f := range ps {
		pr, err := ReadProfile(f)
		if err != nil {
			return nil, err
		}
		if pr.Partial != "" {
			sec.Partial = append(sec.Partial, filepath.Base(f)+": "+pr.Partial)
		}
		type hot struct {
			r *Routine
			p *Path
		}
		var hs []hot
		var execs uint64
		var dyn []string
		for i := range pr.Routines {
			r := &pr.Routines[i]
			if r.CFG != CFGStatic {
				dyn = append(dyn, report.Demangle(r.Name)+" ("+r.CFG+")")
			}
			for j := range r.Paths {
				execs += r.Paths[j].Count
				hs = append(hs, hot{r, &r.Paths[j]})
			}
		}
		slices.SortStableFunc(hs, func(x, y hot) int { return cmp.Compare(y.p.Count, x.p.Count) })
		fmt.Fprintf(&b, "<h3>%s</h3>\n<p>%d routines, %d distinct paths, %d path executions; copies %d, probe hits %s.</p>\n",
			report.Esc(filepath.Base(f)), len(pr.Routines), len(hs), execs, pr.Copies, report.Esc(fmt.Sprint(pr.ProbeHits)))
		if len(hs) > 50 {
			hs = hs[:50]
		}
		t := report.HTMLTable{Header: []string{"count", "share", "routine", "id", "blocks", "source lines"},
			Numeric: []bool{true, true, false, true, true, false}, Sortable: true}
		for _, h := range hs {
			share := 0.0
			if execs > 0 {
				share = 100 * float64(h.p.Count) / float64(execs)
			}
			t.Add(report.Int(h.p.Count), report.Num(share, fmt.Sprintf("%.1f%%", share)), report.Txt(report.Demangle(h.r.Name)),
				report.Txt(string(h.p.ID)), report.Int(len(h.p.Blocks)), report.Txt(lineRanges(h.p.Lines)))
		}
		b.WriteString(t.HTML())
		writeHotRoutines(&b, pr)
		if len(dyn) > 0 {
			fmt.Fprintf(&b, "<p>CFG completed by the run: %s.</p>\n", report.Esc(strings.Join(dyn, ", ")))
		}
	}
	sec.HTML = b.String()
	return sec, nil
}
