package diff

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Condition is one --fail-if: METRIC[WHAT] OP LIMIT. WHAT is absent (the
// program), a routine's name, a line (file.c:12), or * (any routine);
// OP is >, >=, < or <=; LIMIT is a signed number, a change in % of the old
// value when it ends with %, else an absolute change. The condition fails
// when the change satisfies it: insns>+1% fails when the program's
// instructions grew by more than 1 %.
type Condition struct {
	Text    string
	Metric  string
	What    string // "" program, "*" any routine, else a routine or a line
	Op      string
	Limit   float64
	Percent bool
}

// ParseCondition parses a --fail-if condition.
func ParseCondition(s string) (Condition, error) {
	c := Condition{Text: s}
	t := strings.TrimSpace(s)
	i := strings.IndexAny(t, "[<>")
	if i <= 0 {
		return c, fmt.Errorf("%q: want METRIC[ROUTINE]>LIMIT, like insns>+1%% or insns[main]>+2%%", s)
	}
	c.Metric = t[:i]
	if !slices.Contains(MetricNames, c.Metric) {
		return c, fmt.Errorf("%q: unknown metric %q (known: %s)", s, c.Metric, strings.Join(MetricNames, ", "))
	}
	rest := t[i:]
	if rest[0] == '[' {
		// A routine's name may hold [ ] < > (C++): the last ']' closes it.
		end := strings.LastIndexByte(rest, ']')
		if end < 0 {
			return c, fmt.Errorf("%q: no ] after [", s)
		}
		c.What, rest = rest[1:end], rest[end+1:]
		if c.What == "" {
			return c, fmt.Errorf("%q: empty [ ]", s)
		}
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		if strings.HasPrefix(rest, op) {
			c.Op, rest = op, rest[len(op):]
			break
		}
	}
	if c.Op == "" {
		return c, fmt.Errorf("%q: want an operator >, >=, < or <= after the metric", s)
	}
	lim := strings.TrimSpace(rest)
	if strings.HasSuffix(lim, "%") {
		c.Percent, lim = true, strings.TrimSuffix(lim, "%")
	}
	v, err := strconv.ParseFloat(lim, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return c, fmt.Errorf("%q: the limit %q is not a number (like +1%%, -5%%, 1000)", s, strings.TrimSpace(rest))
	}
	c.Limit = v
	return c, nil
}

// Verdict is one condition's outcome.
type Verdict struct {
	Condition string `json:"condition"`
	Failed    bool   `json:"failed"`
	Reason    string `json:"reason"`
}

// Check checks c against the two profiles. An error says the condition
// cannot be checked (its metric or its routine is in neither profile).
func Check(c Condition, old, new *Profile) (Verdict, error) {
	v := Verdict{Condition: c.Text}
	om, nm, ok := values(old, new, c.Metric)
	if !ok {
		return v, fmt.Errorf("%s: %s is not in both profiles (%s)", c.Text, c.Metric, source(c.Metric))
	}
	var keys []Key
	switch c.What {
	case "":
		keys = []Key{{Program, ""}}
	case "*":
		seen := map[Key]bool{}
		for _, m := range []map[Key]float64{om, nm} {
			for k := range m {
				if k.Kind == Routine && !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	default:
		for _, kind := range []Kind{Routine, LineKey} {
			k := Key{kind, c.What}
			_, inOld := om[k]
			_, inNew := nm[k]
			if inOld || inNew {
				keys = []Key{k}
				break
			}
		}
		if keys == nil {
			return v, fmt.Errorf("%s: no routine or line %q has %s in either profile", c.Text, c.What, c.Metric)
		}
	}
	// The worst failing key is the reason; else the largest change.
	var worst *Verdict
	var worstSize float64 = -1
	for _, k := range keys {
		o, n := om[k], nm[k]
		change, size := n-o, math.Abs(n-o)
		unit := ""
		if c.Percent {
			unit = "%"
			switch {
			case o != 0:
				change = 100 * (n - o) / math.Abs(o)
			case n != 0:
				change = math.Inf(int(math.Copysign(1, n)))
			default:
				change = 0
			}
			size = math.Abs(change)
		}
		failed := false
		switch c.Op {
		case ">":
			failed = change > c.Limit
		case ">=":
			failed = change >= c.Limit
		case "<":
			failed = change < c.Limit
		case "<=":
			failed = change <= c.Limit
		}
		what := "the program's " + c.Metric
		if k.Kind != Program {
			what = fmt.Sprintf("%s of %s", c.Metric, k.Name)
		}
		reason := fmt.Sprintf("%s %s%s (%s -> %s)", what, signed(change), unit, num(o), num(n))
		cand := Verdict{Condition: c.Text, Failed: failed, Reason: reason}
		if worst == nil || failed && !worst.Failed || failed == worst.Failed && size > worstSize {
			worst, worstSize = &cand, size
		}
	}
	if worst == nil {
		v.Reason = "no routine has " + c.Metric
		return v, nil
	}
	return *worst, nil
}

// source names the analysis a metric comes from.
func source(metric string) string {
	switch metric {
	case Insns, Self, Calls:
		return "callgrind.out.* files: emuprof profile, or --callgrind"
	case Exponent:
		return ".aprof files: the trms analysis"
	case Paths, PathRuns:
		return "*_paths.json: the paths analysis"
	default:
		return "*_parallel.json: the parallel analysis"
	}
}

func signed(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+inf"
	case math.IsInf(v, -1):
		return "-inf"
	case v >= 0:
		return "+" + num(v)
	}
	return num(v)
}

// num prints counts as integers and the rest with 4 significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
