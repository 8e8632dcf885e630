package paths

import (
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/trace"
)

// CFG provenance, as the output reports it per routine (issue 11, point 7).
const (
	CFGStatic        = "static"         // static disassembly found every transition the run took
	CFGStaticDynamic = "static+dynamic" // the run added transitions (or leaders) the disassembly missed
	CFGDynamic       = "dynamic"        // no code to disassemble: the CFG is what the run executed
)

// routine is the path-profiling state of one routine that executed.
type routine struct {
	seq  int // order of first execution
	info trace.Routine
	end  uint64 // range end (exclusive)
	code Code   // nil: no code on disk (CFG from execution only)
	// allBig (tests) makes the routine big whatever its path count.
	allBig bool
	// noReturn tells whether a direct call target never returns.
	noReturn func(uint64) bool

	// What the run taught beyond static recovery, in order of discovery
	// (the CFG and DAG are a function of these and the code).
	roots    []uint64             // leaders the disassembly missed
	extents  map[uint64]tbExtent  // without code: executed block extents
	dynEdges [][2]uint64          // (end of source block, target start)
	heads    []uint64             // extra path heads (ENTRY->w dummies)
	tails    []uint64             // ends of blocks given an extra v->EXIT
	dynamic  bool                 // dynamic edges or leaders were added
	planned  bool                 // a copy's routine the plan has: tails come from the plan
	tables   int                  // jump tables resolved statically
	unres    int                  // indirect jumps left unresolved statically
	lost     uint64               // path executions that could not be migrated (never expected)
	seen     map[[2]uint64]bool   // dynEdges as a set
	headSet  map[uint64]bool      // heads as a set
	tailSet  map[uint64]bool      // tails as a set
	rootSet  map[uint64]bool      // roots as a set
	dynRoots map[uint64]bool      // roots a transition inside the routine needed
	reps     map[uint64]uint64    // rep string instruction lengths by address (0: not one)
	version  int                  // bumped on every rebuild
	cfg      *CFG                 // current CFG
	dag      *DAG                 // current DAG and numbering
	vi       []vinfo              // current run-time tables (labels = Val)
	big      bool                 // NumPaths(ENTRY) >= 2^63: registers hold trie nodes
	tr       *trie                // big only
	counts   map[uint64]uint64    // path id (big: trie node) -> executions
	dense    []uint64             // counts by id when NumPaths(ENTRY) <= denseMax (then counts is unused)
	trunc    map[string]*truncRec // truncated in-progress paths, by block sequence
	truncKey []string             // keys of trunc in order of first sight
	// accounted is what the last build was counted as (memory.go);
	// growing: the profiler watches the routine's counts map.
	accounted uint64
	growing   bool
}

type tbExtent struct {
	len uint32
	end trace.End
}

// truncRec counts executions of a path prefix that ended without reaching
// EXIT (spec §1.7: exit/abort with frames live, longjmp, thread exit).
type truncRec struct {
	blocks []uint64
	count  uint64
}

// cfgKind says where the routine's CFG came from.
func (rt *routine) cfgKind() string {
	switch {
	case rt.code == nil:
		return CFGDynamic
	case rt.dynamic:
		return CFGStaticDynamic
	}
	return CFGStatic
}

// build recovers the CFG and numbers the DAG from the current knowledge.
func (rt *routine) build() {
	var cfg *CFG
	if rt.code != nil {
		res := Recover(Recovery{Entry: rt.info.Entry, End: rt.end, Code: rt.code, NoReturn: rt.noReturn, Roots: rt.roots})
		cfg = res.CFG
		rt.tables, rt.unres = res.Tables, res.Unresolved
	} else {
		cfg = rt.extentCFG()
	}
	if len(cfg.Blocks) == 0 || cfg.Blocks[0].Start != rt.info.Entry {
		// The entry could not be decoded: a one-byte entry block keeps
		// the numbering well-formed.
		cfg.Blocks = slices.Insert(cfg.Blocks, 0, Block{Start: rt.info.Entry, End: rt.info.Entry + 1, Exit: true})
		for i := range cfg.Blocks[1:] {
			for j := range cfg.Blocks[i+1].Succ {
				cfg.Blocks[i+1].Succ[j]++
			}
		}
	}
	for _, e := range rt.dynEdges {
		from, ok1 := cfg.Find(e[0] - 1)
		to, ok2 := cfg.Leader(e[1])
		if !ok1 || !ok2 || cfg.Blocks[from].End != e[0] {
			continue
		}
		b := &cfg.Blocks[from]
		if !slices.Contains(b.Succ, to) {
			b.Succ = append(b.Succ, to)
			slices.Sort(b.Succ)
		}
	}
	rt.cfg = cfg
	rt.number()
}

