// Package paths is acyclic path profiling: Ball-Larus path numbering over
// control-flow graphs recovered from the guest's binaries (and completed
// with the transitions the run executed), path registers per thread and per
// activation driven by the event stream, PSPP valid labelings for subsets of
// paths (P3 paper, Algorithm 1), and P3's planning of k partial profiles and
// their merge (Algorithm 2). The specification is ../shared/specs/PATHS-P3.md
// ("spec" below); the paper is Afraz, Saha, Kanade, "P3: Partitioned Path
// Profiling", ESEC/FSE 2015 ("[P3]").
//
// A signal handler is an activation of its own (Profiler.signal): the
// activation it interrupts keeps its path register and goes on after
// rt_sigreturn, with the call stage (SBL, the planning run) and in P3's
// copies, which frame activations by the stack pointer (copies.go). With
// profile costs (PlanOptions.Profile) the copies' probes are placed by the
// planning run's edge counts (hotLabels, placeProbes) and the plan is the
// candidate whose slowest copy pays the fewest probe executions
// (PlanP3With).
package paths

import (
	"fmt"
	"math/big"
	"math/bits"
)

// Graph is a directed acyclic graph with a single source ENTRY (vertex 0)
// and a single sink EXIT (vertex N-1). Out-edges of a vertex are kept in a
// fixed order, which decides the path ids (spec §1.2 step 8).
type Graph struct {
	N     int
	Edges []Edge
	Out   [][]int32 // per vertex: edge indices in the fixed out-edge order
	In    [][]int32 // per vertex: edge indices in order of addition
	topo  []int32   // a topological order (ENTRY first)
}

// Edge is a DAG edge.
type Edge struct{ From, To int32 }

// Entry is the vertex id of ENTRY.
const Entry = 0

// Exit returns the vertex id of EXIT.
func (g *Graph) Exit() int32 { return int32(g.N - 1) }

// NewGraph returns the graph with n vertices and the given edges; each
// vertex's out-edges keep the order in which they appear in edges.
// Duplicate edges are kept once. It fails if the graph has a cycle.
func NewGraph(n int, edges []Edge) (*Graph, error) { return newGraph(n, edges, false) }

// newGraph is NewGraph; unique says edges has no duplicates (BuildDAG's,
// made per vertex sorted and compacted), so that no set of edges is kept:
// it was half of BuildDAG's time on a routine renumbered per learnt edge.
func newGraph(n int, edges []Edge, unique bool) (*Graph, error) {
	g := &Graph{N: n, Out: make([][]int32, n), In: make([][]int32, n)}
	if len(edges) > 0 {
		g.Edges = make([]Edge, 0, len(edges))
	}
	var seen map[Edge]bool
	if !unique {
		seen = map[Edge]bool{}
	}
	for _, e := range edges {
		if e.From < 0 || int(e.From) >= n || e.To < 0 || int(e.To) >= n {
			return nil, fmt.Errorf("paths: edge %d->%d outside %d vertices", e.From, e.To, n)
		}
		if !unique {
			if seen[e] {
				continue
			}
			seen[e] = true
		}
		g.Edges = append(g.Edges, e)
	}
	// The per-vertex lists share two arrays, each list with the capacity
	// of its degree (a routine renumbered per learnt edge grew them one
	// append at a time).
	outDeg, inDeg := make([]int32, n), make([]int32, n)
	for _, e := range g.Edges {
		outDeg[e.From]++
		inDeg[e.To]++
	}
	outs, ins := make([]int32, len(g.Edges)), make([]int32, len(g.Edges))
	for v, o, i := 0, int32(0), int32(0); v < n; v++ {
		if outDeg[v] > 0 {
			g.Out[v] = outs[o : o : o+outDeg[v]]
		}
		if inDeg[v] > 0 {
			g.In[v] = ins[i : i : i+inDeg[v]]
		}
		o, i = o+outDeg[v], i+inDeg[v]
	}
	for id, e := range g.Edges {
		g.Out[e.From] = append(g.Out[e.From], int32(id))
		g.In[e.To] = append(g.In[e.To], int32(id))
	}
	if err := g.sortTopo(); err != nil {
		return nil, err
	}
	return g, nil
}

