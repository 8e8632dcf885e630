package parallel

import (
	"math/rand/v2"
	"testing"

	"emuprof/analyses/calls"
)

// TestCtxTreeMatchesMap drives ctxTree.child with random (parent, routine,
// site) lookups, more distinct triples than its cache has slots, and checks
// every answer against a plain map.
func TestCtxTreeMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	var c ctxTree
	c.init()
	ref := map[ctxKey]int32{}
	for i := 0; i < 200000; i++ {
		n := len(c.nodes)
		p := int32(rng.IntN(min(n, 16)))
		if rng.IntN(4) == 0 {
			p = int32(rng.IntN(n))
		}
		r := calls.RoutineID(rng.IntN(30))
		site := int32(rng.IntN(5)) - 1
		if rng.IntN(64) == 0 {
			site = int32(rng.Uint32())
		}
		rt := rng.IntN(2) == 0
		got := c.child(p, r, site, rt)
		k := ctxKey{p, r, site}
		want, ok := ref[k]
		if !ok {
			want = int32(len(ref) + 1) // node 0 is the root
			ref[k] = want
			if c.nodes[got].runtime != rt {
				t.Fatalf("step %d: new node's runtime flag %v, want %v", i, c.nodes[got].runtime, rt)
			}
		}
		if got != want {
			t.Fatalf("step %d: child(%d, %d, %d) = %d, want %d", i, p, r, site, got, want)
		}
		if nd := c.nodes[got]; nd.parent != p || nd.routine != r || nd.site != site {
			t.Fatalf("step %d: node %d is %+v, want %v", i, got, nd, k)
		}
	}
	if len(ref) < 1<<ctxCacheBits {
		t.Fatalf("%d triples, want more than the cache's %d slots", len(ref), 1<<ctxCacheBits)
	}
}

// TestCtxTreeAlternating checks that a context calling a lock and an unlock
// in turn is served by the cache, without the map.
func TestCtxTreeAlternating(t *testing.T) {
	var c ctxTree
	c.init()
	lock, unlock := c.child(0, 2, 7, true), c.child(0, 3, 8, true)
	c.index = nil // a lookup that misses the cache now panics
	for range 100 {
		if c.child(0, 2, 7, true) != lock || c.child(0, 3, 8, true) != unlock {
			t.Fatal("alternating callees: wrong node")
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.child(0, 2, 7, true); c.child(0, 3, 8, true) }); n != 0 {
		t.Errorf("%.1f allocations per lookup pair", n)
	}
}

// TestKeyTableMatchesIntern checks keyTable.get, whose cache needs no
// initialization, against intern on random (context, block) lookups,
// starting with context 0 and block 0 (what an all-zero slot holds) and
// with more pairs than the cache has slots.
func TestKeyTableMatchesIntern(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	var k keyTable
	k.init()
	lineOf := func(block uint32) int32 { return int32(block % 97) } // a block has one line
	ref := map[keyPair]int32{}
	for i := 0; i < 100000; i++ {
		node, block := int32(rng.IntN(64)), uint32(rng.IntN(300))
		if i == 0 {
			node, block = 0, 0
		}
		got := k.get(node, lineOf(block), block)
		p := keyPair{node, lineOf(block)}
		want, ok := ref[p]
		if !ok {
			want = int32(len(ref))
			ref[p] = want
		}
		if got != want || k.list[got] != p {
			t.Fatalf("step %d: get(%d, %d, %d) = %d (%v), want %d", i, node, lineOf(block), block, got, k.list[got], want)
		}
	}
	if n := 64 * 300; n <= len(k.cache) {
		t.Fatalf("%d (context, block) pairs, want more than the cache's %d slots", n, len(k.cache))
	}
}
