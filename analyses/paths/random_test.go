package paths

import (
	"math/rand"
	"testing"

	"emuprof/trace"
)

// randomProgram assembles one routine of random blocks: a few nops and a
// conditional jump, a jump, a ret, an indirect jump (jmp *%rax) or
// nothing (falling into the next block).
func randomProgram(r *rand.Rand) (*program, []uint64) {
	a := newAsm(0x1000)
	n := 3 + r.Intn(10)
	var nops []uint64 // every instruction start of the nops: indirect targets
	for i := 0; i < n; i++ {
		a.label(blockLabel(i))
		for k := 0; k <= r.Intn(3); k++ {
			nops = append(nops, a.pc())
			a.nop()
		}
		if i == n-1 {
			a.ret()
			break
		}
		switch r.Intn(6) {
		case 0, 1:
			a.je(blockLabel(r.Intn(n)))
		case 2:
			a.jmp(blockLabel(r.Intn(n)))
		case 3:
			a.ret()
		case 4:
			a.raw(0xff, 0xe0)
		}
	}
	p := newProgram(a).routine("r", 0x1000, a.pc())
	return p, nops
}

func blockLabel(i int) string { return string(rune('A'+i/26)) + string(rune('a'+i%26)) }

// walk returns the emulator blocks of one activation from the entry to a
// ret (nil when it takes too long): conditional jumps go either way,
// indirect jumps anywhere, also into the middle of blocks.
func walk(r *rand.Rand, p *program, nops []uint64) []uint64 {
	var out []uint64
	a := uint64(0x1000)
	for len(out) < 40 {
		out = append(out, a)
		n, _, end := p.tb(a)
		next := a + uint64(n)
		last2 := p.Read(next-2, 2)
		rel := func() uint64 {
			code := p.Read(next-4, 4)
			return uint64(int64(int32(uint32(code[0]) | uint32(code[1])<<8 | uint32(code[2])<<16 | uint32(code[3])<<24)))
		}
		switch end {
		case trace.EndRet:
			return out
		case trace.EndJump: // direct (e9) or indirect (ff e0)
			if last2[0] == 0xff && last2[1] == 0xe0 {
				a = nops[r.Intn(len(nops))]
			} else {
				a = next + rel()
			}
		case trace.EndCond:
			if r.Intn(2) == 0 {
				a = next
			} else {
				a = next + rel()
			}
		default:
			a = next
		}
	}
	return nil
}

// On random routines and random executions, whose indirect jumps make the
// run add transitions and leaders (so counts are carried over
// renumberings): every static block execution of the final CFG lies in
// exactly one counted path execution, nothing is lost or truncated, and
// the profile is the same on a second run.
func TestProfileRandom(t *testing.T) {
	rnd := rand.New(rand.NewSource(5))
	dynamic, split := 0, 0
	for iter := 0; iter < 300; iter++ {
		p, nops := randomProgram(rnd)
		var walks [][]uint64
		for th := 0; th < 1+rnd.Intn(6); th++ {
			if w := walk(rnd, p, nops); w != nil {
				walks = append(walks, w)
			}
		}
		if len(walks) == 0 {
			continue
		}
		trace := func() *runner {
			rn := newRunner(p)
			for i, w := range walks {
				for _, a := range w {
					rn.run(uint32(i+1), a)
				}
			}
			return rn
		}
		prof := trace().profile(t)
		rt := prof.list[0]
		var want uint64
		for _, w := range walks {
			for _, a := range w {
				n, _, _ := p.tb(a)
				first, ok := rt.cfg.Find(a)
				if !ok || rt.cfg.Blocks[first].Start != a {
					t.Fatalf("iter %d: executed block %#x is not a leader of the final CFG", iter, a)
				}
				for b := first; int(b) < len(rt.cfg.Blocks) && rt.cfg.Blocks[b].Start < a+uint64(n); b++ {
					want++
				}
			}
		}
		out := routineOut(t, prof, "r")
		if out.CFG == CFGStaticDynamic {
			dynamic++
		}
		if len(out.AddedLeaders) > 0 {
			split++
		}
		var got uint64
		for _, x := range out.Paths {
			got += x.Count * uint64(len(x.Blocks))
		}
		if got != want || out.Lost != 0 || len(out.Truncated) != 0 || prof.Truncations != 0 {
			t.Fatalf("iter %d: paths cover %d block executions, want %d (lost %d, truncated %v)", iter, got, want, out.Lost, out.Truncated)
		}
		again, _ := trace().profile(t).Profile("prog")
		first, _ := prof.Profile("prog")
		a, _ := first.Marshal()
		b, _ := again.Marshal()
		if string(a) != string(b) {
			t.Fatalf("iter %d: two runs differ", iter)
		}
	}
	t.Logf("%d routines completed by the run, %d with leaders added", dynamic, split)
	if dynamic < 30 || split < 10 {
		t.Errorf("too few renumberings exercised: %d, %d", dynamic, split)
	}
}

// randomThreads draws 1 to maxThreads threads of walks through p, each of
// 1 to 4 activations, and an order interleaving their blocks at random
// (the same in every run of a test). walks is nil when none walked.
func randomThreads(rnd *rand.Rand, p *program, nops []uint64, maxThreads int) (walks [][]uint64, order []int) {
	for th := 0; th < 1+rnd.Intn(maxThreads); th++ {
		var w []uint64
		for range 1 + rnd.Intn(4) { // several activations per thread
			if a := walk(rnd, p, nops); a != nil {
				w = append(w, a...)
			}
		}
		if w != nil {
			walks = append(walks, w)
		}
	}
	for i, w := range walks {
		for range w {
			order = append(order, i)
		}
	}
	rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return walks, order
}

// interleave runs the threads' walks on rn in order (randomThreads'): the
// next block of thread order[k] at step k.
func interleave(rn *runner, walks [][]uint64, order []int) {
	pos := make([]int, len(walks))
	for _, i := range order {
		rn.run(uint32(i+1), walks[i][pos[i]])
		pos[i]++
	}
}
