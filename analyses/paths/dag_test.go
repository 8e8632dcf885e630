package paths

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// cfgOf builds a CFG from successor lists (blocks at 0x10, 0x20, ...).
func cfgOf(succ [][]int32, exits ...int32) *CFG {
	c := &CFG{Entry: 0x10, End: 0x10 * uint64(len(succ)+1)}
	for i, s := range succ {
		c.Blocks = append(c.Blocks, Block{Start: 0x10 * uint64(i+1), End: 0x10*uint64(i+1) + 0x10, Succ: s})
	}
	for _, e := range exits {
		c.Blocks[e].Exit = true
	}
	return c
}

// o1 is the spec's oracle O1 (§4.1): B0->B1, B1->B2, B1->B5, B2->B3,
// B2->B4, B3->B1, B4->B1; B5 exits.
func o1() *CFG { return cfgOf([][]int32{{1}, {2, 5}, {3, 4}, {1}, {1}, nil}, 5) }

func edgeList(g *Graph) []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, fmt.Sprintf("%d>%d", e.From, e.To))
	}
	return out
}

func TestO0Diamond(t *testing.T) {
	// entry->a, entry->b, a->exit, b->exit (spec §4.1 O0).
	g, err := NewGraph(4, []Edge{{0, 1}, {0, 2}, {1, 3}, {2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	n := BallLarus(g)
	if !slices.Equal(n.NumPaths, []uint64{2, 1, 1, 1}) || !slices.Equal(n.Val, []uint64{0, 1, 0, 0}) || Probes(n.Val) != 1 {
		t.Fatalf("N %v Val %v", n.NumPaths, n.Val)
	}
	for id, want := range [][]int32{{0, 1, 3}, {0, 2, 3}} {
		got, err := n.Decode(uint64(id))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("decode(%d) = %v %v, want %v", id, got, err, want)
		}
	}
}

func TestO1LoopDAG(t *testing.T) {
	d := BuildDAG(o1(), nil, nil)
	// Vertices: ENTRY 0, B0..B5 = 1..6, EXIT 7.
	wantEdges := []string{"0>1", "0>2", "1>2", "2>3", "2>6", "3>4", "3>5", "4>7", "5>7", "6>7"}
	if got := edgeList(d.G); !slices.Equal(got, wantEdges) {
		t.Fatalf("edges %v, want %v", got, wantEdges)
	}
	if !slices.Equal(d.Back[3], []int32{1}) || !slices.Equal(d.Back[4], []int32{1}) {
		t.Errorf("back edges %v", d.Back)
	}
	if want := []uint64{6, 3, 3, 2, 1, 1, 1, 1}; !slices.Equal(d.Num.NumPaths, want) {
		t.Errorf("NumPaths %v, want %v", d.Num.NumPaths, want)
	}
	nz := map[string]uint64{}
	for i, v := range d.Num.Val {
		if v != 0 {
			nz[wantEdges[i]] = v
		}
	}
	if want := map[string]uint64{"0>2": 3, "2>6": 2, "3>5": 1}; fmt.Sprint(nz) != fmt.Sprint(want) {
		t.Errorf("non-zero Val %v, want %v", nz, want)
	}
	want := [][]int32{{0, 1, 2, 3}, {0, 1, 2, 4}, {0, 1, 5}, {1, 2, 3}, {1, 2, 4}, {1, 5}}
	for id, w := range want {
		vp, err := d.Num.Decode(uint64(id))
		if err != nil || !slices.Equal(BlockPath(vp), w) {
			t.Errorf("decode(%d) = %v %v, want blocks %v", id, vp, err, w)
		}
		if got, ok := d.G.Encode(d.Num.Val, d.VertexPath(w)); !ok || got != uint64(id) {
			t.Errorf("encode(%v) = %d %v", w, got, ok)
		}
	}
}

// randomCFG returns a random CFG of n blocks (loops, exits, unreachable
// code, multi-way branches).
func randomCFG(r *rand.Rand, n int) *CFG {
	succ := make([][]int32, n)
	var exits []int32
	for i := range succ {
		k := r.Intn(4)
		for j := 0; j < k; j++ {
			succ[i] = append(succ[i], int32(r.Intn(n)))
		}
		slices.Sort(succ[i])
		succ[i] = slices.Compact(succ[i])
		if r.Intn(4) == 0 {
			exits = append(exits, int32(i))
		}
	}
	return cfgOf(succ, exits...)
}

// The Ball-Larus ids of all paths are exactly 0..NumPaths-1 and decode
// inverts encode (spec §4.5 invariant 1), on random CFGs.
func TestBallLarusBijection(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 500; iter++ {
		cfg := randomCFG(r, 1+r.Intn(9))
		var heads []int32
		if r.Intn(3) == 0 {
			heads = append(heads, int32(r.Intn(len(cfg.Blocks))))
		}
		d := BuildDAG(cfg, heads, nil)
		seen := map[uint64]bool{}
		d.G.EnumeratePaths(0, func(p, _ []int32) bool {
			id, ok := d.G.Encode(d.Num.Val, p)
			if !ok || seen[id] {
				t.Fatalf("iter %d: path %v id %d ok %v (duplicate %v)", iter, p, id, ok, seen[id])
			}
			seen[id] = true
			back, err := d.Num.Decode(id)
			if err != nil || !slices.Equal(back, p) {
				t.Fatalf("iter %d: decode(%d) = %v %v, want %v", iter, id, back, err, p)
			}
			return true
		})
		if uint64(len(seen)) != d.Num.NumPaths[Entry] {
			t.Fatalf("iter %d: %d paths, NumPaths %d", iter, len(seen), d.Num.NumPaths[Entry])
		}
		for id := range seen {
			if id >= d.Num.NumPaths[Entry] {
				t.Fatalf("id %d out of range", id)
			}
		}
		// Every reached block reaches EXIT and every reached block has
		// a path from ENTRY through it.
		for b, ok := range d.Reached {
			if ok && d.Num.NumPaths[BlockVertex(int32(b))] == 0 {
				t.Fatalf("iter %d: block %d has no path to EXIT", iter, b)
			}
		}
	}
}

// A chain of 70 diamonds has 2^70 paths: the numbering overflows 64 bits
// and switches to exact big ids, which still decode.
func TestBallLarusOverflow(t *testing.T) {
	var succ [][]int32
	const k = 70
	for i := 0; i < k; i++ {
		b := int32(len(succ))
		succ = append(succ, []int32{b + 1, b + 2}, []int32{b + 3}, []int32{b + 3})
	}
	succ = append(succ, nil)
	cfg := cfgOf(succ, int32(len(succ)-1))
	d := BuildDAG(cfg, nil, nil)
	if !d.Num.Overflow || d.Num.Total() != "1180591620717411303424" {
		t.Fatalf("overflow %v total %s", d.Num.Overflow, d.Num.Total())
	}
	// The path taking every second branch has id 2^70-1.
	var blocks []int32
	for i := 0; i < k; i++ {
		blocks = append(blocks, int32(3*i), int32(3*i+2))
	}
	blocks = append(blocks, int32(3*k))
	id, ok := d.Num.EncodeBig(d.VertexPath(blocks))
	if !ok || id.String() != "1180591620717411303423" {
		t.Fatalf("id %v %v", id, ok)
	}
	back, err := d.Num.DecodeBig(id)
	if err != nil || !slices.Equal(BlockPath(back), blocks) {
		t.Fatalf("decode: %v %v", back, err)
	}
}

// NonZero, computed without the labels, flags exactly the edges whose
// exact (big) label is non-zero, on random DAGs of BuildDAG and on random
// graphs with vertices that do not reach EXIT (NumPaths 0); and the big
// numbers, computed on first use, agree with the 64-bit ones.
func TestNonZeroMatchesBigLabels(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	check := func(iter int, n *Numbering) {
		t.Helper()
		nz := n.NonZero()
		numPaths, val := n.bigs()
		for ei, v := range val {
			if want := uint64(min(v.Sign(), 1)); nz[ei] != want {
				t.Fatalf("iter %d: edge %d: NonZero %d, label %s", iter, ei, nz[ei], v)
			}
			if !n.Overflow && v.Uint64() != n.Val[ei] {
				t.Fatalf("iter %d: edge %d: big label %s, Val %d", iter, ei, v, n.Val[ei])
			}
		}
		if !n.Overflow && numPaths[Entry].Uint64() != n.NumPaths[Entry] {
			t.Fatalf("iter %d: NumPaths %s against %d", iter, numPaths[Entry], n.NumPaths[Entry])
		}
	}
	for iter := 0; iter < 500; iter++ {
		cfg := randomCFG(r, 1+r.Intn(12))
		var heads, tails []int32
		for range r.Intn(3) {
			heads = append(heads, int32(r.Intn(len(cfg.Blocks))))
			tails = append(tails, int32(r.Intn(len(cfg.Blocks))))
		}
		check(iter, BuildDAG(cfg, heads, tails).Num)
		// A random DAG (edges from lower to higher vertices), EXIT the
		// last vertex, some vertices without a way to it.
		nv := 2 + r.Intn(10)
		var edges []Edge
		for v := 0; v < nv-1; v++ {
			for range r.Intn(4) {
				edges = append(edges, Edge{int32(v), int32(v + 1 + r.Intn(nv-1-v))})
			}
		}
		g, err := NewGraph(nv, edges)
		if err != nil {
			t.Fatal(err)
		}
		check(iter, BallLarus(g))
	}
	// The chain of 70 diamonds overflows: every second out-edge is a probe.
	var succ [][]int32
	for i := 0; i < 70; i++ {
		b := int32(len(succ))
		succ = append(succ, []int32{b + 1, b + 2}, []int32{b + 3}, []int32{b + 3})
	}
	succ = append(succ, nil)
	d := BuildDAG(cfgOf(succ, int32(len(succ)-1)), nil, nil)
	if !d.Num.Overflow {
		t.Fatal("no overflow")
	}
	check(-1, d.Num)
}
