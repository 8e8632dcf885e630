package report

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Section is one analysis's part of the HTML report (report.html), built
// from the files the analysis wrote. HTML is a fragment of well-formed
// XHTML (every element closed, no named entities), so that the whole page
// parses as XML too.
type Section struct {
	ID    string // anchor, e.g. "trms"
	Title string
	HTML  string
	// Partial lists the partial-run marks found in the files (the run
	// did not finish: crash, deadlock, limit, interrupt), shown in red
	// in the run section.
	Partial []string
	// Facts are what the files say about the run (command, threads,
	// virtual duration...), used by the run section when the directory
	// has no run.json (files written by merge, or by an older emuprof).
	Facts []Fact
}

// Fact is one line of the run section.
type Fact struct{ Key, Value string }

// Page is the whole report.
type Page struct {
	Title    string
	Run      []Fact   // the run section's table
	Warnings []string // partial-run warnings, in red
	Notes    []string // other lines of the run section (escaped text)
	Sections []Section
}

// Esc escapes s for HTML and XML text and attribute values.
func Esc(s string) string { return html.EscapeString(s) }

// Bytes renders the page: one self-contained file (inline CSS, inline SVG,
// a small script for sorting tables), the same bytes for the same page.
func (p *Page) Bytes() []byte {
	var b bytes.Buffer
	b.Grow(p.size())
	p.WriteTo(&b)
	return b.Bytes()
}

// size is about the length of the page.
func (p *Page) size() int {
	n := len(pageCSS) + len(pageJS) + len(flameCSS) + len(flameJS) + len(sourceCSS) + 1024
	for _, f := range p.Run {
		n += len(f.Key) + len(f.Value) + 32
	}
	for _, s := range p.Sections {
		n += len(s.HTML) + 2*(len(s.ID)+len(s.Title)) + 96
	}
	for _, w := range p.Warnings {
		n += len(w) + 48
	}
	for _, w := range p.Notes {
		n += len(w) + 48
	}
	return n
}

// WriteTo writes the page (Bytes) to w, through a buffer unless w is one:
// the sections' HTML goes to w as it is, not copied into the whole page.
func (p *Page) WriteTo(w io.Writer) (int64, error) {
	b, ok := w.(pageWriter)
	var bw *bufio.Writer
	if !ok {
		bw = bufio.NewWriterSize(w, 16<<10)
		b = bw
	}
	cw := &countWriter{w: b}
	p.write(cw)
	if bw != nil {
		if err := bw.Flush(); err != nil && cw.err == nil {
			cw.err = err
		}
	}
	return cw.n, cw.err
}

// pageWriter is a buffered writer (bufio.Writer, bytes.Buffer,
// strings.Builder).
type pageWriter interface {
	io.Writer
	io.StringWriter
}

// countWriter counts what it writes and keeps the first error.
type countWriter struct {
	w   pageWriter
	n   int64
	err error
}

func (c *countWriter) WriteString(s string) {
	if c.err == nil {
		k, err := c.w.WriteString(s)
		c.n += int64(k)
		c.err = err
	}
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	k, err := c.w.Write(b)
	c.n += int64(k)
	c.err = err
	return k, err
}

