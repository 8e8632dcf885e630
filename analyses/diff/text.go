package diff

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the changes, at most top rows per metric and kind of
// key (top <= 0: all), or that there are none.
func (r *Result) WriteText(w io.Writer, top int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "emuprof diff: %s -> %s: %s compared (%s)\n", r.Old, r.New, plural(r.Compared, "value"), strings.Join(r.Metrics, ", "))
	if len(r.Changes) == 0 {
		fmt.Fprintf(bw, "no difference\n")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "%-9s %-8s %-40s %16s %16s %16s %9s\n", "metric", "of", "name", "old", "new", "change", "%")
	shown := map[[2]string]int{}
	hidden := map[[2]string]int{}
	var order [][2]string
	for _, c := range r.Changes {
		g := [2]string{c.Metric, string(c.Kind)}
		if _, ok := shown[g]; !ok {
			order = append(order, g)
			shown[g] = 0
		}
		if top > 0 && shown[g] >= top {
			hidden[g]++
			continue
		}
		shown[g]++
		name := c.Name
		if c.Kind == Program {
			name = "(program)"
		}
		pct := "-"
		if c.Percent != nil {
			pct = signed(round(*c.Percent)) + "%"
		}
		fmt.Fprintf(bw, "%-9s %-8s %-40s %16s %16s %16s %9s\n", c.Metric, c.Kind, name, num(c.Old), num(c.New), signed(c.Delta), pct)
	}
	for _, g := range order {
		if n := hidden[g]; n > 0 {
			fmt.Fprintf(bw, "... %s more %s changes of %s (--top 0 shows all)\n", fmt.Sprint(n), g[1], g[0])
		}
	}
	fmt.Fprintf(bw, "%s\n", plural(len(r.Changes), "difference"))
	return bw.Flush()
}

// round keeps 2 decimals of a percentage.
func round(p float64) float64 {
	if p > 1e12 || p < -1e12 {
		return p
	}
	return float64(int64(p*100+copysign(0.5, p))) / 100
}

func copysign(v, s float64) float64 {
	if s < 0 {
		return -v
	}
	return v
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
