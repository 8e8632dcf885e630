package paths

import (
	"fmt"
	"math/rand"
	"testing"
)

// O1's chord placement (spec §4.1): uniform weights, EXIT->ENTRY forced
// into the tree; chords B0->B1 -3, B3->EXIT 3, B4->EXIT 4, B5->EXIT 5.
func TestO1Chords(t *testing.T) {
	d := BuildDAG(o1(), nil, nil)
	inc, chord := ChordIncrements(d.G, d.Num.Val, nil)
	got := map[string]int64{}
	n := 0
	for ei, e := range d.G.Edges {
		if chord[ei] {
			n++
			got[fmt.Sprintf("%d>%d", e.From, e.To)] = inc[ei]
		} else if inc[ei] != 0 {
			t.Errorf("tree edge %v has increment %d", e, inc[ei])
		}
	}
	// Vertices: ENTRY 0, B0..B5 1..6, EXIT 7.
	if fmt.Sprint(got) != fmt.Sprint(map[string]int64{"1>2": -3, "4>7": 3, "5>7": 4, "6>7": 5}) {
		t.Errorf("chords %v", got)
	}
	if n != len(d.G.Edges)-d.G.N+2 || ChordProbes(d.G, inc, chord) != 1 {
		t.Errorf("%d chords, %d probes", n, ChordProbes(d.G, inc, chord))
	}
}

// Every path keeps its sum and there are |E| - |V| + 2 chords (spec §4.5
// invariant 2), with random weights too.
func TestChordsRandom(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for iter := 0; iter < 1000; iter++ {
		g := randomDAG(r, 1+r.Intn(9))
		bl := BallLarus(g)
		var w []uint64
		if r.Intn(2) == 0 {
			w = make([]uint64, len(g.Edges))
			for i := range w {
				w[i] = uint64(r.Intn(5))
			}
		}
		inc, chord := ChordIncrements(g, bl.Val, w)
		n := 0
		for _, c := range chord {
			if c {
				n++
			}
		}
		if n != len(g.Edges)-g.N+2 {
			t.Fatalf("iter %d: %d chords, want %d", iter, n, len(g.Edges)-g.N+2)
		}
		g.EnumeratePaths(0, func(p, edges []int32) bool {
			var a int64
			var b uint64
			for _, ei := range edges {
				a += inc[ei]
				b += bl.Val[ei]
			}
			if a != int64(b) {
				t.Fatalf("iter %d: path %v: increments sum %d, values %d", iter, p, a, b)
			}
			return true
		})
	}
}
