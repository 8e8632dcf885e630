package paths

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// copyPaths returns, per copy, the path (as text) of each id it counted in
// procedure 0, decoded as Merge decodes it.
func copyPaths(t *testing.T, pl *Plan, copies []CopyProfile) []map[uint64]string {
	t.Helper()
	out := make([]map[uint64]string, len(copies))
	for c := range copies {
		out[c] = map[uint64]string{}
		cp := pl.Copies[c][0]
		for id := range copies[c].Counts[0] {
			var path []int32
			if cp.Mode == ModeBL && !cp.Hot {
				var err error
				if path, err = pl.Procs[0].BL.Decode(id); err != nil {
					t.Fatal(err)
				}
			} else {
				path = pl.ids(c, 0)[id]
			}
			out[c][id] = fmt.Sprint(path)
		}
	}
	return out
}

func cloneCopies(copies []CopyProfile) []CopyProfile {
	out := make([]CopyProfile, len(copies))
	for c := range copies {
		out[c] = copies[c]
		out[c].Counts = []map[uint64]uint64{maps.Clone(copies[c].Counts[0])}
	}
	return out
}

// checkMergeCatches changes each count of each copy of pl (one procedure)
// in turn: the merge must fail for the paths counted by two copies, and
// report the changed count otherwise; dropping the owner's count of a path
// another copy counted must fail too. It returns how many changes hit a
// shared path.
func checkMergeCatches(t *testing.T, pl *Plan, bl *Numbering, execs []PathCount) (shared int) {
	t.Helper()
	copies := pl.Simulate([][]PathCount{execs}, "run")
	paths := copyPaths(t, pl, copies)
	counters := map[string][]int{} // path -> copies that counted it
	for c := range copies {
		for _, p := range paths[c] {
			counters[p] = append(counters[p], c)
		}
	}
	for c := range copies {
		for id, p := range paths[c] {
			changed := cloneCopies(copies)
			changed[c].Counts[0][id]++
			merged, err := pl.Merge(changed)
			if len(counters[p]) > 1 {
				shared++
				if err == nil || !strings.Contains(err.Error(), "diverged") {
					t.Errorf("path %s counted by copies %v, copy %d's count changed: merge %v, want diverged", p, counters[p], c, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("path %s counted by copy %d only, count changed: %v", p, c, err)
				continue
			}
			for _, pc := range merged[0] {
				if fmt.Sprint(pc.Path) == p && pc.Count != copies[c].Counts[0][id]+1 {
					t.Errorf("path %s: merged count %d, want copy %d's %d", p, pc.Count, c, copies[c].Counts[0][id]+1)
				}
			}
		}
	}
	for p, cs := range counters {
		if len(cs) < 2 {
			continue
		}
		changed := cloneCopies(copies)
		owner := pl.OwnerOf(0, decodeText(t, bl, p))
		for id, q := range paths[owner] {
			if q == p {
				delete(changed[owner].Counts[0], id)
			}
		}
		if _, err := pl.Merge(changed); err == nil || !strings.Contains(err.Error(), "not by its owner") {
			t.Errorf("path %s without its owner's count: merge %v, want not by its owner", p, err)
		}
	}
	return shared
}

// TestP3MergeChecksEveryCopy: the P3 merge (spec §3.7) takes each path's
// count from its owner and fails when any two copies that counted the
// path disagree, whichever of them is merged first and whether or not one
// is the owner; a path counted only by copies that do not own it fails
// too. On O5's plan every change to a path two copies count is made
// by copy 0, merged before the path's owner.
func TestP3MergeChecksEveryCopy(t *testing.T) {
	ng := namedGraph(t, "entry>1 entry>2 1>2 2>3 2>exit 3>exit")
	bl := BallLarus(ng.g)
	var execs []PathCount
	for id := uint64(0); id < 4; id++ {
		p, _ := bl.Decode(id)
		execs = append(execs, PathCount{p, 10 * (id + 1)})
	}
	pl := PlanP3([]Proc{{Name: "p", G: ng.g, BL: bl, Callers: 1}}, 3, false)
	if shared := checkMergeCatches(t, pl, bl, execs); shared != 4 {
		t.Fatalf("O5: %d counts of paths counted twice, want 4 (two paths, two copies each)", shared)
	}
}

// decodeText finds the path whose text is s among bl's paths.
func decodeText(t *testing.T, bl *Numbering, s string) []int32 {
	t.Helper()
	for id := uint64(0); ; id++ {
		p, err := bl.Decode(id)
		if err != nil {
			t.Fatalf("no path %s", s)
		}
		if fmt.Sprint(p) == s {
			return p
		}
	}
}

// TestBallLarusOverflowBoundary: spec §1.3 switches to big ids when
// NumPaths(ENTRY) >= 2^63: 62 diamonds in a chain (2^62 paths) stay in 64
// bits, 63 (2^63 paths, no carry out of 64 bits yet) do not.
func TestBallLarusOverflowBoundary(t *testing.T) {
	for _, c := range []struct {
		k        int
		overflow bool
		total    string
	}{{62, false, "4611686018427387904"}, {63, true, "9223372036854775808"}} {
		var succ [][]int32
		for i := 0; i < c.k; i++ {
			b := int32(len(succ))
			succ = append(succ, []int32{b + 1, b + 2}, []int32{b + 3}, []int32{b + 3})
		}
		succ = append(succ, nil)
		d := BuildDAG(cfgOf(succ, int32(len(succ)-1)), nil, nil)
		if d.Num.Overflow != c.overflow || d.Num.Total() != c.total {
			t.Errorf("%d diamonds: overflow %v, total %s; want %v, %s", c.k, d.Num.Overflow, d.Num.Total(), c.overflow, c.total)
		}
	}
}
