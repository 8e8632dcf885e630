package paths

import (
	"cmp"
	"fmt"
	"slices"
)

// P3, partitioned path profiling ([P3] §3.2, Algorithm 2; spec §3): k
// copies of the same deterministic run each profile a subset of the paths,
// chosen so that the copies' probe executions are balanced; the copies'
// partial profiles are merged into the full one. Profitable procedures
// (at most one caller, and whose reduced DAG splits into several tasks)
// have their paths partitioned into tasks profiled with PSPP; the others
// are one task each, profiled with Ball-Larus; longest-processing-time
// list scheduling distributes the tasks over the copies.

// Proc is a procedure as P3 plans it.
type Proc struct {
	Name    string
	G       *Graph
	BL      *Numbering
	Callers int // caller_count: call sites of the procedure ([P3] §3.2)
	// Execs are the procedure's path executions measured by a planning
	// run, for PlanOptions.Profile (nil: none).
	Execs []PathCount
}

// PlanOptions choose the plan. The zero value is the paper's P3.
type PlanOptions struct {
	// PBL: every procedure is one task ([P3] §4.1).
	PBL bool
	// Profile: a task's cost is its probe executions on the planning
	// run's paths (Proc.Execs: every executed path of the procedure pays
	// the probes of the task's labels it crosses), not its static probe
	// count. [SPEC] extension: the paper balances static probes, which
	// says nothing about which procedures are hot; in an emulator the
	// plan comes from a discovery run (spec §1.1 (b)) whose counts are
	// at hand.
	Profile bool
	// AnyCallers partitions procedures whatever their caller count (the
	// paper only partitions those with at most one caller, to limit the
	// overlap of probes between copies; with Profile the overlap is
	// measured instead of feared).
	AnyCallers bool
	// threshold: a candidate plan's partitioning threshold in copies (0:
	// k; see PlanP3With).
	threshold int
}

// Task is a set of paths of one procedure: the paths whose edges all lie
// in E (spec §3.4: tasks are pairwise path-disjoint).
type Task struct {
	Proc, Index int
	E           []bool // edges of the procedure's DAG
	Cost        int    // probes of PSPP(G, E) (Ball-Larus probes for a whole procedure)
}

// Copy modes of a procedure.
const (
	ModeNone = iota // not profiled on the copy
	ModeBL          // every path: Ball-Larus labels
	ModePSPP        // the paths whose edges lie in E: PSPP labels
)

// CopyProc is how one copy profiles one procedure (Algorithm 2 lines
// 18-22).
type CopyProc struct {
	Mode   int
	E      []bool   // interesting edges (the union of the copy's tasks of the procedure)
	Labels []uint64 // per edge
	// Probes flags (non-zero) the edges that carry code: the non-zero
	// labels, or, with PlanOptions.Profile, the chords with a non-zero
	// increment when Ball's event counting places the same path sums on
	// fewer executed edges (see placeProbes). Path ids are the labels'
	// sums either way.
	Probes []uint64
	// Hot: a Ball-Larus copy numbers the paths with each vertex's
	// out-edges in decreasing order of the planning run's executions
	// (hotLabels), not in the DAG's order: its ids are not the profile's,
	// and the merge decodes them with IDs as PSPP's.
	Hot bool
	// IDs maps the id of every interesting path (the paths the copy
	// counts) to that path.
	IDs map[uint64][]int32
}

// Plan is P3's (or PBL's) static analysis for k copies.
type Plan struct {
	K     int
	Procs []Proc
	// Weights: per procedure, the planning run's executions of each DAG
	// edge (PlanOptions.Profile; nil otherwise).
	Weights [][]uint64
	Tasks   []Task
	Owner   []int // per task: its copy
	Load    []int // per copy: sum of its tasks' costs
	Copies  [][]CopyProc
	// SBL: the plan is SBL on copy 0, P3's best plan would not have
	// beaten it (PlanP3With).
	SBL bool
}

// MaxEnumerate bounds the paths enumerated to decode a PSPP instance's ids
// (spec §2.7); procedures with more are planned as one Ball-Larus task.
const MaxEnumerate = 1 << 20

// PlanP3 runs P3's static analysis (Algorithm 2) for k copies. With pbl,
// every procedure is one task (PBL: "all procedures are considered as
// unprofitable", [P3] §4.1).
func PlanP3(procs []Proc, k int, pbl bool) *Plan {
	return PlanP3With(procs, k, PlanOptions{PBL: pbl})
}