// linkBlocks adds the edge the run taught (addEdge) from block from to
// leader to of the current CFG and renumbers. A dynamic edge between two
// blocks of the CFG changes no block, so this is the CFG a new recovery
// would give (build applies dynEdges after Recover) without recovering
// the whole routine again: a computed-goto interpreter loop learns its
// edges one at a time (python3's eval loop was recovered once per edge).
// The old CFG's blocks are not changed in place: the old paths are read
// from them.
func (rt *routine) linkBlocks(from, to int32) {
	old := rt.cfg
	cfg := &CFG{Entry: old.Entry, End: old.End, Blocks: slices.Clone(old.Blocks)}
	b := &cfg.Blocks[from]
	if !slices.Contains(b.Succ, to) {
		b.Succ = append(slices.Clone(b.Succ), to)
		slices.Sort(b.Succ)
	}
	rt.cfg = cfg
	rt.number()
}

// number builds the DAG of the current CFG with the current heads and tails.
func (rt *routine) number() {
	cfg := rt.cfg
	var heads, tails []int32
	for _, h := range rt.heads {
		if b, ok := cfg.Leader(h); ok {
			heads = append(heads, b)
		}
	}
	for _, t := range rt.tails {
		if b, ok := cfg.Find(t - 1); ok && cfg.Blocks[b].End == t {
			tails = append(tails, b)
		}
	}
	rt.dag = BuildDAG(cfg, heads, tails)
	rt.big = rt.dag.Num.Overflow || rt.allBig
	if rt.big {
		rt.vi = rt.dag.runtime(make([]uint64, len(rt.dag.G.Edges)))
		nz := rt.dag.Num.NonZero()
		rt.markNonZero(nz)
	} else {
		rt.vi = rt.dag.runtime(rt.dag.Num.Val)
		rt.markNonZero(nil)
	}
	rt.version++
}

// markNonZero sets the probe flags of the run-time tables: from nz (one per
// edge) when given, else from the labels themselves.
func (rt *routine) markNonZero(nz []uint64) {
	if nz == nil {
		for i := range rt.vi {
			v := &rt.vi[i]
			v.headNZ, v.exitNZ = v.headVal != 0, v.exitVal != 0
			for j := range v.succ {
				v.succ[j].nz = v.succ[j].val != 0
			}
		}
		return
	}
	g := rt.dag.G
	for _, ei := range g.Out[Entry] {
		rt.vi[VertexBlock(g.Edges[ei].To)].headNZ = nz[ei] != 0
	}
	for i := range rt.vi {
		b := int32(i)
		if !rt.dag.Reached[b] {
			continue
		}
		v := &rt.vi[b]
		for _, ei := range g.Out[BlockVertex(b)] {
			e := g.Edges[ei]
			if e.To == g.Exit() {
				v.exitNZ = nz[ei] != 0
				continue
			}
			for j := range v.succ {
				if !v.succ[j].back && v.succ[j].to == VertexBlock(e.To) {
					v.succ[j].nz = nz[ei] != 0
				}
			}
		}
	}
}

