package paths

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/report"
	"emuprof/internal/sourcefile"
)

// Source view settings of the report's paths section: the routines shown
// (the most executed ones with more than one path), paths per routine, and
// the most source lines listed per routine.
const (
	srcRoutines    = 6
	srcPaths       = 4
	srcMaxLines    = 80
	srcContext     = 2 // lines shown around the paths' lines
	srcChartRoutes = 10
)

// pathColors mark the paths of one routine in its source listing.
var pathColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e"}

// routineExecs is the number of path executions of r.
func routineExecs(r *Routine) uint64 {
	var n uint64
	for i := range r.Paths {
		n += r.Paths[i].Count
	}
	return n
}

// writeHotRoutines writes, for a profile, a chart of the routines with the
// most path executions (each bar split by its hottest paths) and, for the
// hottest routines with several paths, their paths on the source text:
// each listed line carries a mark per path that runs it, the hottest
// path's lines are highlighted, and each path's count heads its column.
// A source file that cannot be read is named instead (lines are those of
// each block's first instruction, from the DWARF line table).
func writeHotRoutines(b *strings.Builder, pr *Profile) {
	var rs []*Routine
	for i := range pr.Routines {
		if routineExecs(&pr.Routines[i]) > 0 {
			rs = append(rs, &pr.Routines[i])
		}
	}
	slices.SortStableFunc(rs, func(x, y *Routine) int { return cmp.Compare(routineExecs(y), routineExecs(x)) })
	if len(rs) == 0 {
		return
	}
	chart := report.Bars{Title: "Path executions of the busiest routines", Unit: "path executions"}
	for j := range srcPaths {
		chart.Parts = append(chart.Parts, fmt.Sprintf("path %d", j+1))
	}
	chart.Parts = append(chart.Parts, "other paths")
	chart.Colors = append(slices.Clone(pathColors), "#bbbbbb")
	for _, r := range rs[:min(len(rs), srcChartRoutes)] {
		ps := hottest(r)
		row := make([]float64, srcPaths+1)
		rest := routineExecs(r)
		for j, p := range ps {
			row[j] = float64(p.Count)
			rest -= p.Count
		}
		row[srcPaths] = float64(rest)
		chart.Labels = append(chart.Labels, shorten(report.Demangle(r.Name), 16))
		chart.Values = append(chart.Values, row)
	}
	b.WriteString("<figure>\n" + chart.SVG() + "<figcaption>Each bar is one routine's path executions; its segments are its hottest paths, numbered as in the listings below.</figcaption>\n</figure>\n")

	shown := 0
	for _, r := range rs {
		if shown >= srcRoutines {
			break
		}
		if len(r.Paths) < 2 {
			continue
		}
		shown++
		writeRoutineSource(b, r)
	}
}

// hottest returns r's srcPaths most executed paths, by decreasing count.
func hottest(r *Routine) []*Path {
	ps := make([]*Path, 0, len(r.Paths))
	for i := range r.Paths {
		ps = append(ps, &r.Paths[i])
	}
	slices.SortStableFunc(ps, func(x, y *Path) int { return cmp.Compare(y.Count, x.Count) })
	return ps[:min(len(ps), srcPaths)]
}

// fileLine splits "file:line"; ok is false for unknown lines ("??:0").
func fileLine(s string) (file string, line int, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n <= 0 || s[:i] == "??" {
		return "", 0, false
	}
	return s[:i], n, true
}

// writeRoutineSource writes r's hottest paths on its source text.
func writeRoutineSource(b *strings.Builder, r *Routine) {
	ps := hottest(r)
	total := routineExecs(r)
	fmt.Fprintf(b, "<h4>%s <span class=\"note\">(%d paths, %d executions)</span></h4>\n", report.Esc(report.Demangle(r.Name)), len(r.Paths), total)
	// The file most of the paths' lines are in, and which path runs which line.
	files := map[string]int{}
	on := map[int][]bool{} // line -> per path
	for _, p := range ps {
		for _, l := range p.Lines {
			if f, _, ok := fileLine(l); ok {
				files[f]++
			}
		}
	}
	file, most := "", 0
	for f, n := range files {
		if n > most || n == most && f < file {
			file, most = f, n
		}
	}
	for j, p := range ps {
		for _, l := range p.Lines {
			if f, n, ok := fileLine(l); ok && f == file {
				if on[n] == nil {
					on[n] = make([]bool, len(ps))
				}
				on[n][j] = true
			}
		}
	}
	b.WriteString("<p class=\"note\">")
	for j, p := range ps {
		if j > 0 {
			b.WriteString("; ")
		}
		share := 100 * float64(p.Count) / float64(max(total, 1))
		fmt.Fprintf(b, "<span style=\"color:%s\">path %d</span> (id %s): %d executions, %.1f%%", pathColors[j], j+1, report.Esc(string(p.ID)), p.Count, share)
	}
	b.WriteString(".</p>\n")
	if file == "" {
		b.WriteString("<p class=\"note\">No source lines: the program has no line table for this routine.</p>\n")
		return
	}
	text, err := sourcefile.Lines(file)
	if err != nil {
		fmt.Fprintf(b, "<p class=\"note\">Source %s not readable here: %s.</p>\n", report.Esc(file), report.Esc(lineRanges(ps[0].Lines)))
		return
	}
	lines := make([]int, 0, len(on))
	for n := range on {
		lines = append(lines, n)
	}
	slices.Sort(lines)
	lo, hi := max(lines[0]-srcContext, 1), min(lines[len(lines)-1]+srcContext, len(text))
	if hi-lo+1 > srcMaxLines {
		hi = lo + srcMaxLines - 1
	}
	fmt.Fprintf(b, "<div class=\"scroll\"><table class=\"src\"><thead><tr><th>%s</th>", report.Esc(filepath.Base(file)))
	for j, p := range ps {
		fmt.Fprintf(b, "<th style=\"color:%s\" title=\"%d executions\">%d</th>", pathColors[j], p.Count, j+1)
	}
	b.WriteString("<th></th></tr></thead><tbody>\n")
	for n := lo; n <= hi; n++ {
		marks := on[n]
		class := ""
		if marks != nil && marks[0] {
			class = " class=\"hot\""
		}
		fmt.Fprintf(b, "<tr%s><td class=\"num\">%d</td>", class, n)
		for j := range ps {
			if marks != nil && marks[j] {
				fmt.Fprintf(b, "<td style=\"color:%s\" title=\"path %d: %d executions\">●</td>", pathColors[j], j+1, ps[j].Count)
			} else {
				b.WriteString("<td></td>")
			}
		}
		line := ""
		if n <= len(text) {
			line = text[n-1]
		}
		fmt.Fprintf(b, "<td><code>%s</code></td></tr>\n", report.Esc(strings.ReplaceAll(line, "\t", "    ")))
	}
	b.WriteString("</tbody></table></div>\n")
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