// PlanP3With is PlanP3 with options.
//
// With Profile (and not PBL), the planning run's path executions give every
// candidate plan's exact probe executions per copy (Simulate), so the plan
// is chosen among candidates by its slowest copy: P3 with the paper's
// threshold for k copies, P3 with the thresholds for k/2, k/4, ... 2
// copies (fewer, larger tasks: less overlap between copies), and PBL. The
// paper's rule comes first and wins ties. [SPEC] extension: the paper
// plans from static probe counts and reports the cases where P3 lost to
// PBL ([P3] §4: "overlapping of probes among the copies").
//
// Whenever the procedures' path executions are known (Proc.Execs, from
// a planning run) and P3's chosen plan's slowest copy would execute at
// least as many probes as SBL on one copy, the plan is SBL's instead
// (Plan.SBL: copy 0 profiles every procedure with Ball-Larus, the other
// copies nothing): partitioning must never cost more than not
// partitioning. [SPEC] extension; the paper reports P3 losing to its
// baselines on some programs ([P3] §4).
func PlanP3With(procs []Proc, k int, opt PlanOptions) *Plan {
	pl := planP3With(procs, k, opt)
	if opt.PBL || !measured(procs) {
		return pl
	}
	sbl := sblPlan(procs, k)
	if pl.maxHits() >= sbl.maxHits() {
		return sbl
	}
	return pl
}

// measured reports whether a planning run gave the procedures' path
// executions.
func measured(procs []Proc) bool {
	for _, p := range procs {
		if p.Execs != nil {
			return true
		}
	}
	return false
}

// sblPlan is SBL as a plan for k copies: every procedure one Ball-Larus
// task with its own labels, all on copy 0.
func sblPlan(procs []Proc, k int) *Plan {
	pl := planWith(procs, 1, PlanOptions{PBL: true}, 1)
	pl.K, pl.SBL = k, true
	pl.Load = append(pl.Load, make([]int, k-1)...)
	for c := 1; c < k; c++ {
		none := make([]CopyProc, len(procs))
		for pi := range none {
			none[pi] = CopyProc{Mode: ModeNone}
		}
		pl.Copies = append(pl.Copies, none)
	}
	return pl
}

// planP3With is PlanP3With without the fallback to SBL.
func planP3With(procs []Proc, k int, opt PlanOptions) *Plan {
	if !opt.Profile || opt.PBL {
		return planWith(procs, k, opt, k)
	}
	best := planWith(procs, k, opt, k)
	bestHits := best.maxHits()
	cands := []PlanOptions{}
	for j := k / 2; j >= 2; j /= 2 {
		o := opt
		o.threshold = j
		cands = append(cands, o)
	}
	pbl := opt
	pbl.PBL = true
	cands = append(cands, pbl)
	for _, o := range cands {
		pl := planWith(procs, k, o, max(o.threshold, 1))
		if h := pl.maxHits(); h < bestHits {
			best, bestHits = pl, h
		}
	}
	return best
}

// maxHits returns the probe executions of the plan's slowest copy on the
// procedures' measured paths (Proc.Execs).
func (pl *Plan) maxHits() uint64 {
	execs := make([][]PathCount, len(pl.Procs))
	for pi, p := range pl.Procs {
		execs[pi] = p.Execs
	}
	var worst uint64
	for c := range pl.K {
		worst = max(worst, pl.SimulateCopy(c, execs, "").Hits)
	}
	return worst
}

