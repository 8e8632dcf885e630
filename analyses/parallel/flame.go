package parallel

import (
	"fmt"
	"strings"

	"emuprof/analyses/report"
)

// flameMetrics are the metrics of the parallel section's flame graph.
var flameMetrics = []string{"work", "idleness", "overhead", "lockwait"}

// writeFlame draws r's calling context tree as a flame graph of work,
// idleness, overhead and lock-wait blame (own values: the graph adds
// the callees').
func writeFlame(b *strings.Builder, r *Result, id string) {
	index := make(map[int32]int, len(r.Contexts))
	for i, c := range r.Contexts {
		index[c.ID] = i
	}
	f := report.Flame{ID: id, Metrics: flameMetrics, Units: []string{"ns", "ns", "ns", "ns"}}
	for _, c := range r.Contexts {
		parent := -1
		if p, ok := index[c.Parent]; ok && c.Parent != c.ID {
			parent = p
		}
		name := report.Demangle(c.Routine)
		if c.Runtime {
			name += " [runtime]"
		}
		f.Nodes = append(f.Nodes, report.FlameNode{Parent: parent, Name: name,
			Self: []float64{float64(c.Self.Work), float64(c.Self.Idleness), float64(c.Self.Overhead), float64(c.Self.Lockwait)}})
	}
	if h := f.HTML(); h != "" {
		b.WriteString("<h3>Flame graph of the calling contexts</h3>\n")
		b.WriteString(h)
	}
}

// srcFiles is how many source files the section annotates.
const srcFiles = 3

// writeSource annotates the source files with the most idleness and
// overhead (work when there is none) with each line's work, idleness and
// overhead, over its calling contexts.
func writeSource(b *strings.Builder, r *Result) {
	hot := 1 // idleness
	if r.Total.Idleness == 0 {
		hot = 0
	}
	sums := map[string]float64{}
	values := map[string]map[int][]float64{}
	for _, l := range r.Lines {
		if l.File == "" || l.Line <= 0 {
			continue
		}
		m := values[l.File]
		if m == nil {
			m = map[int][]float64{}
			values[l.File] = m
		}
		v := m[l.Line]
		if v == nil {
			v = make([]float64, 3)
			m[l.Line] = v
		}
		v[0] += float64(l.M.Work)
		v[1] += float64(l.M.Idleness)
		v[2] += float64(l.M.Overhead)
		if hot == 0 {
			sums[l.File] += float64(l.M.Work)
		} else {
			sums[l.File] += float64(l.M.Idleness + l.M.Overhead)
		}
	}
	for _, file := range report.HotFiles(sums, srcFiles) {
		fmt.Fprintf(b, "<h4>%s: work, idleness and overhead per line (virtual ns)</h4>\n", report.Esc(file))
		v := report.SourceView{File: file, Columns: []string{"work", "idleness", "overhead"}, Values: values[file], Hot: hot}
		b.WriteString(v.HTML())
	}
}