// extentCFG is the CFG of a routine without code: the executed blocks'
// extents, cut at each other's starts, linked by the run's transitions
// (added by build from dynEdges) and by fall-through inside an extent.
func (rt *routine) extentCFG() *CFG {
	cfg := &CFG{Entry: rt.info.Entry, End: rt.end}
	starts := make([]uint64, 0, len(rt.extents))
	for a := range rt.extents {
		starts = append(starts, a)
	}
	slices.Sort(starts)
	type piece struct {
		start, end uint64
		exit       bool
	}
	var ps []piece
	for i, a := range starts {
		x := rt.extents[a]
		end := a + uint64(x.len)
		if i+1 < len(starts) && starts[i+1] < end {
			ps = append(ps, piece{a, starts[i+1], false}) // falls into the next start
			continue
		}
		ps = append(ps, piece{a, end, x.end == trace.EndRet || x.end == trace.EndJump || x.end == trace.EndOther})
	}
	for i, p := range ps {
		b := Block{Start: p.start, End: p.end, Exit: p.exit}
		if i+1 < len(ps) && ps[i+1].start == p.end && !p.exit {
			b.Succ = []int32{int32(i + 1)}
		}
		cfg.Blocks = append(cfg.Blocks, b)
	}
	return cfg
}

// addRoot adds a leader found by the run. A leader where a path starts
// (entered from another routine, a landing site, a thread's first block)
// is an entry point, which no disassembly of this routine alone can know;
// one reached by a transition inside the routine means the disassembly
// missed it (dynamic).
func (rt *routine) addRoot(a uint64, dynamic bool) (changed bool) {
	if rt.rootSet == nil {
		rt.rootSet = map[uint64]bool{}
	}
	if !rt.rootSet[a] {
		rt.rootSet[a] = true
		rt.roots = append(rt.roots, a)
		changed = true
	}
	if dynamic {
		rt.dynamic = true
		if rt.dynRoots == nil {
			rt.dynRoots = map[uint64]bool{}
		}
		if !rt.dynRoots[a] {
			rt.dynRoots[a] = true
			changed = true
		}
	}
	return changed
}

// isRepString reports whether the instruction at a is a rep-prefixed
// string instruction, which the emulator runs as a loop of blocks starting
// at that instruction, one per iteration.
func (rt *routine) isRepString(a uint64) (uint64, bool) {
	if rt.code == nil {
		return 0, false
	}
	if n, ok := rt.reps[a]; ok {
		return n, n > 0
	}
	if rt.reps == nil {
		rt.reps = map[uint64]uint64{}
	}
	var n uint64
	if b := rt.code.Read(a, maxInsn); len(b) > 0 {
		if inst, err := x86asm.Decode(b, 64); err == nil && isRep(inst) {
			n = uint64(inst.Len)
		}
	}
	rt.reps[a] = n
	return n, n > 0
}

func isRep(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ, x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ, x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ, x86asm.INSB, x86asm.INSW, x86asm.INSD,
		x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD:
	default:
		return false
	}
	for _, p := range inst.Prefix {
		if p&0xff == x86asm.PrefixREP&0xff || p&0xff == x86asm.PrefixREPN&0xff {
			return true
		}
	}
	return false
}

func (rt *routine) addEdge(fromEnd, to uint64) (changed bool) {
	if rt.seen == nil {
		rt.seen = map[[2]uint64]bool{}
	}
	k := [2]uint64{fromEnd, to}
	if rt.seen[k] {
		return false
	}
	rt.seen[k] = true
	rt.dynEdges = append(rt.dynEdges, k)
	rt.dynamic = true
	return true
}

func (rt *routine) addHead(a uint64) bool {
	if rt.headSet == nil {
		rt.headSet = map[uint64]bool{}
	}
	if rt.headSet[a] {
		return false
	}
	rt.headSet[a] = true
	rt.heads = append(rt.heads, a)
	return true
}

func (rt *routine) addTail(end uint64) bool {
	if rt.tailSet == nil {
		rt.tailSet = map[uint64]bool{}
	}
	if rt.tailSet[end] {
		return false
	}
	rt.tailSet[end] = true
	rt.tails = append(rt.tails, end)
	return true
}