// planWith is Algorithm 2 for k copies, partitioning with the threshold
// for threshK copies.
func planWith(procs []Proc, k int, opt PlanOptions, threshK int) *Plan {
	pbl := opt.PBL
	pl := &Plan{K: k, Procs: procs, Weights: make([][]uint64, len(procs))}
	if opt.Profile {
		for pi, p := range procs {
			if !p.BL.Overflow {
				pl.Weights[pi] = edgeWeights(p)
			}
		}
	}
	// With Profile, a procedure is worth partitioning only if, whole, it
	// would cost more than a copy's fair share of the probe executions:
	// splitting any other adds overlapping probes and balances nothing
	// that whole procedures cannot.
	var fair int
	if opt.Profile {
		all := make([]bool, 0)
		total := 0
		for pi, p := range procs {
			all = all[:0]
			for range p.G.Edges {
				all = append(all, true)
			}
			total += profileCost(p, Task{E: all}, true, pl.Weights[pi])
		}
		fair = total / max(k, 1)
	}
	for pi, p := range procs {
		var ts []Task
		enumerable := !p.BL.Overflow && p.BL.NumPaths[Entry] <= MaxEnumerate
		worth := !opt.Profile || profileCost(p, Task{}, true, pl.Weights[pi]) > fair
		if !pbl && enumerable && worth && (p.Callers <= 1 || opt.AnyCallers) {
			// Algorithm 2 line 5: the threshold is the maximum of the
			// entry's out-degree and the number of cores ([P3] §4.1).
			ts = FindPartition(p.G, max(len(p.G.Out[Entry]), threshK))
		}
		if len(ts) <= 1 { // unprofitable: one Ball-Larus task (line 6)
			all := make([]bool, len(p.G.Edges))
			for i := range all {
				all[i] = true
			}
			cost := 0
			if p.BL.Overflow {
				cost = Probes(p.BL.NonZero())
			} else {
				cost = Probes(p.BL.Val)
			}
			ts = []Task{{E: all, Cost: cost}}
		}
		for i := range ts {
			ts[i].Proc, ts[i].Index = pi, i
			if opt.Profile {
				ts[i].Cost = profileCost(p, ts[i], len(ts) == 1, pl.Weights[pi])
			}
			pl.Tasks = append(pl.Tasks, ts[i])
		}
	}
	pl.Owner, pl.Load = LPT(taskCosts(pl.Tasks), k)
	pl.Copies = make([][]CopyProc, k)
	for c := range pl.Copies {
		pl.Copies[c] = make([]CopyProc, len(procs))
		for pi := range procs {
			pl.Copies[c][pi] = pl.copyProc(c, pi)
		}
	}
	return pl
}

func taskCosts(ts []Task) []int {
	cs := make([]int, len(ts))
	for i, t := range ts {
		cs[i] = t.Cost
	}
	return cs
}

// copyProc is Algorithm 2 lines 18-22 for copy c and procedure pi: the
// union of the copy's tasks of the procedure, profiled with Ball-Larus if
// it is every edge, with PSPP otherwise, not at all if empty.
func (pl *Plan) copyProc(c, pi int) CopyProc {
	p := pl.Procs[pi]
	e := make([]bool, len(p.G.Edges))
	some := false
	for ti, t := range pl.Tasks {
		if t.Proc != pi || pl.Owner[ti] != c {
			continue
		}
		some = true
		for i, in := range t.E {
			e[i] = e[i] || in
		}
	}
	if !some {
		return CopyProc{Mode: ModeNone}
	}
	if !slices.Contains(e, false) {
		cp := CopyProc{Mode: ModeBL, E: e, Labels: p.BL.Val}
		if p.BL.Overflow {
			// Ids beyond 64 bits: the copy counts block sequences
			// (CopyProfile.BigCounts); Labels only flag the probes.
			cp.Labels = p.BL.NonZero()
		}
		if labels, ok := hotLabels(p, pl.Weights[pi]); ok {
			cp.Labels, cp.Hot = labels, true
		}
		cp.Probes = placeProbes(p.G, cp.Labels, pl.Weights[pi])
		return cp
	}
	labels := psppLabels(p, e, pl.Weights[pi])
	return CopyProc{Mode: ModePSPP, E: Trim(p.G, e), Labels: labels, Probes: placeProbes(p.G, labels, pl.Weights[pi])}
}

// MaxHot bounds the paths of a procedure that a copy numbers by frequency
// (hotLabels): the merge enumerates them to decode the copy's ids.
const MaxHot = 1 << 16

