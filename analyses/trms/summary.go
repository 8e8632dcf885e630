package trms

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"emuprof/analyses/report"
)

// RoutineSummary aggregates one routine over all threads.
type RoutineSummary struct {
	Name, Object string
	Calls        uint64
	Cost         uint64 // real cumulative cost (nested activations counted once)
	Self         uint64
	RMSSizes     int // distinct RMS values
	TRMSSizes    int // distinct TRMS values
	// Worst-case cost as a function of the input size, a + b·n^c; nil when
	// fewer than 3 distinct input sizes were seen.
	RMSFit, TRMSFit *report.PowerFit
	Input           uint64 // sum of TRMS over activations
	External        uint64 // induced first-accesses from kernel writes
	ThreadInduced   uint64 // induced first-accesses from other threads' writes
}

// Summarize aggregates an RMS and a TRMS report (of any number of threads,
// e.g. merged) per routine, sorted by decreasing cost, then name.
func Summarize(rms, drms *Report) ([]RoutineSummary, error) {
	if rms.Input != InputRMS || drms.Input != InputDRMS {
		return nil, fmt.Errorf("trms: summarize: want an rms and a drms report, got %q and %q", rms.Input, drms.Input)
	}
	type key [2]string
	byKey := make(map[key]*RoutineSummary)
	var order []key
	get := func(rt RoutineRecord) *RoutineSummary {
		k := key{rt.Name, rt.Object}
		s, ok := byKey[k]
		if !ok {
			s = &RoutineSummary{Name: rt.Name, Object: rt.Object}
			byKey[k] = s
			order = append(order, k)
		}
		return s
	}
	points := func(r *Report) map[uint32][]Point {
		m := make(map[uint32][]Point)
		for _, p := range r.RoutinePoints() {
			m[p.ID] = append(m[p.ID], p)
		}
		return m
	}
	dp := points(drms)
	for _, rt := range drms.Routines {
		s := get(rt)
		var xs, ys []float64
		for _, p := range dp[rt.ID] {
			s.Calls += p.Calls
			s.Cost += p.RealSum
			s.Self += p.SelfSum
			s.Input += p.N * p.Calls
			s.External += p.ExtSum
			s.ThreadInduced += p.ThrSum
			s.TRMSSizes++
			xs, ys = append(xs, float64(p.N)), append(ys, float64(p.Max))
		}
		s.TRMSFit = fit(xs, ys)
	}
	rp := points(rms)
	for _, rt := range rms.Routines {
		s := get(rt)
		var xs, ys []float64
		for _, p := range rp[rt.ID] {
			s.RMSSizes++
			xs, ys = append(xs, float64(p.N)), append(ys, float64(p.Max))
		}
		s.RMSFit = fit(xs, ys)
	}
	out := make([]RoutineSummary, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b RoutineSummary) int {
		if c := cmp.Compare(b.Cost, a.Cost); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Object, b.Object)
	})
	return out, nil
}

func fit(xs, ys []float64) *report.PowerFit {
	f, err := report.FitPower(xs, ys)
	if err != nil {
		return nil
	}
	return &f
}

// WriteSummary writes the top routines (all if top <= 0) of an RMS and a
// TRMS report as a text table.
func WriteSummary(w io.Writer, rms, drms *Report, top int) error {
	rows, err := Summarize(rms, drms)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "input-sensitive profile: %s, %d thread(s), total cost %d (%s), memory resolution %d",
		drms.App, len(drms.Threads), drms.TotalCost, drms.Metric, drms.Resolution)
	if drms.Partial != "" {
		fmt.Fprintf(w, ", PARTIAL (%s)", drms.Partial)
	}
	fmt.Fprintln(w)
	// The routines whose cost depends on their input come first, as the
	// report ranks them: the table below is by inclusive cost, so it starts
	// with the outer frames (_start, main) that call everything once.
	if chosen, strict := ChoosePlots(rows, drms.TotalCost, summaryChosen); strict {
		fmt.Fprintln(w, "cost that grows with input (own cost significant, enough sizes, a fit that explains them):")
		for _, c := range chosen {
			fmt.Fprintf(w, "  %s: %s\n", report.Demangle(c.Name), strings.TrimPrefix(c.Why, "Chosen: "))
		}
	} else {
		fmt.Fprintln(w, "no routine's own cost grows with its input size in a way a fit explains (see the table's fits)")
	}
	if top > 0 && len(rows) > top {
		rows = rows[:top]
	}
	t := report.Table{
		Header: []string{"routine", "calls", "cost", "%", "self", "#rms", "#trms", "rms: worst cost ~", "R²", "trms: worst cost ~", "R²", "ext%", "thr%"},
		Right:  []bool{false, true, true, true, true, true, true, false, true, false, true, true, true},
	}
	for _, s := range rows {
		pct := "-"
		if drms.TotalCost > 0 {
			pct = fmt.Sprintf("%.1f", 100*float64(s.Cost)/float64(drms.TotalCost))
		}
		rf, rr := fitCells(s.RMSFit)
		tf, tr := fitCells(s.TRMSFit)
		t.Add(s.Name, fmt.Sprint(s.Calls), fmt.Sprint(s.Cost), pct, fmt.Sprint(s.Self),
			fmt.Sprint(s.RMSSizes), fmt.Sprint(s.TRMSSizes), rf, rr, tf, tr,
			share(s.External, s.Input), share(s.ThreadInduced, s.Input))
	}
	if err := t.Write(w); err != nil {
		return fmt.Errorf("trms: summary: %w", err)
	}
	return nil
}

