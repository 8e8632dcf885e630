package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// FlameNode is one calling context of a Flame: its routine's name, its
// parent's index in Flame.Nodes (-1 for a root) and its own (exclusive)
// value of each metric.
type FlameNode struct {
	Parent int
	Name   string
	Self   []float64
}

// Flame is a calling-context tree drawn as an icicle graph (roots on
// top, callees below, a context as wide as its inclusive value), one per
// metric, switched by buttons above it; a click on a context zooms to it
// (its ancestors stay, full width, above it), a click on a root zooms
// out. Contexts narrower than MinShare of the metric's total are left out
// (their width stays in their parent), so that a tree of 10,000 contexts
// stays a page of a few thousand rectangles; speedscope, on the JSON
// file, shows every one.
type Flame struct {
	ID      string   // unique on the page
	Metrics []string // names, one per Self value
	Units   []string // per metric, for the tooltips
	Nodes   []FlameNode
}

// Flame graph geometry.
const (
	flameWidth    = 1100
	flameRow      = 17
	flameMaxDepth = 64
	flameMinShare = 1.0 / 4000 // a 0.275 px context at full width
	flameCharPx   = 6.6        // average width of a label character at 11 px
)

// flameColors are warm colors, one picked per routine name (stable).
var flameColors = []string{"#e8743b", "#f0a23c", "#e65c40", "#f2c14e", "#d9543a", "#f09a5a", "#e9b44c", "#dd6e42"}

func flameColor(name string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return flameColors[h%uint32(len(flameColors))]
}