// hotLabels returns a Ball-Larus numbering of p's DAG with every vertex's
// out-edges taken in decreasing order of their executions (weights; ties
// in the DAG's order), when it costs fewer probe executions than the
// DAG's own numbering (both with placeProbes): the hottest successor of
// every vertex gets label 0, so the hot paths cross few non-zero labels
// ([BL96] §3.5 and Ball's event counting place code on cold edges; the
// numbering's order is free, spec §1.2 step 8, as long as the decoder
// knows it). ok is false without weights, for procedures with more than
// MaxHot paths, and when the DAG's order is as cheap.
func hotLabels(p Proc, weights []uint64) (labels []uint64, ok bool) {
	if weights == nil || p.BL.Overflow || p.BL.NumPaths[Entry] > MaxHot {
		return nil, false
	}
	g := p.G
	h, order := hotOrder(g, weights)
	if h == nil {
		return nil, false
	}
	n := BallLarus(h)
	if n.Overflow {
		return nil, false
	}
	labels = make([]uint64, len(g.Edges))
	for hi, ei := range order {
		labels[ei] = n.Val[hi]
	}
	if placedCost(g, labels, weights) >= placedCost(g, p.BL.Val, weights) {
		return nil, false
	}
	return labels, true
}

// hotOrder returns g with every vertex's out-edges in decreasing order of
// weights (ties in g's order), and for each of its edges the index of the
// same edge in g; nil if that fails.
func hotOrder(g *Graph, weights []uint64) (*Graph, []int32) {
	var es []Edge
	var order []int32
	for v := range g.N {
		out := slices.Clone(g.Out[v])
		slices.SortStableFunc(out, func(a, b int32) int { return cmp.Compare(weights[b], weights[a]) })
		for _, ei := range out {
			es = append(es, g.Edges[ei])
			order = append(order, ei)
		}
	}
	h, err := NewGraph(g.N, es)
	if err != nil || len(h.Edges) != len(g.Edges) {
		return nil, nil
	}
	return h, order
}

// placedCost is the executions (weights) of the edges placeProbes gives
// code for labels.
func placedCost(g *Graph, labels, weights []uint64) (c uint64) {
	for ei, v := range placeProbes(g, labels, weights) {
		if v != 0 {
			c += weights[ei]
		}
	}
	return c
}

// psppLabels is PSPP(p.G, e), or, with weights, PSPP run with every
// vertex's out-edges in decreasing order of executions (its base order:
// uninteresting edges first, then interesting ones by decreasing min,
// ties in base order) when that costs fewer probe executions. Any base
// order gives a valid labeling ([P3] App. A does not depend on it); the
// copy's ids are decoded by enumeration (Plan.ids) either way.
func psppLabels(p Proc, e []bool, weights []uint64) []uint64 {
	labels := PSPP(p.G, e)
	if weights == nil || p.BL.Overflow {
		return labels
	}
	h, order := hotOrder(p.G, weights)
	if h == nil {
		return labels
	}
	he := make([]bool, len(order))
	for hi, ei := range order {
		he[hi] = e[ei]
	}
	hl := PSPP(h, he)
	hot := make([]uint64, len(labels))
	for hi, ei := range order {
		hot[ei] = hl[hi]
	}
	if placedCost(p.G, hot, weights) < placedCost(p.G, labels, weights) {
		return hot
	}
	return labels
}

// edgeWeights returns the executions of each of p's DAG edges on the
// planning run's paths (p.Execs).
func edgeWeights(p Proc) []uint64 {
	w := make([]uint64, len(p.G.Edges))
	for _, x := range p.Execs {
		for _, ei := range p.G.PathEdges(x.Path) {
			if ei >= 0 {
				w[ei] += x.Count
			}
		}
	}
	return w
}

// placeProbes decides which edges of g carry code for labels (a valid
// labeling: Ball-Larus or PSPP): with edge weights (the planning run's
// edge executions), Ball's event counting ([Ball94] via [BL96]; spec §1.6,
// ChordIncrements) moves the increments onto the chords of a maximum
// spanning tree, so that the hot edges carry none and every path keeps
// its sum, hence its id; it is taken when its non-zero chords are executed
// less often than the labels' non-zero edges. The result flags the probe
// edges (non-zero entries).
func placeProbes(g *Graph, labels, weights []uint64) []uint64 {
	if weights == nil {
		return labels
	}
	inc, _ := ChordIncrements(g, labels, weights)
	var byLabels, byChords uint64
	for ei := range labels {
		if labels[ei] != 0 {
			byLabels += weights[ei]
		}
		if inc[ei] != 0 {
			byChords += weights[ei]
		}
	}
	if byChords >= byLabels {
		return labels
	}
	probes := make([]uint64, len(inc))
	for ei, v := range inc {
		if v != 0 {
			probes[ei] = 1
		}
	}
	return probes
}

