package trms

import (
	"strings"
	"testing"

	"emuprof/analyses/report"
)

// A fit that explains little of the data is not shown as a growth curve.
func TestFitCellsHidesPoorFits(t *testing.T) {
	if c, r2 := fitCells(&report.PowerFit{A: 1, B: 2, C: 1, R2: 0.29}); c != "no clear trend" || r2 != "0.290" {
		t.Errorf("poor fit shown as %q %q", c, r2)
	}
	if c, _ := fitCells(&report.PowerFit{A: 1, B: 2, C: 2, R2: 0.99}); !strings.Contains(c, "n^2") {
		t.Errorf("good fit shown as %q", c)
	}
	if c, r2 := fitCells(nil); c != "-" || r2 != "-" {
		t.Errorf("no fit shown as %q %q", c, r2)
	}
}
