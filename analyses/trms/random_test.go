package trms

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// op is one operation of a random abstract trace.
type op struct {
	kind byte // c(all) r(eturn) R(ead) W(rite) K(ernel write) k(ernel read) s(witch) x (thread exit) $ (cost)
	tid  uint32
	rtn  string
	addr uint64
	size uint32
}

// randomTrace generates a multi-threaded trace over a small memory so that
// threads share cells, with calls nested up to maxDepth per thread.
func randomTrace(seed uint64, n, threads int, kernel bool) []op {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const maxDepth = 10
	depth := make(map[uint32]int)
	cur := uint32(1)
	var ops []op
	names := []string{"a", "b", "c", "d", "e"}
	for len(ops) < n {
		x := rng.IntN(100)
		addr := 0x1000 + uint64(rng.IntN(48))*2 // unaligned: sizes may straddle cells
		size := uint32(1 << rng.IntN(4))
		switch {
		case x < 8 && threads > 1:
			cur = uint32(1 + rng.IntN(threads))
			ops = append(ops, op{kind: 's', tid: cur})
		case x < 20 && depth[cur] < maxDepth:
			depth[cur]++
			ops = append(ops, op{kind: 'c', tid: cur, rtn: names[rng.IntN(len(names))]})
		case x < 30 && depth[cur] > 0:
			depth[cur]--
			ops = append(ops, op{kind: 'r', tid: cur})
		case x < 60:
			ops = append(ops, op{kind: 'R', tid: cur, addr: addr, size: size})
		case x < 80:
			ops = append(ops, op{kind: 'W', tid: cur, addr: addr, size: size})
		case x < 85 && kernel:
			ops = append(ops, op{kind: 'K', addr: addr, size: size * 4})
		case x < 88 && kernel:
			ops = append(ops, op{kind: 'k', tid: cur, addr: addr, size: size})
		case x < 89 && threads > 1:
			ops = append(ops, op{kind: 'x', tid: cur})
			depth[cur] = 0
		default:
			ops = append(ops, op{kind: '$', tid: cur, size: uint32(1 + rng.IntN(5))})
		}
	}
	return ops
}

