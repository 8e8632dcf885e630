package trms

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/analyses/report"
)

// HTML report settings.
const (
	htmlPlotted   = 12  // routines with plots (ChoosePlots)
	htmlTableRows = 300 // routines in the table
	htmlMaxMarks  = 400 // points drawn per series (evenly sampled beyond)
)

// RenderHTML is the input-sensitive section of report.html, built from the
// .aprof reports among files (per-thread, single or merged reports alike):
// per program, the routine table (sortable by cost, growth exponent, input
// variety) and, for the costliest routines, worst, average and best cost
// against input size (TRMS and RMS) with the fitted worst-case curve
// a + b·n^c and R², curve bounding (T(n)/f(n) for candidate bounds f, with
// the guessed bound: bound.go), and the number of calls per input size.
func RenderHTML(files []string) (*report.Section, error) {
	type groupKey struct {
		app, metric string
		res         int
	}
	type group struct {
		rms, drms   []*Report
		names       []string
		rmsT, drmsT map[uint32]bool
		skipped     []string
	}
	groups := map[groupKey]*group{}
	var order []groupKey
	var paths []string
	for _, f := range files {
		if strings.HasSuffix(f, ".aprof") {
			paths = append(paths, f)
		}
	}
	slices.Sort(paths)
	if len(paths) == 0 {
		return nil, nil
	}
	for _, path := range paths {
		r, err := ReadReportFile(path)
		if err != nil {
			return nil, err
		}
		k := groupKey{r.App, r.Metric, r.Resolution}
		g := groups[k]
		if g == nil {
			g = &group{rmsT: map[uint32]bool{}, drmsT: map[uint32]bool{}}
			groups[k] = g
			order = append(order, k)
		}
		// A thread already counted (a merged report next to the
		// per-thread ones) would be counted twice.
		seen := g.rmsT
		if r.Input == InputDRMS {
			seen = g.drmsT
		}
		dup := false
		for _, t := range r.Threads {
			if seen[t] {
				dup = true
			}
		}
		if dup {
			g.skipped = append(g.skipped, filepath.Base(path))
			continue
		}
		for _, t := range r.Threads {
			seen[t] = true
		}
		if r.Input == InputDRMS {
			g.drms = append(g.drms, r)
		} else {
			g.rms = append(g.rms, r)
		}
		g.names = append(g.names, filepath.Base(path))
	}
	sec := &report.Section{ID: "trms", Title: "Input-sensitive profile (RMS, TRMS)"}
	var b strings.Builder
	b.WriteString("<p class=\"note\">For each routine, the cost of its activations against their input size: the read memory size (RMS, PLDI'12: the distinct cells it reads before writing them) and the threaded read memory size (TRMS: also counting input that other threads and the kernel wrote between its reads). Points are the worst, average and best cost of the activations with that input size; the curve is the least-squares fit a + b·n^c of the worst cost. The curve-bounding plot (aprof-plot's ratio graph) divides the worst cost T(n) by candidate bounds f(n): a ratio that flattens means the cost is O(f), one that keeps rising means it is not. Hover a point for its values; click a column to sort.</p>\n")
	for gi, k := range order {
		g := groups[k]
		var rms, drms *Report
		var err error
		if len(g.rms) > 0 {
			if rms, err = Merge(g.rms...); err != nil {
				return nil, err
			}
		}
		if len(g.drms) > 0 {
			if drms, err = Merge(g.drms...); err != nil {
				return nil, err
			}
		}
		if rms == nil {
			rms = &Report{Version: drms.Version, Input: InputRMS, Metric: drms.Metric, Resolution: drms.Resolution, App: drms.App}
		}
		if drms == nil {
			drms = &Report{Version: rms.Version, Input: InputDRMS, Metric: rms.Metric, Resolution: rms.Resolution, App: rms.App, TotalCost: rms.TotalCost, Threads: rms.Threads, Command: rms.Command}
		}
		for _, p := range []string{rms.Partial, drms.Partial} {
			if p != "" && !slices.Contains(sec.Partial, p) {
				sec.Partial = append(sec.Partial, p)
			}
		}
		if gi == 0 {
			if drms.Command != "" {
				sec.Facts = append(sec.Facts, report.Fact{Key: "command", Value: drms.Command})
			}
			sec.Facts = append(sec.Facts, report.Fact{Key: "threads", Value: fmt.Sprint(len(drms.Threads))},
				report.Fact{Key: "total cost (" + drms.Metric + ")", Value: fmt.Sprint(drms.TotalCost)})
		}
		if err := renderProgram(&b, rms, drms, g.names, g.skipped, gi); err != nil {
			return nil, err
		}
	}
	sec.HTML = b.String()
	return sec, nil
}