func (p *Page) write(b *countWriter) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	b.WriteString("<title>" + Esc(p.Title) + "</title>\n<style>\n")
	b.WriteString(pageCSS)
	b.WriteString(flameCSS + sourceCSS)
	b.WriteString("</style>\n</head>\n<body>\n")
	fmt.Fprintf(b, "<h1>%s</h1>\n", Esc(p.Title))
	b.WriteString("<nav><ul>\n<li><a href=\"#run\">The run</a></li>\n")
	for _, s := range p.Sections {
		fmt.Fprintf(b, "<li><a href=\"#%s\">%s</a></li>\n", Esc(s.ID), Esc(s.Title))
	}
	b.WriteString("</ul></nav>\n")
	b.WriteString("<section id=\"run\" class=\"analysis\">\n<h2>The run</h2>\n")
	for _, w := range p.Warnings {
		fmt.Fprintf(b, "<p class=\"partial\">Partial run: %s</p>\n", Esc(w))
	}
	if len(p.Run) > 0 {
		b.WriteString("<table class=\"facts\">\n<tbody>\n")
		for _, f := range p.Run {
			fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", Esc(f.Key), Esc(f.Value))
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	for _, n := range p.Notes {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", Esc(n))
	}
	b.WriteString("</section>\n")
	for _, s := range p.Sections {
		fmt.Fprintf(b, "<section id=\"%s\" class=\"analysis\">\n<h2>%s</h2>\n", Esc(s.ID), Esc(s.Title))
		b.WriteString(s.HTML)
		if !strings.HasSuffix(s.HTML, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("<script>//<![CDATA[\n")
	b.WriteString(pageJS)
	b.WriteString(flameJS)
	b.WriteString("//]]></script>\n</body>\n</html>\n")
}

const pageCSS = `body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .3em; }
nav ul { list-style: none; padding: 0; } nav li { display: inline; margin-right: 1.2em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { padding: .2em .6em; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; background: #f3f3f3; }
table.sortable th.sorted-asc::after { content: " \25B2"; } table.sortable th.sorted-desc::after { content: " \25BC"; }
table.facts th { background: #f3f3f3; width: 12em; }
.partial { color: #c00; font-weight: bold; }
.note { color: #555; font-size: .9em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
.plot { border: 1px solid #ddd; background: #fff; }
.plot text { font-size: 11px; fill: #333; }
.plot .title { font-size: 12px; font-weight: bold; }
.plot .grid { stroke: #eee; stroke-width: 1; }
.plot .axis { stroke: #888; stroke-width: 1; }
.plot circle:hover { stroke: #000; stroke-width: 2; }
figure { margin: 0; } figcaption { font-size: .85em; color: #444; max-width: 440px; }
code, pre { font-size: .85em; }
.hl { background: #fff3b0; }
div.scroll { max-height: 30em; overflow: auto; border: 1px solid #eee; }
div.scroll thead th { position: sticky; top: 0; }
table.src td { border: 0; padding: 0 .4em; } table.src code { white-space: pre; } table.src tr.hot { background: #fff1c1; } table.src thead th { background: #f3f3f3; }
`

// pageJS sorts tables with class "sortable" by the clicked column (cells'
// data-v when present, numbers numerically), and marks the page when it
// has run: data-report-js="ok" on the html element, data-report-plots the
// number of SVG paths drawn per section (data: curves, lines, bars; axes not
// counted); an error marks data-report-error.
// It must not contain "<" or "&" (the page also parses as XML).
const pageJS = `(function () {
  var root = document.documentElement;
  window.addEventListener('error', function (e) { root.setAttribute('data-report-error', String(e.message)); });
  function key(td) {
    var v = td.getAttribute('data-v');
    if (v === null) { v = td.textContent; }
    var n = parseFloat(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function cmp(a, b) {
    if (typeof a === typeof b) { return a === b ? 0 : (a > b ? 1 : -1); }
    return typeof a === 'number' ? -1 : 1;
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var ths = table.querySelectorAll('thead th');
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener('click', function () {
        var desc = !th.classList.contains('sorted-desc');
        Array.prototype.forEach.call(ths, function (o) { o.classList.remove('sorted-asc', 'sorted-desc'); });
        th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (x, y) {
          var c = cmp(key(x.cells[col]), key(y.cells[col]));
          return desc ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var counts = [];
  Array.prototype.forEach.call(document.querySelectorAll('section.analysis'), function (s) {
    var n = 0;
    Array.prototype.forEach.call(s.querySelectorAll('svg path'), function (p) {
      if (p.getAttribute('class') === 'axis') { return; }
      if (p.getAttribute('d')) { if (p.getTotalLength() > 0) { n++; } }
    });
    counts.push(s.id + '=' + n);
  });
  root.setAttribute('data-report-plots', counts.join(' '));
  root.setAttribute('data-report-js', 'ok');
})();
`

// HTMLTable is an HTML table, sortable by clicking a column's header when
// Sortable is set.
type HTMLTable struct {
	Header   []string
	Numeric  []bool // per column: right-aligned, sorted as numbers
	Sortable bool
	rows     [][]Cell
}

// Cell is a table cell: escaped Text, or HTML when set; Key, when set,
// is the value the column sorts by.
type Cell struct {
	Text, HTML string
	Key        string
}

// Txt is a text cell.
func Txt(s string) Cell { return Cell{Text: s} }

// Num is a cell showing text that sorts as the number v.
func Num(v float64, text string) Cell { return Cell{Text: text, Key: FormatFloat(v)} }

// Int is a cell with an integer.
func Int[T ~int | ~int64 | ~uint64 | ~uint32 | ~int32](v T) Cell {
	var s string
	if v < 0 {
		s = strconv.FormatInt(int64(v), 10)
	} else {
		s = strconv.FormatUint(uint64(v), 10)
	}
	return Cell{Text: s, Key: s}
}

// Add appends a row.
func (t *HTMLTable) Add(cells ...Cell) { t.rows = append(t.rows, cells) }

// Len is the number of rows.
func (t *HTMLTable) Len() int { return len(t.rows) }

// HTML renders the table.
func (t *HTMLTable) HTML() string {
	var b strings.Builder
	t.WriteHTML(&b)
	return b.String()
}

// WriteHTML appends the table (HTML) to b.
func (t *HTMLTable) WriteHTML(b *strings.Builder) {
	n := 64
	for _, h := range t.Header {
		n += len(h) + 24
	}
	for _, row := range t.rows {
		n += 12
		for _, c := range row {
			n += len(c.Text) + len(c.HTML) + len(c.Key) + 32
		}
	}
	b.Grow(n)
	t.WriteHead(b)
	for _, row := range t.rows {
		t.WriteRow(b, row...)
	}
	t.WriteEnd(b)
}

// WriteHead, WriteRow for each row and WriteEnd append the table to b
// as WriteHTML does, without keeping its rows.
func (t *HTMLTable) WriteHead(b *strings.Builder) {
	if t.Sortable {
		b.WriteString("<table class=\"sortable\">\n")
	} else {
		b.WriteString("<table>\n")
	}
	b.WriteString("<thead><tr>")
	for i, h := range t.Header {
		if t.numeric(i) {
			fmt.Fprintf(b, "<th class=\"num\">%s</th>", Esc(h))
		} else {
			fmt.Fprintf(b, "<th>%s</th>", Esc(h))
		}
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
}

func (t *HTMLTable) numeric(i int) bool { return i < len(t.Numeric) && t.Numeric[i] }

// WriteRow appends a row (see WriteHead).
func (t *HTMLTable) WriteRow(b *strings.Builder, cells ...Cell) {
	b.WriteString("<tr>")
	for i, c := range cells {
		b.WriteString("<td")
		if t.numeric(i) {
			b.WriteString(" class=\"num\"")
		}
		if c.Key != "" {
			b.WriteString(" data-v=\"")
			b.WriteString(Esc(c.Key))
			b.WriteString("\"")
		}
		b.WriteString(">")
		if c.HTML != "" {
			b.WriteString(c.HTML)
		} else {
			b.WriteString(Esc(c.Text))
		}
		b.WriteString("</td>")
	}
	b.WriteString("</tr>\n")
}

// WriteEnd ends the table (see WriteHead).
func (t *HTMLTable) WriteEnd(b *strings.Builder) { b.WriteString("</tbody>\n</table>\n") }

// FormatFloat formats v in the shortest form that reads back exactly
// (deterministic; NaN and infinities as words).
func FormatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Human formats a count compactly: 950, 12.3k, 4.56M, 7.89G.
func Human(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e12:
		return trimZeros(fmt.Sprintf("%.3g", v/1e12)) + "T"
	case a >= 1e9:
		return trimZeros(fmt.Sprintf("%.3g", v/1e9)) + "G"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.3g", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.3g", v/1e3)) + "k"
	case a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return trimZeros(fmt.Sprintf("%.3g", v))
}

func trimZeros(s string) string {
	if strings.ContainsAny(s, "e") || !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
