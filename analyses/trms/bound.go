package trms

import (
	"fmt"
	"math"

	"emuprof/analyses/report"
)

// Curve bounding by "guess ratio" (PLDI'12, Section 2, "Asymptotics vs.
// finite experiments", and Figure 5(a); aprof-plot's ratio graph): to see
// whether a guess function f bounds a routine's cost T(n), follow the
// trend of T(n)/f(n) against the input size n. The ratio stabilizes to a
// constant if T is in O(f) and eventually grows if it is not; if it falls
// towards zero, f grows faster than the cost (a loose bound). aprof-plot
// offers n^a·(log n)^b·(log log n)^c for a menu of a, b, c, one at a time;
// the report draws the usual candidates together, each divided by its own
// largest value so that they share one axis, and names the slowest-growing
// candidate whose ratio does not grow.

// boundFunc is a candidate bounding function f(n).
type boundFunc struct {
	Name string
	F    func(n float64) float64
}

// boundFuncs are the candidates, slowest-growing first: a constant (so that
// a cost that does not grow is not called linear), then aprof-plot's ratio
// menu (n, n log log n, n log n, n^1.5, n^2, n^3) without n log log n: the
// ratio of an n log n cost to it, log n / log log n, falls up to n = e^e
// (about 15) and rises only slowly after, so on the sizes profiles mostly
// hold n log log n passes for a bound of n log n costs.
var boundFuncs = []boundFunc{
	{"1", func(float64) float64 { return 1 }},
	{"n", func(n float64) float64 { return n }},
	{"n log n", func(n float64) float64 { return n * math.Log(n) }},
	{"n^1.5", func(n float64) float64 { return math.Pow(n, 1.5) }},
	{"n^2", func(n float64) float64 { return n * n }},
	{"n^3", func(n float64) float64 { return n * n * n }},
}

// Bound-guess settings: the ratio's trend is the least-squares slope of
// log(T/f) against log n over input sizes of at least boundMinN (log n is
// small below); a slope up to boundFlat counts as flat.
const (
	boundMinN = 3
	boundFlat = 0.05
)

// BoundGuess is the result of curve bounding on a routine's worst costs.
type BoundGuess struct {
	// Slopes[i] is the trend of T(n)/f(n) for boundFuncs[i]: the slope of
	// log ratio against log n (0: flat, > 0: growing).
	Slopes []float64
	// Best is the index in boundFuncs of the slowest-growing f whose ratio
	// does not grow (-1: none of them bounds the cost).
	Best int
	// Points is the number of input sizes used.
	Points int
}

// GuessBound runs curve bounding on the worst cost of pts (sorted by
// input size); ok is false with fewer than two input sizes of at least
// boundMinN.
func GuessBound(pts []Point) (g BoundGuess, ok bool) {
	var lx []float64
	var worst []float64
	var ns []float64
	for i := range pts {
		t := &pts[i].Tuple
		if t.N < boundMinN || t.Max == 0 {
			continue
		}
		n := float64(t.N)
		ns, lx, worst = append(ns, n), append(lx, math.Log(n)), append(worst, float64(t.Max))
	}
	if len(ns) < 2 {
		return g, false
	}
	g.Best, g.Points = -1, len(ns)
	ly := make([]float64, len(ns))
	for fi, bf := range boundFuncs {
		for i, n := range ns {
			ly[i] = math.Log(worst[i] / bf.F(n))
		}
		s := slope(lx, ly)
		g.Slopes = append(g.Slopes, s)
		if g.Best < 0 && s <= boundFlat {
			g.Best = fi
		}
	}
	return g, true
}

// slope is the least-squares slope of y against x.
func slope(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// Caption says what curve bounding found, for a figure caption.
func (g BoundGuess) Caption(label string) string {
	s := fmt.Sprintf("Curve bounding (%s, worst cost, %d input sizes): T(n)/f(n) for each f, divided by its largest value. Rising: f grows more slowly than the cost; falling: f grows faster; flat: f bounds the cost tightly. ", label, g.Points)
	if g.Best < 0 {
		return s + fmt.Sprintf("Even T(n)/%s still grows (trend %+.2f): the cost grows faster than every candidate.", boundFuncs[len(boundFuncs)-1].Name, g.Slopes[len(g.Slopes)-1])
	}
	s += fmt.Sprintf("Guess: O(%s), the slowest-growing f whose ratio does not grow (trend %+.2f)", boundFuncs[g.Best].Name, g.Slopes[g.Best])
	if g.Best > 0 {
		s += fmt.Sprintf("; with %s it still grows (%+.2f)", boundFuncs[g.Best-1].Name, g.Slopes[g.Best-1])
	}
	return s + "."
}

// ratioPlot draws T(n)/f(n) of the worst costs for every candidate f,
// each divided by its largest value, against the input size.
func ratioPlot(name, label string, pts []Point, g BoundGuess) string {
	p := report.NewPlot(name+": curve bounding ("+label+")", "input size ("+label+", cells)", "T(n) / f(n), scaled to 1")
	p.ZeroX, p.ZeroY = true, true
	p.YMax = 1
	for fi, bf := range boundFuncs {
		s := report.Series{Name: "f = " + bf.Name, Color: report.Palette[fi%len(report.Palette)], Line: true, Marker: len(pts) <= 40}
		if fi == g.Best {
			s.Name += " (guess)"
		} else {
			s.Dashed = true
		}
		peak := 0.0
		var raw []float64
		for _, i := range sample(len(pts)) {
			t := &pts[i].Tuple
			if t.N < boundMinN || t.Max == 0 {
				continue
			}
			r := float64(t.Max) / bf.F(float64(t.N))
			peak = max(peak, r)
			s.X = append(s.X, float64(t.N))
			raw = append(raw, r)
			s.Tips = append(s.Tips, fmt.Sprintf("%s %d: worst cost %d, T/(%s) = %s", label, t.N, t.Max, bf.Name, report.FormatFloat(r)))
		}
		if peak == 0 {
			continue
		}
		for _, r := range raw {
			s.Y = append(s.Y, r/peak)
		}
		p.Series = append(p.Series, s)
	}
	return p.SVG()
}
