package calls

import (
	"math/rand/v2"
	"testing"
)

// TestCCTMatchesMap drives a CCT with random (parent, routine) lookups,
// enough distinct pairs that cache slots collide, and checks every answer
// against a plain map of the pairs seen.
func TestCCTMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 7))
	c := NewCCT()
	type pair struct {
		p NodeID
		r RoutineID
	}
	ref := map[pair]NodeID{}
	for i := 0; i < 200000; i++ {
		p := NoNode
		if n := c.Len(); n > 0 && rng.IntN(8) > 0 {
			// Mostly a few hot parents, sometimes any.
			if rng.IntN(4) == 0 {
				p = NodeID(rng.IntN(n))
			} else {
				p = NodeID(rng.IntN(min(n, 16)))
			}
		}
		r := RoutineID(rng.IntN(40))
		if rng.IntN(64) == 0 {
			r = RoutineID(rng.Uint32())
		}
		got := c.Child(p, r)
		want, ok := ref[pair{p, r}]
		if !ok {
			want = NodeID(len(ref))
			ref[pair{p, r}] = want
		}
		if got != want {
			t.Fatalf("step %d: Child(%d, %d) = %d, want %d", i, p, r, got, want)
		}
		if n := c.Node(got); n.Parent != p || n.Routine != r {
			t.Fatalf("step %d: node %d is %+v, want parent %d routine %d", i, got, n, p, r)
		}
	}
	if c.Len() != len(ref) || c.Len() < 1<<childCacheBits {
		t.Fatalf("%d nodes, %d pairs (want more than the cache's %d slots)", c.Len(), len(ref), 1<<childCacheBits)
	}
}

// TestCCTAlternatingCallees checks that a context calling two routines in
// turn (a lock and an unlock) is served without the map: the one-entry
// last-child cache this replaced missed on every call of that pattern.
func TestCCTAlternatingCallees(t *testing.T) {
	c := NewCCT()
	root := c.Child(NoNode, 1)
	lock, unlock := c.Child(root, 2), c.Child(root, 3)
	c.index = nil // a lookup that misses the cache now creates a node or panics
	for i := 0; i < 100; i++ {
		if c.Child(root, 2) != lock || c.Child(root, 3) != unlock || c.Child(NoNode, 1) != root {
			t.Fatal("alternating callees: wrong node")
		}
	}
	if c.Len() != 3 {
		t.Fatalf("%d nodes, want 3", c.Len())
	}
}

func TestCCTNoAllocation(t *testing.T) {
	c := NewCCT()
	root := c.Child(NoNode, 1)
	c.Child(root, 2)
	c.Child(root, 3)
	if n := testing.AllocsPerRun(1000, func() {
		c.Child(root, 2)
		c.Child(root, 3)
	}); n != 0 {
		t.Errorf("%.1f allocations per lookup pair", n)
	}
}

func BenchmarkCCTAlternating(b *testing.B) {
	c := NewCCT()
	root := c.Child(NoNode, 1)
	for i := 0; b.Loop(); i++ {
		c.Child(root, RoutineID(2+i&1))
	}
}
