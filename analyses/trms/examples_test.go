package trms

import (
	"emuprof/trace"
	"fmt"
	"testing"
)

// PLDI'12 Example 1 (§2.1): RMS(g) = 3, RMS(f) = 2.
func TestPLDIExample1(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.call(1, "f")
	tr.read(1, "x")
	tr.write(1, "y")
	tr.call(1, "g")
	tr.read(1, "x", "y", "z")
	tr.write(1, "w")
	tr.ret(1)
	tr.read(1, "w")
	tr.ret(1)
	tr.expect("g", 3, 3)
	tr.expect("f", 2, 2)
}

// PLDI'12 Example 2 (§2.2): get and mid both have RMS 3.
func TestPLDIExample2(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.call(1, "mid")
	tr.read(1, "v", "n")          // line 5: v and n
	tr.write(1, "get.v", "get.i") // arguments of get
	tr.call(1, "get")
	tr.read(1, "get.v", "get.i", "a[n/2]") // v, i and v[i]
	tr.ret(1)
	tr.write(1, "m") // m = get(...)
	tr.read(1, "m")  // return m
	tr.ret(1)
	tr.expect("get", 3, 3)
	tr.expect("mid", 3, 3)
}

// countZeroIter traces PLDI'12 Example 3 (iterative count_zero) on n cells
// starting at array cell base; v and n are its parameters (written by the
// caller), i and count its locals. Every loop iteration costs 1.
func countZeroIter(tr *tracer, n, base int) {
	tr.write(1, "v", "n")
	tr.call(1, "count_zero")
	tr.write(1, "count", "i")
	for i := range n {
		tr.read(1, "i", "n")
		tr.read(1, "v", fmt.Sprintf("a[%d]", base+i), "count")
		tr.write(1, "count")
		tr.read(1, "i")
		tr.write(1, "i")
		tr.p.Cost(1, 1)
	}
	tr.read(1, "i", "n", "count")
	tr.ret(1)
}

// PLDI'12 Example 3: one tuple per distinct n, with RMS n+2.
func TestPLDIExample3Iterative(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.call(1, "main")
	for _, n := range []int{4, 1, 7, 4} {
		countZeroIter(tr, n, 0)
	}
	tr.ret(1)
	acts := tr.find("count_zero")
	for i, n := range []int{4, 1, 7, 4} {
		if acts[i].rms != uint64(n+2) || acts[i].trms != uint64(n+2) || acts[i].cost != uint64(n) {
			t.Errorf("count_zero(n=%d): %v, want RMS %d cost %d", n, acts[i], n+2, n)
		}
	}
	reps, err := tr.p.Reports()
	if err != nil {
		t.Fatal(err)
	}
	if got := tuplesOf(reps[0], "count_zero"); got != "3:1 6:2 9:1" {
		t.Errorf("count_zero tuples %q", got)
	}
}

// PLDI'12 Example 4: the recursive count_zero called on n yields n+1
// tuples; the i-th activation (i = 1..n+1) has RMS n-i+3. As in the paper's
// accounting, each activation reads both of its parameters v and n (its
// own cells, written by its caller), then v[n-1] if n >= 1.
func TestPLDIExample4Recursive(t *testing.T) {
	const n = 10
	tr := newTracer(t, Config{})
	tr.call(1, "main")
	tr.write(1, "v1", "n1")
	for i := 1; i <= n+1; i++ {
		tr.call(1, "count_zero")
		tr.read(1, fmt.Sprintf("v%d", i), fmt.Sprintf("n%d", i))
		if m := n - i + 1; m >= 1 {
			tr.read(1, fmt.Sprintf("a[%d]", m-1))
			tr.write(1, fmt.Sprintf("v%d", i+1), fmt.Sprintf("n%d", i+1))
		}
	}
	for i := 1; i <= n+1; i++ {
		tr.ret(1)
	}
	tr.ret(1)
	acts := tr.find("count_zero")
	if len(acts) != n+1 {
		t.Fatalf("%d activations", len(acts))
	}
	for k, a := range acts { // completion order: innermost (i = n+1) first
		i := n + 1 - k
		if want := uint64(n - i + 3); a.rms != want || a.trms != want {
			t.Errorf("activation %d: %v, want RMS %d", i, a, want)
		}
	}
	reps, err := tr.p.Reports()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for v := 2; v <= n+2; v++ {
		if want != "" {
			want += " "
		}
		want += fmt.Sprintf("%d:1", v)
	}
	if got := tuplesOf(reps[0], "count_zero"); got != want {
		t.Errorf("count_zero tuples %q, want %q", got, want)
	}
	if tr.one("main").rms != n { // main wrote v1 and n1: only the array is its input
		t.Errorf("main: %v", tr.one("main"))
	}
}