// trie interns block sequences (paths of routines whose ids do not fit in
// 64 bits): a node is a sequence, its parent the sequence without its last
// block.
//
// A node keeps its index for good, and rank is the index it would have if
// the trie were built anew at every renumbering that changes no path
// (rerank): the old paths in order of their ranks, then the paths in
// progress, a node for every prefix in order of first sight, and after it
// new nodes in order of creation. The count keys are in rank order as
// they were when every renumbering rebuilt the trie, so what depends on
// that order (the heads and tails a later renumbering adds for the old
// paths, in their order) is unchanged.
type trie struct {
	parent []int32
	block  []int32
	child  map[uint64]int32
	rank   []int32 // per node: its rank, -1 when the rebuilt trie would not have it
	size   int     // nodes the rebuilt trie would have (ranks 0..size-1)
}

func newTrie() *trie { return newTrieSize(0) }

// newTrieSize returns a trie with room for n nodes.
func newTrieSize(n int) *trie {
	return &trie{child: make(map[uint64]int32, n), parent: make([]int32, 0, n), block: make([]int32, 0, n), rank: make([]int32, 0, n)}
}

// next returns the node of node's sequence followed by block b (node -1:
// the sequence of b alone).
func (t *trie) next(node, b int32) int32 {
	k := uint64(uint32(node))<<32 | uint64(uint32(b))
	if n, ok := t.child[k]; ok {
		if t.rank[n] < 0 {
			// Dropped by the last rerank: a rebuilt trie would make
			// the node now.
			t.rank[n] = int32(t.size)
			t.size++
		}
		return n
	}
	n := int32(len(t.parent))
	t.parent = append(t.parent, node)
	t.block = append(t.block, b)
	t.rank = append(t.rank, int32(t.size))
	t.size++
	t.child[k] = n
	return n
}

// rerank gives the nodes the ranks that a trie built anew from the
// sequences of keys (in order), then of lives, would give them as
// indices: each sequence's prefixes that have none yet, shortest first.
func (t *trie) rerank(keys []uint64, lives []int32) {
	for i := range t.rank {
		t.rank[i] = -1
	}
	t.size = 0
	var chain []int32
	visit := func(n int32) {
		chain = chain[:0]
		for m := n; m >= 0 && t.rank[m] < 0; m = t.parent[m] {
			chain = append(chain, m)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			t.rank[chain[i]] = int32(t.size)
			t.size++
		}
	}
	for _, k := range keys {
		visit(int32(k))
	}
	for _, n := range lives {
		visit(n)
	}
}

// seq returns node's block sequence.
func (t *trie) seq(node int32) []int32 {
	var out []int32
	for n := node; n >= 0; n = t.parent[n] {
		out = append(out, t.block[n])
	}
	slices.Reverse(out)
	return out
}

// denseMax bounds the routines whose counts are kept in an array.
const denseMax = 1 << 12

// add counts n executions of the path with count key k.
func (rt *routine) add(k, n uint64) {
	if rt.dense != nil {
		rt.dense[k] += n
		return
	}
	rt.counts[k] += n
}

// sortedCounts returns the count keys with a non-zero count, ascending,
// and their counts.
func (rt *routine) sortedCounts() (keys, counts []uint64) {
	if rt.dense != nil {
		for k, c := range rt.dense {
			if c != 0 {
				keys, counts = append(keys, uint64(k)), append(counts, c)
			}
		}
		return
	}
	for k := range rt.counts {
		keys = append(keys, k)
	}
	if rt.big && rt.tr != nil {
		// Trie nodes, in the order of their ranks (trie).
		r := rt.tr.rank
		slices.SortFunc(keys, func(a, b uint64) int { return int(r[a]) - int(r[b]) })
	} else {
		slices.Sort(keys)
	}
	for _, k := range keys {
		counts = append(counts, rt.counts[k])
	}
	return
}

// resetCounts empties the counts, for the current numbering.
func (rt *routine) resetCounts() {
	rt.counts = map[uint64]uint64{}
	rt.dense = nil
	if !rt.big && rt.dag.Num.NumPaths[Entry] <= denseMax {
		rt.dense = make([]uint64, rt.dag.Num.NumPaths[Entry])
	}
}
