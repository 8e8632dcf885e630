package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Charts stay readable on real runs (issue 25 point 6): 2,001 threads do
// not draw a chart 40,000 pixels high (the largest bars and the mean of
// the others); a plot's legend lies right of its plot area, where it
// covers no curve; a long title is fitted to the chart's width.
func TestChartsBounded(t *testing.T) {
	bars := Bars{Title: "Threads", Unit: "ns", Parts: []string{"work", "blocked"}}
	for i := range 2001 {
		bars.Labels = append(bars.Labels, fmt.Sprintf("thread %d", i))
		bars.Values = append(bars.Values, []float64{float64(i % 7), 1})
	}
	svg := bars.SVG()
	h, _ := strconv.Atoi(regexp.MustCompile(`height="(\d+)"`).FindStringSubmatch(svg)[1])
	if h > 1200 || !strings.Contains(svg, "1962 others, mean") || strings.Count(svg, "<text x=\"104\"") != MaxBars {
		t.Errorf("2001 bars: chart %d px high, %d bar labels, others grouped: %v", h, strings.Count(svg, "<text x=\"104\""), strings.Contains(svg, "1962 others, mean"))
	}

	p := NewPlot("sqlite3VdbeMemMakeWriteable: curve bounding (TRMS), a long routine name", "n", "cost")
	p.Series = []Series{{Name: "f = n log n", X: []float64{0, 1, 2}, Y: []float64{0, 1, 2}}, {Name: "worst", X: []float64{0, 2}, Y: []float64{2, 0}}}
	svg = p.SVG()
	w := 440 // the plot's default width: the plot area ends at w - padR
	for _, m := range regexp.MustCompile(`<rect x="(\d+)"`).FindAllStringSubmatch(svg, -1) {
		if x, _ := strconv.Atoi(m[1]); x < w-padR {
			t.Errorf("legend swatch at x %d, inside the plot area (ends at %d)", x, w-padR)
		}
	}
	sw, _ := strconv.Atoi(regexp.MustCompile(`width="(\d+)"`).FindStringSubmatch(svg)[1])
	if !regexp.MustCompile(`<text class="title" x="\d+" y="15" textLength="\d+"`).MatchString(svg) || sw <= w {
		t.Errorf("title not fitted or no room for the legend (svg width %d):\n%.600s", sw, svg)
	}
}
