package paths

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// profileState is everything of a profiler that a renumbering may
// change: the profile, the counters, and per routine the heads and tails
// in order (a plan lists the tails) and the counted paths in key order
// (the order later renumberings read them in).
func profileState(t *testing.T, p *Profiler) string {
	t.Helper()
	pr, err := p.Profile("prog")
	if err != nil {
		t.Fatal(err)
	}
	js, err := pr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%s\nhits %d completions %d truncations %d\n", js, p.Hits, p.Completions, p.Truncations)
	for _, rt := range p.list {
		keys, cs := rt.sortedCounts()
		trie := -1 // a small routine: no trie
		if rt.tr != nil {
			trie = rt.tr.size
		}
		s += fmt.Sprintf("%s: heads %x tails %x lost %d trie %d\n", rt.info.Name, rt.heads, rt.tails, rt.lost, trie)
		for i, k := range keys {
			seq, _ := rt.pathOf(k)
			s += fmt.Sprintf("  %v %d\n", seq, cs[i])
		}
	}
	return s
}

// A renumbering of a big routine (paths as trie nodes) that changes no
// path only reorders the trie (rerank) instead of building it again from
// every path: on random routines whose indirect jumps teach the run edges
// and leaders, with threads interleaved so that paths are in progress in
// several frames, the profile, the counters, the heads and tails in order
// and the counted paths in key order are those of rebuilding the trie at
// every renumbering.
func TestRerankAsRebuild(t *testing.T) {
	rnd := rand.New(rand.NewSource(11))
	reranked, rebuilt := 0, 0
	for iter := 0; iter < 400; iter++ {
		p, nops := randomProgram(rnd)
		walks, order := randomThreads(rnd, p, nops, 4)
		if walks == nil {
			continue
		}
		run := func(rerank bool) (string, int) {
			rn := newRunner(p)
			rn.allBig, rn.noRerank = true, !rerank
			interleave(rn, walks, order)
			prof := rn.profile(t)
			for _, rt := range prof.list {
				if !rt.big {
					t.Fatalf("iter %d: %s is not big", iter, rt.info.Name)
				}
			}
			return profileState(t, prof), prof.reranks
		}
		want, _ := run(false)
		got, n := run(true)
		if got != want {
			t.Fatalf("iter %d: with reranks (%d):\n%s\nrebuilding the trie:\n%s", iter, n, got, want)
		}
		if n > 0 {
			reranked++
		} else {
			rebuilt++
		}
	}
	t.Logf("%d programs renumbered with reranks, %d without", reranked, rebuilt)
	if reranked < 50 {
		t.Errorf("only %d programs took a rerank", reranked)
	}
}

// rerank gives the ranks of a trie built anew from the sequences in order.
func TestTrieRerank(t *testing.T) {
	tr := newTrie()
	ins := func(seq ...int32) int32 {
		n := int32(-1)
		for _, b := range seq {
			n = tr.next(n, b)
		}
		return n
	}
	a := ins(1, 2, 3)    // nodes 0 1 2
	b := ins(1, 4)       // 3
	c := ins(5, 6)       // 4 5
	d := ins(1, 2, 3, 7) // 6
	tr.rerank([]uint64{uint64(c), uint64(a)}, []int32{b})
	// Built anew: 5 6 | 1 2 3 | (1) 4; 1,2,3,7 dropped.
	want := []int32{2, 3, 4, 5, 0, 1, -1}
	if !slices.Equal(tr.rank, want) || tr.size != 6 {
		t.Fatalf("ranks %v size %d, want %v size 6", tr.rank, tr.size, want)
	}
	// The dropped node comes back as a new one, after the others.
	if ins(1, 2, 3, 7) != d || tr.rank[d] != 6 || tr.size != 7 {
		t.Fatalf("dropped node: rank %d size %d", tr.rank[d], tr.size)
	}
}
