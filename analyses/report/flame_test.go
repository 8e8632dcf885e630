package report

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// bigFlame is a tree of n contexts: a root, and every context i > 0 a
// child of i/8, each with its own value of i (first metric) and, for the
// second metric, only the last context.
func bigFlame(n int) *Flame {
	f := &Flame{ID: "t", Metrics: []string{"work", "idleness", "none"}, Units: []string{"ns", "ns", "ns"}}
	for i := 0; i < n; i++ {
		p := -1
		if i > 0 {
			p = i / 8
		}
		idle := 0.0
		if i == n-1 {
			idle = 5
		}
		f.Nodes = append(f.Nodes, FlameNode{Parent: p, Name: fmt.Sprintf("routine_with_a_long_name_%d", i), Self: []float64{float64(i), idle, 0}})
	}
	return f
}

// At 10,000 contexts the graph stays readable and small: the contexts
// narrower than 1/4000 of the total are left out, the labels fit their
// boxes, a metric that is zero everywhere has no graph (nor button), and
// the fragment is well-formed XML and the same bytes every time.
func TestFlameTenThousandContexts(t *testing.T) {
	f := bigFlame(10000)
	h := f.HTML()
	if h != bigFlame(10000).HTML() {
		t.Fatal("two renderings differ")
	}
	if err := xml.Unmarshal([]byte("<div>"+h+"</div>"), new(any)); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if len(h) > 1500000 {
		t.Errorf("%d bytes for 10,000 contexts", len(h))
	}
	svgs := strings.Split(h, "<svg ")[1:]
	if len(svgs) != 2 || strings.Contains(h, ">none</button>") {
		t.Fatalf("%d graphs, want work and idleness (none is zero everywhere)", len(svgs))
	}
	work := svgs[0]
	n := strings.Count(work, "<rect ")
	if n < 100 || n > 4000 {
		t.Errorf("work graph: %d rectangles, want the contexts over 1/4000 of the total", n)
	}
	// Every label fits its rectangle.
	re := regexp.MustCompile(`<rect x="[0-9.]+" y="\d+" width="([0-9.]+)" height="\d+" fill="#[0-9a-f]+"/><text x="[0-9.]+" y="\d+">([^<]*)</text>`)
	ms := re.FindAllStringSubmatch(work, -1)
	if len(ms) != n {
		t.Fatalf("%d labelled rectangles of %d", len(ms), n)
	}
	labelled := 0
	for _, m := range ms {
		w, _ := strconv.ParseFloat(m[1], 64)
		if l := len([]rune(m[2])); l > 0 {
			labelled++
			if float64(l)*flameCharPx > w {
				t.Errorf("label %q (%d chars) wider than its %.1f px", m[2], l, w)
			}
		}
	}
	if labelled == 0 {
		t.Error("no label drawn")
	}
	// The idleness graph is the one context and its ancestors.
	if got := strings.Count(svgs[1], "<rect "); got != 6 {
		t.Errorf("idleness graph: %d rectangles, want the 6 contexts from the root to context 9999", got)
	}
}
