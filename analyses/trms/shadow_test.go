package trms

import (
	"math/rand/v2"
	"testing"
)

// The interleaved shadow (the first thread's ts_t in wts' chunks, other
// threads' in their own) holds, after every operation, the timestamps of
// separate per-thread and global memories updated as Fig. 11 and 12 do, on
// random multi-threaded streams over cells of three chunks (accesses
// straddle chunk boundaries; the first thread exits and its tid returns).
func TestInterleavedShadowMatchesSeparate(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		tr := newTracer(t, Config{Resolution: 4, CounterBits: 64})
		e := tr.p.core.(*engine[uint64])
		model := map[uint32]map[uint64]uint64{}
		wts := map[uint64]uint64{}
		touched := map[uint64]bool{}
		bases := []uint64{0x10000 - 64, 0x20000, 7 << 20}
		cur := uint32(1)
		depth := map[uint32]int{}
		both := false // the owner and another thread were alive at once
		for i := 0; i < 4000; i++ {
			addr := bases[rng.IntN(len(bases))] + uint64(rng.IntN(128))
			size := uint32(1 + rng.IntN(16))
			first, last := e.cellRange(addr, size)
			x := rng.IntN(100)
			switch {
			case x < 10:
				cur = uint32(1 + rng.IntN(3))
				tr.sw(cur)
			case x < 20 && depth[cur] < 6:
				depth[cur]++
				tr.call(cur, "f")
			case x < 28 && depth[cur] > 0:
				depth[cur]--
				tr.ret(cur)
			case x < 30 && i > 200:
				tr.p.ThreadExit(cur)
				delete(model, cur)
				depth[cur] = 0
			case x < 60, x < 65: // reads and kernel reads
				if x < 60 {
					tr.p.Read(cur, addr, size)
				} else {
					tr.p.KernelRead(cur, addr, size)
				}
				for c := first; c <= last; c++ {
					touch(model, cur)[c] = uint64(e.count)
					touched[c] = true
				}
			case x < 90:
				tr.p.Write(cur, addr, size)
				for c := first; c <= last; c++ {
					touch(model, cur)[c] = uint64(e.count)
					wts[c] = uint64(e.count)
					touched[c] = true
				}
			default:
				tr.p.KernelWrite(addr, size)
				for c := first; c <= last; c++ {
					wts[c] = uint64(e.count)
					touched[c] = true
				}
			}
			for _, th := range e.threads {
				both = both || (th.ts == e.wts && len(e.threads) > 1)
			}
			for c := range touched {
				if got := slotOf(e.wts, c, wSlot); got != wts[c] {
					t.Fatalf("seed %d op %d: wts[%#x] = %d, separate %d", seed, i, c, got, wts[c])
				}
				for tid, th := range e.threads {
					if got, want := slotOf(th.ts, c, tSlot), model[tid][c]; got != want {
						t.Fatalf("seed %d op %d: ts_%d[%#x] = %d, separate %d", seed, i, tid, c, got, want)
					}
				}
			}
		}
		if !both {
			t.Fatalf("seed %d: the stream did not exercise both layouts at once", seed)
		}
	}
}

func touch(m map[uint32]map[uint64]uint64, tid uint32) map[uint64]uint64 {
	if m[tid] == nil {
		m[tid] = map[uint64]uint64{}
	}
	return m[tid]
}

// slotOf is slot s of cell c in table t (0 if its chunk is absent).
func slotOf(t *table[uint64], c uint64, s int) uint64 {
	ch := t.lookup(c >> chunkBits)
	if ch == nil {
		return 0
	}
	return ch.cells[c&chunkMask][s]
}
