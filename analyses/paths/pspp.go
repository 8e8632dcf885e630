package paths

import (
	"math"
	"slices"
)

// Selective path profiling: labelings that give exact ids to a subset of
// the paths only ([P3] §2.1, §3.1). A path is interesting when all its
// edges are interesting; a labeling is valid when interesting paths get
// pairwise distinct ids and no uninteresting path shares an id with an
// interesting one (spec §2.1). Labels are per edge; a path's id is the sum
// of its labels.

// Trim keeps the interesting edges that lie on at least one ENTRY->EXIT
// path made of interesting edges only (spec §2.1). It returns a new slice.
func Trim(g *Graph, interesting []bool) []bool {
	fwd := make([]bool, g.N) // reached from ENTRY over interesting edges
	bwd := make([]bool, g.N) // reaches EXIT over interesting edges
	fwd[Entry] = true
	for _, v := range g.topo {
		if !fwd[v] {
			continue
		}
		for _, ei := range g.Out[v] {
			if interesting[ei] {
				fwd[g.Edges[ei].To] = true
			}
		}
	}
	bwd[g.Exit()] = true
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		for _, ei := range g.Out[v] {
			if interesting[ei] && bwd[g.Edges[ei].To] {
				bwd[v] = true
			}
		}
	}
	out := make([]bool, len(g.Edges))
	for ei, e := range g.Edges {
		out[ei] = interesting[ei] && fwd[e.From] && bwd[e.To]
	}
	return out
}

// PSPP computes a valid labeling for the paths made of interesting edges:
// [P3] Algorithm 1 (precise selective path profiling), as reconstructed in
// the spec (§2.3):
//
//	initial step (reverse topological order): at each vertex v, the
//	uninteresting out-edges get label 0 and add N_w to N_v; then the
//	interesting out-edges, in decreasing order of w.min (ties: base
//	order), get label N_v, add N_w to N_v, and lower v.min to
//	w.min + label; w.min is the smallest partial id of an interesting
//	path from w.
//	propagation (topological order): a vertex with a single in-edge of
//	non-zero label pushes the label onto its out-edges.
//	absorption: uninteresting edges get label 0.
//
// interesting is trimmed first (Trim). The labels are the probes: edges
// with a non-zero label need instrumentation. g's numbering must fit in
// 64 bits (BallLarus(g) does not overflow).
func PSPP(g *Graph, interesting []bool) []uint64 {
	in := Trim(g, interesting)
	val := make([]uint64, len(g.Edges))
	n := make([]uint64, g.N)
	minv := make([]uint64, g.N)
	const inf = math.MaxUint64
	exit := g.Exit()
	for v := range minv {
		minv[v] = inf
	}
	minv[exit], n[exit] = 0, 1
	var ie []int32
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		if v == exit {
			continue
		}
		var nv uint64
		ie = ie[:0]
		for _, ei := range g.Out[v] { // Algorithm 1 lines 6-8
			if !in[ei] {
				val[ei] = 0
				nv += n[g.Edges[ei].To]
			} else {
				ie = append(ie, ei)
			}
		}
		// Lines 9-12: decreasing w.min, ties in base order.
		slices.SortStableFunc(ie, func(a, b int32) int {
			ma, mb := minv[g.Edges[a].To], minv[g.Edges[b].To]
			switch {
			case ma > mb:
				return -1
			case ma < mb:
				return 1
			}
			return 0
		})
		for _, ei := range ie {
			w := g.Edges[ei].To
			val[ei] = nv
			nv += n[w]
			if minv[w] != inf && minv[w]+val[ei] < minv[v] {
				minv[v] = minv[w] + val[ei]
			}
		}
		n[v] = nv
	}
	propagate(g, val)
	for ei := range val { // line 17: absorption
		if !in[ei] {
			val[ei] = 0
		}
	}
	return val
}

// propagate is the propagation step ([P3] Algorithm 1 lines 13-16): in
// topological order, a vertex other than EXIT whose only in-edge has a
// non-zero label adds it to each of its out-edges and clears it. Every
// path's sum is unchanged.
func propagate(g *Graph, val []uint64) {
	for _, v := range g.topo {
		if v == g.Exit() || len(g.In[v]) != 1 {
			continue
		}
		ei := g.In[v][0]
		if val[ei] == 0 {
			continue
		}
		for _, eo := range g.Out[v] {
			val[eo] += val[ei]
		}
		val[ei] = 0
	}
}

// SPP is selective path profiling as [P3] §2.2 describes it (Apiwattanapong
// and Harrold): Ball-Larus numbering with the uninteresting out-edges of
// each vertex numbered first, propagation, absorption. It is not always
// valid (spec oracle O2); it is here to show that.
func SPP(g *Graph, interesting []bool) []uint64 {
	in := Trim(g, interesting)
	val := make([]uint64, len(g.Edges))
	n := make([]uint64, g.N)
	n[g.Exit()] = 1
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		if v == g.Exit() {
			continue
		}
		var nv uint64
		for pass := 0; pass < 2; pass++ {
			for _, ei := range g.Out[v] {
				if in[ei] == (pass == 1) {
					val[ei] = nv
					nv += n[g.Edges[ei].To]
				}
			}
		}
		n[v] = nv
	}
	propagate(g, val)
	for ei := range val {
		if !in[ei] {
			val[ei] = 0
		}
	}
	return val
}

// Validity is the outcome of checking a labeling against every path.
type Validity struct {
	Valid                    bool
	Interesting, Paths       int
	Collision                [2][]int32 // two paths with the same id, an interesting one first
	InterestingIDs, AllPaths map[uint64]int
}

// CheckLabeling enumerates the paths of g (at most limit, <= 0: all) and
// checks that labels are valid for the interesting edges (spec §2.1): the
// brute-force oracle of the tests.
func CheckLabeling(g *Graph, interesting []bool, labels []uint64, limit int) Validity {
	in := Trim(g, interesting)
	res := Validity{Valid: true, InterestingIDs: map[uint64]int{}}
	type rec struct {
		path []int32
		int  bool
	}
	byID := map[uint64][]rec{}
	g.EnumeratePaths(limit, func(p, edges []int32) bool {
		var id uint64
		isInt := true
		for _, ei := range edges {
			id += labels[ei]
			isInt = isInt && in[ei]
		}
		res.Paths++
		if isInt {
			res.Interesting++
			res.InterestingIDs[id]++
		}
		byID[id] = append(byID[id], rec{slices.Clone(p), isInt})
		return true
	})
	for _, rs := range byID {
		nint := 0
		var first []int32
		for _, r := range rs {
			if r.int {
				nint++
				if first == nil {
					first = r.path
				}
			}
		}
		if nint > 0 && len(rs) > 1 {
			res.Valid = false
			for _, r := range rs {
				if !slices.Equal(r.path, first) {
					res.Collision = [2][]int32{first, r.path}
					break
				}
			}
		}
	}
	return res
}

// PathEdges returns the edges of a vertex path.
func (g *Graph) PathEdges(p []int32) []int32 {
	var out []int32
	for i := 1; i < len(p); i++ {
		out = append(out, g.edgeBetween(p[i-1], p[i]))
	}
	return out
}