// runFast runs a trace through the profiler.
func runFast(t *testing.T, cfg Config, ops []op) *tracer {
	t.Helper()
	tr := newTracer(t, cfg)
	for _, o := range ops {
		switch o.kind {
		case 'c':
			tr.call(o.tid, o.rtn)
		case 'r':
			tr.ret(o.tid)
		case 'R':
			tr.p.Read(o.tid, o.addr, o.size)
		case 'W':
			tr.p.Write(o.tid, o.addr, o.size)
		case 'K':
			tr.p.KernelWrite(o.addr, o.size)
		case 'k':
			tr.p.KernelRead(o.tid, o.addr, o.size)
		case 's':
			tr.sw(o.tid)
		case 'x':
			tr.p.ThreadExit(o.tid)
		case '$':
			tr.p.Cost(o.tid, uint64(o.size))
		}
	}
	tr.p.Finish()
	if err := tr.p.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// Naive reference (PLDI'12 §4.1 and TRMS §4.1, Fig. 10): every pending
// activation keeps the set of cells it (or a descendant) accessed; for the
// TRMS the set loses cells that another thread or the kernel writes.
type naiveAct struct {
	name            string
	accessed, live  map[uint64]bool // RMS set A_r, TRMS set L_{r,t}
	a               act
	cost0, childSum uint64
}

type naiveThread struct {
	stack   []*naiveAct
	lastAcc map[uint64]int // cell -> time of the thread's latest access
	cost    uint64
}

type naive struct {
	shift     uint
	now       int
	threads   map[uint32]*naiveThread
	lastWrite map[uint64]int  // cell -> time of the latest write
	kernelW   map[uint64]bool // the latest write was the kernel's
	acts      []act
}

func (n *naive) thread(tid uint32) *naiveThread {
	th, ok := n.threads[tid]
	if !ok {
		th = &naiveThread{lastAcc: make(map[uint64]int)}
		n.threads[tid] = th
	}
	return th
}

func (n *naive) cells(addr uint64, size uint32) []uint64 {
	var out []uint64
	for c := addr >> n.shift; c <= (addr+uint64(size)-1)>>n.shift; c++ {
		out = append(out, c)
	}
	return out
}

func (n *naive) pop(tid uint32, th *naiveThread) {
	f := th.stack[len(th.stack)-1]
	th.stack = th.stack[:len(th.stack)-1]
	f.a.tid = tid
	f.a.cost = th.cost - f.cost0
	f.a.self = f.a.cost - f.childSum
	if len(th.stack) > 0 {
		th.stack[len(th.stack)-1].childSum += f.a.cost
	}
	n.acts = append(n.acts, f.a)
}

func (n *naive) run(ops []op) {
	for _, o := range ops {
		n.now++
		th := n.thread(o.tid)
		switch o.kind {
		case 'c':
			th.stack = append(th.stack, &naiveAct{name: o.rtn, accessed: map[uint64]bool{}, live: map[uint64]bool{},
				a: act{name: o.rtn}, cost0: th.cost})
		case 'r':
			n.pop(o.tid, th)
		case 'R', 'k':
			for _, c := range n.cells(o.addr, o.size) {
				w, written := n.lastWrite[c]
				last, seen := th.lastAcc[c]
				induced := written && (!seen || last < w)
				for i, f := range th.stack {
					if !f.accessed[c] {
						f.accessed[c] = true
						f.a.rms++
					}
					if !f.live[c] {
						f.live[c] = true
						f.a.trms++
						if induced {
							top := i == len(th.stack)-1
							if n.kernelW[c] {
								f.a.ext++
								if top {
									f.a.extSelf++
								}
							} else {
								f.a.thr++
								if top {
									f.a.thrSelf++
								}
							}
						}
					}
				}
				th.lastAcc[c] = n.now
			}
		case 'W':
			for _, c := range n.cells(o.addr, o.size) {
				for _, f := range th.stack {
					f.accessed[c] = true
					f.live[c] = true
				}
				for tid, other := range n.threads {
					if tid != o.tid {
						for _, f := range other.stack {
							delete(f.live, c)
						}
					}
				}
				n.lastWrite[c] = n.now
				n.kernelW[c] = false
				th.lastAcc[c] = n.now
			}
		case 'K':
			for _, c := range n.cells(o.addr, o.size) {
				for _, other := range n.threads {
					for _, f := range other.stack {
						delete(f.live, c)
					}
				}
				n.lastWrite[c] = n.now
				n.kernelW[c] = true
			}
		case 'x':
			for len(th.stack) > 0 {
				n.pop(o.tid, th)
			}
			delete(n.threads, o.tid)
		case '$':
			th.cost += uint64(o.size)
		}
	}
	tids := make([]uint32, 0, len(n.threads))
	for tid := range n.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		th := n.threads[tid]
		for len(th.stack) > 0 {
			n.pop(tid, th)
		}
	}
}

func runNaive(k int, ops []op) []act {
	n := &naive{threads: map[uint32]*naiveThread{}, lastWrite: map[uint64]int{}, kernelW: map[uint64]bool{}}
	for 1<<n.shift < k {
		n.shift++
	}
	n.run(ops)
	return n.acts
}

// The fast algorithms (Figs. 6, 11, 12) compute exactly the naive RMS,
// TRMS, external/thread-induced split and costs of every activation, on
// random multi-threaded traces, at several resolutions and counter widths
// (a tiny width forces the renumbering of Fig. 13 every few hundred
// events). TRMS >= RMS holds for every activation (TRMS paper, Ineq. 1).
func TestRandomTracesMatchNaive(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		ops := randomTrace(seed, 3000, 3, true)
		for _, k := range []int{1, 4} {
			want := runNaive(k, ops)
			for _, bits := range []int{8, 12, 32, 64} {
				tr := runFast(t, Config{Resolution: k, CounterBits: bits}, ops)
				if len(tr.acts) != len(want) {
					t.Fatalf("seed %d k=%d bits=%d: %d activations, naive %d", seed, k, bits, len(tr.acts), len(want))
				}
				for i := range want {
					if tr.acts[i] != want[i] {
						t.Fatalf("seed %d k=%d bits=%d activation %d:\n got %v\nwant %v", seed, k, bits, i, tr.acts[i], want[i])
					}
					if tr.acts[i].trms < tr.acts[i].rms {
						t.Fatalf("TRMS < RMS: %v", tr.acts[i])
					}
				}
				if bits == 8 && tr.p.Renumberings() < 2 {
					t.Errorf("seed %d: only %d renumberings with an 8-bit counter", seed, tr.p.Renumberings())
				}
			}
		}
	}
}

