package timemodel

import (
	"math/rand"
	"testing"

	"emuprof/trace"
)

// TestFastPathsAsSlow prices random streams of blocks and accesses, one
// thread and then three, with the fast paths (the L1D hit of the most
// recent way, the predictors' last-target slots) and without: every
// event's time and cost, every slice's cost and the statistics must be
// equal.
func TestFastPathsAsSlow(t *testing.T) {
	// Blocks: a conditional branch, an indirect jump and call, a ret, a
	// direct call, and the indirect jump retranslated under a second id
	// (the same branch address: one slot).
	codes := []struct {
		addr uint64
		code []byte
		end  trace.End
	}{
		{0x1000, []byte{0x48, 0x01, 0xc8, 0x75, 0x00}, trace.EndCond}, // add rax,rcx; jne
		{0x2000, []byte{0x48, 0x01, 0xc8, 0xff, 0xe0}, trace.EndJump}, // add; jmp rax
		{0x3000, []byte{0xff, 0xd0}, trace.EndCall},                   // call rax
		{0x4000, []byte{0x48, 0x01, 0xc8, 0xc3}, trace.EndRet},        // add; ret
		{0x5000, []byte{0xe8, 0, 0, 0, 0}, trace.EndCall},             // call rel
		{0x2000, []byte{0x48, 0x01, 0xc8, 0xff, 0xe0}, trace.EndJump},
		{0x6000, []byte{0xf0, 0x48, 0x0f, 0xb1, 0x0e, 0xc3}, trace.EndRet}, // lock cmpxchg; ret
	}
	zen4, err := Load(Zen4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*Table{table(t), table(t, "l1.size 512", "l1.ways 4", "prefetch.streams 2", "kernel.pagefault 7", "rob 6"), zen4} {
		for seed := int64(1); seed <= 20; seed++ {
			bt := trace.NewBlockTable()
			ids := make([]uint32, len(codes))
			code := map[uint64][]byte{}
			for i, c := range codes {
				ids[i] = bt.Add(trace.BlockInfo{Addr: c.addr, Len: uint32(len(c.code)), Insns: 2, End: c.end})
				code[c.addr] = c.code
			}
			read := func(addr uint64, p []byte) error { copy(p, code[addr]); return nil }
			fast, slow := New(tb, bt, read), New(tb, bt, read)
			slow.slow = true
			rng := rand.New(rand.NewSource(seed))
			var addr uint64 = 0x10000
			for slice := 0; slice < 60; slice++ {
				tids := 1
				if slice >= 30 {
					tids = 3 // more cores: coherence, no fast L1D path
				}
				tid := uint32(1 + rng.Intn(tids))
				batch := randomBatch(rng, ids, codes[0].addr, tid, &addr)
				b2 := append([]trace.Event(nil), batch...)
				base, alone := int64(slice*500), rng.Intn(4) == 0
				fast.Begin(tid, base, alone)
				slow.Begin(tid, base, alone)
				fast.Events(batch)
				slow.Events(b2)
				for i := range batch {
					if batch[i] != b2[i] {
						t.Fatalf("seed %d, slice %d, event %d: fast %+v, slow %+v", seed, slice, i, batch[i], b2[i])
					}
				}
				if f, s := fast.End(), slow.End(); f != s {
					t.Fatalf("seed %d, slice %d: cost %d fast, %d slow", seed, slice, f, s)
				}
			}
			if f, s := fast.Totals(), slow.Totals(); f != s {
				t.Fatalf("seed %d: stats %+v fast, %+v slow", seed, f, s)
			}
		}
	}
}

// randomBatch returns a batch of tid's blocks (from ids, with random
// successors) and accesses: repeats of the last line, neighbours,
// accesses across lines and pages, far ones, size 0.
func randomBatch(rng *rand.Rand, ids []uint32, addr0 uint64, tid uint32, addr *uint64) []trace.Event {
	var batch []trace.Event
	for n := 20 + rng.Intn(200); n > 0; n-- {
		if rng.Intn(3) == 0 {
			id := ids[rng.Intn(len(ids))]
			// successors: a few targets, so that predictions both hit and miss
			target := addr0 + uint64(rng.Intn(3))*0x1000
			batch = append(batch, trace.Event{Kind: trace.KindBlock, Block: id, Addr: target, Tid: tid})
			continue
		}
		switch r := rng.Intn(10); {
		case r < 4: // the same line
		case r < 7:
			*addr += uint64(rng.Intn(129)) - 64
		case r < 8:
			*addr = 0x10000 + uint64(rng.Intn(1<<22))
		case r < 9:
			*addr = *addr&^63 + 60 // across a line, sometimes a page
			if rng.Intn(2) == 0 {
				*addr = *addr&^4095 + 4094
			}
		default:
			*addr = uint64(rng.Int63())
		}
		kind := trace.KindRead
		if rng.Intn(3) == 0 {
			kind = trace.KindWrite
		}
		size := []uint32{0, 1, 2, 4, 8, 16, 32}[rng.Intn(7)]
		batch = append(batch, trace.Event{Kind: kind, Addr: *addr, Size: size, Tid: tid, Aux: 0x1000})
	}
	return batch
}

// TestCondAsCounters checks cond's table against 2-bit saturating
// counters written out, on random branches and outcomes.
func TestCondAsCounters(t *testing.T) {
	p := newPredictor(4, 2, 0)
	counters, history := make([]uint8, 16), uint64(0)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		pc, fall := uint64(rng.Intn(64)), uint64(100)
		addr := fall
		if rng.Intn(3) > 0 {
			addr = 200
		}
		taken := addr != fall
		j := (pc ^ history) & 15
		c := counters[j]
		want := (c >= 2) != taken
		switch {
		case taken && c < 3:
			counters[j]++
		case !taken && c > 0:
			counters[j]--
		}
		history = history<<1 | b2u(taken)
		if got := p.cond(pc, fall, addr); got != want {
			t.Fatalf("branch %d: mispredicted %v; want %v", i, got, want)
		}
	}
}
