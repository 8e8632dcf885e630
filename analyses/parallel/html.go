package parallel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/report"
)

const htmlContextRows = 300

// RenderHTML is the parallel section of report.html, from the
// <app>_parallel.json files among files: the program's Table-1 verdict,
// each thread's time (work, spin, blocked, queued) as bars, the calling
// context tree with work, idleness, overhead and lock-wait columns and the
// hot contexts' verdicts, and the locks.
func RenderHTML(files []string) (*report.Section, error) { return renderHTML(files, nil) }

// renderHTML is RenderHTML with live, if not nil, the result its JSON file
// (live.jsonFile) holds: it is not read back.
func renderHTML(files []string, live *Result) (*report.Section, error) {
	var paths []string
	for _, f := range files {
		if strings.HasSuffix(f, "_parallel.json") {
			paths = append(paths, f)
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	slices.Sort(paths)
	sec := &report.Section{ID: "parallel", Title: "Work, idleness and overhead (HPCToolkit)"}
	var b strings.Builder
	b.WriteString("<p class=\"note\">Every virtual nanosecond of the run on its virtual cores: work per calling context, idleness (the cores left idle while a context works, shared among the working contexts), overhead (work in the parallel runtime), and lock-wait blame (the time threads waited on a lock, charged to the context that released it). Work + idleness + unattributed idleness = cores × makespan.</p>\n")
	for _, path := range paths {
		r := live
		if r == nil || r.jsonFile == "" || path != r.jsonFile {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			r = &Result{}
			if err := json.Unmarshal(data, r); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
			}
		}
		if r.Partial != "" {
			sec.Partial = append(sec.Partial, r.Partial)
		}
		if len(sec.Facts) == 0 {
			if r.Command != "" {
				sec.Facts = append(sec.Facts, report.Fact{Key: "command", Value: r.Command})
			}
			sec.Facts = append(sec.Facts, report.Fact{Key: "virtual duration", Value: fmt.Sprintf("%d ns (makespan)", r.Makespan)},
				report.Fact{Key: "threads", Value: fmt.Sprint(len(r.Threads))},
				report.Fact{Key: "virtual CPUs", Value: fmt.Sprint(r.Cores)})
		}
		renderResult(&b, r, filepath.Base(path))
	}
	sec.HTML = b.String()
	return sec, nil
}

func htmlShare(part, whole int64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
}

func renderResult(b *strings.Builder, r *Result, name string) {
	// About what the tables take per row, so that b grows once.
	b.Grow(4096 + 320*min(len(r.Contexts), htmlContextRows) + 200*len(r.Locks) + 300*len(r.Threads))
	fmt.Fprintf(b, "<h3>%s: %d cores, makespan %d ns, parallel efficiency %.1f %%</h3>\n",
		report.Esc(name), r.Cores, r.Makespan, 100*r.Efficiency)
	if r.Partial != "" {
		fmt.Fprintf(b, "<p class=\"partial\">Partial profile: %s</p>\n", report.Esc(r.Partial))
	}
	serial := r.Serial()
	if serial {
		fmt.Fprintf(b, "<p>Program: <strong>serial</strong> (%s: there is no concurrency to judge, and %d of the %d virtual cores are idle by construction). The work per calling context below is where its time went.</p>\n",
			report.Esc(r.serialWhy()), r.Cores-1, r.Cores)
	} else {
		fmt.Fprintf(b, "<p>Program: <strong>%s</strong> (idleness %.1f %%, overhead %.1f %% of work + idleness; idleness counted in %s, spin-waiting as %s).</p>\n",
			report.Esc(r.Program.Text), 100*r.Program.IdleRatio, 100*r.Program.OverheadRatio, report.Esc(r.IdleBase), report.Esc(r.Spin))
		if note := r.narrowNote(); note != "" {
			fmt.Fprintf(b, "<p class=\"note\">Note: %s.</p>\n", report.Esc(note))
		}
	}
	ft := report.HTMLTable{Header: []string{"", "ns", "share of capacity"}, Numeric: []bool{false, true, true}}
	for _, row := range []struct {
		k string
		v int64
	}{{"capacity (cores × makespan)", r.Capacity}, {"work", r.Total.Work}, {"useful work", r.Useful}, {"overhead", r.Total.Overhead},
		{"idleness", r.Total.Idleness}, {"unattributed idleness", r.Unattr}, {"spin-waiting", r.Total.Spin}, {"lock-wait blame", r.Total.Lockwait}} {
		ft.Add(report.Txt(row.k), report.Int(row.v), report.Txt(htmlShare(row.v, r.Capacity)))
	}
	ft.WriteHTML(b)

	if len(r.Threads) > 0 {
		bars := report.Bars{Title: "Threads: where their time went", Unit: "virtual ns",
			Parts: []string{"work", "spin", "blocked", "queued"}, Colors: []string{"#2ca02c", "#ff7f0e", "#d62728", "#bbbbbb"}}
		for _, t := range r.Threads {
			bars.Labels = append(bars.Labels, fmt.Sprintf("thread %d", t.Tid))
			bars.Values = append(bars.Values, []float64{float64(t.Work - t.Spin), float64(t.Spin), float64(t.Blocked), float64(t.Queued)})
		}
		if r.Spin != "overhead" { // spin is idle, not inside work
			for i, t := range r.Threads {
				bars.Values[i][0] = float64(t.Work)
			}
		}
		b.WriteString("<div class=\"plots\">\n")
		b.WriteString(bars.SVG())
		b.WriteString("</div>\n")
	}

	// The calling context tree, depth first, children by decreasing effort.
	verdict := make(map[int32]string, len(r.Hot))
	for _, h := range r.Hot {
		if !serial {
			verdict[h.Context] = h.Verdict.Text
		}
	}
	children := make(map[int32][]int, len(r.Contexts))
	var roots []int
	byID := make(map[int32]int, len(r.Contexts))
	for i, c := range r.Contexts {
		byID[c.ID] = i
	}
	for i, c := range r.Contexts {
		if _, ok := byID[c.Parent]; ok && c.Parent != c.ID {
			children[c.Parent] = append(children[c.Parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	order := func(ix []int) {
		slices.SortStableFunc(ix, func(a, b int) int {
			return cmp.Or(cmp.Compare(r.Contexts[b].Total.Effort(), r.Contexts[a].Total.Effort()), cmp.Compare(r.Contexts[a].ID, r.Contexts[b].ID))
		})
	}
	t := report.HTMLTable{
		Header:  []string{"calling context", "work", "idleness", "overhead", "lock-wait blame", "wait", "idleness / effort", "verdict"},
		Numeric: []bool{false, true, true, true, true, true, true, false},
	}
	// The rows go to b as the walk finds them.
	b.WriteString("<h3>Calling context tree (inclusive, virtual ns)</h3>\n<div class=\"scroll\">\n")
	t.WriteHead(b)
	rows := 0
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if rows >= htmlContextRows {
			return
		}
		c := r.Contexts[i]
		if c.Total.Effort() == 0 && c.Total.Wait == 0 && c.Total.Lockwait == 0 {
			return
		}
		label := report.Demangle(c.Routine)
		if c.Site != "" {
			label += " (" + c.Site + ")"
		}
		if c.Runtime {
			label += " [runtime]"
		}
		cell := report.Cell{HTML: "<span style=\"padding-left:" + strconv.Itoa(depth) + "em\">" + report.Esc(label) + "</span>"}
		ratio := "-"
		if e := c.Total.Effort(); e > 0 && !serial { // serial: idle by construction
			ratio = fmt.Sprintf("%.1f %%", 100*float64(c.Total.Idleness)/float64(e))
		}
		t.WriteRow(b, cell, report.Int(c.Total.Work), report.Int(c.Total.Idleness), report.Int(c.Total.Overhead),
			report.Int(c.Total.Lockwait), report.Int(c.Total.Wait), report.Txt(ratio), report.Txt(verdict[c.ID]))
		rows++
		kids := children[c.ID]
		order(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	order(roots)
	for _, i := range roots {
		walk(i, 0)
	}
	t.WriteEnd(b)
	b.WriteString("</div>\n")
	if rows >= htmlContextRows {
		fmt.Fprintf(b, "<p class=\"note\">The first %d contexts; the JSON and pprof files have them all.</p>\n", htmlContextRows)
	}
	writeFlame(b, r, "parallel-flame-"+strings.TrimSuffix(name, "_parallel.json"))
	writeSource(b, r)

	if len(r.Locks) > 0 {
		lt := report.HTMLTable{Header: []string{"lock", "class", "waits", "releases", "wait (ns)", "blame (ns)", "top releaser"},
			Numeric: []bool{false, false, true, true, true, true, false}, Sortable: true}
		for _, l := range r.Locks {
			lt.Add(report.Txt(l.Addr), report.Txt(l.Class), report.Int(l.Waits), report.Int(l.Releases), report.Int(l.WaitNs), report.Int(l.BlameNs), report.Txt(l.TopReleaser))
		}
		b.WriteString("<h3>Locks</h3>\n")
		lt.WriteHTML(b)
	}
}
