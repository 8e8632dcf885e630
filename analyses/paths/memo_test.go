package paths

import (
	"math/rand"
	"testing"
	"unsafe"
)

// The memo of the edge into an emulator block (stepInto) changes nothing:
// on random routines whose indirect jumps teach the run edges and leaders
// (so the CFG, its labels and the edges' copies change under the memo),
// with threads interleaved, the profile, the counters and the counted
// paths are those of scanning the block's successors at every step, for
// small routines (labels) and big ones (trie nodes).
func TestEdgeMemoAsScan(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	used := 0
	for iter := 0; iter < 400; iter++ {
		p, nops := randomProgram(rnd)
		walks, order := randomThreads(rnd, p, nops, 3)
		if walks == nil {
			continue
		}
		big := iter%2 == 1
		run := func(memo bool) (string, int) {
			rn := newRunner(p)
			rn.allBig, rn.noMemo = big, !memo
			interleave(rn, walks, order)
			prof := rn.profile(t)
			memos := 0
			for _, e := range prof.cache {
				if e.from >= 0 && e.rt != nil {
					memos++
				}
			}
			return profileState(t, prof), memos
		}
		want, none := run(false)
		got, memos := run(true)
		if none != 0 {
			t.Fatalf("iter %d: %d memos with the memo off", iter, none)
		}
		if got != want {
			t.Fatalf("iter %d (big %v): with the memo:\n%s\nscanning:\n%s", iter, big, got, want)
		}
		if memos > 0 {
			used++
		}
	}
	if used < 200 {
		t.Errorf("the memo held an edge in only %d programs", used)
	}
}

// A cache entry is read at every Block event: it stays one cache line
// (and memory.go's cacheBytes counts it so).
func TestCacheEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(cacheEntry{}); n != cacheBytes {
		t.Errorf("cacheEntry is %d bytes, not %d", n, cacheBytes)
	}
}
