package causal

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"emuprof/analyses/report"
)

// srcFiles is how many source files the causal section annotates.
const srcFiles = 3

// writeSource annotates the source files of the profiled lines with each
// line's speedup potential: the largest predicted program speedup, the
// prediction at a 50 % line speedup, and the line's cost. A line profiled
// per calling context (--context) adds up nothing: its best context's
// values are shown.
func writeSource(b *strings.Builder, prof *Profile) {
	values := map[string]map[int][]float64{}
	sums := map[string]float64{}
	for i := range prof.Lines {
		l := &prof.Lines[i]
		if isSetName(l.Line) {
			continue // a set's potential is no one line's
		}
		spec, _, _ := strings.Cut(l.Line, " <- ")
		at := strings.LastIndexByte(spec, ':')
		if at <= 0 {
			continue
		}
		n, err := strconv.Atoi(spec[at+1:])
		file := spec[:at]
		if err != nil || n <= 0 {
			continue
		}
		best := maxSpeedup(l.Curve)
		if math.IsInf(best, -1) {
			continue
		}
		half, _, ok := l.At(50)
		if !ok {
			half = 0
		}
		m := values[file]
		if m == nil {
			m = map[int][]float64{}
			values[file] = m
		}
		if v, seen := m[n]; !seen || 100*best > v[0] {
			m[n] = []float64{100 * best, 100 * half, float64(l.CostNs)}
		}
		sums[file] += math.Max(best, 0) + 1e-9 // files with only flat lines still count
	}
	format := func(col int, v float64) string {
		if col == 2 {
			return report.Human(v)
		}
		return fmt.Sprintf("%.1f %%", v)
	}
	for _, file := range report.HotFiles(sums, srcFiles) {
		fmt.Fprintf(b, "<h4>%s: speedup potential per line</h4>\n", report.Esc(file))
		v := report.SourceView{File: file, Columns: []string{"largest program speedup", "at 50 %", "cost (ns)"}, Values: values[file], Format: format}
		b.WriteString(v.HTML())
	}
}