// sortTopo computes a topological order (Kahn, lowest vertex id first
// among the ready ones, so the order is deterministic).
func (g *Graph) sortTopo() error {
	indeg := make([]int, g.N)
	for _, e := range g.Edges {
		indeg[e.To]++
	}
	var ready []int32
	for v := g.N - 1; v >= 0; v-- {
		if indeg[v] == 0 {
			ready = append(ready, int32(v))
		}
	}
	g.topo = g.topo[:0]
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		g.topo = append(g.topo, v)
		for i := len(g.Out[v]) - 1; i >= 0; i-- {
			w := g.Edges[g.Out[v][i]].To
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	if len(g.topo) != g.N {
		return fmt.Errorf("paths: graph has a cycle")
	}
	return nil
}

// Topo returns a topological order of the vertices.
func (g *Graph) Topo() []int32 { return g.topo }

// Numbering is the Ball-Larus numbering of a graph (spec §1.3, [P3] §2.1
// and its Fig. 2): NumPaths per vertex and Val per edge, so that the sum
// of Val along each ENTRY->EXIT path is a distinct number in
// [0, NumPaths(ENTRY)).
type Numbering struct {
	G        *Graph
	NumPaths []uint64 // per vertex; meaningless where Overflow
	Val      []uint64 // per edge
	// Overflow: NumPaths(ENTRY) does not fit in 63 bits. Val and NumPaths
	// are then not usable as uint64; the big numbers (bigs) are.
	Overflow bool
	// bigNumPaths and bigVal are computed on first use (bigs): a routine
	// whose numbering overflows is renumbered on every edge the run
	// teaches, and the run itself needs only which labels are non-zero
	// (NonZero), not the labels.
	bigNumPaths []*big.Int
	bigVal      []*big.Int
}

// MaxPaths bounds NumPaths(ENTRY) for 64-bit path registers (spec §1.3:
// "if NumPaths(ENTRY) >= 2^63, ... use arbitrary-precision ids").
const MaxPaths = 1 << 63

// BallLarus numbers the paths of g (spec §1.3):
//
//	for v in reverse topological order:
//	    NumPaths(v) = 1 if v is EXIT, else 0 and for each out-edge e=v->w:
//	        Val(e) = NumPaths(v); NumPaths(v) += NumPaths(w)
func BallLarus(g *Graph) *Numbering {
	n := &Numbering{G: g, NumPaths: make([]uint64, g.N), Val: make([]uint64, len(g.Edges))}
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		if v == g.Exit() {
			n.NumPaths[v] = 1
			continue
		}
		var np uint64
		for _, ei := range g.Out[v] {
			n.Val[ei] = np
			var c uint64
			np, c = bits.Add64(np, n.NumPaths[g.Edges[ei].To], 0)
			if c != 0 || np >= MaxPaths {
				n.Overflow = true
				np = MaxPaths // saturate; the big numbers below are exact
			}
		}
		n.NumPaths[v] = np
	}
	return n
}

// bigs returns the exact labels and path counts of an overflowing
// numbering, computing them on first use.
func (n *Numbering) bigs() (numPaths, val []*big.Int) {
	if n.bigVal != nil {
		return n.bigNumPaths, n.bigVal
	}
	g := n.G
	n.bigNumPaths = make([]*big.Int, g.N)
	n.bigVal = make([]*big.Int, len(g.Edges))
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		np := new(big.Int)
		if v == g.Exit() {
			np.SetInt64(1)
		}
		for _, ei := range g.Out[v] {
			n.bigVal[ei] = new(big.Int).Set(np)
			np.Add(np, n.bigNumPaths[g.Edges[ei].To])
		}
		n.bigNumPaths[v] = np
	}
	return n.bigNumPaths, n.bigVal
}

// NonZero returns, per edge, 1 where the edge's exact label is non-zero
// (a probe), 0 elsewhere, without the labels: Val(e) is the sum of
// NumPaths over the targets of v's earlier out-edges, so it is non-zero
// exactly when one of them reaches EXIT.
func (n *Numbering) NonZero() []uint64 {
	g := n.G
	reach := make([]bool, g.N)
	nz := make([]uint64, len(g.Edges))
	for i := len(g.topo) - 1; i >= 0; i-- {
		v := g.topo[i]
		r := v == g.Exit()
		for _, ei := range g.Out[v] {
			if r {
				nz[ei] = 1
			}
			r = r || reach[g.Edges[ei].To]
		}
		reach[v] = r
	}
	return nz
}

// Total returns NumPaths(ENTRY) as a decimal string (exact also when it
// overflows 64 bits).
func (n *Numbering) Total() string {
	if n.Overflow {
		np, _ := n.bigs()
		return np[Entry].String()
	}
	return fmt.Sprint(n.NumPaths[Entry])
}

// edgeBetween returns the edge u->w, or -1.
func (g *Graph) edgeBetween(u, w int32) int32 {
	for _, ei := range g.Out[u] {
		if g.Edges[ei].To == w {
			return ei
		}
	}
	return -1
}