// renderProgram writes one program's table and plots.
func renderProgram(b *strings.Builder, rms, drms *Report, names, skipped []string, gi int) error {
	rows, err := Summarize(rms, drms)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "<h3>%s: %d thread(s), total cost %d (%s), memory resolution %d</h3>\n",
		report.Esc(drms.App), len(drms.Threads), drms.TotalCost, report.Esc(drms.Metric), drms.Resolution)
	if drms.Partial != "" {
		fmt.Fprintf(b, "<p class=\"partial\">Partial profile: %s</p>\n", report.Esc(drms.Partial))
	}
	fmt.Fprintf(b, "<p class=\"note\">From %s.", report.Esc(fileList(names)))
	if len(skipped) > 0 {
		fmt.Fprintf(b, " Not counted again (their threads are in the files above): %s.", report.Esc(strings.Join(skipped, ", ")))
	}
	b.WriteString("</p>\n")

	// The routines chosen for plots lead the table (in plot order), then
	// the others by cost: what comes first is what to look at.
	chosen, strict := ChoosePlots(rows, drms.TotalCost, htmlPlotted)
	if strict {
		lead := make(map[[2]string]bool, len(chosen))
		ordered := make([]RoutineSummary, 0, len(rows))
		for _, c := range chosen {
			lead[[2]string{c.Name, c.Object}] = true
			ordered = append(ordered, c.RoutineSummary)
		}
		for _, s := range rows {
			if !lead[[2]string{s.Name, s.Object}] {
				ordered = append(ordered, s)
			}
		}
		rows = ordered
		fmt.Fprintf(b, "<p class=\"note\">The %d routines whose cost depends on their input size (plotted below) come first, then the others by cost; click a column to sort.</p>\n", len(chosen))
	}
	t := report.HTMLTable{
		Header:   []string{"routine", "object", "calls", "cost", "cost %", "self", "input sizes (RMS)", "input sizes (TRMS)", "growth exponent (TRMS)", "worst cost ~ (TRMS)", "R²", "external input %", "thread input %"},
		Numeric:  []bool{false, false, true, true, true, true, true, true, true, false, true, true, true},
		Sortable: true,
	}
	for i, s := range rows {
		if i >= htmlTableRows {
			break
		}
		pct := math.NaN()
		if drms.TotalCost > 0 {
			pct = 100 * float64(s.Cost) / float64(drms.TotalCost)
		}
		expo, curve, r2 := report.Cell{Text: "-", Key: "-1"}, report.Txt("-"), report.Cell{Text: "-", Key: "-1"}
		if f := s.TRMSFit; f != nil {
			expo = report.Num(f.C, fmt.Sprintf("%.2f", f.C))
			curve = report.Txt(f.String())
			if f.R2 < minShownR2 {
				curve = report.Txt("no clear trend")
			}
			r2 = report.Num(f.R2, fmt.Sprintf("%.3f", f.R2))
		}
		t.Add(report.Txt(s.Name), report.Txt(filepath.Base(s.Object)), report.Int(s.Calls), report.Int(s.Cost),
			pctCell(pct), report.Int(s.Self), report.Int(s.RMSSizes), report.Int(s.TRMSSizes),
			expo, curve, r2, shareCell(s.External, s.Input), shareCell(s.ThreadInduced, s.Input))
	}
	b.WriteString("<div class=\"scroll\">\n" + t.HTML() + "</div>\n")
	if len(rows) > htmlTableRows {
		fmt.Fprintf(b, "<p class=\"note\">%d more routines not shown (the text summary and the .aprof files have them all).</p>\n", len(rows)-htmlTableRows)
	}

	// Plots of the routines whose cost depends on their input size.
	if strict {
		fmt.Fprintf(b, "<p class=\"note\">Plots: the costliest routines (at most %d) whose worst cost grows with their input size, seen with at least %d input sizes and fitted with R² ≥ %.1f, and whose own cost is at least %.0f%% of the run; outer frames, whose cost is their callees', are left out.</p>\n",
			htmlPlotted, plotMinSizes, plotMinR2, 100*plotMinSelf)
	} else {
		fmt.Fprintf(b, "<p class=\"note\">No routine's cost is shown to depend on its input size (at least %d input sizes, a fit with R² ≥ %.1f, own cost at least %.0f%% of the run). Plots: the costliest routines seen with more than one input size, at most %d.</p>\n",
			plotMinSizes, plotMinR2, 100*plotMinSelf, htmlPlotted)
	}
	type rkey struct{ name, object string }
	pointsOf := func(r *Report) map[rkey][]Point {
		ids := map[uint32]rkey{}
		for _, rt := range r.Routines {
			ids[rt.ID] = rkey{rt.Name, rt.Object}
		}
		m := map[rkey][]Point{}
		for _, p := range r.RoutinePoints() {
			k := ids[p.ID]
			m[k] = append(m[k], p)
		}
		for k := range m {
			slices.SortFunc(m[k], func(a, b Point) int { return cmp.Compare(a.N, b.N) })
		}
		return m
	}
	rp, dp := pointsOf(rms), pointsOf(drms)
	for _, c := range chosen {
		s := c.RoutineSummary
		k := rkey{s.Name, s.Object}
		fmt.Fprintf(b, "<h3>%s <span class=\"note\">(%s, %d calls, cost %d)</span></h3>\n<p class=\"note\">%s</p>\n<div class=\"plots\">\n",
			report.Esc(s.Name), report.Esc(filepath.Base(s.Object)), s.Calls, s.Cost, report.Esc(c.Why))
		for _, m := range []struct {
			label string
			pts   []Point
			fit   *report.PowerFit
		}{{"TRMS", dp[k], s.TRMSFit}, {"RMS", rp[k], s.RMSFit}} {
			if len(m.pts) == 0 {
				continue
			}
			b.WriteString("<figure>\n")
			b.WriteString(costPlot(s.Name, m.label, m.pts, m.fit, drms.Metric))
			fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", report.Esc(fitCaption(m.label, m.fit, len(m.pts))))
		}
		if g, ok := GuessBound(dp[k]); ok {
			b.WriteString("<figure>\n")
			b.WriteString(ratioPlot(s.Name, "TRMS", dp[k], g))
			fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", report.Esc(g.Caption("TRMS")))
		}
		if len(dp[k]) > 0 {
			b.WriteString("<figure>\n")
			b.WriteString(freqPlot(s.Name, dp[k]))
			fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", report.Esc("How often each input size (TRMS) occurred."))
		}
		b.WriteString("</div>\n")
	}
	return nil
}

