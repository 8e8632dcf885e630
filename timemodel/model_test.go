package timemodel

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"emuprof/trace"
)

// testTable is a core at 1000 MHz (a cycle is 1 ns, 1000 ps) with tiny
// direct-mapped caches, so that every cost below can be worked out by hand.
const testTable = `name test core
mhz 1000
int 1
mul 3
div 20
fp 2
simd 1
fpdiv 10
string 4
atomic 8
serial 50
pause 60
fuse.cmp 0
fuse.alu 0
branch.bits 2
branch.penalty 10
branch.indirect.bits 2
branch.indirect.history 0
line 64
l1.size 128
l1.ways 1
l2.size 256
l2.ways 1
l3.size 512
l3.ways 2
l2.latency 5
l3.latency 20
mem.latency 100
mlp 1
prefetch.streams 0
prefetch.cost 2
prefetch.cost.l3 2
rob 0
coherence.latency 40
coherence.window 3
coherence.contended 7
coherence.locked 30
kernel.syscall 100
kernel.futex.wake 300
kernel.futex.wait 1000
kernel.switch 500
kernel.slice 3000
kernel.pagefault 0
kernel.bytes 50
`

func table(t *testing.T, edits ...string) *Table {
	t.Helper()
	src := testTable
	for _, e := range edits {
		k, _, _ := strings.Cut(e, " ")
		lines := strings.Split(src, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, k+" ") {
				lines[i] = e
			}
		}
		src = strings.Join(lines, "\n")
	}
	tb, err := Parse(strings.NewReader(src), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestBuiltinTableParses(t *testing.T) {
	tb, err := Load(Zen4)
	if err != nil {
		t.Fatal(err)
	}
	if tb.MHz != 3500 || tb.Int != 33 || tb.L1Size != 32768 || tb.L3Ways != 16 || tb.BranchPenalty != 1300 {
		t.Errorf("zen4 table: %+v", tb)
	}
	if tb, err := Load(Insns); tb != nil || err != nil {
		t.Errorf("insns: %v, %v; want no table", tb, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{testTable + "bogus 1\n", `unknown key "bogus"`},
		{testTable + "mhz 2\n", "mhz given twice"},
		{strings.Replace(testTable, "div 20\n", "", 1), "div missing"},
		{strings.Replace(testTable, "int 1\n", "int 0.333\n", 1), "at most two decimals"},
		{strings.Replace(testTable, "fuse.cmp 0\n", "fuse.cmp 2\n", 1), "want 0 or 1"},
		{strings.Replace(testTable, "l1.size 128\n", "l1.size 192\n", 1), "power-of-two number of sets"},
	} {
		_, err := Parse(strings.NewReader(c.src), "t")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want %q", err, c.want)
		}
	}
	if _, err := Load("/nonexistent/table"); err == nil || !strings.Contains(err.Error(), "want insns, zen4 or a table file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestInstructionClasses(t *testing.T) {
	tb := table(t)
	code := []byte{
		0x48, 0x01, 0xd8, // add rax, rbx: int 1
		0x48, 0x0f, 0xaf, 0xc3, // imul rax, rbx: mul 3
		0x48, 0xf7, 0xf3, // div rbx: div 20
		0xf0, 0x01, 0x07, // lock add [rdi], eax: atomic 8
		0xf2, 0x0f, 0x58, 0xc1, // addsd xmm0, xmm1: fp 2
		0xf2, 0x0f, 0x5e, 0xc1, // divsd xmm0, xmm1: fpdiv 10
		0xf3, 0xa4, // rep movsb: string 4
		0x48, 0x87, 0x07, // xchg [rdi], rax: atomic 8
		0x0f, 0xa2, // cpuid: serial 50
		0x66, 0x0f, 0xfe, 0xc1, // paddd xmm0, xmm1: simd 1
		0xf3, 0x90, // pause: 60
		0xff, 0xe0, // jmp rax: int 1, indirect
	}
	d := tb.decodeBlock(code)
	if want := int64(1+3+20+8+2+10+4+8+50+1+60+1) * 1000; d.ps != want || d.insns != 12 || !d.indirect || d.last != uint32(len(code)-2) {
		t.Errorf("block: %+v; want %d ps, 12 instructions, indirect last at %d", d, want, len(code)-2)
	}
	if d := tb.decodeBlock([]byte{0xe9, 0, 0, 0, 0}); d.indirect || d.ps != 1000 {
		t.Errorf("jmp rel32: %+v; want direct, 1000 ps", d)
	}
	// 0.33 cycles at 3700 MHz: 33 × 10000 / 3700 = 89 ps, rounded down once per block.
	if got := table(t, "int 0.33", "mhz 3700").decodeBlock([]byte{0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8}).ps; got != 178 {
		t.Errorf("two adds at 0.33 cycles, 3700 MHz: %d ps; want 178", got)
	}
}

// TestBranchFusion: a flag-writer followed by a conditional jump is one
// op (fuse.cmp for CMP/TEST, fuse.alu for ALU ops of a register).
func TestBranchFusion(t *testing.T) {
	off := table(t)
	on := table(t, "fuse.cmp 1", "fuse.alu 1")
	cmpOnly := table(t, "fuse.cmp 1")
	for _, c := range []struct {
		name            string
		code            []byte
		off, on, cmp    int64 // ps at 1 ns a cycle: int 1
		fusedOn, fusedC uint32
	}{
		{"cmp rax,rbx; jne", []byte{0x48, 0x39, 0xd8, 0x75, 0x00}, 2000, 1000, 1000, 1, 1},
		{"test eax,eax; je", []byte{0x85, 0xc0, 0x74, 0x00}, 2000, 1000, 1000, 1, 1},
		{"cmp rax,[rdi]; je", []byte{0x48, 0x3b, 0x07, 0x74, 0x00}, 2000, 1000, 1000, 1, 1},
		{"sub rax,1; jne", []byte{0x48, 0x83, 0xe8, 0x01, 0x75, 0x00}, 2000, 1000, 2000, 1, 0},
		{"cmp qword [rdi],1; je (memory and immediate)", []byte{0x48, 0x83, 0x3f, 0x01, 0x74, 0x00}, 2000, 2000, 2000, 0, 0},
		{"add qword [rdi],1; jne (memory destination)", []byte{0x48, 0x83, 0x07, 0x01, 0x75, 0x00}, 2000, 2000, 2000, 0, 0},
		{"mov rax,rbx; jne", []byte{0x48, 0x89, 0xd8, 0x75, 0x00}, 2000, 2000, 2000, 0, 0},
		{"cmp rax,rbx; jmp", []byte{0x48, 0x39, 0xd8, 0xeb, 0x00}, 2000, 2000, 2000, 0, 0},
		{"cmp rax,rbx; mov; jne", []byte{0x48, 0x39, 0xd8, 0x48, 0x89, 0xd8, 0x75, 0x00}, 3000, 3000, 3000, 0, 0},
		{"imul rax,rbx; jne", []byte{0x48, 0x0f, 0xaf, 0xc3, 0x75, 0x00}, 4000, 4000, 4000, 0, 0},
	} {
		d0, d1, dc := off.decodeBlock(c.code), on.decodeBlock(c.code), cmpOnly.decodeBlock(c.code)
		if d0.ps != c.off || d1.ps != c.on || dc.ps != c.cmp || d0.fused != 0 || d1.fused != c.fusedOn || dc.fused != c.fusedC {
			t.Errorf("%s: %d/%d/%d ps, fused %d/%d/%d; want %d/%d/%d ps, fused 0/%d/%d (off/on/cmp only)", c.name,
				d0.ps, d1.ps, dc.ps, d0.fused, d1.fused, dc.fused, c.off, c.on, c.cmp, c.fusedOn, c.fusedC)
		}
	}
	if tb, err := Load(Zen4); err != nil || tb.FuseCmp || !tb.FuseALU {
		t.Errorf("zen4: fuse.cmp %v, fuse.alu %v (%v); want ALU ops only", tb.FuseCmp, tb.FuseALU, err)
	}
}

func TestCacheHierarchy(t *testing.T) {
	// L1: 2 sets × 1 way, L2: 4 × 1, L3: 4 sets × 2 ways; lines 0, 2, 4
	// share L1 set 0; 0 and 4 share L2 set 0.
	h := newHierarchy(table(t))
	step := []struct {
		addr uint64
		want int64 // ns
	}{
		{0, 100},      // line 0: memory
		{8, 0},        // line 0 again: L1
		{2 * 64, 100}, // line 2: memory, evicts line 0 from L1 (not L2)
		{0, 5},        // line 0: L2
		{4 * 64, 100}, // line 4: memory; evicts 0 from L1 and L2
		{0, 20},       // line 0: L3 (2 ways in its set: 0 and 4)
		{62, 0 + 100}, // bytes 62..65: line 0 (L1) and line 1 (memory)
	}
	for i, s := range step {
		size := uint32(4)
		if got := h.access(1, s.addr, size, false, int64(i)); got != s.want*1000 {
			t.Errorf("access %d at %#x: %d ps; want %d ns", i, s.addr, got, s.want)
		}
	}
	if h.Misses != [4]uint64{1, 1, 4, 0} {
		t.Errorf("served by L2, L3, memory, another core: %v; want [1 1 4 0]", h.Misses)
	}
}

func TestPrefetcherStreams(t *testing.T) {
	h := newHierarchy(table(t, "prefetch.streams 2"))
	var got []int64
	for line := uint64(10); line < 14; line++ {
		got = append(got, h.access(1, line*64, 8, false, 0)/1000)
	}
	// The first miss starts a stream; its successors are prefetched (2).
	if want := []int64{100, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("ascending stream: %v ns; want %v", got, want)
	}
	got = got[:0]
	for _, line := range []uint64{100, 99, 300, 98} {
		got = append(got, h.access(1, line*64, 8, false, 0)/1000)
	}
	// Descending works too; an unrelated miss takes the other stream.
	if want := []int64{100, 2, 100, 2}; !slices.Equal(got, want) {
		t.Errorf("descending stream: %v ns; want %v", got, want)
	}
	// A stream of lines L3 holds costs prefetch.cost.l3 a line, one from
	// memory prefetch.cost: the test L3 (512 bytes) holds lines 10 to 13
	// again after lines 200 to 203 evicted them from L1D and L2.
	h = newHierarchy(table(t, "prefetch.streams 1", "prefetch.cost 4", "prefetch.cost.l3 3"))
	got = got[:0]
	for _, line := range []uint64{10, 11, 12, 13, 200, 201, 202, 203, 10, 11, 12, 13} {
		got = append(got, h.access(1, line*64, 8, false, 0)/1000)
	}
	if want := []int64{100, 4, 4, 4, 100, 4, 4, 4, 20, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("streams from memory, then L3: %v ns; want %v", got, want)
	}
}

func TestFalseSharing(t *testing.T) {
	h := newHierarchy(table(t))
	// Two cores write their own counters in one line, in turn.
	var got []int64
	for i := 0; i < 4; i++ {
		got = append(got, h.access(uint32(1+i%2), uint64(8*(i%2)), 8, true, int64(i))/1000)
	}
	// Core 1 misses to memory; core 2 finds the line in L3 (coherence is
	// tracked once a second core exists: a one-thread program pays
	// nothing for it); from then on both cores keep writing the line
	// (each within coherence.window, 3 ns): stores wait in the store
	// queue, they pay nothing more.
	if want := []int64{100, 20, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("false sharing, stores: %v ns; want %v", got, want)
	}
	// Increments (a read, then a write) of the two counters in turn: core
	// 2's first read is of a line only core 1 writes (a shared copy,
	// free); once both write it, each read pays coherence.contended (7).
	h = newHierarchy(table(t))
	h.core(1)
	h.core(2)
	got = got[:0]
	for i := 0; i < 4; i++ {
		id, addr, now := uint32(1+i%2), uint64(8*(i%2)), int64(i)
		got = append(got, h.access(id, addr, 8, false, now)/1000)
		if ps := h.access(id, addr, 8, true, now); ps != 0 {
			t.Errorf("increment %d: its write %d ps; want 0", i, ps)
		}
	}
	if want := []int64{100, 0, 7, 7}; !slices.Equal(got, want) {
		t.Errorf("false sharing, increments: %v ns; want %v", got, want)
	}
	if h.Contended != 6 {
		t.Errorf("%d contended accesses; want 6", h.Contended)
	}
	// Padded: each core's counter in its own line; after the first miss
	// each write hits its L1.
	h = newHierarchy(table(t))
	got = got[:0]
	for i := 0; i < 4; i++ {
		got = append(got, h.access(uint32(1+i%2), uint64(64*(i%2)), 8, true, int64(i))/1000)
	}
	if want := []int64{100, 100, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("padded: %v ns; want %v", got, want)
	}
	// Readers share a line without coherence misses.
	h = newHierarchy(table(t))
	got = got[:0]
	for i := 0; i < 4; i++ {
		got = append(got, h.access(uint32(1+i%2), 0, 8, false, int64(i))/1000)
	}
	if want := []int64{100, 20, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("shared reads: %v ns; want %v", got, want)
	}
	// Writes far apart in virtual time (more than the window): a single
	// transfer each, coherence.latency (40), as MESI says.
	h = newHierarchy(table(t))
	h.core(1)
	h.core(2)
	got = got[:0]
	h.alone = true
	for i := 0; i < 4; i++ {
		got = append(got, h.access(uint32(1+i%2), uint64(8*(i%2)), 8, true, int64(100*i))/1000)
	}
	if want := []int64{100, 40, 40, 40}; !slices.Equal(got, want) {
		t.Errorf("hand-offs: %v ns; want %v", got, want)
	}
}

// TestFalseSharingSerialized: the engine runs one thread's quantum, then
// the other's over the same virtual time. The second thread's increments
// fall inside the span over which the first kept writing the line; past
// it, the first thread's span is taken to go on through the slice unless
// the slice runs alone. Padded, nothing is shared.
func TestFalseSharingSerialized(t *testing.T) {
	for _, c := range []struct {
		stride uint64
		alone  bool
		want   []int64
	}{
		// One line: at 9 core 2 reads a line only core 1 writes (free) and
		// writes it; from 10 both write it, each read 7; at 20 core 1's
		// span (10..12, reaching the slice's start at 9) goes on.
		{8, false, []int64{0, 7, 7, 7, 7, 7}},
		// Alone: at 20 core 1's span is over (12 + 3 < 20); core 2's
		// own copy hits.
		{8, true, []int64{0, 7, 7, 7, 7, 0}},
		{64, false, []int64{100, 0, 0, 0, 0, 0}}, // padded: core 2's own line, from memory once
	} {
		h := newHierarchy(table(t))
		h.core(1)
		h.core(2) // both threads exist
		h.base = 10
		var first []int64
		for now := int64(10); now < 13; now++ { // core 1's quantum: increments at 10, 11, 12
			first = append(first, h.access(1, 0, 8, false, now)/1000)
			h.access(1, 0, 8, true, now)
		}
		if want := []int64{100, 0, 0}; !slices.Equal(first, want) {
			t.Errorf("stride %d: core 1 %v ns; want %v", c.stride, first, want)
		}
		h.base, h.alone = 9, c.alone
		var got []int64
		for _, now := range []int64{9, 10, 11, 12, 13, 20} { // core 2's, over the same time
			got = append(got, h.access(2, c.stride, 8, false, now)/1000)
			if ps := h.access(2, c.stride, 8, true, now); ps != 0 {
				t.Errorf("stride %d at %d: write %d ps; want 0", c.stride, now, ps)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("stride %d alone %v: %v ns; want %v", c.stride, c.alone, got, c.want)
		}
	}
}

// TestLockedContended: a locked instruction (its block's atomics count)
// on a line both cores keep writing pays coherence.locked (30) once, its
// read and write halves together; the block's next access to the line is
// an ordinary contended one.
func TestLockedContended(t *testing.T) {
	h := newHierarchy(table(t))
	h.core(1)
	h.core(2)
	h.access(1, 0, 4, true, 0) // core 1 took the mutex at 0 ...
	h.access(2, 0, 4, true, 1) // ... core 2 at 1: both write the line
	h.atomics, h.atomLine = 1, ^uint64(0)
	got := []int64{h.access(1, 0, 4, false, 2) / 1000, h.access(1, 0, 4, true, 2) / 1000, h.access(1, 8, 8, false, 2) / 1000, h.access(1, 8, 8, true, 2) / 1000}
	if want := []int64{30, 0, 7, 0}; !slices.Equal(got, want) {
		t.Errorf("lock cmpxchg, then a load: %v ns; want %v", got, want)
	}
	if h.Locked != 1 {
		t.Errorf("%d locked; want 1", h.Locked)
	}
	// The same instruction on a line the other core does not keep
	// writing: no lock charge, the transfer only (40).
	h.atomics, h.atomLine = 1, ^uint64(0)
	if got := h.access(2, 256, 4, true, 50) / 1000; got != 100 {
		t.Errorf("a fresh line: %d; want 100 (memory)", got)
	}
	h.atomics, h.atomLine, h.base = 1, ^uint64(0), 200
	if got := h.access(1, 256, 4, false, 200) / 1000; got != 40 {
		t.Errorf("a hand-off long after: %d; want 40", got)
	}
}

// TestModelLocked: the model counts a block's locked instructions when it
// decodes it and hands them to the hierarchy with each Block event.
func TestModelLocked(t *testing.T) {
	code := []byte{0xf0, 0x48, 0x0f, 0xb1, 0x0e, 0xc3} // lock cmpxchg [rsi],rcx; ret: 8 + 1 ns
	bt := trace.NewBlockTable()
	id := bt.Add(trace.BlockInfo{Addr: 0x1000, Len: uint32(len(code)), Insns: 2, End: trace.EndRet})
	m := New(table(t, "coherence.window 1000"), bt, func(_ uint64, p []byte) error { copy(p, code); return nil })
	var clock [2]int64
	for _, base := range []int64{0, 200} { // two rounds, each thread's slice over the same time
		for i, tid := range []uint32{1, 2} {
			m.Begin(tid, base, false)
			m.Events([]trace.Event{{Kind: trace.KindBlock, Block: id, Addr: 0x1000, Tid: tid},
				{Kind: trace.KindRead, Addr: 0x9000, Size: 8, Tid: tid}, {Kind: trace.KindWrite, Addr: 0x9000, Size: 8, Tid: tid}})
			clock[i] += m.End()
		}
	}
	// Round 0: thread 1 9 + memory 100 (one core yet, no coherence),
	// thread 2 9 + L3 20. Round 1: ret mispredicted (10) + 9, and the
	// lock cmpxchg on the line both write within the window: 30 each.
	if clock != [2]int64{109 + 19 + 30, 29 + 19 + 30} {
		t.Errorf("clocks %v; want [158 78]", clock)
	}
	if s := m.Totals(); s.Locked != 2 || s.Contended != 4 {
		t.Errorf("stats %+v: want 2 locked, 4 contended", s)
	}
}

func TestBranchPredictor(t *testing.T) {
	p := newPredictor(2, 2, 0)
	var miss []bool
	for i := 0; i < 6; i++ {
		miss = append(miss, p.next(trace.EndCond, 0x100, 0x102, 0x200, false))
	}
	// Counters start at "strongly not taken"; with 2 history bits the
	// index moves through pc^0, pc^1, pc^3 and then stays: 3 cold misses,
	// one more while pc^3's counter climbs past 1, then hits.
	if want := []bool{true, true, true, true, false, false}; !slices.Equal(miss, want) {
		t.Errorf("always taken: %v; want %v", miss, want)
	}
	r := newPredictor(2, 2, 0)
	if r.next(trace.EndCall, 0x10, 0x15, 0x400, false) {
		t.Error("direct call mispredicted")
	}
	if r.next(trace.EndRet, 0x410, 0x411, 0x15, false) {
		t.Error("return to the call's successor mispredicted")
	}
	if !r.next(trace.EndRet, 0x410, 0x411, 0x15, false) {
		t.Error("return with an empty return stack predicted")
	}
	if !r.next(trace.EndJump, 0x20, 0x22, 0x500, true) || r.next(trace.EndJump, 0x20, 0x22, 0x500, true) || !r.next(trace.EndJump, 0x20, 0x22, 0x600, true) {
		t.Error("indirect jump: want a miss on first sight, a hit on the same target, a miss on a new one")
	}
}

// TestIndirectPath: an interpreter's dispatch site cycling through three
// targets. The last target mispredicts every time; the path-keyed table
// (one target of history) learns each target from its predecessor in one
// round and then predicts them all.
func TestIndirectPath(t *testing.T) {
	for _, c := range []struct {
		hist int
		want []bool
	}{
		{0, []bool{true, true, true, true, true, true, true, true, true}},
		{1, []bool{true, true, true, true, false, false, false, false, false}},
	} {
		p := newPredictor(2, 4, c.hist)
		var miss []bool
		for i := 0; i < 9; i++ {
			target := []uint64{0x1000, 0x2000, 0x3000}[i%3]
			miss = append(miss, p.next(trace.EndCall, 0x50, 0x55, target, true))
		}
		if !slices.Equal(miss, c.want) {
			t.Errorf("history %d: %v; want %v", c.hist, miss, c.want)
		}
	}
	// A direct-mapped table of one entry: two sites' paths evict each
	// other, and an evicted path falls back to the last target.
	p := newPredictor(2, 0, 1)
	seq := []struct {
		pc, target uint64
		want       bool
	}{
		{0x50, 0x1000, true},  // cold: allocates (0x50, 0) -> 0x1000
		{0x50, 0x2000, true},  // last target 0x1000 wrong: (0x50, 0x1000) -> 0x2000 replaces it
		{0x50, 0x1000, true},  // (0x50, 0x2000) unknown, last target 0x2000 wrong: allocates
		{0x50, 0x2000, true},  // (0x50, 0x1000) was evicted; last target 0x1000 wrong
		{0x60, 0x7000, true},  // cold
		{0x60, 0x7000, false}, // last target right: no allocation
	}
	for i, s := range seq {
		if got := p.next(trace.EndJump, s.pc, s.pc+2, s.target, true); got != s.want {
			t.Errorf("one entry, step %d: mispredicted %v; want %v", i, got, s.want)
		}
	}
}

// twoBlocks returns a model of the test table over two blocks, a at
// 0x1000 (add; imul; je +16: 1+3+1 = 5 ns) and b at 0x1009 (div; ret:
// 21 ns).
func twoBlocks(t *testing.T) (m *Model, a, b uint32) {
	code := map[uint64][]byte{
		0x1000: {0x48, 0x01, 0xd8, 0x48, 0x0f, 0xaf, 0xc3, 0x74, 0x10},
		0x1009: {0x48, 0xf7, 0xf3, 0xc3},
	}
	bt := trace.NewBlockTable()
	a = bt.Add(trace.BlockInfo{Addr: 0x1000, Len: 9, Insns: 3, End: trace.EndCond})
	b = bt.Add(trace.BlockInfo{Addr: 0x1009, Len: 4, Insns: 2, End: trace.EndRet})
	return New(table(t), bt, func(addr uint64, p []byte) error { copy(p, code[addr]); return nil }), a, b
}

// TestModelTrace prices a hand-written slice: the Block events get the
// model's start times and costs, the Read event its block's time.
func TestModelTrace(t *testing.T) {
	m, a, b := twoBlocks(t)
	m.Begin(7, 1000, false)
	batch := []trace.Event{
		{Kind: trace.KindSyscall, Tid: 7, Time: 999}, // not the slice's: unchanged
		{Kind: trace.KindBlock, Block: a, Addr: 0x1000, Size: 3, Tid: 7},
		{Kind: trace.KindRead, Addr: 0x8000, Size: 8, Tid: 7},            // memory: 100 ns
		{Kind: trace.KindBlock, Block: b, Addr: 0x1009, Size: 2, Tid: 7}, // je not taken: the
		// counter said not taken, no penalty
	}
	m.Events(batch)
	type ts struct {
		time int64
		size uint32
	}
	got := []ts{{batch[0].Time, batch[0].Size}, {batch[1].Time, batch[1].Size}, {batch[2].Time, batch[2].Size}, {batch[3].Time, batch[3].Size}}
	want := []ts{{999, 0}, {1000, 105}, {1000, 8}, {1105, 21}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: time %d size %d; want %d, %d", i, got[i].time, got[i].size, want[i].time, want[i].size)
		}
	}
	if ns := m.End(); ns != 126 {
		t.Errorf("slice: %d ns; want 126", ns)
	}
	// The next slice: block a again after b's ret with an empty return
	// stack (mispredicted, 10 ns): 5 + 10, its read now an L1 hit.
	m.Begin(7, 2000, false)
	batch = []trace.Event{{Kind: trace.KindBlock, Block: a, Addr: 0x1000, Tid: 7}, {Kind: trace.KindRead, Addr: 0x8000, Size: 8, Tid: 7}}
	m.Events(batch)
	if batch[0].Time != 2000 || batch[0].Size != 15 || m.End() != 15 {
		t.Errorf("second slice: block at %d size %d; want 2000, 15", batch[0].Time, batch[0].Size)
	}
	if s := m.Totals(); s.Blocks != 3 || s.Accesses != 2 || s.Memory != 1 || s.Mispredicted != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestKernelCosts(t *testing.T) {
	m := New(table(t), trace.NewBlockTable(), nil)
	for _, c := range []struct {
		nr, a0 uint64
		ret    int64
		want   int64
	}{
		{39, 0, 1000, 100},        // getpid: entry only
		{1, 1, 4000, 100 + 200},   // write of 4000 bytes at 50 ns per 1000
		{0, 0, -11, 100},          // a failed read moves nothing
		{202, 0x81, 2, 100 + 600}, // FUTEX_WAKE_PRIVATE waking 2
		{202, 0x80, 0, 100},       // FUTEX_WAIT_PRIVATE
	} {
		if got := m.Syscall(1, c.nr, c.a0, c.ret); got != c.want {
			t.Errorf("syscall %d(%#x) = %d: %d ns; want %d", c.nr, c.a0, c.ret, got, c.want)
		}
	}
	if got := m.Resume(5, 0, 0, 0, 0); got != 0 {
		t.Errorf("never woken: %d ns", got)
	}
	if got := m.Resume(5, 2, 100, 0, 0); got != 2*(1000+500) {
		t.Errorf("woken twice: %d ns; want 3000", got)
	}
	if got := m.Resume(5, 2, 200, 0, 0); got != 0 {
		t.Errorf("no new wake: %d ns", got)
	}
}

// TestWakeBeforeSleep: a wait woken before it had blocked for any
// virtual time (the waker's clock was not past the waiter's) did not
// sleep natively (the futex word changed during the waiter's kernel
// entry): no futex.wait, no switch (1000 + 500 in the test table).
func TestWakeBeforeSleep(t *testing.T) {
	m := New(table(t), trace.NewBlockTable(), nil)
	for i, c := range []struct {
		wakeups        uint64
		blocked, want  int64
		wakes, unslept uint64
	}{
		{1, 0, 0, 0, 1},       // woken, 0 ns blocked: did not sleep
		{2, 700, 1500, 1, 1},  // blocked 700 ns: slept
		{3, 700, 0, 1, 2},     // woken again at once
		{5, 700, 3000, 3, 2},  // two wakes since it last ran: it slept
		{6, 1200, 1500, 4, 2}, // blocked 500 ns more
	} {
		if got := m.Resume(4, c.wakeups, 0, 0, c.blocked); got != c.want {
			t.Errorf("%d: %d ns; want %d", i, got, c.want)
		}
		if s := m.Totals(); s.Wakes != c.wakes || s.Unslept != c.unslept {
			t.Errorf("%d: %d wakes, %d unslept; want %d, %d", i, s.Wakes, s.Unslept, c.wakes, c.unslept)
		}
	}
}

// TestTimeSliceSwitches: a thread that shares its CPU pays kernel.switch
// (500) once per kernel.slice (3000 ns) of CPU work, counted from its last
// wake or switch, and only after slices it waited for a CPU before.
func TestTimeSliceSwitches(t *testing.T) {
	m := New(table(t), trace.NewBlockTable(), nil)
	for i, c := range []struct {
		wakeups        uint64
		run, queued    int64
		want           int64
		what           string
		wakes, preempt uint64
	}{
		{0, 0, 0, 0, "first slice", 0, 0},
		{0, 2000, 0, 0, "2000 ns of work, never queued", 0, 0},
		{0, 4000, 0, 0, "a slice's work but never queued: alone on its CPU", 0, 0},
		{0, 4500, 800, 500, "queued, 4500 ns since its slice began", 0, 1},
		{0, 6000, 1600, 0, "queued again, 1500 ns into the new slice", 0, 1},
		{0, 7500, 1600, 0, "a slice's work, not queued since", 0, 1},
		{0, 8000, 2000, 500, "queued: 3500 ns into its slice", 0, 2},
		{1, 9000, 3000, 1500, "woken (and queued): a wake, a new slice", 1, 2},
		{1, 11000, 4000, 0, "queued, 2000 ns into the slice the wake began", 1, 2},
		{1, 12000, 5000, 500, "queued, 3000 ns into it", 1, 3},
	} {
		if got := m.Resume(9, c.wakeups, c.run, c.queued, c.run); got != c.want {
			t.Errorf("%d (%s): %d ns; want %d", i, c.what, got, c.want)
		}
		if s := m.Totals(); s.Wakes != c.wakes || s.Preempted != c.preempt {
			t.Errorf("%d (%s): %d wakes, %d time-slice switches; want %d, %d", i, c.what, s.Wakes, s.Preempted, c.wakes, c.preempt)
		}
	}
}

func TestFractionsCarry(t *testing.T) {
	// 0.5 ns per block: two one-instruction slices make 1 ns in all.
	tb := table(t, "int 0.5")
	bt := trace.NewBlockTable()
	id := bt.Add(trace.BlockInfo{Addr: 0, Len: 3, Insns: 1})
	m := New(tb, bt, func(_ uint64, p []byte) error { copy(p, []byte{0x48, 0x01, 0xd8}); return nil })
	var total int64
	for i := 0; i < 2; i++ {
		m.Begin(1, total, false)
		m.Events([]trace.Event{{Kind: trace.KindBlock, Block: id, Tid: 1}})
		total += m.End()
	}
	if total != 1 {
		t.Errorf("two half-ns blocks: %d ns; want 1", total)
	}
}

// TestPageSet: first touches counted once per page across chunks, including
// chunks that share a slot of the recent-chunk cache (0 and 8) and the last
// page short-cut.
func TestPageSet(t *testing.T) {
	h := newHierarchy(table(t, "kernel.pagefault 7"))
	pages := []uint64{0, 0, 1, 63, 64, pageChunk * 8, 0, pageChunk*8 + 1, pageChunk * 8, pageChunk - 1, 1, pageChunk}
	want := []bool{true, false, true, true, true, true, false, true, false, true, false, true}
	for i, p := range pages {
		if got := h.touch(p); got != want[i] {
			t.Errorf("touch %d (page %#x): first %v; want %v", i, p, got, want[i])
		}
	}
	// Through access: an 8-byte access straddling pages 2 and 3 faults twice.
	if ps := h.access(1, 3*4096-4, 8, false, 0); ps != 2*7*1000+2*100*1000 { // ps: 7 ns per fault, 100 ns per line
		t.Errorf("straddling access: %d ps; want two faults and two lines from memory", ps)
	}
	if h.PageFaults != 2 {
		t.Errorf("page faults %d; want 2 (touch alone counts none)", h.PageFaults)
	}
}

// TestSpeedupScalesBlock: an actual speedup (run --speedup) of one of a
// block's three instructions by 60 % takes a fifth off the block's whole
// cost, its memory stall included, and leaves the other block alone.
func TestSpeedupScalesBlock(t *testing.T) {
	sizes := func(speedup func(uint64) int) (a, b uint32) {
		m, ia, ib := twoBlocks(t)
		m.SetSpeedup(speedup)
		m.Begin(7, 1000, true)
		batch := []trace.Event{
			{Kind: trace.KindBlock, Block: ia, Addr: 0x1000, Tid: 7},
			{Kind: trace.KindRead, Addr: 0x8000, Size: 8, Tid: 7},
			{Kind: trace.KindBlock, Block: ib, Addr: 0x1009, Tid: 7},
		}
		m.Events(batch)
		m.End()
		return batch[0].Size, batch[2].Size
	}
	a0, b0 := sizes(nil)
	a1, b1 := sizes(func(addr uint64) int {
		if addr == 0x1003 { // the imul
			return 60
		}
		return 0
	})
	if want := float64(a0) * 0.8; math.Abs(float64(a1)-want) > 1 || b1 != b0 || a0 < 50 {
		t.Errorf("sped-up block %d ns (was %d, want %.1f), other block %d (was %d)", a1, a0, want, b1, b0)
	}
}

// TestSpeedupScalesAccess: an access's cost is in its event (Block, ps)
// and shrinks by its own instruction's speedup, the rest of the block by
// its instructions' mean: block a (add; imul; je: 5 ns) whose load, made
// by the imul at 0x1003, misses (100 ns). The imul sped up by 60 %: 5 ×
// (1 − 0.6/3) + 100 × 0.4 = 44 ns (by the block's mean alone: 84); the add
// by 100 %: 5 × 2/3 + 100 = 103.3; a load of no instruction of the block
// (Aux 0) keeps the mean: 105 × 0.8 = 84.
func TestSpeedupScalesAccess(t *testing.T) {
	size := func(aux uint64, speedup func(uint64) int) (uint32, uint32) {
		m, ia, _ := twoBlocks(t)
		m.SetSpeedup(speedup)
		m.Begin(7, 1000, true)
		batch := []trace.Event{
			{Kind: trace.KindBlock, Block: ia, Addr: 0x1000, Tid: 7},
			{Kind: trace.KindRead, Addr: 0x8000, Size: 8, Tid: 7, Aux: aux},
		}
		m.Events(batch)
		m.End()
		return batch[0].Size, batch[1].Block
	}
	at := func(addr uint64, pct int) func(uint64) int {
		return func(a uint64) int {
			if a == addr {
				return pct
			}
			return 0
		}
	}
	for _, c := range []struct {
		name      string
		aux       uint64
		speedup   func(uint64) int
		size, mem uint32
	}{
		{"none", 0x1003, nil, 105, 100000},
		{"the loading imul 60 %", 0x1003, at(0x1003, 60), 44, 100000},
		{"the add 100 %", 0x1003, at(0x1000, 100), 103, 100000},
		{"the imul 60 %, a load of no instruction", 0, at(0x1003, 60), 84, 100000},
	} {
		if s, mem := size(c.aux, c.speedup); s != c.size || mem != c.mem {
			t.Errorf("%s: block %d ns, access %d ps; want %d, %d", c.name, s, mem, c.size, c.mem)
		}
	}
}

// TestMissShadow prices hand-written traces with the miss shadow (rob):
// the test core's instructions cost 1 ns each and a line from memory
// 100 ns. A miss followed by independent work costs max(miss, work); a
// miss with nothing after it costs the miss; a block longer than the
// reorder buffer's room hides only its first instructions' share; a
// mispredicted branch, a serializing or locked instruction, a page fault
// and a system call end the shadow, the end of a slice alone does not.
// Each trace's cost with rob 0 (no overlap) is the plain sum.
func TestMissShadow(t *testing.T) {
	adds := func(n int) []byte { return bytes.Repeat([]byte{0x48, 0x01, 0xd8}, n) } // add rax,rbx
	type blk struct {
		code []byte
		end  trace.End
	}
	blocks := map[string]blk{
		"load":  {[]byte{0x48, 0x8b, 0x03}, trace.EndOther}, // mov rax,[rbx]: 1 ns
		"w10":   {adds(10), trace.EndOther},
		"w30":   {adds(30), trace.EndOther},
		"w50":   {adds(50), trace.EndOther},
		"w150":  {adds(150), trace.EndOther},
		"ret":   {[]byte{0xc3}, trace.EndRet},                     // 1 ns; nothing on the return stack: the block after it is mispredicted, 10 ns
		"fence": {[]byte{0x0f, 0xae, 0xf0}, trace.EndOther},       // mfence: serial, 50 ns
		"lock":  {[]byte{0xf0, 0x48, 0x01, 0x03}, trace.EndOther}, // lock add [rbx],rax: atomic, 8 ns
	}
	cost := func(tb *Table, steps []string) int64 {
		bt := trace.NewBlockTable()
		ids, code := map[string]uint32{}, map[uint64][]byte{}
		addr := map[string]uint64{}
		k := uint64(1)
		for name, b := range blocks {
			a := k << 20
			k++
			n := uint32(1)
			if strings.HasPrefix(name, "w") {
				n = uint32(len(b.code) / 3)
			}
			ids[name] = bt.Add(trace.BlockInfo{Addr: a, Len: uint32(len(b.code)), Insns: n, End: b.end})
			code[a], addr[name] = b.code, a
		}
		m := New(tb, bt, func(a uint64, p []byte) error { copy(p, code[a]); return nil })
		var total, now int64
		m.Begin(1, 0, true)
		line := uint64(0x8000)
		for _, s := range steps {
			switch s {
			case "miss": // a new line: from memory
				m.Events([]trace.Event{{Kind: trace.KindRead, Addr: line, Size: 8, Tid: 1}})
				line += 64
			case "fault": // a new page too
				line = line&^4095 + 1<<16
				m.Events([]trace.Event{{Kind: trace.KindRead, Addr: line, Size: 8, Tid: 1}})
				line += 64
			case "slice", "syscall":
				ns := m.End()
				total, now = total+ns, now+ns
				if s == "syscall" {
					ns = m.Syscall(1, 39, 0, 0) // getpid: 100 ns
					total, now = total+ns, now+ns
				}
				m.Resume(1, 0, now, 0, 0)
				m.Begin(1, now, true)
			default:
				m.Events([]trace.Event{{Kind: trace.KindBlock, Block: ids[s], Addr: addr[s], Tid: 1}})
			}
		}
		return total + m.End()
	}
	for _, c := range []struct {
		name    string
		edits   []string // rob, and the case's other keys
		steps   []string
		on, off int64 // ns with the shadow and without
	}{
		{"miss, less work after", []string{"rob 320"}, []string{"load", "miss", "w30"}, 1 + 100, 1 + 100 + 30},
		{"miss, more work after", []string{"rob 320"}, []string{"load", "miss", "w150"}, 1 + 150, 1 + 100 + 150},
		{"miss, no work after", []string{"rob 320"}, []string{"load", "miss"}, 1 + 100, 1 + 100},
		{"two misses, work after", []string{"rob 320"}, []string{"load", "miss", "miss", "w30", "w30", "w30", "w30"}, 1 + 200 + 20, 1 + 200 + 120},
		{"capped: 20 of 50 instructions", []string{"rob 20"}, []string{"load", "miss", "w50"}, 1 + 100 + 30, 1 + 100 + 50},
		{"capped over blocks", []string{"rob 20"}, []string{"load", "miss", "w10", "w10", "w10"}, 1 + 100 + 10, 1 + 100 + 30},
		{"mispredicted branch", []string{"rob 320"}, []string{"load", "miss", "ret", "w30"}, 1 + 100 + 10 + 30, 1 + 100 + 1 + 10 + 30},
		{"serializing instruction", []string{"rob 320"}, []string{"load", "miss", "fence", "w30"}, 1 + 100 + 50 + 30, 1 + 100 + 50 + 30},
		{"locked instruction", []string{"rob 320"}, []string{"load", "miss", "lock", "w30"}, 1 + 100 + 8 + 30, 1 + 100 + 8 + 30},
		// With kernel.pagefault 7: the first miss faults too.
		{"faults: a miss after the first", []string{"rob 320", "kernel.pagefault 7"}, []string{"load", "miss", "miss", "w30"}, 1 + 107 + 100, 1 + 107 + 100 + 30},
		{"faults: a page fault after it", []string{"rob 320", "kernel.pagefault 7"}, []string{"load", "miss", "miss", "fault", "w30"}, 1 + 107 + 100 + 107 + 30, 1 + 107 + 100 + 107 + 30},
		{"system call", []string{"rob 320"}, []string{"load", "miss", "syscall", "w30"}, 1 + 100 + 100 + 30, 1 + 100 + 100 + 30},
		{"slice end", []string{"rob 320"}, []string{"load", "miss", "slice", "w30"}, 1 + 100, 1 + 100 + 30},
	} {
		if got := cost(table(t, c.edits...), c.steps); got != c.on {
			t.Errorf("%s: %d ns; want %d", c.name, got, c.on)
		}
		if got := cost(table(t, append(c.edits[1:], "rob 0")...), c.steps); got != c.off {
			t.Errorf("%s, rob 0: %d ns; want %d", c.name, got, c.off)
		}
	}
}

// TestMissShadowSpeedup: an actual speedup (run --speedup) scales the
// work a block is charged beyond the miss shadow, so a speedup of work
// the shadow hides saves nothing, as causal's virtual speedup of it (the
// block's charged cost) does: a 100 ns miss, then 30 ns of adds (hidden)
// or 150 (50 charged), the adds sped up by 50 %.
func TestMissShadowSpeedup(t *testing.T) {
	for _, c := range []struct {
		adds      int
		plain, sp int64
	}{{30, 101, 101}, {150, 151, 126}} {
		code := map[uint64][]byte{0x1000: {0x48, 0x8b, 0x03}, 0x2000: bytes.Repeat([]byte{0x48, 0x01, 0xd8}, c.adds)}
		bt := trace.NewBlockTable()
		ld := bt.Add(trace.BlockInfo{Addr: 0x1000, Len: 3, Insns: 1})
		w := bt.Add(trace.BlockInfo{Addr: 0x2000, Len: uint32(3 * c.adds), Insns: uint32(c.adds)})
		for _, pct := range []int{0, 50} {
			m := New(table(t, "rob 320"), bt, func(a uint64, p []byte) error { copy(p, code[a]); return nil })
			m.SetSpeedup(func(a uint64) int {
				if a >= 0x2000 {
					return pct
				}
				return 0
			})
			m.Begin(1, 0, true)
			m.Events([]trace.Event{
				{Kind: trace.KindBlock, Block: ld, Addr: 0x1000, Tid: 1},
				{Kind: trace.KindRead, Addr: 0x8000, Size: 8, Tid: 1, Aux: 0x1000},
				{Kind: trace.KindBlock, Block: w, Addr: 0x2000, Tid: 1},
			})
			want := c.plain
			if pct > 0 {
				want = c.sp
			}
			if got := m.End(); got != want {
				t.Errorf("%d adds after the miss, sped up by %d %%: %d ns; want %d", c.adds, pct, got, want)
			}
		}
	}
}