// Encode returns the id of the vertex sequence path (ENTRY ... EXIT) under
// labels (one per edge); ok is false if path is not a path of the graph.
func (g *Graph) Encode(labels []uint64, path []int32) (id uint64, ok bool) {
	if len(path) < 2 || path[0] != Entry || path[len(path)-1] != g.Exit() {
		return 0, false
	}
	for i := 1; i < len(path); i++ {
		ei := g.edgeBetween(path[i-1], path[i])
		if ei < 0 {
			return 0, false
		}
		id += labels[ei]
	}
	return id, true
}

// EncodeBig is Encode with the exact big labels of an overflowing numbering.
func (n *Numbering) EncodeBig(path []int32) (*big.Int, bool) {
	g := n.G
	if len(path) < 2 || path[0] != Entry || path[len(path)-1] != g.Exit() {
		return nil, false
	}
	id := new(big.Int)
	for i := 1; i < len(path); i++ {
		ei := g.edgeBetween(path[i-1], path[i])
		if ei < 0 {
			return nil, false
		}
		if n.Overflow {
			_, val := n.bigs()
			id.Add(id, val[ei])
		} else {
			id.Add(id, new(big.Int).SetUint64(n.Val[ei]))
		}
	}
	return id, true
}

// Decode regenerates the path with the given Ball-Larus id (spec §1.5):
// from ENTRY, repeatedly take the out-edge with the largest Val <= r.
func (n *Numbering) Decode(id uint64) ([]int32, error) {
	if n.Overflow {
		return n.DecodeBig(new(big.Int).SetUint64(id))
	}
	g := n.G
	if id >= n.NumPaths[Entry] {
		return nil, fmt.Errorf("paths: id %d >= NumPaths %d", id, n.NumPaths[Entry])
	}
	v, r := int32(Entry), id
	path := []int32{v}
	for v != g.Exit() {
		best := int32(-1)
		for _, ei := range g.Out[v] {
			if n.Val[ei] <= r && (best < 0 || n.Val[ei] >= n.Val[best]) {
				best = ei
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("paths: id %d: stuck at vertex %d", id, v)
		}
		r -= n.Val[best]
		v = g.Edges[best].To
		path = append(path, v)
	}
	if r != 0 {
		return nil, fmt.Errorf("paths: id %d: %d left at EXIT", id, r)
	}
	return path, nil
}

// DecodeBig is Decode for ids of an overflowing numbering.
func (n *Numbering) DecodeBig(id *big.Int) ([]int32, error) {
	if !n.Overflow {
		if !id.IsUint64() {
			return nil, fmt.Errorf("paths: id %s out of range", id)
		}
		return n.Decode(id.Uint64())
	}
	g := n.G
	numPaths, val := n.bigs()
	if id.Sign() < 0 || id.Cmp(numPaths[Entry]) >= 0 {
		return nil, fmt.Errorf("paths: id %s out of range", id)
	}
	v, r := int32(Entry), new(big.Int).Set(id)
	path := []int32{v}
	for v != g.Exit() {
		best := int32(-1)
		for _, ei := range g.Out[v] {
			if val[ei].Cmp(r) <= 0 && (best < 0 || val[ei].Cmp(val[best]) >= 0) {
				best = ei
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("paths: id %s: stuck at vertex %d", id, v)
		}
		r.Sub(r, val[best])
		v = g.Edges[best].To
		path = append(path, v)
	}
	if r.Sign() != 0 {
		return nil, fmt.Errorf("paths: id %s: remainder at EXIT", id)
	}
	return path, nil
}

// Probes returns the number of edges with a non-zero label (spec §1.6
// Mode A: [P3] §2.1 "overhead(p) is the total number of non-zero edges").
func Probes(labels []uint64) int {
	n := 0
	for _, l := range labels {
		if l != 0 {
			n++
		}
	}
	return n
}

// EnumeratePaths calls f with every ENTRY->EXIT path (vertex sequences, in
// lexicographic order of out-edges; f must not keep the slice) until f
// returns false or limit paths were produced (limit <= 0: no limit).
func (g *Graph) EnumeratePaths(limit int, f func(path []int32, edges []int32) bool) {
	path := []int32{Entry}
	var edges []int32
	count := 0
	var walk func(v int32) bool
	walk = func(v int32) bool {
		if v == g.Exit() {
			count++
			return f(path, edges) && (limit <= 0 || count < limit)
		}
		for _, ei := range g.Out[v] {
			w := g.Edges[ei].To
			path = append(path, w)
			edges = append(edges, ei)
			ok := walk(w)
			path = path[:len(path)-1]
			edges = edges[:len(edges)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	walk(Entry)
}
