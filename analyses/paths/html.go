package paths

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

// The report renders path profiles from their files (platform.Plugin's
// Render); set here rather than in the Plugin literal to keep plugin.go
// as it is.
func init() { Plugin.Render = RenderHTML }

const (
	htmlRoutines     = 10 // routines whose hottest paths are shown
	htmlPathsPer     = 5  // paths per routine
	htmlSourceLines  = 60 // longest source excerpt
	htmlRoutineTable = 300
)

// RenderHTML is the paths section of report.html, from the <app>_paths.json
// files among files: the hottest paths as bars, per routine (by path
// executions) its hottest paths with their counts and source lines, the
// lines highlighted in the source text when the file is readable, and a
// table of the routines.
func RenderHTML(files []string) (*report.Section, error) {
	var list []string
	for _, f := range files {
		if strings.HasSuffix(f, "_paths.json") {
			list = append(list, f)
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	slices.Sort(list)
	sec := &report.Section{ID: "paths", Title: "Path profile (Ball-Larus)"}
	var b strings.Builder
	b.WriteString("<p class=\"note\">Every acyclic path through a routine's control-flow graph (Ball-Larus), counted exactly. A path is the sequence of blocks from the routine's entry or a loop head to a return or a back edge; its lines are the source lines of its blocks.</p>\n")
	for _, path := range list {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var pr Profile
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&pr); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		if pr.Partial != "" {
			sec.Partial = append(sec.Partial, pr.Partial)
		}
		renderPaths(&b, &pr, filepath.Base(path))
	}
	sec.HTML = b.String()
	return sec, nil
}

func renderPaths(b *strings.Builder, pr *Profile, name string) {
	type rsum struct {
		r     *Routine
		execs uint64
	}
	var rs []rsum
	var total uint64
	for i := range pr.Routines {
		r := &pr.Routines[i]
		var n uint64
		for _, p := range r.Paths {
			n += p.Count
		}
		total += n
		rs = append(rs, rsum{r, n})
	}
	slices.SortStableFunc(rs, func(a, b rsum) int {
		return cmp.Or(cmp.Compare(b.execs, a.execs), cmp.Compare(a.r.Name, b.r.Name))
	})
	fmt.Fprintf(b, "<h3>%s: %d routines, %d path executions, %d copies</h3>\n", report.Esc(filepath.Base(pr.Program)), len(pr.Routines), total, pr.Copies)
	if pr.Partial != "" {
		fmt.Fprintf(b, "<p class=\"partial\">Partial profile: %s</p>\n", report.Esc(pr.Partial))
	}
	fmt.Fprintf(b, "<p class=\"note\">From %s.</p>\n", report.Esc(name))

	// The hottest paths of the program.
	type hp struct {
		r *Routine
		p *Path
	}
	var hot []hp
	for i := range pr.Routines {
		r := &pr.Routines[i]
		for j := range r.Paths {
			hot = append(hot, hp{r, &r.Paths[j]})
		}
	}
	slices.SortStableFunc(hot, func(a, b hp) int {
		return cmp.Or(cmp.Compare(b.p.Count, a.p.Count), cmp.Compare(a.r.Name, b.r.Name))
	})
	if len(hot) > 0 {
		bars := report.Bars{Title: "Hottest paths", Unit: "executions", Parts: []string{"executions"}, Colors: []string{"#1f77b4"}}
		for i, h := range hot {
			if i >= 15 {
				break
			}
			bars.Labels = append(bars.Labels, shorten(h.r.Name, 12)+" #"+shorten(h.p.ID.String(), 6))
			bars.Values = append(bars.Values, []float64{float64(h.p.Count)})
		}
		b.WriteString("<div class=\"plots\">\n" + bars.SVG() + "</div>\n")
	}

	for i, s := range rs {
		if i >= htmlRoutines || s.execs == 0 {
			break
		}
		r := s.r
		fmt.Fprintf(b, "<h3>%s <span class=\"note\">(%s, %s paths possible, %d executed, cfg %s)</span></h3>\n",
			report.Esc(r.Name), report.Esc(filepath.Base(r.Object)), report.Esc(r.NumPaths.String()), len(r.Paths), report.Esc(r.CFG))
		ps := slices.Clone(r.Paths)
		slices.SortStableFunc(ps, func(a, b Path) int { return cmp.Compare(b.Count, a.Count) })
		t := report.HTMLTable{Header: []string{"path id", "count", "share", "source lines"}, Numeric: []bool{true, true, true, false}}
		for j, p := range ps {
			if j >= htmlPathsPer {
				break
			}
			t.Add(report.Txt(p.ID.String()), report.Int(p.Count), report.Txt(fmt.Sprintf("%.1f %%", 100*float64(p.Count)/float64(s.execs))),
				report.Txt(strings.Join(compactLines(p.Lines), " → ")))
		}
		b.WriteString(t.HTML())
		if len(ps) > 0 {
			b.WriteString(sourceExcerpt(ps[0].Lines))
		}
	}

	t := report.HTMLTable{Header: []string{"routine", "object", "paths possible", "paths executed", "executions", "blocks", "cfg"},
		Numeric: []bool{false, false, true, true, true, true, false}, Sortable: true}
	for i, s := range rs {
		if i >= htmlRoutineTable {
			break
		}
		np, _ := strconv.ParseFloat(s.r.NumPaths.String(), 64)
		t.Add(report.Txt(s.r.Name), report.Txt(filepath.Base(s.r.Object)), report.Cell{Text: s.r.NumPaths.String(), Key: report.FormatFloat(np)},
			report.Int(len(s.r.Paths)), report.Int(s.execs), report.Int(s.r.Blocks), report.Txt(s.r.CFG))
	}
	b.WriteString("<h3>Routines</h3>\n<div class=\"scroll\">\n" + t.HTML() + "</div>\n")
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// compactLines drops repeats of the previous line and unknown lines.
func compactLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "" || l == "?" || (len(out) > 0 && out[len(out)-1] == l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// sourceExcerpt shows the lines of the source file of a path's first line,
// from the first to the last line the path has in that file, the path's
// lines highlighted; nothing when the file cannot be read.
func sourceExcerpt(lines []string) string {
	var file string
	on := map[int]bool{}
	lo, hi := 0, 0
	for _, l := range lines {
		i := strings.LastIndexByte(l, ':')
		if i <= 0 {
			continue
		}
		n, err := strconv.Atoi(l[i+1:])
		if err != nil || n <= 0 {
			continue
		}
		if file == "" {
			file = l[:i]
		}
		if l[:i] != file {
			continue
		}
		on[n] = true
		if lo == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if file == "" {
		return ""
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	src := strings.Split(string(data), "\n")
	if hi > len(src) {
		return ""
	}
	hi = min(hi, lo+htmlSourceLines-1)
	var b strings.Builder
	fmt.Fprintf(&b, "<p class=\"note\">The hottest path in %s (its lines highlighted):</p>\n<pre>", report.Esc(filepath.Base(file)))
	for n := lo; n <= hi; n++ {
		text := fmt.Sprintf("%5d  %s", n, strings.TrimRight(src[n-1], "\r"))
		if on[n] {
			fmt.Fprintf(&b, "<span class=\"hl\">%s</span>\n", report.Esc(text))
		} else {
			b.WriteString(report.Esc(text) + "\n")
		}
	}
	b.WriteString("</pre>\n")
	return b.String()
}
