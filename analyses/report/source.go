package report

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/internal/sourcefile"
)

// SourceView annotates the lines of one source file with columns of
// values, beside the source text when the file can be read here: the
// lines around the hottest ones (by column Hot), each shaded by its share
// of the hottest line's value.
type SourceView struct {
	File    string // the path the line table names
	Columns []string
	Values  map[int][]float64 // line -> one value per column
	Hot     int               // the column that ranks lines
	// Format prints a value (nil: Human).
	Format func(col int, v float64) string
}

// Source view limits: the hottest lines shown, with context lines around
// each, and at most maxRows rows.
const (
	srcHotLines = 16
	srcAround   = 3
	srcMaxRows  = 160
)

// sourceCSS shades annotated lines (the rest is table.src's).
const sourceCSS = `table.src td.gap { color: #999; } table.src td.v { color: #444; }
`

// HTML renders the view.
func (s *SourceView) HTML() string {
	if len(s.Values) == 0 {
		return ""
	}
	lines := make([]int, 0, len(s.Values))
	for l := range s.Values {
		if l > 0 {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	hotOf := func(l int) float64 {
		if v := s.Values[l]; s.Hot < len(v) {
			return v[s.Hot]
		}
		return 0
	}
	slices.SortFunc(lines, func(a, b int) int { return cmp.Or(cmp.Compare(hotOf(b), hotOf(a)), cmp.Compare(a, b)) })
	top := hotOf(lines[0])
	text, err := sourcefile.Lines(s.File)
	show := map[int]bool{}
	for _, l := range lines[:min(len(lines), srcHotLines)] {
		for k := l - srcAround; k <= l+srcAround; k++ {
			if k > 0 && (err != nil || k <= len(text)) {
				show[k] = true
			}
		}
	}
	if err != nil { // without the text, only the lines with values
		for k := range show {
			if _, ok := s.Values[k]; !ok {
				delete(show, k)
			}
		}
	}
	rows := make([]int, 0, len(show))
	for k := range show {
		rows = append(rows, k)
	}
	slices.Sort(rows)
	if len(rows) > srcMaxRows {
		rows = rows[:srcMaxRows]
	}
	format := s.Format
	if format == nil {
		format = func(_ int, v float64) string { return Human(v) }
	}
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "<p class=\"note\">Source %s is not readable here (%s): its lines' values only.</p>\n", Esc(s.File), Esc(errText(err)))
	}
	fmt.Fprintf(&b, "<div class=\"scroll\"><table class=\"src\"><thead><tr><th>%s</th>", Esc(filepath.Base(s.File)))
	for _, c := range s.Columns {
		fmt.Fprintf(&b, "<th class=\"num\">%s</th>", Esc(c))
	}
	b.WriteString("<th></th></tr></thead><tbody>\n")
	prev := 0
	for _, k := range rows {
		if prev != 0 && k != prev+1 {
			fmt.Fprintf(&b, "<tr><td class=\"gap\">⋮</td><td colspan=\"%d\"></td></tr>\n", len(s.Columns)+1)
		}
		prev = k
		v, ok := s.Values[k]
		style := ""
		if ok && top > 0 && s.Hot < len(v) && v[s.Hot] > 0 {
			style = fmt.Sprintf(" style=\"background:rgba(255,170,0,%.2f)\"", 0.08+0.5*v[s.Hot]/top)
		}
		fmt.Fprintf(&b, "<tr%s><td class=\"num\">%d</td>", style, k)
		for c := range s.Columns {
			if ok && c < len(v) && v[c] != 0 {
				fmt.Fprintf(&b, "<td class=\"num v\">%s</td>", Esc(format(c, v[c])))
			} else {
				b.WriteString("<td></td>")
			}
		}
		line := ""
		if err == nil && k <= len(text) {
			line = text[k-1]
		}
		fmt.Fprintf(&b, "<td><code>%s</code></td></tr>\n", Esc(strings.ReplaceAll(line, "\t", "    ")))
	}
	b.WriteString("</tbody></table></div>\n")
	return b.String()
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// HotFiles returns the files of lines, by decreasing sum of their
// values, at most n.
func HotFiles(sums map[string]float64, n int) []string {
	files := make([]string, 0, len(sums))
	for f, v := range sums {
		if f != "" && f != "??" && f != "???" && v > 0 {
			files = append(files, f)
		}
	}
	slices.SortFunc(files, func(a, b string) int { return cmp.Or(cmp.Compare(sums[b], sums[a]), cmp.Compare(a, b)) })
	return files[:min(len(files), n)]
}