// ids returns the id table of copy c's PSPP instance of procedure pi
// (CopyProc.IDs), enumerated on first use: only the procedures a copy
// profiled need it.
func (pl *Plan) ids(c, pi int) map[uint64][]int32 {
	cp := &pl.Copies[c][pi]
	if cp.IDs != nil {
		return cp.IDs
	}
	cp.IDs = map[uint64][]int32{}
	pl.Procs[pi].G.EnumeratePaths(0, func(path, edges []int32) bool {
		var id uint64
		for _, ei := range edges {
			if !cp.E[ei] {
				return true
			}
			id += cp.Labels[ei]
		}
		cp.IDs[id] = slices.Clone(path)
		return true
	})
	return cp.IDs
}

// Probes returns the static probes of copy c (edges with a non-zero label
// in the procedures it profiles).
func (pl *Plan) Probes(c int) int {
	n := 0
	for _, cp := range pl.Copies[c] {
		if cp.Mode != ModeNone && cp.Probes != nil {
			n += Probes(cp.Probes)
		}
	}
	return n
}

// OwnerOf returns the copy owning a path (vertex path) of procedure pi: the
// copy of the task whose edges contain the path's (spec §3.6).
func (pl *Plan) OwnerOf(pi int, path []int32) int {
	g := pl.Procs[pi].G
	edges := g.PathEdges(path)
	for ti, t := range pl.Tasks {
		if t.Proc != pi {
			continue
		}
		ok := true
		for _, ei := range edges {
			if ei < 0 || !t.E[ei] {
				ok = false
				break
			}
		}
		if ok {
			return pl.Owner[ti]
		}
	}
	return -1
}

// LPT distributes tasks of the given costs over k copies by Graham's
// longest-processing-time rule ([P3] §3.2 "the highest cost task among the
// remaining non distributed tasks is assigned to the core with least
// load"): makespan <= (4/3 - 1/(3k))·OPT. Ties: equal costs keep their
// order, equal loads go to the lowest copy (spec §3.5).
func LPT(costs []int, k int) (owner, load []int) {
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
	owner = make([]int, len(costs))
	load = make([]int, k)
	for _, t := range order {
		c := 0
		for i := 1; i < k; i++ {
			if load[i] < load[c] {
				c = i
			}
		}
		owner[t] = c
		load[c] += costs[t]
	}
	return owner, load
}

// rgraph is a reduced DAG (spec §3.3): diamonds and triangles of straight
// code contracted into dummy vertices.
type rgraph struct {
	n        int
	alive    []bool
	dummy    []bool
	internal [][]int32 // per vertex: original edges inside it
	edges    []redge
	entry    int32
	exit     int32
}

type redge struct {
	from, to int32
	orig     int32
	alive    bool
}

func (r *rgraph) out(v int32) []int32 {
	var es []int32
	for i, e := range r.edges {
		if e.alive && e.from == v {
			es = append(es, int32(i))
		}
	}
	return es
}

func (r *rgraph) in(v int32) []int32 {
	var es []int32
	for i, e := range r.edges {
		if e.alive && e.to == v {
			es = append(es, int32(i))
		}
	}
	return es
}

// reduce builds the reduced graph of g: repeatedly, the first diamond
// {a,b,c,d} (a->b, a->c, b->d, c->d) or triangle {a,b,d} (a->b, a->d,
// b->d) in topological order whose branch vertices b, c are original
// vertices with a single in-edge from a and a single out-edge to d, whose
// a has exactly those out-edges and whose d exactly those in-edges, is
// replaced by a dummy vertex (in-edges of a and out-edges of d become its
// own); a and d are neither ENTRY nor EXIT ([P3] §3.2: "if-else and if
// statements containing only straight-line code within the branches").
func reduce(g *Graph) *rgraph {
	r := &rgraph{n: g.N, entry: Entry, exit: g.Exit()}
	r.alive = make([]bool, g.N)
	r.dummy = make([]bool, g.N)
	r.internal = make([][]int32, g.N)
	for v := range r.alive {
		r.alive[v] = true
	}
	// Edges in base order: each vertex's out-edges in g's order.
	for v := 0; v < g.N; v++ {
		for _, ei := range g.Out[v] {
			e := g.Edges[ei]
			r.edges = append(r.edges, redge{e.From, e.To, ei, true})
		}
	}
	for r.contractOne() {
	}
	return r
}