// TRMS paper Fig. 1a (Example 1): f reads x twice; g in another thread
// overwrites x in between. RMS_f = 1, TRMS_f = 2.
func TestTRMSFigure1a(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.sw(1)
	tr.call(1, "f")
	tr.read(1, "x")
	tr.sw(2)
	tr.call(2, "g")
	tr.write(2, "x")
	tr.ret(2)
	tr.sw(1)
	tr.read(1, "x")
	tr.ret(1)
	a := tr.expect("f", 1, 2)
	if a.thr != 1 || a.ext != 0 {
		t.Errorf("f: thread-induced %d external %d, want 1 0", a.thr, a.ext)
	}
	tr.expect("g", 0, 0)
}

// TRMS paper Fig. 1b (Example 2): RMS_h = RMS_f = 1, TRMS_h = 1 (the read
// in h is an induced first-access), TRMS_f = 2.
func TestTRMSFigure1b(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.sw(1)
	tr.call(1, "f")
	tr.read(1, "x")
	tr.sw(2)
	tr.call(2, "g")
	tr.write(2, "x")
	tr.ret(2)
	tr.sw(1)
	tr.call(1, "h")
	tr.read(1, "x")
	tr.ret(1)
	tr.read(1, "x")
	tr.ret(1)
	h := tr.expect("h", 1, 1)
	f := tr.expect("f", 1, 2)
	if h.thr != 1 || h.thrSelf != 1 || f.thr != 1 || f.thrSelf != 0 {
		t.Errorf("thread-induced: h %v, f %v", h, f)
	}
}

// TRMS paper Fig. 2 (Example 3): producer-consumer on one location x; after
// n values, RMS_consumer = 1 and TRMS_consumer = n.
func TestTRMSProducerConsumer(t *testing.T) {
	const n = 25
	tr := newTracer(t, Config{})
	tr.sw(1)
	tr.call(1, "producer")
	tr.sw(2)
	tr.call(2, "consumer")
	for range n {
		tr.sw(1)
		tr.call(1, "produceData")
		tr.write(1, "x")
		tr.ret(1)
		tr.sw(2)
		tr.call(2, "consumeData")
		tr.read(2, "x")
		tr.ret(2)
	}
	tr.ret(2)
	tr.sw(1)
	tr.ret(1)
	c := tr.expect("consumer", 1, n)
	if c.thr != n || c.ext != 0 {
		t.Errorf("consumer: %v", c)
	}
	for _, a := range tr.find("consumeData") {
		if a.rms != 1 || a.trms != 1 || a.thr != 1 {
			t.Errorf("consumeData: %v", a)
		}
	}
	tr.expect("producer", 0, 0)
}

// TRMS paper Fig. 3 (Example 4): a buffer of size 2 loaded n times by the
// kernel, only b[0] read each time: RMS = 1, TRMS = n, all of it external.
func TestTRMSBufferedExternalRead(t *testing.T) {
	const n = 30
	tr := newTracer(t, Config{})
	tr.call(1, "externalRead")
	for range n {
		tr.kwrite("b[0]", "b[1]") // does not imply a read of b
		tr.call(1, "consumeData")
		tr.read(1, "b[0]")
		tr.ret(1)
	}
	tr.ret(1)
	e := tr.expect("externalRead", 1, n)
	if e.ext != n || e.thr != 0 || e.extSelf != 0 {
		t.Errorf("externalRead: %v", e)
	}
	for _, a := range tr.find("consumeData") {
		if a.rms != 1 || a.trms != 1 || a.ext != 1 || a.extSelf != 1 {
			t.Errorf("consumeData: %v", a)
		}
	}
}

// A kernel read is a read of the current activation (Fig. 12).
func TestKernelRead(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.call(1, "f")
	tr.p.KernelRead(1, tr.addr("buf"), 8) // two cells at k=4
	tr.write(1, "y")
	tr.p.KernelRead(1, tr.addr("y"), 4)
	tr.ret(1)
	tr.expect("f", 2, 2)
}

