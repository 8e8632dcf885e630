package causal

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/analyses/report"
)

// htmlPlottedLines is how many lines get a plot, by decreasing potential.
const htmlPlottedLines = 12

// RenderHTML is the causal section of report.html, from the
// <app>_causal.json files among files: per line, Coz's plot of the
// predicted program speedup against the line's virtual speedup (with the
// actual speedups of --validate overlaid), lines ranked by potential, and
// a table of every line. A profile.coz alone (Coz's own, or without our
// JSON) is listed, not plotted: Coz's viewer reads it.
func RenderHTML(files []string) (*report.Section, error) {
	var jsons, cozs []string
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "_causal.json"):
			jsons = append(jsons, f)
		case filepath.Base(f) == "profile.coz":
			cozs = append(cozs, f)
		}
	}
	if len(jsons) == 0 && len(cozs) == 0 {
		return nil, nil
	}
	slices.Sort(jsons)
	sec := &report.Section{ID: "causal", Title: "Causal profile (Coz)"}
	var b strings.Builder
	b.WriteString("<p class=\"note\">Each experiment made one source line faster by a virtual speedup (every execution of the line paused the other threads instead, exactly, in virtual time) and measured the rate of the progress point. A plot shows, for a line, the program speedup predicted against the line speedup: a rising curve is a line worth optimizing, a flat one is not, a falling one contends. Lines are ranked by their largest predicted speedup.</p>\n")
	for _, path := range jsons {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var prof Profile
		if err := json.Unmarshal(data, &prof); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		if prof.Partial != "" {
			sec.Partial = append(sec.Partial, prof.Partial)
		}
		if len(sec.Facts) == 0 {
			sec.Facts = append(sec.Facts, report.Fact{Key: "program", Value: prof.Program},
				report.Fact{Key: "virtual duration (causal)", Value: fmt.Sprintf("%d ns, %d ns of delays inserted", prof.RuntimeNs, prof.DelayedNs)})
		}
		renderProfile(&b, &prof, filepath.Base(path))
	}
	if len(jsons) == 0 {
		names := make([]string, len(cozs))
		for i, c := range cozs {
			names[i] = filepath.Base(c)
		}
		fmt.Fprintf(&b, "<p class=\"note\">%s: Coz's profile format, without emuprof's JSON next to it; open it in Coz's viewer.</p>\n", report.Esc(strings.Join(names, ", ")))
	}
	sec.HTML = b.String()
	return sec, nil
}

