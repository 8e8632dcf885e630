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
	// An exponent that rounds to 0 is a logarithm or a constant, not two
	// terms that cancel (sqlite3's "-1.25e+07 + 1.25e+07·n^0.00").
	if c, _ := fitCells(&report.PowerFit{A: -1.25e7, B: 1.25e7 + 40, C: 0.004, R2: 0.998}); c != "40 + 5e+04·ln n" {
		t.Errorf("near-zero exponent: %q", c)
	}
	if c, _ := fitCells(&report.PowerFit{A: 10, B: 0, C: 0, R2: 1}); c != "constant 10" {
		t.Errorf("constant fit: %q", c)
	}
}
