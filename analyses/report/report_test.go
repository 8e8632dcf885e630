package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFitPowerQuadratic(t *testing.T) {
	var xs, ys []float64
	for n := 1; n <= 30; n++ {
		xs = append(xs, float64(n))
		ys = append(ys, float64(n*n))
	}
	f, err := FitPower(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.C-2) > 1e-3 || math.Abs(f.B-1) > 1e-2 || math.Abs(f.A) > 0.1 || f.R2 < 0.9999 {
		t.Errorf("fit of n^2: %+v (%s)", f, f)
	}
}

func TestFitPowerLinear(t *testing.T) {
	var xs, ys []float64
	for n := 0; n <= 50; n += 5 {
		xs = append(xs, float64(n))
		ys = append(ys, float64(3*n+5))
	}
	f, err := FitPower(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.C-1) > 1e-3 || math.Abs(f.B-3) > 1e-2 || math.Abs(f.A-5) > 0.05 || f.R2 < 0.9999 {
		t.Errorf("fit of 3n+5: %+v (%s)", f, f)
	}
}

func TestFitPowerNoisyCubicAndConstant(t *testing.T) {
	var xs, ys []float64
	for n := 1; n <= 40; n++ {
		noise := float64((n*7919)%13) - 6
		xs = append(xs, float64(n))
		ys = append(ys, 0.5*float64(n*n*n)+100+noise)
	}
	f, err := FitPower(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.C-3) > 0.02 || f.R2 < 0.999 {
		t.Errorf("fit of noisy n^3/2: %+v", f)
	}
	f, err = FitPower([]float64{1, 2, 3, 4}, []float64{7, 7, 7, 7})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.A+f.B-7) > 1e-9 && math.Abs(f.A-7) > 1e-9 || f.R2 != 1 {
		t.Errorf("fit of a constant: %+v", f)
	}
}

func TestFitPowerErrors(t *testing.T) {
	if _, err := FitPower([]float64{1, 2, 2}, []float64{1, 2, 3}); !errors.Is(err, ErrTooFewPoints) {
		t.Errorf("two distinct x: %v", err)
	}
	if _, err := FitPower([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := FitPower([]float64{-1, 2, 3}, []float64{1, 2, 3}); err == nil {
		t.Error("negative x accepted")
	}
}

func TestTable(t *testing.T) {
	tb := Table{Header: []string{"name", "n", "note"}, Right: []bool{false, true, false}}
	tb.Add("main", "12", "x")
	tb.Add("f", "3", "longer")
	var b bytes.Buffer
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := "name   n  note\nmain  12  x\nf      3  longer\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "hello" {
		t.Fatalf("read back %q %v", b, err)
	}
	boom := errors.New("boom")
	if err := WriteFileAtomic(p, func(w io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("error not propagated: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "hello" {
		t.Errorf("failed write clobbered the file: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// Int's cell is fmt.Sprint of the value, to the extremes of each type.
func TestIntCell(t *testing.T) {
	for _, c := range []struct {
		got  Cell
		want string
	}{{Int(int64(math.MinInt64)), "-9223372036854775808"}, {Int(int64(-1)), "-1"}, {Int(0), "0"},
		{Int(uint64(math.MaxUint64)), "18446744073709551615"}, {Int(int32(math.MinInt32)), "-2147483648"},
		{Int(uint32(math.MaxUint32)), "4294967295"}, {Int(math.MaxInt), fmt.Sprint(math.MaxInt)}} {
		if c.got.Text != c.want || c.got.Key != c.want {
			t.Errorf("Int: %+v, want %s", c.got, c.want)
		}
	}
}
