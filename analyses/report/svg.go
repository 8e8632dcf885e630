package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Plot is an inline SVG chart of series of points against linear axes,
// drawn without any library: a point's tooltip is its SVG title.
type Plot struct {
	Title          string
	XLabel, YLabel string
	Width, Height  int // pixels; 0: 440 × 280
	// Axis ranges: the data's, widened to include ZeroX/ZeroY's zero and
	// the bounds below when finite (NewPlot sets them to NaN).
	ZeroX, ZeroY bool
	XMin, XMax   float64 // NaN or equal: from the data
	YMin, YMax   float64
	// XFormat and YFormat format tick labels (default Human).
	XFormat, YFormat func(float64) string
	Series           []Series
}

// Series is one set of points: drawn as circles (Marker), joined by a line
// (Line), or a curve sampled over the x range of the other series' points
// (Func).
type Series struct {
	Name   string
	Color  string
	X, Y   []float64
	Tips   []string // per point; empty: "(x, y)"
	Marker bool
	Line   bool
	Dashed bool
	Func   func(x float64) float64 // a curve instead of points
}

// NewPlot returns a plot with unset axis bounds.
func NewPlot(title, xlabel, ylabel string) *Plot {
	return &Plot{Title: title, XLabel: xlabel, YLabel: ylabel,
		XMin: math.NaN(), XMax: math.NaN(), YMin: math.NaN(), YMax: math.NaN()}
}

