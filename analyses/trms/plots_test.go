package trms

import (
	"fmt"
	"strings"
	"testing"
)

// The report plots the routines whose own cost depends on their input size
// (issue 25 point 6), not the costliest frames: a driver seen with two
// input sizes holds the run's largest cost, a sort below it costs n² in
// itself over 8 input sizes, and a helper grows with 8 sizes too but costs
// almost nothing. Only the sort is plotted, first, with why.
func TestRenderHTMLChoosesInputSensitive(t *testing.T) {
	tr := newTracer(t, Config{App: "prog"})
	tr.call(1, "main")
	cell := 0
	for d := 0; d < 2; d++ {
		tr.call(1, "driver")
		for i := 0; i <= d; i++ {
			tr.read(1, fmt.Sprintf("d%d", i))
		}
		tr.p.Cost(1, 400000)
		for n := 4; n <= 512; n *= 2 {
			cell++
			tr.call(1, "isort")
			for i := range n / 2 {
				tr.read(1, fmt.Sprintf("v%d_%d", cell, i))
			}
			tr.p.Cost(1, uint64(n*n/4))
			tr.ret(1)
			tr.call(1, "helper")
			for i := range n / 2 {
				tr.read(1, fmt.Sprintf("h%d_%d", cell, i))
			}
			tr.p.Cost(1, uint64(n/16+1))
			tr.ret(1)
		}
		tr.ret(1)
	}
	tr.ret(1)
	paths, err := tr.p.WriteDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML(paths)
	if err != nil {
		t.Fatal(err)
	}
	h := sec.HTML
	plots := h[strings.Index(h, "Plots:"):]
	first := plots[strings.Index(plots, "<h3>"):]
	if !strings.HasPrefix(first, "<h3>isort ") {
		t.Errorf("first plotted routine: %.60s, want isort", first)
	}
	for _, no := range []string{"driver: cost vs TRMS", "helper: cost vs TRMS", "main: cost vs TRMS"} {
		if strings.Contains(h, no) {
			t.Errorf("section plots %q", no)
		}
	}
	// The table leads with it too.
	if row := h[strings.Index(h, "<tbody>"):]; !strings.HasPrefix(row[strings.Index(row, "<td>"):], "<td>isort</td>") {
		t.Errorf("first table row: %.80s, want isort", row)
	}
	if !strings.Contains(first, "Chosen: 8 input sizes (TRMS), worst cost ~ n^2.00") {
		t.Errorf("no reason for choosing isort:\n%.400s", first)
	}
}