// Memory resolution: an access touches every k-aligned cell it covers.
func TestResolutionCells(t *testing.T) {
	cases := []struct {
		k      int
		reads  [][2]uint64 // addr, size
		rms    uint64
		writes [][2]uint64
	}{
		{4, [][2]uint64{{0x1000, 16}}, 4, nil},                          // 16 bytes at k=4: 4 cells
		{4, [][2]uint64{{0x1000, 1}, {0x1001, 1}, {0x1002, 1}}, 1, nil}, // rep movsb bytes in one cell
		{1, [][2]uint64{{0x1000, 4}}, 4, nil},
		{8, [][2]uint64{{0x1004, 8}}, 2, nil},                      // unaligned: crosses a cell boundary
		{4, [][2]uint64{{0xfffc, 8}}, 2, nil},                      // crosses a 64 KiB boundary
		{16, [][2]uint64{{0x1000, 4}, {0x100c, 4}}, 1, nil},        // same 16-byte cell
		{4, [][2]uint64{{0x1000, 8}}, 1, [][2]uint64{{0x1004, 2}}}, // second cell written first
		{4, [][2]uint64{{uint64(1)<<47 - 4, 4}, {0x10, 4}}, 2, nil},
	}
	for i, c := range cases {
		tr := newTracer(t, Config{Resolution: c.k})
		tr.call(1, "f")
		for _, w := range c.writes {
			tr.p.Write(1, w[0], uint32(w[1]))
		}
		for _, r := range c.reads {
			tr.p.Read(1, r[0], uint32(r[1]))
		}
		tr.ret(1)
		if a := tr.one("f"); a.rms != c.rms {
			t.Errorf("case %d (k=%d): RMS %d, want %d", i, c.k, a.rms, c.rms)
		}
	}
}

// Self cost, real cost and cost accounting.
func TestCosts(t *testing.T) {
	tr := newTracer(t, Config{})
	tr.call(1, "f")
	tr.p.Cost(1, 2)
	tr.call(1, "f")
	tr.p.Cost(1, 3)
	tr.ret(1)
	tr.p.Cost(1, 1)
	tr.ret(1)
	fs := tr.find("f")
	if fs[0].cost != 3 || fs[0].self != 3 || fs[1].cost != 6 || fs[1].self != 3 {
		t.Errorf("costs %v", fs)
	}
	reps, err := tr.p.Reports()
	if err != nil {
		t.Fatal(err)
	}
	var real, sum uint64
	for _, p := range reps[0].Points {
		real += p.RealSum
		sum += p.Sum
	}
	if real != 6 || sum != 9 || reps[0].TotalCost != 6 {
		t.Errorf("real %d sum %d total %d, want 6 9 6", real, sum, reps[0].TotalCost)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{{Resolution: 3}, {Cost: "cycles"}, {CounterBits: 4}, {CounterBits: 65}} {
		if _, err := New(c, nil); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	p, err := New(Config{CounterBits: 64, Cost: CostInsns, Resolution: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Needs(); !n.Blocks || !n.Memory || !n.KernelMem || !n.Threads || n.Syscalls {
		t.Errorf("needs %+v", n)
	}
}

// TestCostMetrics: a Block event's cost is one block, its Size in
// instructions, or its virtual time (Size × ns per instruction); under a
// time model (BlockInsns set) Size is ns, and instructions come from the
// block table.
func TestCostMetrics(t *testing.T) {
	blocks := []trace.Event{{Kind: trace.KindBlock, Tid: 1, Block: 1, Size: 7}, {Kind: trace.KindBlock, Tid: 1, Block: 2, Size: 30}}
	table := func(id uint32) uint32 { return map[uint32]uint32{1: 3, 2: 4}[id] }
	for _, c := range []struct {
		cfg    Config
		want   uint64
		metric string
	}{
		{Config{Cost: CostBlocks}, 2, "bb-count"},
		{Config{Cost: CostInsns}, 37, "instr-count"},
		{Config{Cost: CostTime, NsPerInsn: 2}, 74, "virtual-ns"},
		{Config{Cost: CostInsns, BlockInsns: table}, 7, "instr-count"},
		{Config{Cost: CostTime, BlockInsns: table}, 37, "virtual-ns"},
	} {
		tr := newTracer(t, c.cfg)
		tr.call(1, "f")
		tr.p.Events(append([]trace.Event(nil), blocks...))
		tr.ret(1)
		reps, err := tr.p.Reports()
		if err != nil {
			t.Fatal(err)
		}
		if reps[0].TotalCost != c.want || reps[0].Metric != c.metric {
			t.Errorf("%s (BlockInsns %v): total %d %s; want %d %s", c.cfg.Cost, c.cfg.BlockInsns != nil, reps[0].TotalCost, reps[0].Metric, c.want, c.metric)
		}
	}
}
