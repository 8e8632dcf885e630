package trms

import "testing"

// Keys that share a slot of the tuple cache (same id*31+n modulo its size)
// keep separate tuples, and a key's tuple survives its eviction.
func TestTupleCacheCollisions(t *testing.T) {
	col := newCollector(false)
	s := col.thread(1)
	n := uint64(len(tupleCache{}))
	keys := []uint64{5, 5 + n, 5 + 2*n, 5, 5 + n}
	for i, rms := range keys {
		a := activation{rms: rms, trms: rms, cost: uint64(i + 1), self: 1}
		col.collect(s, 3, 0, &a)
	}
	want := map[uint64]uint64{5: 1 + 4, 5 + n: 2 + 5, 5 + 2*n: 3} // sums of costs
	for _, m := range []map[tupleKey]*Tuple{s.rms, s.trms} {
		if len(m) != len(want) {
			t.Fatalf("%d tuples, want %d", len(m), len(want))
		}
		for rms, sum := range want {
			if tp := m[tupleKey{3, rms}]; tp == nil || tp.Sum != sum || tp.N != rms {
				t.Errorf("tuple of N=%d: %+v, want sum %d", rms, tp, sum)
			}
		}
	}
}
