package causal

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// exactShards returns the runs of an --exact run of two lines × two
// speedups (line 10 at 50 % takes 800 ns instead of 1000, line 20 at 50 %
// 900) split into k shards the way --shard i/k splits them.
func exactShards(k int) []*Shard {
	dur := []int64{1000, 800, 1000, 900}
	var out []*Shard
	for i := 0; i < k; i++ {
		sh := &Shard{Format: ShardFormat, Shard: i, K: k, Program: "/bin/p", Top: 20, RuntimeNs: 1000,
			Points: []string{"done"}, Latency: []bool{false}, Speedups: []int{0, 50}, Pairs: 4,
			Lines: []LineCost{{"/src/p.c:10", 600}, {"/src/p.c:20", 300}}}
		for j := i; j < 4; j += k {
			x := Experiment{Line: sh.Lines[j/2].Line, Speedup: sh.Speedups[j%2], Elapsed: 1000, Duration: dur[j],
				Delay: 1000 - dur[j], Points: []PointDelta{{Name: "done", Arrivals: 10}}}
			sh.Runs = append(sh.Runs, ShardRun{Pair: j, Experiment: x, Units: dur[j] * scale})
		}
		out = append(out, sh)
	}
	return out
}

// TestExactMerge: the profile joined from shards, in any order, is the one
// of the unsharded run, byte for byte; a missing, repeated or foreign shard
// is refused; the curves are 1 − duration / baseline duration.
func TestExactMerge(t *testing.T) {
	render := func(shards []*Shard) string {
		t.Helper()
		// Through JSON, as merge reads shard files.
		var rt []*Shard
		for _, sh := range shards {
			data, err := json.Marshal(sh)
			if err != nil {
				t.Fatal(err)
			}
			var back Shard
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			rt = append(rt, &back)
		}
		prof, exps, err := buildExact(rt)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := CozProfile(&b, exps, 1000, false); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(prof)
		return b.String() + string(js)
	}
	full := render(exactShards(1))
	for _, k := range []int{2, 3, 4} {
		sh := exactShards(k)
		sh[0], sh[k-1] = sh[k-1], sh[0]
		if got := render(sh); got != full {
			t.Errorf("%d shards: merged profile differs:\n%s\nvs\n%s", k, got, full)
		}
	}
	prof, _, err := buildExact(exactShards(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range prof.Lines {
		want := map[string]float64{"/src/p.c:10": 0.2, "/src/p.c:20": 0.1}[l.Line]
		if v, _, ok := l.At(50); !ok || math.Abs(v-want) > 1e-12 || l.Phase != 1 {
			t.Errorf("%s at 50 %%: %v (phase %v), want %v", l.Line, v, l.Phase, want)
		}
	}
	two := exactShards(2)
	other := exactShards(2)
	other[1].Program = "/bin/q"
	for _, c := range []struct {
		name   string
		shards []*Shard
		want   string
	}{
		{"missing", two[:1], "missing"},
		{"twice", []*Shard{two[0], two[0], two[1]}, "twice"},
		{"foreign", other, "not of the same run"},
	} {
		if _, _, err := buildExact(c.shards); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
