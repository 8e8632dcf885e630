package trms

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// boundPoints are worst costs cost(n) on input sizes 4, 8, ..., 4096.
func boundPoints(cost func(n float64) float64) []Point {
	var pts []Point
	for n := uint64(4); n <= 4096; n *= 2 {
		c := uint64(math.Round(cost(float64(n))))
		pts = append(pts, Point{Tuple: Tuple{N: n, Min: c, Max: c, Sum: c, Calls: 1}})
	}
	return pts
}

// Curve bounding names the slowest-growing candidate that bounds the cost
// (PLDI'12's guess ratio: T/f flattens when T is in O(f), grows when not):
// gg_sort's combsort, n log n in Figure 5(a), a linear scan, a constant
// cost, insertion
// sort's n², and a cubic loop nest; an exponential cost has no candidate.
func TestGuessBound(t *testing.T) {
	for _, c := range []struct {
		cost func(n float64) float64
		want string
	}{
		{func(n float64) float64 { return 3*n + 40 }, "n"},
		{func(n float64) float64 { return 250 }, "1"},
		{func(n float64) float64 { return 5*n*math.Log(n) + 100 }, "n log n"},
		{func(n float64) float64 { return n*n/2 + 7*n }, "n^2"},
		{func(n float64) float64 { return n * n * n }, "n^3"},
		{func(n float64) float64 { return math.Pow(n, 1.5) * 4 }, "n^1.5"},
	} {
		g, ok := GuessBound(boundPoints(c.cost))
		if !ok || g.Best < 0 || boundFuncs[g.Best].Name != c.want {
			t.Errorf("want %s, got %+v", c.want, g)
			continue
		}
		if !strings.Contains(g.Caption("TRMS"), "O("+c.want+")") {
			t.Errorf("caption %q", g.Caption("TRMS"))
		}
	}
	g, ok := GuessBound(boundPoints(func(n float64) float64 { return math.Pow(2, math.Sqrt(n)) }))
	if !ok || g.Best != -1 || !strings.Contains(g.Caption("RMS"), "grows faster than every candidate") {
		t.Errorf("exponential: %+v %s", g, g.Caption("RMS"))
	}
	if _, ok := GuessBound(boundPoints(func(n float64) float64 { return n })[:1]); ok {
		t.Error("one input size: no trend")
	}
}

// The ratio plot draws one path per candidate, scaled to at most 1.
func TestRatioPlot(t *testing.T) {
	pts := boundPoints(func(n float64) float64 { return n * n })
	g, _ := GuessBound(pts)
	svg := ratioPlot("isort", "TRMS", pts, g)
	if n := strings.Count(svg, "<path"); n < len(boundFuncs) {
		t.Errorf("%d paths, want one per candidate (%d):\n%s", n, len(boundFuncs), svg)
	}
	if !strings.Contains(svg, "f = n^2 (guess)") {
		t.Errorf("guess not labelled")
	}
}

// The trms section draws curve bounding for a routine seen with several
// input sizes, and guesses its bound: a routine of cost n² on n cells.
func TestRenderHTMLCurveBounding(t *testing.T) {
	tr := newTracer(t, Config{App: "prog"})
	tr.call(1, "main")
	for n := 4; n <= 64; n *= 2 {
		tr.call(1, "isort")
		for i := range n {
			tr.read(1, fmt.Sprintf("v%d", i))
		}
		tr.p.Cost(1, uint64(n*n))
		tr.ret(1)
	}
	tr.ret(1)
	dir := t.TempDir()
	paths, err := tr.p.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML(paths)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"isort: curve bounding (TRMS)", "f = n^2 (guess)", "Guess: O(n^2)"} {
		if !strings.Contains(sec.HTML, want) {
			t.Errorf("section lacks %q", want)
		}
	}
}

// A program of thousands of threads has a report per thread: the section
// names the first and last few, and how many.
func TestFileList(t *testing.T) {
	if got := fileList([]string{"a", "b"}); got != "a, b" {
		t.Errorf("%q", got)
	}
	var many []string
	for i := range 4002 {
		many = append(many, fmt.Sprintf("p_%d.aprof", i))
	}
	if got, want := fileList(many), "4002 reports: p_0.aprof, p_1.aprof, p_2.aprof … p_4000.aprof, p_4001.aprof"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