// Identical reports with a tiny counter (renumbering every few hundred
// events) and a 64-bit one, and the same trace twice gives the same bytes.
func TestOverflowAndDeterminism(t *testing.T) {
	ops := randomTrace(99, 20000, 4, true)
	var texts []string
	for _, bits := range []int{8, 64, 8} {
		tr := runFast(t, Config{CounterBits: bits}, ops)
		if bits == 8 && tr.p.Renumberings() < 20 {
			t.Errorf("only %d renumberings in %d events", tr.p.Renumberings(), len(ops))
		}
		texts = append(texts, reportText(t, tr.p))
	}
	if texts[0] != texts[1] {
		t.Error("reports differ between 8- and 64-bit counters")
	}
	if texts[0] != texts[2] {
		t.Error("the same trace gave different reports")
	}
	// CCT reports are deterministic too.
	a := reportText(t, runFast(t, Config{CounterBits: 8, CCT: true}, ops).p)
	b := reportText(t, runFast(t, Config{CounterBits: 64, CCT: true}, ops).p)
	if a != b {
		t.Error("CCT reports differ between 8- and 64-bit counters")
	}
}

func TestRandomSingleThreadRMSOnly(t *testing.T) {
	// Single-threaded, no kernel: TRMS must equal RMS everywhere.
	ops := randomTrace(7, 5000, 1, false)
	tr := runFast(t, Config{}, ops)
	for _, a := range tr.acts {
		if a.rms != a.trms || a.ext != 0 || a.thr != 0 {
			t.Fatalf("single thread without kernel: %v", a)
		}
	}
	if fmt.Sprint(tr.acts) != fmt.Sprint(runNaive(4, ops)) {
		t.Error("differs from naive")
	}
}

// wideTrace is randomTrace with its accesses moved around a shadow chunk
// boundary (0x10000 is one at resolutions 1 and 4) and one in five made
// wide: up to 40,000 bytes, so that accesses span two or three chunks and
// overlap the small ones.
func wideTrace(seed uint64, n int) []op {
	rng := rand.New(rand.NewPCG(seed, 7))
	ops := randomTrace(seed, n, 3, true)
	for i := range ops {
		switch o := &ops[i]; o.kind {
		case 'R', 'W', 'K', 'k':
			if rng.IntN(5) == 0 {
				o.addr, o.size = 0x10000-uint64(rng.IntN(20000)), uint32(1+rng.IntN(40000))
			} else {
				o.addr = 0x10000 + uint64(rng.IntN(64))*2 - 64
			}
		}
	}
	return ops
}

// Wide accesses, handled a shadow chunk at a time, give the naive RMS and
// TRMS too.
func TestWideAccessesMatchNaive(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		ops := wideTrace(seed, 400)
		for _, k := range []int{1, 4} {
			want := runNaive(k, ops)
			for _, bits := range []int{12, 32} {
				tr := runFast(t, Config{Resolution: k, CounterBits: bits}, ops)
				if !slices.Equal(tr.acts, want) {
					t.Fatalf("seed %d k=%d bits=%d: differs from naive (%d and %d activations)", seed, k, bits, len(tr.acts), len(want))
				}
			}
		}
	}
}

// twoChunkTrace is randomTrace with half its accesses moved to another
// shadow chunk (at resolutions 1 and 4), and its kernel writes kept out of
// that chunk for the trace's first half: chunks with and without external
// bits (chunk.anyExt) side by side, and one that gets them late.
func twoChunkTrace(seed uint64, n int) []op {
	rng := rand.New(rand.NewPCG(seed, 11))
	ops := randomTrace(seed, n, 3, true)
	for i := range ops {
		switch o := &ops[i]; o.kind {
		case 'R', 'W', 'k':
			if rng.IntN(2) == 0 {
				o.addr += 0x40000
			}
		case 'K':
			if i > n/2 && rng.IntN(2) == 0 {
				o.addr += 0x40000
			}
		}
	}
	return ops
}

// Chunks that never saw a kernel write skip their external bits; the
// results stay the naive ones.
func TestExtBitsPerChunkMatchNaive(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		ops := twoChunkTrace(seed, 3000)
		for _, k := range []int{1, 4} {
			want := runNaive(k, ops)
			tr := runFast(t, Config{Resolution: k}, ops)
			if !slices.Equal(tr.acts, want) {
				t.Fatalf("seed %d k=%d: differs from naive (%d and %d activations)", seed, k, len(tr.acts), len(want))
			}
		}
	}
}
