package diff

import "testing"

// Conditions parse as METRIC[WHAT]OP LIMIT, WHAT holding any character
// (C++ names: brackets, <, >, colons), and bad ones are refused.
func TestParseCondition(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Condition
	}{
		{"insns>+1%", Condition{Metric: Insns, Op: ">", Limit: 1, Percent: true}},
		{"calls[main]>=20", Condition{Metric: Calls, What: "main", Op: ">=", Limit: 20}},
		{"insns[std::vector<int>::operator[](unsigned long)]>+2.5%", Condition{Metric: Insns, What: "std::vector<int>::operator[](unsigned long)", Op: ">", Limit: 2.5, Percent: true}},
		{"idleness[wf.c:31]<-5%", Condition{Metric: Idleness, What: "wf.c:31", Op: "<", Limit: -5, Percent: true}},
		{"exponent[*]<=0.1", Condition{Metric: Exponent, What: "*", Op: "<=", Limit: 0.1}},
	} {
		got, err := ParseCondition(tc.in)
		tc.want.Text = tc.in
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "insns", "insn>1", "insns[main>1", "insns[]>1", "insns=1", "insns>", "insns>1x", "insns>NaN", "insns>+Inf%", ">1"} {
		if _, err := ParseCondition(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A change is checked in % of the old value or absolutely; a routine
// only the new run has grew by +inf %; * fails on the worst routine.
func TestCheck(t *testing.T) {
	old := &Profile{Values: map[string]map[Key]float64{Insns: {{Program, ""}: 1000, {Routine, "a"}: 100, {Routine, "b"}: 900}}}
	new := &Profile{Values: map[string]map[Key]float64{Insns: {{Program, ""}: 1015, {Routine, "a"}: 103, {Routine, "b"}: 900, {Routine, "c"}: 12}}}
	for _, tc := range []struct {
		cond   string
		failed bool
		reason string
	}{
		{"insns>+1%", true, "the program's insns +1.5% (1000 -> 1015)"},
		{"insns>+2%", false, "the program's insns +1.5% (1000 -> 1015)"},
		{"insns>=15", true, "the program's insns +15 (1000 -> 1015)"},
		{"insns[a]>+2.9%", true, "insns of a +3% (100 -> 103)"},
		{"insns[*]>+5%", true, "insns of c +inf% (0 -> 12)"},
		{"insns[b]<0", false, "insns of b +0 (900 -> 900)"},
	} {
		c, err := ParseCondition(tc.cond)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Check(c, old, new)
		if err != nil || v.Failed != tc.failed || v.Reason != tc.reason {
			t.Errorf("%s: %+v, %v; want failed %v, %q", tc.cond, v, err, tc.failed, tc.reason)
		}
	}
	if _, err := Check(Condition{Text: "calls>1", Metric: Calls, Op: ">", Limit: 1}, old, new); err == nil {
		t.Error("a metric neither profile has was checked")
	}
}