func renderProfile(b *strings.Builder, prof *Profile, name string) {
	fmt.Fprintf(b, "<h3>%s: %d experiments, virtual duration %d ns, %d ns of delays inserted</h3>\n",
		report.Esc(filepath.Base(prof.Program)), len(prof.Experiments), prof.RuntimeNs, prof.DelayedNs)
	if prof.Partial != "" {
		fmt.Fprintf(b, "<p class=\"partial\">Partial profile: %s</p>\n", report.Esc(prof.Partial))
	}
	point := "(none)"
	if len(prof.Points) > 0 {
		point = prof.Points[0]
	}
	fmt.Fprintf(b, "<p class=\"note\">From %s. Progress point: %s.</p>\n", report.Esc(name), report.Esc(point))

	actual := map[string][]Check{}
	if v := prof.Validation; v != nil {
		for _, c := range v.Checks {
			actual[c.Line] = append(actual[c.Line], c)
		}
	}
	t := report.HTMLTable{
		Header:   []string{"rank", "line", "experiments", "cost (ns)", "at 5 %", "at 25 %", "at 50 %", "at 100 %", "largest", "verdict"},
		Numeric:  []bool{true, false, true, true, true, true, true, true, true, false},
		Sortable: true,
	}
	for i, l := range prof.Lines {
		cells := []report.Cell{report.Int(i + 1), report.Txt(l.Line), report.Int(l.Experiments), report.Int(l.CostNs)}
		for _, s := range []int{5, 25, 50, 100} {
			v, exact, ok := l.At(s)
			switch {
			case !ok:
				cells = append(cells, report.Cell{Text: "-", Key: "-1e9"})
			case exact:
				cells = append(cells, report.Num(100*v, fmt.Sprintf("%.1f %%", 100*v)))
			default:
				cells = append(cells, report.Num(100*v, fmt.Sprintf("~%.1f %%", 100*v)))
			}
		}
		if m := maxSpeedup(l.Curve); !math.IsInf(m, -1) {
			cells = append(cells, report.Num(100*m, fmt.Sprintf("%.1f %%", 100*m)))
		} else {
			cells = append(cells, report.Cell{Text: "-", Key: "-1e9"})
		}
		t.Add(append(cells, report.Txt(l.Verdict))...)
	}
	b.WriteString("<div class=\"scroll\">\n" + t.HTML() + "</div>\n")
	if len(prof.Lines) == 0 {
		b.WriteString("<p class=\"note\">No experiment completed (too few progress-point visits?).</p>\n")
		return
	}
	// One y-axis for every plot, as Coz's viewer draws them: a 0.1 % line
	// must not look as steep as a 9 % one.
	lo, hi := 0.0, 0.0
	for i, l := range prof.Lines {
		if i >= htmlPlottedLines {
			break
		}
		for _, c := range l.Curve {
			if len(c.Program) > 0 && c.Program[0] != nil {
				lo, hi = math.Min(lo, 100**c.Program[0]), math.Max(hi, 100**c.Program[0])
			}
		}
		for _, c := range actual[l.Line] {
			lo, hi = math.Min(lo, 100*c.Actual), math.Max(hi, 100*c.Actual)
		}
	}
	if len(actual) > 0 {
		hi += (hi - lo) / 4 // room for the legend above the curves
	}
	b.WriteString("<div class=\"plots\">\n")
	for i, l := range prof.Lines {
		if i >= htmlPlottedLines {
			break
		}
		b.WriteString("<figure>\n")
		b.WriteString(linePlot(&l, actual[l.Line], lo, hi))
		fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", report.Esc(fmt.Sprintf("#%d %s: %s (%d experiments).", i+1, l.Line, l.Verdict, l.Experiments)))
	}
	b.WriteString("</div>\n")
	if len(prof.Lines) > htmlPlottedLines {
		fmt.Fprintf(b, "<p class=\"note\">%d more lines in the table.</p>\n", len(prof.Lines)-htmlPlottedLines)
	}
	writeSource(b, prof)
}

// linePlot is a line's plot on the y-axis lo..hi (percent) shared by the
// section's plots. The title is the line with the file's base name (the
// caption has the path), so it fits; the legend is drawn only when
// --validate adds a second series.
func linePlot(l *LineResult, checks []Check, lo, hi float64) string {
	title := l.Line
	if i := strings.LastIndexByte(strings.Split(title, " <- ")[0], '/'); i >= 0 && !isSetName(title) {
		title = title[i+1:]
	}
	p := report.NewPlot(title, "line speedup (%)", "program speedup (%)")
	p.XMin, p.XMax = 0, 100
	p.YMin, p.YMax = lo, hi
	p.ZeroY = true
	pct := func(v float64) string { return report.Human(v) + "%" }
	p.XFormat, p.YFormat = pct, pct
	pred := report.Series{Name: "predicted", Color: "#1f77b4", Marker: true, Line: true}
	for _, c := range l.Curve {
		if len(c.Program) == 0 || c.Program[0] == nil {
			continue
		}
		v := 100 * *c.Program[0]
		pred.X, pred.Y = append(pred.X, float64(c.Speedup)), append(pred.Y, v)
		pred.Tips = append(pred.Tips, fmt.Sprintf("%s sped up %d %%: program %.2f %% (%d experiments, %d ns)", l.Line, c.Speedup, v, c.Experiments, c.DurationNs))
	}
	if len(checks) == 0 {
		pred.Name = "" // alone: no legend over the curve
	}
	p.Series = []report.Series{pred}
	if len(checks) > 0 {
		act := report.Series{Name: "actual (--validate)", Color: "#d62728", Marker: true}
		for _, c := range checks {
			act.X, act.Y = append(act.X, float64(c.Speedup)), append(act.Y, 100*c.Actual)
			act.Tips = append(act.Tips, fmt.Sprintf("%s sped up %d %%: actual %.2f %%, predicted %.2f %% (run of %d ns)", c.Line, c.Speedup, 100*c.Actual, 100*c.Predicted, c.DurationNs))
		}
		p.Series = append(p.Series, act)
	}
	return p.SVG()
}