// topo returns the alive vertices of r in a topological order.
func (r *rgraph) topo() []int32 {
	indeg := make([]int, r.n)
	for _, e := range r.edges {
		if e.alive {
			indeg[e.to]++
		}
	}
	var ready, order []int32
	for v := r.n - 1; v >= 0; v-- {
		if r.alive[v] && indeg[v] == 0 {
			ready = append(ready, int32(v))
		}
	}
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		order = append(order, v)
		outs := r.out(v)
		for i := len(outs) - 1; i >= 0; i-- {
			w := r.edges[outs[i]].to
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	return order
}

func (r *rgraph) contractOne() bool {
	for _, a := range r.topo() {
		if a == r.entry || a == r.exit {
			continue
		}
		outs := r.out(a)
		if len(outs) != 2 {
			continue
		}
		x, y := r.edges[outs[0]].to, r.edges[outs[1]].to
		branch := func(b int32) (int32, int32, bool) { // (d, edge b->d)
			if b == r.exit || r.dummy[b] {
				return 0, 0, false
			}
			in, out := r.in(b), r.out(b)
			if len(in) != 1 || len(out) != 1 {
				return 0, 0, false
			}
			return r.edges[out[0]].to, out[0], true
		}
		dx, ex, okx := branch(x)
		dy, ey, oky := branch(y)
		var members []int32 // vertices merged
		var inner []int32   // reduced edges inside
		var d int32
		switch {
		case okx && oky && dx == dy: // diamond
			d = dx
			if len(r.in(d)) != 2 {
				continue
			}
			members = []int32{a, x, y, d}
			inner = []int32{outs[0], outs[1], ex, ey}
		case okx && dx == y: // triangle a->x->y, a->y
			d = y
			if len(r.in(d)) != 2 {
				continue
			}
			members = []int32{a, x, d}
			inner = []int32{outs[0], outs[1], ex}
		case oky && dy == x: // triangle a->y->x, a->x
			d = x
			if len(r.in(d)) != 2 {
				continue
			}
			members = []int32{a, y, d}
			inner = []int32{outs[0], outs[1], ey}
		default:
			continue
		}
		if d == r.exit || d == r.entry {
			continue
		}
		D := int32(r.n)
		r.n++
		r.alive = append(r.alive, true)
		r.dummy = append(r.dummy, true)
		var internal []int32
		for _, m := range members {
			internal = append(internal, r.internal[m]...)
			r.alive[m] = false
		}
		for _, ei := range inner {
			internal = append(internal, r.edges[ei].orig)
			r.edges[ei].alive = false
		}
		slices.Sort(internal)
		r.internal = append(r.internal, internal)
		for i := range r.edges {
			e := &r.edges[i]
			if !e.alive {
				continue
			}
			if e.to == a {
				e.to = D
			}
			if e.from == d {
				e.from = D
			}
		}
		return true
	}
	return false
}

// reachable returns the reduced edges reachable from w.
func (r *rgraph) reachable(w int32, into map[int32]bool) {
	stack := []int32{w}
	seen := map[int32]bool{w: true}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, ei := range r.out(v) {
			into[ei] = true
			if t := r.edges[ei].to; !seen[t] {
				seen[t] = true
				stack = append(stack, t)
			}
		}
	}
}

