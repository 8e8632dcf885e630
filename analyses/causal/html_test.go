package causal

import (
	"regexp"
	"strings"
	"testing"
)

// TestPlotsShareYAxis: the causal plots of report.html share one y-axis
// (a 0.1 % line is drawn flat next to a 9 % one, as in Coz's viewer), the
// titles are the lines with the file's base name, and a plot with one
// series has no legend over its curve.
func TestPlotsShareYAxis(t *testing.T) {
	pt := func(s int, v float64) CurvePoint { return CurvePoint{Speedup: s, Program: []*float64{&v}} }
	prof := &Profile{Program: "/bin/p", Points: []string{"done"}, Lines: []LineResult{
		{Line: "/a/very/long/directory/name/of/the/sources/p.c:10", Curve: []CurvePoint{pt(0, 0), pt(50, 0.09), pt(100, 0.09)}},
		{Line: "/a/very/long/directory/name/of/the/sources/p.c:20", Curve: []CurvePoint{pt(0, 0), pt(50, 0.0005), pt(100, 0.001)}},
	}}
	var b strings.Builder
	renderProfile(&b, prof, "p_causal.json")
	svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(b.String(), -1)
	if len(svgs) != 2 {
		t.Fatalf("%d plots", len(svgs))
	}
	yticks := regexp.MustCompile(`text-anchor="end">([^<]*)<`)
	var axes []string
	for _, s := range svgs {
		var ticks []string
		for _, m := range yticks.FindAllStringSubmatch(s, -1) {
			ticks = append(ticks, m[1])
		}
		axes = append(axes, strings.Join(ticks, " "))
		if strings.Contains(s, "<rect") {
			t.Error("a legend over a plot of one series")
		}
	}
	if axes[0] != axes[1] {
		t.Errorf("y-axes differ: %q vs %q", axes[0], axes[1])
	}
	for i, want := range []string{">p.c:10</text>", ">p.c:20</text>"} {
		if !strings.Contains(svgs[i], `class="title"`) || !strings.Contains(svgs[i], want) {
			t.Errorf("plot %d: no title %s", i+1, want)
		}
	}
}