// Palette is the series colours, in order.
var Palette = []string{"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

const (
	padL, padR, padT, padB = 58, 14, 24, 40
	curveSteps             = 96
)

// SVG renders the plot.
func (p *Plot) SVG() string {
	w, h := p.Width, p.Height
	if w == 0 {
		w, h = 440, 280
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for i := range s.X {
			if finite(s.X[i]) && finite(s.Y[i]) {
				xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
				ymin, ymax = math.Min(ymin, s.Y[i]), math.Max(ymax, s.Y[i])
			}
		}
	}
	dxmin, dxmax := xmin, xmax // the data's range, over which curves are drawn
	if finite(p.XMin) {
		xmin = math.Min(xmin, p.XMin)
	}
	if finite(p.XMax) {
		xmax = math.Max(xmax, p.XMax)
	}
	if p.ZeroX {
		xmin, xmax = math.Min(xmin, 0), math.Max(xmax, 0)
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	if math.IsInf(dxmin, 1) {
		dxmin, dxmax = xmin, xmax
	}
	// Curves: sample them over the x range to size the y axis.
	curves := make([][][2]float64, len(p.Series))
	for i, s := range p.Series {
		if s.Func == nil {
			continue
		}
		for k := 0; k <= curveSteps; k++ {
			x := dxmin + (dxmax-dxmin)*float64(k)/curveSteps
			y := s.Func(x)
			if finite(y) {
				curves[i] = append(curves[i], [2]float64{x, y})
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if finite(p.YMin) {
		ymin = math.Min(ymin, p.YMin)
	}
	if finite(p.YMax) {
		ymax = math.Max(ymax, p.YMax)
	}
	if p.ZeroY {
		ymin, ymax = math.Min(ymin, 0), math.Max(ymax, 0)
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 0, 1
	}
	xt := ticks(xmin, xmax)
	yt := ticks(ymin, ymax)
	xmin, xmax = math.Min(xmin, xt[0]), math.Max(xmax, xt[len(xt)-1])
	ymin, ymax = math.Min(ymin, yt[0]), math.Max(ymax, yt[len(yt)-1])
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	pw, ph := float64(w-padL-padR), float64(h-padT-padB)
	sx := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	sy := func(y float64) float64 { return padT + ph - (y-ymin)/(ymax-ymin)*ph }
	xf, yf := p.XFormat, p.YFormat
	if xf == nil {
		xf = Human
	}
	if yf == nil {
		yf = Human
	}

	// The legend goes right of the plot area, where it covers no curve.
	lw := 0
	for _, s := range p.Series {
		if s.Name != "" {
			lw = max(lw, legendW+6*utf8.RuneCountInString(s.Name))
		}
	}
	lw = min(lw, 2*legendW+120)
	var b strings.Builder
	fmt.Fprintf(&b, "<svg class=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", w+lw, h, w+lw, h)
	fmt.Fprintf(&b, "<title>%s</title>\n", Esc(p.Title))
	b.WriteString(titleText(p.Title, padL, w+lw-padL-4))
	for _, t := range xt {
		x := sx(t)
		fmt.Fprintf(&b, "<line class=\"grid\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/>", f1(x), padT, f1(x), h-padB)
		fmt.Fprintf(&b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(x), h-padB+14, Esc(xf(t)))
	}
	for _, t := range yt {
		y := sy(t)
		fmt.Fprintf(&b, "<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>", padL, f1(y), w-padR, f1(y))
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\">%s</text>\n", padL-4, f1(y+4), Esc(yf(t)))
	}
	fmt.Fprintf(&b, "<path class=\"axis\" fill=\"none\" d=\"M%d %dV%dH%d\"/>\n", padL, padT, h-padB, w-padR)
	fmt.Fprintf(&b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(padL+pw/2), h-6, Esc(p.XLabel))
	fmt.Fprintf(&b, "<text x=\"12\" y=\"%s\" text-anchor=\"middle\" transform=\"rotate(-90 12 %s)\">%s</text>\n", f1(padT+ph/2), f1(padT+ph/2), Esc(p.YLabel))
	// Legend, right of the plot area.
	ly := padT + 4
	for i, s := range p.Series {
		if s.Name == "" {
			continue
		}
		c := p.color(i)
		lx := w - padR + 10
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", lx, ly+3, c, lx+14, ly+7, Esc(s.Name))
		ly += 13
	}
	for i, s := range p.Series {
		c := p.color(i)
		dash := ""
		if s.Dashed {
			dash = " stroke-dasharray=\"5 3\""
		}
		var pts [][2]float64
		if s.Func != nil {
			pts = curves[i]
		} else if s.Line {
			for k := range s.X {
				if finite(s.X[k]) && finite(s.Y[k]) {
					pts = append(pts, [2]float64{s.X[k], s.Y[k]})
				}
			}
		}
		if len(pts) > 1 {
			var d strings.Builder
			for k, pt := range pts {
				if k == 0 {
					d.WriteString("M")
				} else {
					d.WriteString("L")
				}
				d.WriteString(f1(sx(pt[0])) + " " + f1(sy(pt[1])))
			}
			fmt.Fprintf(&b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s d=\"%s\"><title>%s</title></path>\n", c, dash, d.String(), Esc(s.Name))
		}
		if !s.Marker {
			continue
		}
		for k := range s.X {
			if !finite(s.X[k]) || !finite(s.Y[k]) {
				continue
			}
			tip := fmt.Sprintf("%s: (%s, %s)", s.Name, FormatFloat(s.X[k]), FormatFloat(s.Y[k]))
			if k < len(s.Tips) {
				tip = s.Tips[k]
			}
			fmt.Fprintf(&b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\" fill-opacity=\"0.75\"><title>%s</title></circle>\n", f1(sx(s.X[k])), f1(sy(s.Y[k])), c, Esc(tip))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func (p *Plot) color(i int) string {
	if c := p.Series[i].Color; c != "" {
		return c
	}
	return Palette[i%len(Palette)]
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// f1 formats a coordinate with one decimal.
func f1(v float64) string { return trimZeros(fmt.Sprintf("%.1f", v)) }

// ticks returns about five round tick values covering [lo, hi].
func ticks(lo, hi float64) []float64 {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			return []float64{0, 1}
		}
		d := math.Abs(lo) / 2
		lo, hi = lo-d, hi+d
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step) * step
	var out []float64
	for i := 0; ; i++ {
		t := first + float64(i)*step
		if math.Abs(t) < step*1e-9 {
			t = 0
		}
		out = append(out, t)
		if t >= hi-step*1e-9 || i > 20 {
			break
		}
	}
	return out
}

// Bars is a horizontal stacked bar chart: one bar per label, one segment
// per part, drawn as SVG paths with a tooltip each.
// legendW is the width of a legend's swatch and margins, titleCharW an
// upper estimate of a title character's width (12px bold).
const legendW, titleCharW = 30, 7.5

// titleText is a chart title at x, squeezed into width when it would be
// longer (SVG text is not wrapped nor clipped by the browser: a long
// routine name ran off the chart).
func titleText(title string, x, width int) string {
	fit := ""
	if float64(utf8.RuneCountInString(title))*titleCharW > float64(width) {
		fit = fmt.Sprintf(" textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"", width)
	}
	return fmt.Sprintf("<text class=\"title\" x=\"%d\" y=\"15\"%s>%s</text>\n", x, fit, Esc(title))
}

// MaxBars is the most bars a chart draws: beyond, the largest MaxBars-1
// (by total, in their order) and one bar for the mean of the others, so a
// run of thousands of threads does not draw a chart thousands of bars high.
const MaxBars = 40

type Bars struct {
	Title  string
	Unit   string   // of the values, for the axis and tooltips
	Labels []string // one per bar
	Parts  []string // one per segment kind
	Colors []string // per part (default Palette)
	Values [][]float64
}

// grouped returns c with its largest MaxBars-1 bars and one for the mean
// of the others.
func (c *Bars) grouped() *Bars {
	sum := func(row []float64) float64 {
		s := 0.0
		for _, v := range row {
			s += math.Max(v, 0)
		}
		return s
	}
	idx := make([]int, len(c.Labels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sum(c.Values[b]), sum(c.Values[a])) })
	keep := idx[:MaxBars-1]
	slices.Sort(keep)
	g := &Bars{Title: c.Title, Unit: c.Unit, Parts: c.Parts, Colors: c.Colors}
	kept := make([]bool, len(c.Labels))
	for _, i := range keep {
		kept[i] = true
		g.Labels, g.Values = append(g.Labels, c.Labels[i]), append(g.Values, c.Values[i])
	}
	rest := len(c.Labels) - len(keep)
	mean := make([]float64, len(c.Parts))
	for i, row := range c.Values {
		if !kept[i] {
			for j, v := range row {
				if j < len(mean) {
					mean[j] += v / float64(rest)
				}
			}
		}
	}
	g.Title = fmt.Sprintf("%s (%d largest; last: mean of %d others)", c.Title, len(keep), rest)
	g.Labels, g.Values = append(g.Labels, fmt.Sprintf("%d others, mean", rest)), append(g.Values, mean)
	return g
}

// SVG renders the chart.
func (c *Bars) SVG() string {
	if len(c.Labels) > MaxBars {
		return c.grouped().SVG()
	}
	const w, barH, gap, left = 640, 14, 6, 110
	h := padT + len(c.Labels)*(barH+gap) + 44
	total := 0.0
	for _, row := range c.Values {
		s := 0.0
		for _, v := range row {
			s += math.Max(v, 0)
		}
		total = math.Max(total, s)
	}
	if total == 0 {
		total = 1
	}
	xt := ticks(0, total)
	top := xt[len(xt)-1]
	pw := float64(w - left - padR)
	sx := func(v float64) float64 { return left + v/top*pw }
	var b strings.Builder
	fmt.Fprintf(&b, "<svg class=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", w, h, w, h)
	fmt.Fprintf(&b, "<title>%s</title>\n", Esc(c.Title))
	b.WriteString(titleText(c.Title, left, w-left-4))
	bottom := padT + len(c.Labels)*(barH+gap)
	for _, t := range xt {
		x := sx(t)
		fmt.Fprintf(&b, "<line class=\"grid\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/><text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			f1(x), padT, f1(x), bottom, f1(x), bottom+14, Esc(Human(t)))
	}
	fmt.Fprintf(&b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(left+pw/2), bottom+28, Esc(c.Unit))
	for i, label := range c.Labels {
		y := padT + i*(barH+gap)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left-6, y+barH-3, Esc(label))
		x := 0.0
		for j, v := range c.Values[i] {
			if v <= 0 {
				continue
			}
			color := Palette[j%len(Palette)]
			if j < len(c.Colors) {
				color = c.Colors[j]
			}
			x0, x1 := sx(x), sx(x+v)
			x += v
			fmt.Fprintf(&b, "<path fill=\"%s\" d=\"M%s %dH%sV%dH%sZ\"><title>%s</title></path>\n", color, f1(x0), y, f1(x1), y+barH, f1(x0),
				Esc(fmt.Sprintf("%s: %s %s %s", label, c.Parts[j], FormatFloat(v), c.Unit)))
		}
	}
	// Legend under the axis.
	lx := left
	for j, part := range c.Parts {
		color := Palette[j%len(Palette)]
		if j < len(c.Colors) {
			color = c.Colors[j]
		}
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", lx, bottom+34, color, lx+14, bottom+43, Esc(part))
		lx += 14 + 7*len(part) + 16
	}
	b.WriteString("</svg>\n")
	return b.String()
}