// FindPartition partitions the paths of g into tasks ([P3] Algorithm 2
// lines 24-53, spec §3.4): prefixes of paths of the reduced DAG are
// extended edge by edge in topological order until there are threshold of
// them (threshold <= 0: no limit); each prefix that stops at a frontier
// vertex, with everything reachable from the vertex's unprocessed
// out-edges, is a task. Every path of g lies in exactly one task; with no
// threshold the tasks are the paths of the reduced DAG.
func FindPartition(g *Graph, threshold int) []Task {
	r := reduce(g)
	type prefix []int32 // reduced edge ids, in path order
	se := make([][]prefix, r.n)
	se[r.entry] = []prefix{nil}
	inS := map[int32]bool{}
	total := 1
	order := r.topo()
outer:
	for _, v := range order {
		if v == r.exit {
			continue
		}
		total -= len(se[v])
		for _, ei := range r.out(v) {
			inS[ei] = true
			w := r.edges[ei].to
			for _, es := range se[v] {
				se[w] = append(se[w], append(slices.Clone(es), ei))
				total++
			}
			if threshold > 0 && total >= threshold {
				break outer
			}
		}
	}
	var tasks []Task
	for _, v := range order {
		if len(se[v]) == 0 {
			continue
		}
		var rest []int32
		for _, ei := range r.out(v) {
			if !inS[ei] {
				rest = append(rest, ei)
			}
		}
		if v != r.exit && len(rest) == 0 {
			continue
		}
		tail := map[int32]bool{}
		for _, ei := range rest {
			tail[ei] = true
			r.reachable(r.edges[ei].to, tail)
		}
		for _, es := range se[v] {
			e := make([]bool, len(g.Edges))
			mark := func(ei int32) {
				re := r.edges[ei]
				e[re.orig] = true
				for _, x := range []int32{re.from, re.to} {
					for _, oe := range r.internal[x] {
						e[oe] = true
					}
				}
			}
			for _, ei := range es {
				mark(ei)
			}
			for ei := range tail {
				mark(ei)
			}
			tasks = append(tasks, Task{E: e, Cost: Probes(PSPP(g, e))})
		}
	}
	return tasks
}

// CopyProfile is what one copy measured: per procedure, the count of each
// interesting path id it recorded, its hit count (probe executions), and a
// fingerprint of the execution it followed.
type CopyProfile struct {
	Counts []map[uint64]uint64
	// BigCounts: procedures whose ids overflow 64 bits, counted by path
	// (always Ball-Larus, on one copy).
	BigCounts   []map[string]PathCount
	Hits        uint64
	Fingerprint string
}

// PathCount is a path (vertex sequence ENTRY...EXIT) and its count.
type PathCount struct {
	Path  []int32
	Count uint64
}

// Merge joins the copies' partial profiles (spec §3.7): each path's count
// comes from the copy owning it; every other copy that counted the path
// (its closure contains it, spec §3.6) must agree. Copies that followed
// different executions, or disagree, fail the merge.
func (pl *Plan) Merge(copies []CopyProfile) ([][]PathCount, error) {
	if len(copies) != pl.K {
		return nil, fmt.Errorf("paths: merge: %d copies, plan for %d", len(copies), pl.K)
	}
	for c := 1; c < len(copies); c++ {
		if copies[c].Fingerprint != copies[0].Fingerprint {
			return nil, fmt.Errorf("paths: merge: copy %d followed another execution than copy 0 (fingerprint %q, copy 0 %q)", c, copies[c].Fingerprint, copies[0].Fingerprint)
		}
	}
	out := make([][]PathCount, len(pl.Procs))
	for pi, p := range pl.Procs {
		type entry struct {
			path  []int32
			count uint64
			owned bool
		}
		got := map[string]*entry{}
		var keys []string
		if p.BL.Overflow {
			for c := range copies {
				if pl.Copies[c][pi].Mode == ModeNone || copies[c].BigCounts == nil {
					continue
				}
				for _, x := range copies[c].BigCounts[pi] {
					out[pi] = append(out[pi], x)
				}
			}
			slices.SortFunc(out[pi], func(a, b PathCount) int { return slices.Compare(a.Path, b.Path) })
			continue
		}
		for c := range copies {
			cp := pl.Copies[c][pi]
			if cp.Mode == ModeNone {
				continue
			}
			ids := make([]uint64, 0, len(copies[c].Counts[pi]))
			for id := range copies[c].Counts[pi] {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				n := copies[c].Counts[pi][id]
				var path []int32
				if cp.Mode == ModeBL && !cp.Hot {
					var err error
					if path, err = p.BL.Decode(id); err != nil {
						return nil, fmt.Errorf("paths: merge: %s: copy %d: %v", p.Name, c, err)
					}
				} else {
					var ok bool
					if path, ok = pl.ids(c, pi)[id]; !ok {
						return nil, fmt.Errorf("paths: merge: %s: copy %d counted id %d, not one of its paths", p.Name, c, id)
					}
				}
				k := fmt.Sprint(path)
				e := got[k]
				if e == nil {
					e = &entry{path: path}
					got[k] = e
					keys = append(keys, k)
				}
				owned := pl.OwnerOf(pi, path) == c
				switch {
				case owned:
					if e.count != 0 && e.count != n {
						return nil, fmt.Errorf("paths: merge: %s: path %v: owner copy %d counts %d, another copy %d: the copies diverged", p.Name, path, c, n, e.count)
					}
					e.count, e.owned = n, true
				case e.count != 0 && e.count != n:
					return nil, fmt.Errorf("paths: merge: %s: path %v: copy %d counts %d, another copy %d: the copies diverged", p.Name, path, c, n, e.count)
				default:
					e.count = n
				}
			}
		}
		for _, k := range keys {
			e := got[k]
			if !e.owned {
				return nil, fmt.Errorf("paths: merge: %s: path %v counted by a copy, not by its owner %d", p.Name, e.path, pl.OwnerOf(pi, e.path))
			}
			out[pi] = append(out[pi], PathCount{e.path, e.count})
		}
		slices.SortFunc(out[pi], func(a, b PathCount) int { return slices.Compare(a.Path, b.Path) })
	}
	return out, nil
}

