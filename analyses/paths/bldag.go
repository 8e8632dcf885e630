package paths

import (
	"slices"
)

// CFG is the control-flow graph of one routine: its static basic blocks
// (recovered from the binary, completed with what the run executed) and
// the intra-procedural edges between them. Calls are not edges to the
// callee: a block ending in a call has its return site as successor
// (spec §1.1).
type CFG struct {
	Entry, End uint64  // the routine's range [Entry, End)
	Blocks     []Block // sorted by Start; Blocks[0] starts at Entry
}

// Block is a static basic block [Start, End).
type Block struct {
	Start, End uint64
	// Succ are the block's intra-procedural successors, ascending (block
	// indices follow addresses).
	Succ []int32
	// Exit: the block can leave the routine (ret, tail jump, call of a
	// noreturn function, hlt/ud2, an indirect jump not resolved to
	// targets inside the routine, falling off the routine's end).
	Exit bool
}

// Find returns the block containing addr.
func (c *CFG) Find(addr uint64) (int32, bool) {
	i, _ := slices.BinarySearchFunc(c.Blocks, addr, func(b Block, a uint64) int {
		switch {
		case b.End <= a:
			return -1
		case b.Start > a:
			return 1
		}
		return 0
	})
	if i < len(c.Blocks) && c.Blocks[i].Start <= addr && addr < c.Blocks[i].End {
		return int32(i), true
	}
	return -1, false
}

// Leader returns the block starting at addr.
func (c *CFG) Leader(addr uint64) (int32, bool) {
	i, ok := c.Find(addr)
	if ok && c.Blocks[i].Start == addr {
		return i, true
	}
	return -1, false
}

// DAG is the Ball-Larus DAG of a routine's CFG (spec §1.2) with its
// numbering. Vertex 0 is ENTRY, vertex i+1 is block i, the last is EXIT.
type DAG struct {
	CFG *CFG
	G   *Graph
	Num *Numbering
	// Back[i] lists the CFG successors of block i reached by back edges.
	Back    [][]int32
	Reached []bool // per block: reachable from the path heads
	Heads   []int32
}

// BlockVertex is the vertex of block i.
func BlockVertex(i int32) int32 { return i + 1 }

// VertexBlock is the block of vertex v (v must not be ENTRY or EXIT).
func VertexBlock(v int32) int32 { return v - 1 }

// BuildDAG builds the Ball-Larus DAG of cfg (spec §1.2):
//
//   - a virtual ENTRY and EXIT; ENTRY -> b0;
//   - depth-first search from b0 following successors in ascending address
//     order, then from each extra head in heads (in that order) over what
//     is still unvisited; an edge to a vertex on the DFS stack is a back
//     edge; unreached blocks get no edges;
//   - every back edge v->w is replaced by the dummies ENTRY->w and v->EXIT
//     ([BL96]; LLVM's PathNumbering.cpp);
//   - exit blocks get b->EXIT, so do blocks in tails and every other sink;
//   - every head gets ENTRY->head (a path may start there: a longjmp or
//     exception landing site, a thread's first block in mid-routine);
//   - duplicate edges collapse (a simple graph: an id names one block
//     sequence); out-edges in ascending target address, EXIT last.
func BuildDAG(cfg *CFG, heads, tails []int32) *DAG {
	nb := len(cfg.Blocks)
	d := &DAG{CFG: cfg, Back: make([][]int32, nb), Reached: make([]bool, nb), Heads: heads}
	const (
		white = iota
		gray
		black
	)
	color := make([]uint8, nb)
	type item struct {
		b    int32
		next int
	}
	var stack []item
	dfs := func(root int32) {
		if root < 0 || int(root) >= nb || color[root] != white {
			return
		}
		color[root] = gray
		stack = append(stack[:0], item{root, 0})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			succ := cfg.Blocks[top.b].Succ
			if top.next == len(succ) {
				color[top.b] = black
				stack = stack[:len(stack)-1]
				continue
			}
			w := succ[top.next]
			top.next++
			switch color[w] {
			case white:
				color[w] = gray
				stack = append(stack, item{w, 0})
			case gray:
				d.Back[top.b] = append(d.Back[top.b], w)
			}
		}
	}
	if nb > 0 {
		dfs(0)
	}
	for _, h := range heads {
		dfs(h)
	}
	exit := int32(nb + 1)
	isHead := make([]bool, nb)
	toExit := make([]bool, nb)
	if nb > 0 {
		isHead[0] = true
	}
	for _, h := range heads {
		if h >= 0 && int(h) < nb {
			isHead[h] = true
		}
	}
	for _, t := range tails {
		if t >= 0 && int(t) < nb {
			toExit[t] = true
		}
	}
	out := make([][]int32, nb+2) // targets per vertex
	// In one array, each block's with room for its successors and EXIT.
	nt := 0
	for i := range cfg.Blocks {
		nt += len(cfg.Blocks[i].Succ) + 1
	}
	targets := make([]int32, 0, nt)
	for i := range cfg.Blocks {
		k := len(cfg.Blocks[i].Succ) + 1
		out[BlockVertex(int32(i))], targets = targets[len(targets):len(targets):len(targets)+k], targets[:len(targets)+k]
	}
	for i := range cfg.Blocks {
		b := int32(i)
		if color[b] == white {
			continue
		}
		d.Reached[b] = true
		blk := &cfg.Blocks[i]
		for _, w := range blk.Succ {
			if slices.Contains(d.Back[b], w) {
				isHead[w] = true
				toExit[b] = true
				continue
			}
			out[BlockVertex(b)] = append(out[BlockVertex(b)], BlockVertex(w))
		}
		if blk.Exit {
			toExit[b] = true
		}
	}
	for i := range cfg.Blocks {
		b := int32(i)
		if !d.Reached[b] {
			continue
		}
		v := BlockVertex(b)
		if isHead[b] {
			out[Entry] = append(out[Entry], v)
		}
		if toExit[b] || len(out[v]) == 0 {
			out[v] = append(out[v], exit)
		}
	}
	edges := make([]Edge, 0, nt+len(out[Entry]))
	for v := range out {
		ts := out[v]
		slices.Sort(ts)
		ts = slices.Compact(ts)
		for _, w := range ts {
			edges = append(edges, Edge{int32(v), w})
		}
	}
	g, err := newGraph(nb+2, edges, true)
	if err != nil {
		panic(err) // the DFS removed every cycle
	}
	d.G = g
	d.Num = BallLarus(g)
	return d
}