// fileList names the files of a program: all of them, or for many (a
// report per thread of a program with thousands of threads) the first and
// last few and how many.
func fileList(names []string) string {
	const most = 8
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%d reports: %s … %s", len(names), strings.Join(names[:3], ", "), strings.Join(names[len(names)-2:], ", "))
}

func pctCell(p float64) report.Cell {
	if math.IsNaN(p) {
		return report.Cell{Text: "-", Key: "-1"}
	}
	return report.Num(p, fmt.Sprintf("%.1f", p))
}

func shareCell(part, whole uint64) report.Cell {
	if whole == 0 {
		return report.Cell{Text: "-", Key: "-1"}
	}
	return pctCell(100 * float64(part) / float64(whole))
}

func fitCaption(label string, f *report.PowerFit, n int) string {
	if f == nil {
		return fmt.Sprintf("%s: %d input size(s), too few to fit a curve.", label, n)
	}
	s := fmt.Sprintf("%s: worst cost ~ %s, R² = %.3f, over %d input sizes.", label, f, f.R2, n)
	if f.R2 < minShownR2 {
		s += " The fit explains little of the data: no clear trend."
	}
	return s
}

// sample returns at most htmlMaxMarks indices of n, evenly spread, the
// first and last included.
func sample(n int) []int {
	out := make([]int, 0, min(n, htmlMaxMarks))
	if n <= htmlMaxMarks {
		for i := range n {
			out = append(out, i)
		}
		return out
	}
	for j := range htmlMaxMarks {
		out = append(out, j*(n-1)/(htmlMaxMarks-1))
	}
	return out
}

func costPlot(name, label string, pts []Point, fit *report.PowerFit, metric string) string {
	p := report.NewPlot(name+": cost vs "+label, "input size ("+label+", cells)", "cost ("+metric+")")
	p.ZeroX, p.ZeroY = true, true
	worst := report.Series{Name: "worst", Color: "#d62728", Marker: true}
	avg := report.Series{Name: "average", Color: "#1f77b4", Marker: true}
	best := report.Series{Name: "best", Color: "#2ca02c", Marker: true}
	for _, i := range sample(len(pts)) {
		t := &pts[i].Tuple
		x := float64(t.N)
		a := 0.0
		if t.Calls > 0 {
			a = float64(t.Sum) / float64(t.Calls)
		}
		tip := fmt.Sprintf("%s %d: %d calls, worst %d, average %s, best %d", label, t.N, t.Calls, t.Max, report.FormatFloat(math.Round(a*100)/100), t.Min)
		worst.X, worst.Y, worst.Tips = append(worst.X, x), append(worst.Y, float64(t.Max)), append(worst.Tips, tip)
		avg.X, avg.Y, avg.Tips = append(avg.X, x), append(avg.Y, a), append(avg.Tips, tip)
		best.X, best.Y, best.Tips = append(best.X, x), append(best.Y, float64(t.Min)), append(best.Tips, tip)
	}
	p.Series = []report.Series{worst, avg, best}
	if fit != nil {
		f := *fit
		p.Series = append(p.Series, report.Series{
			Name: fmt.Sprintf("fit n^%.2f, R² %.3f", f.C, f.R2), Color: "#444", Dashed: true,
			Func: func(x float64) float64 {
				if x < 0 {
					return math.NaN()
				}
				return f.A + f.B*math.Pow(x, f.C)
			},
		})
	}
	return p.SVG()
}

func freqPlot(name string, pts []Point) string {
	p := report.NewPlot(name+": calls per input size", "input size (TRMS, cells)", "calls")
	p.ZeroX, p.ZeroY = true, true
	s := report.Series{Name: "calls", Color: "#9467bd", Marker: true, Line: len(pts) > 1}
	for _, i := range sample(len(pts)) {
		t := &pts[i].Tuple
		s.X, s.Y = append(s.X, float64(t.N)), append(s.Y, float64(t.Calls))
		s.Tips = append(s.Tips, fmt.Sprintf("TRMS %d: %d calls", t.N, t.Calls))
	}
	p.Series = []report.Series{s}
	return p.SVG()
}
