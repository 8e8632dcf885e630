package paths

import (
	"cmp"
	"slices"
)

// ChordIncrements moves the labels onto the chords of a maximum-weight
// spanning tree (spec §1.6, [BL96] after Ball's event counting, TOPLAS
// 1994; LLVM's PathNumbering): with a virtual edge EXIT->ENTRY forced into
// the tree, potentials φ with φ(ENTRY) = φ(EXIT) = 0 and
// label(u->v) + φ(u) - φ(v) = 0 on tree edges give every edge the
// increment label(u->v) + φ(u) - φ(v): tree edges get 0, and every
// ENTRY->EXIT path keeps its sum. weights (per edge; nil: all equal)
// should be edge frequencies, so hot edges carry no code; ties go to the
// earlier edge. Increments can be negative.
func ChordIncrements(g *Graph, labels []uint64, weights []uint64) (inc []int64, chord []bool) {
	parent := make([]int32, g.N)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(v int32) int32
	find = func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	parent[find(g.Exit())] = find(Entry) // the virtual EXIT->ENTRY edge
	order := make([]int, len(g.Edges))
	for i := range order {
		order[i] = i
	}
	if weights != nil {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(weights[b], weights[a]) })
	}
	tree := make([]bool, len(g.Edges))
	adj := make([][]int32, g.N) // tree edges per vertex
	for _, ei := range order {
		e := g.Edges[ei]
		a, b := find(e.From), find(e.To)
		if a == b {
			continue
		}
		parent[a] = b
		tree[ei] = true
		adj[e.From] = append(adj[e.From], int32(ei))
		adj[e.To] = append(adj[e.To], int32(ei))
	}
	phi := make([]int64, g.N)
	seen := make([]bool, g.N)
	var stack []int32
	for _, root := range []int32{Entry, g.Exit()} { // φ = 0 at both ends of the virtual edge
		if seen[root] {
			continue
		}
		seen[root] = true
		stack = append(stack, root)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ei := range adj[v] {
				e := g.Edges[ei]
				switch {
				case e.From == v && !seen[e.To]:
					phi[e.To] = phi[v] + int64(labels[ei])
					seen[e.To] = true
					stack = append(stack, e.To)
				case e.To == v && !seen[e.From]:
					phi[e.From] = phi[v] - int64(labels[ei])
					seen[e.From] = true
					stack = append(stack, e.From)
				}
			}
		}
	}
	inc = make([]int64, len(g.Edges))
	chord = make([]bool, len(g.Edges))
	for ei, e := range g.Edges {
		chord[ei] = !tree[ei]
		inc[ei] = int64(labels[ei]) + phi[e.From] - phi[e.To]
	}
	return inc, chord
}

// ChordProbes counts the probes of chord placement (spec §1.6 Mode B):
// chords with a non-zero increment, except those leaving ENTRY or entering
// EXIT, whose increments are folded into the register's initialisation
// and the counter update.
func ChordProbes(g *Graph, inc []int64, chord []bool) int {
	n := 0
	for ei, e := range g.Edges {
		if chord[ei] && inc[ei] != 0 && e.From != Entry && e.To != g.Exit() {
			n++
		}
	}
	return n
}