// HTML renders the graphs, or "" when every metric is zero.
func (f *Flame) HTML() string {
	n := len(f.Nodes)
	kids := make([][]int, n)
	var roots []int
	for i, nd := range f.Nodes {
		if nd.Parent < 0 || nd.Parent >= n {
			roots = append(roots, i)
		} else {
			kids[nd.Parent] = append(kids[nd.Parent], i)
		}
	}
	var b strings.Builder
	var shown []int
	for m := range f.Metrics {
		if f.total(m) > 0 {
			shown = append(shown, m)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "<div class=\"flames\" id=\"%s\">\n<p class=\"note\">Calling contexts as an icicle graph: each is as wide as its %s, its callees below it. Click a context to zoom to it, a top one to zoom out; hover for the numbers.", Esc(f.ID), "value (itself and its callees)")
	if len(shown) > 1 {
		b.WriteString(" Metric:")
		for j, m := range shown {
			pressed := "false"
			if j == 0 {
				pressed = "true"
			}
			fmt.Fprintf(&b, " <button type=\"button\" class=\"flame-metric\" data-flame=\"%s-%d\" aria-pressed=\"%s\">%s</button>", Esc(f.ID), m, pressed, Esc(f.Metrics[m]))
		}
	}
	b.WriteString("</p>\n")
	for j, m := range shown {
		f.writeMetric(&b, m, roots, kids, j == 0)
	}
	b.WriteString("</div>\n")
	return b.String()
}

// total is metric m's sum over every context.
func (f *Flame) total(m int) float64 {
	t := 0.0
	for _, nd := range f.Nodes {
		t += nd.Self[m]
	}
	return t
}

// writeMetric draws metric m's graph.
func (f *Flame) writeMetric(b *strings.Builder, m int, roots []int, kids [][]int, visible bool) {
	n := len(f.Nodes)
	incl := make([]float64, n)
	var sum func(i int) float64
	sum = func(i int) float64 {
		v := f.Nodes[i].Self[m]
		for _, k := range kids[i] {
			v += sum(k)
		}
		incl[i] = v
		return v
	}
	total := 0.0
	for _, r := range roots {
		total += sum(r)
	}
	unit := ""
	if m < len(f.Units) {
		unit = " " + f.Units[m]
	}
	type placed struct {
		i, depth int
		x, w     float64 // fractions of total
	}
	var out []placed
	maxDepth := 0
	order := func(list []int) []int {
		l := slices.Clone(list)
		slices.SortStableFunc(l, func(a, c int) int {
			return cmp.Or(cmp.Compare(incl[c], incl[a]), cmp.Compare(f.Nodes[a].Name, f.Nodes[c].Name))
		})
		return l
	}
	var place func(i, depth int, x float64)
	place = func(i, depth int, x float64) {
		w := incl[i] / total
		if w < flameMinShare || depth >= flameMaxDepth {
			return
		}
		out = append(out, placed{i, depth, x, w})
		maxDepth = max(maxDepth, depth)
		for _, k := range order(kids[i]) {
			place(k, depth+1, x)
			x += incl[k] / total
		}
	}
	x := 0.0
	for _, r := range order(roots) {
		place(r, 0, x)
		x += incl[r] / total
	}
	h := (maxDepth + 1) * flameRow
	style := ""
	if !visible {
		style = " style=\"display:none\""
	}
	fmt.Fprintf(b, "<svg class=\"flame\" id=\"%s-%d\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"%s>\n", Esc(f.ID), m, flameWidth, h, flameWidth, h, style)
	fmt.Fprintf(b, "<title>%s: %s%s in all</title>\n", Esc(f.Metrics[m]), Human(total), Esc(unit))
	for _, p := range out {
		nd := f.Nodes[p.i]
		px, pw := p.x*flameWidth, p.w*flameWidth
		fmt.Fprintf(b, "<g data-x=\"%s\" data-w=\"%s\" data-d=\"%d\" data-n=\"%s\"><title>%s: %s%s (%.2f %%), self %s</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
			FormatFloat(p.x), FormatFloat(p.w), p.depth, Esc(nd.Name), Esc(nd.Name), Human(incl[p.i]), Esc(unit), 100*p.w, Human(nd.Self[m]),
			px, p.depth*flameRow, math.Max(pw-0.5, 0.1), flameRow-1, flameColor(nd.Name))
		fmt.Fprintf(b, "<text x=\"%.2f\" y=\"%d\">%s</text></g>\n", px+3, p.depth*flameRow+12, Esc(flameLabel(nd.Name, pw)))
	}
	b.WriteString("</svg>\n")
}

// flameLabel is name cut to fit w pixels ("" when not even 3 characters
// fit): the script recomputes it after a zoom.
func flameLabel(name string, w float64) string {
	fit := int((w - 6) / flameCharPx)
	r := []rune(name)
	switch {
	case fit < 3:
		return ""
	case len(r) <= fit:
		return name
	}
	return string(r[:fit-1]) + "…"
}

// flameCSS and flameJS are the page's styles and script for flame graphs.
// flameJS zooms (see Flame) and switches metrics, and records on the html
// element how many graphs it set up (data-report-flames). Like pageJS it
// must not contain "<" or "&".
const flameCSS = `svg.flame { display: block; margin: .3em 0; font-size: 11px; cursor: pointer; }
svg.flame text { fill: #222; pointer-events: none; }
svg.flame rect:hover { stroke: #000; stroke-width: 1; }
button.flame-metric[aria-pressed="true"] { font-weight: bold; }
`

const flameJS = `(function () {
  var W = 1100, CH = 6.6, n = 0;
  function label(name, w) {
    var fit = Math.floor((w - 6) / CH);
    if (3 > fit) { return ''; }
    if (fit >= name.length) { return name; }
    return name.slice(0, fit - 1) + '\u2026';
  }
  Array.prototype.forEach.call(document.querySelectorAll('svg.flame'), function (svg) {
    var gs = Array.prototype.slice.call(svg.querySelectorAll('g'));
    function zoom(zx, zw, zd) {
      gs.forEach(function (g) {
        var x = parseFloat(g.getAttribute('data-x')), w = parseFloat(g.getAttribute('data-w')), d = parseInt(g.getAttribute('data-d'), 10);
        var nx = (x - zx) / zw, nw = w / zw, vis;
        if (zd > d) {
          // An ancestor of the zoomed context spans it: drawn full width.
          vis = (x - zx > 1e-12) ? false : !(zx + zw - (x + w) > 1e-12);
          nx = 0; nw = 1;
        } else {
          vis = (nx + nw > 1e-9) ? (1 - 1e-9 > nx) : false;
        }
        g.style.display = vis ? '' : 'none';
        if (!vis) { return; }
        var r = g.querySelector('rect'), t = g.querySelector('text');
        r.setAttribute('x', (nx * W).toFixed(2));
        r.setAttribute('width', Math.max(nw * W - 0.5, 0.1).toFixed(2));
        t.setAttribute('x', (nx * W + 3).toFixed(2));
        t.textContent = label(g.getAttribute('data-n'), nw * W);
      });
    }
    gs.forEach(function (g) {
      g.addEventListener('click', function () {
        var d = parseInt(g.getAttribute('data-d'), 10);
        if (d === 0) { zoom(0, 1, 0); return; }
        zoom(parseFloat(g.getAttribute('data-x')), parseFloat(g.getAttribute('data-w')), d);
      });
    });
    n++;
  });
  Array.prototype.forEach.call(document.querySelectorAll('button.flame-metric'), function (btn) {
    btn.addEventListener('click', function () {
      var box = btn.closest('div.flames');
      Array.prototype.forEach.call(box.querySelectorAll('button.flame-metric'), function (o) {
        o.setAttribute('aria-pressed', o === btn ? 'true' : 'false');
        document.getElementById(o.getAttribute('data-flame')).style.display = o === btn ? '' : 'none';
      });
    });
  });
  document.documentElement.setAttribute('data-report-flames', String(n));
})();
`