// summaryChosen is how many input-dependent routines the summary names
// before its table.
const summaryChosen = 5

// minShownR2 is the goodness of fit below which the summary says "no trend"
// rather than print a curve that explains little of the data.
const minShownR2 = 0.8

func fitCells(f *report.PowerFit) (string, string) {
	if f == nil {
		return "-", "-"
	}
	r2 := fmt.Sprintf("%.3f", f.R2)
	if f.R2 < minShownR2 {
		return "no clear trend", r2
	}
	return f.String(), r2
}

func share(part, whole uint64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*float64(part)/float64(whole))
}

// Summary writes the text summary of the profile (all threads merged): the
// top routines by cumulative cost with their distinct input sizes, fitted
// growth of the worst-case cost, and the share of external and
// thread-induced input.
func (p *Profiler) Summary(w io.Writer, top int) error {
	reports, err := p.Reports()
	if err != nil {
		return err
	}
	var rms, drms []*Report
	for _, r := range reports {
		if r.Input == InputRMS {
			rms = append(rms, r)
		} else {
			drms = append(drms, r)
		}
	}
	if len(rms) == 0 || len(drms) == 0 { // nothing ran
		rms, drms = []*Report{p.emptyReport(InputRMS)}, []*Report{p.emptyReport(InputDRMS)}
	}
	mr, err := Merge(rms...)
	if err != nil {
		return err
	}
	md, err := Merge(drms...)
	if err != nil {
		return err
	}
	if err := WriteSummary(w, mr, md, top); err != nil {
		return err
	}
	if n := p.Renumberings(); n > 0 {
		fmt.Fprintf(w, "(%d counter overflows renumbered)\n", n)
	}
	return nil
}

// What makes a routine worth a plot in the report: its cost depends on its
// input size, with evidence, and matters to the run. Outer frames (main, an
// interpreter's entry) are seen with one or two input sizes, or with sizes
// their cost does not follow; their cost is their callees'.
const (
	plotMinSizes = 5    // distinct TRMS input sizes
	plotMinR2    = 0.9  // the worst-cost fit explains the data
	plotMinSelf  = 0.01 // own (self) cost, share of the run's total
)

// PlotChoice is a routine chosen for the report's plots, and why.
type PlotChoice struct {
	RoutineSummary
	Why string
}

// ChoosePlots returns up to n routines of rows (Summarize's) to plot,
// costliest first, among those whose worst cost grows with their input
// size (plotMinSizes, plotMinR2) and whose own cost is at least plotMinSelf
// of total. strict is false when none is: then the costliest routines
// seen with several input sizes are returned, for what they show.
func ChoosePlots(rows []RoutineSummary, total uint64, n int) (out []PlotChoice, strict bool) {
	share := func(c uint64) float64 {
		if total == 0 {
			return 0
		}
		return float64(c) / float64(total)
	}
	for _, s := range rows {
		f := s.TRMSFit
		if len(out) >= n || s.TRMSSizes < plotMinSizes || f == nil || f.R2 < plotMinR2 || f.B <= 0 || f.C <= 0 || share(s.Self) < plotMinSelf {
			continue
		}
		out = append(out, PlotChoice{s, fmt.Sprintf("Chosen: %d input sizes (TRMS), worst cost ~ n^%.2f with R² %.3f, own cost %.1f%% of the run (%.1f%% with its callees).",
			s.TRMSSizes, f.C, f.R2, 100*share(s.Self), 100*share(s.Cost))})
	}
	if len(out) > 0 {
		return out, true
	}
	for _, s := range rows {
		if len(out) >= n || max(s.TRMSSizes, s.RMSSizes) < 2 {
			continue
		}
		out = append(out, PlotChoice{s, fmt.Sprintf("Shown for want of better: %d input sizes (TRMS), own cost %.1f%% of the run (%.1f%% with its callees).",
			s.TRMSSizes, 100*share(s.Self), 100*share(s.Cost))})
	}
	return out, false
}