// vinfo is what the path registers need about one block: its successors
// with their labels, and the labels of its ENTRY and EXIT edges.
type vinfo struct {
	succ    []rtEdge
	exitVal uint64
	hasExit bool
	exitNZ  bool // the EXIT edge is a probe (non-zero label)
	headVal uint64
	isHead  bool
	headNZ  bool // the ENTRY edge is a probe
}

// rtEdge is a CFG edge at run time: a DAG edge (r += val) or a back edge
// (the path ends through the dummy v->EXIT, the next starts at the dummy
// ENTRY->w).
type rtEdge struct {
	to   int32
	back bool
	val  uint64
	nz   bool // a probe: non-zero label
}

// runtime returns the per-block tables for labels (one per DAG edge).
func (d *DAG) runtime(labels []uint64) []vinfo {
	g := d.G
	vi := make([]vinfo, len(d.CFG.Blocks))
	// Every block's successors in one array, each with room for its own.
	n := 0
	for i := range d.CFG.Blocks {
		if d.Reached[i] {
			n += len(g.Out[BlockVertex(int32(i))]) + len(d.Back[i])
		}
	}
	all := make([]rtEdge, 0, n)
	for _, ei := range g.Out[Entry] {
		b := VertexBlock(g.Edges[ei].To)
		vi[b].isHead, vi[b].headVal = true, labels[ei]
	}
	for i := range d.CFG.Blocks {
		b := int32(i)
		if !d.Reached[b] {
			continue
		}
		k := len(g.Out[BlockVertex(b)]) + len(d.Back[b])
		vi[b].succ, all = all[len(all):len(all):len(all)+k], all[:len(all)+k]
		for _, ei := range g.Out[BlockVertex(b)] {
			e := g.Edges[ei]
			if e.To == g.Exit() {
				vi[b].hasExit, vi[b].exitVal = true, labels[ei]
				continue
			}
			vi[b].succ = append(vi[b].succ, rtEdge{to: VertexBlock(e.To), val: labels[ei]})
		}
		for _, w := range d.Back[b] {
			vi[b].succ = append(vi[b].succ, rtEdge{to: w, back: true})
		}
	}
	return vi
}

// BlockPath turns a vertex path (ENTRY ... EXIT) into block indices.
func BlockPath(p []int32) []int32 {
	out := make([]int32, 0, len(p))
	for _, v := range p[1 : len(p)-1] {
		out = append(out, VertexBlock(v))
	}
	return out
}

// VertexPath turns block indices into a vertex path ENTRY ... EXIT.
func (d *DAG) VertexPath(blocks []int32) []int32 {
	p := make([]int32, 0, len(blocks)+2)
	p = append(p, Entry)
	for _, b := range blocks {
		p = append(p, BlockVertex(b))
	}
	return append(p, d.G.Exit())
}