// Simulate computes what each copy of the plan measures on an execution
// given as path executions per procedure (complete paths, vertex
// sequences, with counts): the copy's register follows its labels along
// every executed path, counts the interesting ids and pays one hit per
// non-zero label on the way (spec §4.5 invariant 9). It is the copies'
// deterministic outcome without running them.
func (pl *Plan) Simulate(execs [][]PathCount, fingerprint string) []CopyProfile {
	out := make([]CopyProfile, pl.K)
	for c := range out {
		out[c] = pl.SimulateCopy(c, execs, fingerprint)
	}
	return out
}

// SimulateCopy is Simulate for copy c alone. A path counts when it is
// interesting to the copy (all its edges in the copy's E): by PSPP's
// validity, exactly when its id is one of the copy's interesting ids.
func (pl *Plan) SimulateCopy(c int, execs [][]PathCount, fingerprint string) CopyProfile {
	out := CopyProfile{Counts: make([]map[uint64]uint64, len(pl.Procs)), BigCounts: make([]map[string]PathCount, len(pl.Procs)), Fingerprint: fingerprint}
	for pi := range pl.Procs {
		cp := pl.Copies[c][pi]
		out.Counts[pi] = map[uint64]uint64{}
		if cp.Mode == ModeNone {
			continue
		}
		g := pl.Procs[pi].G
		if pl.Procs[pi].BL.Overflow {
			out.BigCounts[pi] = map[string]PathCount{}
			for _, x := range execs[pi] {
				out.Hits += uint64(pathProbes(g, cp.Probes, x.Path)) * x.Count
				out.BigCounts[pi][fmt.Sprint(x.Path)] = x
			}
			continue
		}
		for _, x := range execs[pi] {
			var id, hits uint64
			interesting := true
			for _, ei := range g.PathEdges(x.Path) {
				id += cp.Labels[ei]
				if cp.Probes[ei] != 0 {
					hits++
				}
				interesting = interesting && cp.E[ei]
			}
			out.Hits += hits * x.Count
			if cp.Mode == ModeBL || interesting {
				out.Counts[pi][id] += x.Count
			}
		}
	}
	return out
}

// pathProbes is the number of edges with a non-zero label on a vertex path
// (a complete path, or a prefix from ENTRY).
func pathProbes(g *Graph, labels []uint64, path []int32) int {
	n := 0
	for i := 1; i < len(path); i++ {
		if ei := g.edgeBetween(path[i-1], path[i]); ei >= 0 && labels[ei] != 0 {
			n++
		}
	}
	return n
}

// profileCost is a task's probe executions on the procedure's measured
// paths (PlanOptions.Profile): its labels (Ball-Larus for a whole
// procedure, PSPP for a part) summed over every executed path, since a
// copy pays a probe whenever the execution crosses it, whichever path it
// profiles.
func profileCost(p Proc, t Task, whole bool, weights []uint64) int {
	var labels []uint64
	switch {
	case whole && p.BL.Overflow:
		labels = p.BL.NonZero()
	case whole:
		labels = p.BL.Val
		if l, ok := hotLabels(p, weights); ok {
			labels = l
		}
	default:
		labels = psppLabels(p, t.E, weights)
	}
	if !p.BL.Overflow {
		labels = placeProbes(p.G, labels, weights)
	}
	var hits uint64
	for _, x := range p.Execs {
		hits += uint64(pathProbes(p.G, labels, x.Path)) * x.Count
	}
	return int(min(hits, 1<<62))
}
