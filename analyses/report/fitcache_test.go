package report

import (
	"math/rand"
	"testing"
)

// FitPower's remembered results are those of fitting: on random points,
// fitted again, and after one point changes (a different key), and the
// second fit of the same points is found in the cache.
func TestFitPowerRemembered(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 50; iter++ {
		n := 3 + r.Intn(8)
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i] = float64(1 + i + r.Intn(3)*10)
			ys[i] = float64(r.Intn(1000))
		}
		want, werr := fitPower(xs, ys)
		for range 2 {
			got, err := FitPower(xs, ys)
			if got != want || (err == nil) != (werr == nil) {
				t.Fatalf("iter %d: FitPower %+v %v, fit %+v %v", iter, got, err, want, werr)
			}
		}
		fitsMu.Lock()
		n0 := len(fits)
		fitsMu.Unlock()
		FitPower(xs, ys)
		fitsMu.Lock()
		n1 := len(fits)
		fitsMu.Unlock()
		if n1 != n0 {
			t.Fatalf("iter %d: a fit of the same points was not found (%d entries, then %d)", iter, n0, n1)
		}
		ys[r.Intn(n)] += 1
		want, werr = fitPower(xs, ys)
		if got, err := FitPower(xs, ys); got != want || (err == nil) != (werr == nil) {
			t.Fatalf("iter %d: changed point: FitPower %+v, fit %+v", iter, got, want)
		}
	}
}
