package parallel

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Summary prints the human view: totals and the invariant, Table 1 for the
// program and the hot contexts, where the idleness is, the locks, the
// threads. It goes to w in one Write: the tables' cells would otherwise
// each be a write (a system call on a terminal or pipe).
func (r *Result) Summary(w io.Writer, top int) error {
	var b bytes.Buffer
	if err := r.summary(&b, top); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *Result) summary(w io.Writer, top int) error {
	b := &strings.Builder{}
	unit := "cores"
	if r.IdleBase == "threads" {
		unit = "threads (idle base)"
	}
	fmt.Fprintf(b, "parallel: %d threads, %d virtual cores, makespan %d ns", len(r.Threads), r.Cores, r.Makespan)
	if r.Partial != "" {
		fmt.Fprintf(b, " (PARTIAL: %s)", r.Partial)
	}
	fmt.Fprintln(b)
	e := r.Total.Effort()
	fmt.Fprintf(b, "  work          %14d ns  (useful %d, overhead %d = %.3g%% of effort)\n",
		r.Total.Work, r.Useful, r.Total.Overhead, pct(r.Total.Overhead, e))
	fmt.Fprintf(b, "  idleness      %14d ns  %.3g%% of effort (idle %s while others work, TM09 §2.1)\n",
		r.Total.Idleness, pct(r.Total.Idleness, e), unit)
	fmt.Fprintf(b, "  unattributed  %14d ns  (no thread working)\n", r.Unattr)
	check := r.Total.Work + r.Total.Idleness + r.Unattr
	if r.IdleBase == "cores" {
		ok := "ok"
		if check != r.Capacity {
			ok = "MISMATCH"
		}
		fmt.Fprintf(b, "  work + idleness + unattributed = %d = %d cores × %d ns: %s\n", check, r.Cores, r.Makespan, ok)
	}
	fmt.Fprintf(b, "  spin %d ns, blocked %d ns, lock-wait blame %d ns (all futex blame %d, unreleased %d)\n",
		r.Total.Spin, r.Total.Wait, r.Total.Lockwait, r.Total.Blame, r.Unrel)
	if r.Late > 0 {
		fmt.Fprintf(b, "  warning: %d ns of work arrived behind the timeline sweep; idleness is off by that much\n", r.Late)
	}
	fmt.Fprintf(b, "  parallel efficiency (useful work / cores × makespan) %.3f\n", r.Efficiency)
	if r.Serial() {
		fmt.Fprintf(b, "program: serial (%s: no concurrency to judge; %d of %d virtual cores idle by construction)\n", r.serialWhy(), r.Cores-1, r.Cores)
	} else {
		fmt.Fprintf(b, "program: idleness %.1f%%, overhead %.1f%% of effort: %s\n", 100*r.Program.IdleRatio,
			100*r.Program.OverheadRatio, r.Program.Text)
		fmt.Fprintf(b, "  (Table 1 of TM09; high means ≥ %.0f%% idleness or ≥ %.0f%% overhead: --idle-threshold, --overhead-threshold)\n",
			100*r.Thresholds.Idle, 100*r.Thresholds.Overhead)
		if note := r.narrowNote(); note != "" {
			fmt.Fprintf(b, "  note: %s\n", note)
		}
	}
	io.WriteString(w, b.String())
	b.Reset()

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Hot) > 0 && !r.Serial() {
		fmt.Fprintln(w, "hot contexts (inclusive; idleness and overhead in % of the context's effort):")
		fmt.Fprintln(tw, "  work ns\tidle%\tovh%\tverdict\tcontext")
		for _, h := range r.Hot {
			c := r.Contexts[h.Context]
			fmt.Fprintf(tw, "  %d\t%.1f\t%.1f\t%s\t%s\n", c.Total.Work, 100*h.Verdict.IdleRatio, 100*h.Verdict.OverheadRatio,
				h.Verdict.Text, short(h.Path, 90))
		}
		tw.Flush()
	}
	// Where the idleness is: lines by idleness, TM09 Fig. 5's bottom-up
	// view with the share of total idleness.
	// (Indices of the lines with idleness, not copies of the lines, are sorted.)
	var idle []int32
	for i := range r.Lines {
		if r.Lines[i].M.Idleness > 0 {
			idle = append(idle, int32(i))
		}
	}
	slices.SortStableFunc(idle, func(x, y int32) int { return cmp.Compare(r.Lines[y].M.Idleness, r.Lines[x].M.Idleness) })
	// A serial program's idleness is the other cores, idle by construction:
	// no line is to blame for it.
	if len(idle) > 0 && !r.Serial() {
		fmt.Fprintln(w, "idleness by line (share of total idleness; others idle while this runs):")
		fmt.Fprintln(tw, "  idleness ns\t%\twork ns\tline\tcontext")
		for i, li := range idle {
			if i == top {
				break
			}
			l := &r.Lines[li]
			where := l.Func
			if l.Line > 0 {
				where = fmt.Sprintf("%s %s:%d", l.Func, baseName(l.File), l.Line)
			}
			fmt.Fprintf(tw, "  %d\t%.1f\t%d\t%s\t%s\n", l.M.Idleness, pct(l.M.Idleness, r.Total.Idleness), l.M.Work, where,
				short(r.Path(l.Context), 70))
		}
		tw.Flush()
	}
	if len(r.Locks) > 0 {
		fmt.Fprintln(w, "futex waits (by address; blame goes to the releaser's context):")
		fmt.Fprintln(tw, "  address\tkind\twaits\twait ns\tblame ns\tunreleased\ttop releaser")
		for i, l := range r.Locks {
			if i == top {
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%s\n", l.Addr, l.Class, l.Waits, l.WaitNs, l.BlameNs, l.Unreleased,
				short(l.TopReleaser, 70))
		}
		tw.Flush()
	}
	if len(r.WaitByClass) > 0 {
		var ks []string
		for k := range r.WaitByClass {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.WaitByClass[k]))
		}
		fmt.Fprintf(w, "blocked time by kind (ns): %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, "threads (ns):")
	fmt.Fprintln(tw, "  tid\tstart\tend\twork\toverhead\tspin\tblocked\tqueued\tidleness charged\tcreated in")
	for i, t := range r.Threads {
		if i == 4*top {
			fmt.Fprintf(tw, "  ... %d more\n", len(r.Threads)-i)
			break
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", t.Tid, t.Start, t.End, t.Work, t.Overhead, t.Spin,
			t.Blocked, t.Queued, t.Idleness, short(t.Created, 50))
	}
	return tw.Flush()
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// short keeps the end of a long context path.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n+3:]
}
