package parallel

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ParseCPUList parses --cpus-sweep: core counts such as "1,2,4,8", each at
// least 1, without repetition; returned in increasing order.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("%q is not a core count (1 to 4096)", strings.TrimSpace(f))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%d given twice", n)
		}
		out = append(out, n)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("want at least two core counts, as in 1,2,4,8")
	}
	slices.Sort(out)
	return out, nil
}

// SweepRun is one run of a --cpus sweep.
type SweepRun struct {
	CPUs   int
	Result *Result
}

// SweepRow is what a sweep reports per core count.
type SweepRow struct {
	CPUs       int     `json:"cpus"`
	Makespan   int64   `json:"makespan"`
	Speedup    float64 `json:"speedup"`    // makespan of the fewest cores / this makespan
	Efficiency float64 `json:"efficiency"` // useful work / (cores × makespan)
	Idleness   float64 `json:"idleness"`   // (attributed + unattributed idleness) / (cores × makespan)
	Overhead   float64 `json:"overhead"`   // overhead / effort
	Verdict    string  `json:"verdict"`
	TopIdle    string  `json:"top_idle,omitempty"` // the context with the most idleness
}

// Sweep compares the runs of a --cpus sweep (issue 13: "does it scale, and
// where does it stop?"). Stop is the core count after which the speedup
// grows by less than 10 % (0 if it keeps growing).
func Sweep(runs []SweepRun) (rows []SweepRow, stop int) {
	if len(runs) == 0 {
		return nil, 0
	}
	base := runs[0].Result.Makespan
	for _, run := range runs {
		r := run.Result
		row := SweepRow{CPUs: run.CPUs, Makespan: r.Makespan, Efficiency: r.Efficiency, Verdict: r.Program.Text,
			Overhead: r.Program.OverheadRatio}
		if r.Makespan > 0 {
			row.Speedup = float64(base) / float64(r.Makespan)
			row.Idleness = float64(r.Total.Idleness+r.Unattr) / float64(int64(run.CPUs)*r.Makespan)
		}
		var top int32 = -1
		for _, c := range r.Contexts {
			if c.ID > 0 && c.Self.Idleness > 0 && (top < 0 || c.Self.Idleness > r.Contexts[top].Self.Idleness) {
				top = c.ID
			}
		}
		if top >= 0 {
			row.TopIdle = r.Path(top)
		}
		rows = append(rows, row)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Speedup < 1.1*rows[i-1].Speedup {
			return rows, rows[i-1].CPUs
		}
	}
	return rows, 0
}

// WriteSweep prints the sweep's table and where the speedup stops.
func WriteSweep(w io.Writer, runs []SweepRun) error {
	rows, stop := Sweep(runs)
	fmt.Fprintf(w, "cpus sweep (virtual time; speedup over %d core(s)):\n", rows[0].CPUs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  cpus\tmakespan ns\tspeedup\tefficiency\tidle\toverhead\tverdict\tmost idleness in")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %d\t%d\t%.2f\t%.2f\t%.1f%%\t%.1f%%\t%s\t%s\n", r.CPUs, r.Makespan, r.Speedup, r.Efficiency,
			100*r.Idleness, 100*r.Overhead, r.Verdict, short(r.TopIdle, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if stop > 0 {
		_, err := fmt.Fprintf(w, "the speedup stops growing (less than 10 %% more per step) after %d core(s)\n", stop)
		return err
	}
	_, err := fmt.Fprintf(w, "the speedup grows up to %d cores\n", rows[len(rows)-1].CPUs)
	return err
}
