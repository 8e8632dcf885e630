// Package report holds the generic parts of the human-facing outputs:
// curve fitting, aligned text tables and atomic file writing.
package report

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// PowerFit is a least-squares fit of y = A + B·x^C.
type PowerFit struct {
	A, B, C float64
	R2      float64 // coefficient of determination (1 for a perfect fit)
	SSE     float64 // sum of squared residuals
}

// ErrTooFewPoints is returned when there are fewer than 3 distinct x.
var ErrTooFewPoints = errors.New("report: fewer than 3 distinct x values to fit")

// Exponent search range of FitPower.
const (
	MinExponent = 0.0
	MaxExponent = 4.0
)

// FitPower fits y = a + b·x^c by least squares, c in [0, 4]: for a fixed c
// the model is linear in (a, b), solved in closed form; the c minimizing
// the squared error is found by a grid search (step 0.02) refined by a
// golden-section search around the best grid point. x values must be
// non-negative.
func FitPower(xs, ys []float64) (PowerFit, error) {
	// A fit is a pure function of the points, and emuprof profile fits
	// every routine's points twice: for the text summary at the end of
	// the run, and for report.html from the files it wrote (trms). The
	// second is read from fits.
	key := make([]byte, 0, 16*len(xs)+8)
	key = binary.LittleEndian.AppendUint64(key, uint64(len(xs)))
	for i := range xs {
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(xs[i]))
	}
	for i := range ys {
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(ys[i]))
	}
	fitsMu.Lock()
	r, ok := fits[string(key)]
	fitsMu.Unlock()
	if ok {
		return r.fit, r.err
	}
	fit, err := fitPower(xs, ys)
	if len(xs) >= 3 {
		fitsMu.Lock()
		if len(fits) >= maxFits {
			clear(fits)
		}
		fits[string(key)] = fitResult{fit, err}
		fitsMu.Unlock()
	}
	return fit, err
}

// fits remembers FitPower's results by their points (at most maxFits).
var (
	fitsMu sync.Mutex
	fits   = map[string]fitResult{}
)

const maxFits = 1 << 16

type fitResult struct {
	fit PowerFit
	err error
}

func fitPower(xs, ys []float64) (PowerFit, error) {
	if len(xs) != len(ys) {
		return PowerFit{}, fmt.Errorf("report: fit: %d x values but %d y values", len(xs), len(ys))
	}
	xmax := 0.0
	distinct := make(map[float64]bool)
	for i, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			return PowerFit{}, fmt.Errorf("report: fit: bad point (%g, %g)", x, ys[i])
		}
		xmax = math.Max(xmax, x)
		distinct[x] = true
	}
	if len(distinct) < 3 {
		return PowerFit{}, ErrTooFewPoints
	}
	// Scale x to [0, 1] for conditioning; b is scaled back at the end.
	u := make([]float64, len(xs))
	for i, x := range xs {
		u[i] = x / xmax
	}
	vs := make([]float64, len(u))
	sse := func(c float64) float64 { _, _, e := linear(u, ys, c, vs); return e }

	const step = 0.02
	best, bestErr := MinExponent, math.Inf(1)
	for i := 0; ; i++ {
		c := MinExponent + float64(i)*step
		if c > MaxExponent+1e-9 {
			break
		}
		if e := sse(c); e < bestErr {
			best, bestErr = c, e
		}
	}
	lo, hi := math.Max(MinExponent, best-step), math.Min(MaxExponent, best+step)
	const phi = 0.6180339887498949
	x1, x2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
	f1, f2 := sse(x1), sse(x2)
	for range 60 {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - phi*(hi-lo)
			f1 = sse(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + phi*(hi-lo)
			f2 = sse(x2)
		}
	}
	if c := (lo + hi) / 2; sse(c) <= bestErr {
		best = c
	}
	a, b, e := linear(u, ys, best, vs)
	// Round-off residue (e.g. a = 1e-14 for exact n^2 data) reads as 0.
	ymax := 0.0
	for _, y := range ys {
		ymax = math.Max(ymax, math.Abs(y))
	}
	if math.Abs(a) < 1e-9*ymax {
		a = 0
	}
	if math.Abs(b) < 1e-9*ymax {
		b = 0
	}
	fit := PowerFit{A: a, B: b / math.Pow(xmax, best), C: best, SSE: e}
	mean := 0.0
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	sst := 0.0
	for _, y := range ys {
		sst += (y - mean) * (y - mean)
	}
	switch {
	case sst > 0:
		fit.R2 = 1 - e/sst
	case e <= 1e-12:
		fit.R2 = 1
	}
	return fit, nil
}

// linear solves y = a + b·u^c by least squares for a fixed c and returns
// the squared error.
// vs holds u^c per point for the second pass (len(u) of scratch: math.Pow
// is most of a fit's time, and a summary fits every routine twice).
func linear(u, y []float64, c float64, vs []float64) (a, b, sse float64) {
	n := float64(len(u))
	var sv, sy, svv, svy float64
	for i := range u {
		vi := 1.0
		if c != 0 {
			vi = math.Pow(u[i], c)
		}
		vs[i] = vi
		sv += vi
		sy += y[i]
		svv += vi * vi
		svy += vi * y[i]
	}
	den := n*svv - sv*sv
	if math.Abs(den) <= 1e-12*math.Max(1, n*svv) { // v constant: b undetermined
		a, b = sy/n, 0
	} else {
		b = (n*svy - sv*sy) / den
		a = (sy - b*sv) / n
	}
	for i := range u {
		r := y[i] - a - b*vs[i]
		sse += r * r
	}
	return a, b, sse
}

// String formats the fit as "a + b·n^c".
//
// An exponent that rounds to 0 would print as a sum of two large terms that
// cancel ("-1.25e+07 + 1.25e+07·n^0.00"): near c = 0, a + b·n^c is
// (a+b) + b·c·ln n, so the fit is written that way, and as a constant when
// b·c vanishes.
func (f PowerFit) String() string {
	if f.C < 0.005 {
		slope := f.B * f.C
		if math.Abs(slope) <= 1e-9*math.Abs(f.A+f.B) {
			return "constant " + compact(f.A+f.B)
		}
		return fmt.Sprintf("%s %s·ln n", compact(f.A+f.B), signed(slope))
	}
	return fmt.Sprintf("%s %s·n^%.2f", compact(f.A), signed(f.B), f.C)
}

// signed formats a term's coefficient with its sign as an operator: "+ 2",
// "- 2".
func signed(x float64) string {
	if x < 0 {
		return "- " + compact(-x)
	}
	return "+ " + compact(x)
}

// compact formats a float with 3 significant digits.
func compact(x float64) string {
	return fmt.Sprintf("%.3g", x)
}
