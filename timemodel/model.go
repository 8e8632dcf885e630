package timemodel

import (
	"fmt"
	"math"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/trace"
)

// Model prices one guest process's execution. The run loop calls Begin
// before each run slice, passes every event batch of the process through
// Events (before the analyses see it) and calls End after the slice's
// events are drained; Syscall and Resume price kernel work. Not safe for
// concurrent use.
//
// Events rewrites, for Block events, Time to the block's start in the
// model's time and Size to its cost in ns (instruction classes, the branch
// that led to it, its memory accesses): analyses that take a block's cost as
// Size × ns per instruction take the model's with 1 ns per instruction.
// Read and Write events get their block's Time, and in Block their own
// cost in ps (a share of their block's Size): with their Aux, the
// instruction that made them, analyses charge a miss to its instruction's
// line (causal).
type Model struct {
	t      *Table
	read   func(addr uint64, p []byte) error
	table  *trace.BlockTable
	view   trace.BlockView
	blocks []blockCost // by block id
	h      *hierarchy
	thr    map[uint32]*thread
	slots  map[uint64]int32 // indirect branch address -> its slot in the predictors
	code   []byte
	// speedup, when set, gives each instruction's actual speedup in %
	// (emuprof run --speedup): a memory access's cost shrinks by its
	// instruction's speedup, the rest of a block's by its instructions'
	// mean speedup.
	speedup func(addr uint64) int

	cur       *thread
	last      *thread // the thread of the slice that ended last (Syscall's)
	base      int64   // the slice's start (ns)
	cum       int64   // ps since base, from the thread's carry
	open      int     // index in the current batch of the block being costed, or -1
	openStart int64   // cum at that block's start
	openKeep  int64   // that block's share of its cost kept, in 1/keepUnit (keepUnit: not sped up)
	openTime  int64
	openBlock *blockCost
	// With speedups: the open block's accesses' cost (ps), and what their
	// instructions' speedups keep of it.
	openMem, openMemKept int64
	// slow: no fast path (tests compare the two).
	slow  bool
	Stats Stats
}

// Stats counts what the model charged.
type Stats struct {
	Blocks, Accesses, Mispredicted, Syscalls, Wakes   uint64
	Preempted                                         uint64 // time-slice switches
	Unslept                                           uint64 // wakes before the waiter had blocked any time
	L2, L3, Memory, Coherence, Prefetched, PageFaults uint64
	Contended, Locked                                 uint64 // accesses to a line both cores keep writing; locked ones
}

type blockCost struct {
	known    bool
	keep     int64 // share of the block's cost its speedups keep, in 1/keepUnit
	ps       int64
	addr     uint64 // the first instruction's address
	pc       uint64 // address of the last instruction
	fall     uint64 // address after the block
	indirect bool   // the last instruction's target is computed
	slot     int32  // its slot in the predictors (Model.slots); -1: none
	atomics  uint8  // locked instructions
	fence    bool   // a locked or serializing instruction: nothing hides across the block
	insns    int32
	endKind  trace.End
}

type thread struct {
	carry   int64 // ps below a whole ns, for the next slice
	prev    *blockCost
	pred    *predictor
	wakeups uint64
	queued  int64 // the scheduler's QueuedNs at the last Resume
	blocked int64 // and its BlockedNs
	slice   int64 // the scheduler's RunNs when the thread's kernel time slice began
	// The shadow of the last miss: ps of its latency that the work of
	// the blocks after it may still hide behind, and how many more of
	// their instructions the reorder buffer holds while it is in flight.
	shadow     int64
	shadowLeft int32
}

// hideWork returns how much of ps, the instruction work of a block of n
// instructions, the thread's miss shadow hides, and uses that much of it:
// all of it up to the shadow's ps, and of a block longer than the
// reorder buffer's room left, the first instructions' share.
func (th *thread) hideWork(ps int64, n int32) int64 {
	if th.shadow == 0 {
		return 0
	}
	if n > th.shadowLeft {
		ps = ps * int64(th.shadowLeft) / int64(n)
		n = th.shadowLeft
	}
	hid := min(ps, th.shadow)
	th.shadow -= hid
	th.shadowLeft -= n
	if th.shadowLeft == 0 {
		th.shadow = 0
	}
	return hid
}

// New returns a model of table t for a process whose code read reads and
// whose blocks are in table.
func New(t *Table, table *trace.BlockTable, read func(addr uint64, p []byte) error) *Model {
	return &Model{t: t, read: read, table: table, h: newHierarchy(t), thr: map[uint32]*thread{}, slots: map[uint64]int32{}, open: -1}
}

// keepUnit is a whole block's cost in blockCost.keep.
const keepUnit = 1 << 20

// SetSpeedup applies actual speedups (emu.Options.Speedup, emuprof run
// --speedup; nil: none) to the blocks priced from now on: a memory access
// made by an instruction sped up by p % costs (1 − p/100) of its price;
// the rest of a block whose instructions are sped up by p_i % (its
// instruction classes and the branch that led to it, and accesses of no
// known instruction of the block) costs (1 − mean p_i/100) of it. That is
// how causal shares a block's cost among its lines (an access's to its
// instruction's, the rest by instruction count), so that a virtual speedup
// and the actual one it predicts agree.
func (m *Model) SetSpeedup(speedup func(addr uint64) int) { m.speedup = speedup }

// Table returns the model's table.
func (m *Model) Table() *Table { return m.t }

func (m *Model) thread(tid uint32) *thread {
	th := m.thr[tid]
	if th == nil {
		th = &thread{pred: newPredictor(m.t.BranchBits, m.t.IndirectBits, m.t.IndirectHistory)}
		m.thr[tid] = th
	}
	return th
}

// Begin starts a run slice of thread tid at virtual time base (ns); alone
// says that no other thread can run before the slice ends (coherence: the
// other threads' writes are over).
func (m *Model) Begin(tid uint32, base int64, alone bool) {
	m.cur = m.thread(tid)
	m.base = base
	m.h.base, m.h.alone = base, alone
	m.cum = m.cur.carry
	m.open = -1
	m.openStart, m.openTime = m.cum, base
}

// Now is the virtual time (ns) the slice has reached: its start and the
// cost of the events priced so far.
func (m *Model) Now() int64 { return m.base + m.cum/1000 }

// End ends the slice and returns its cost in whole ns; the fraction of a ns
// left goes to the thread's next slice.
func (m *Model) End() int64 {
	if m.cur == nil {
		return 0
	}
	ns := m.cum / 1000
	m.cur.carry = m.cum % 1000
	m.last, m.cur = m.cur, nil
	return ns
}

// Events prices a batch: the slice's Block, Read and Write events (see
// Model). Other events pass unchanged.
func (m *Model) Events(batch []trace.Event) {
	if m.cur == nil {
		return
	}
	m.open = -1
	for i := range batch {
		ev := &batch[i]
		switch ev.Kind {
		case trace.KindBlock:
			m.close(batch)
			b := m.block(ev.Block)
			ps := b.ps
			th := m.cur
			if b.fence {
				th.shadow = 0
			}
			if p := th.prev; p != nil {
				var miss bool
				if p.endKind == trace.EndCond {
					miss = th.pred.cond(p.pc, p.fall, ev.Addr)
				} else {
					miss = th.pred.step(p.endKind, p.pc, p.fall, ev.Addr, p.indirect, p.slot)
				}
				if miss {
					// The refill is paid in full, and the
					// instructions after it did not issue
					// under the miss before it.
					th.shadow = 0
					ps += m.t.ps(m.t.BranchPenalty)
					m.Stats.Mispredicted++
				}
			}
			if th.shadow != 0 {
				ps -= th.hideWork(b.ps, b.insns)
			}
			th.prev = b
			m.h.atomics, m.h.atomLine = int(b.atomics), ^uint64(0)
			m.Stats.Blocks++
			m.open, m.openStart, m.openKeep, m.openBlock = i, m.cum, b.keep, b
			m.openMem, m.openMemKept = 0, 0
			m.openTime = m.base + m.cum/1000
			ev.Time = m.openTime
			m.cum += ps
		case trace.KindRead, trace.KindWrite:
			m.Stats.Accesses++
			var ps int64
			if m.slow || !m.h.l1hit(ev.Tid, ev.Addr, ev.Size) {
				ps = m.h.access(ev.Tid, ev.Addr, ev.Size, ev.Kind == trace.KindWrite, m.base+m.cum/1000)
				switch th := m.cur; {
				case m.h.faulted:
					th.shadow = 0
				case m.h.hide > th.shadow && m.t.ROB > 0:
					// The miss is charged in full (over mlp);
					// the work after it runs in its shadow.
					th.shadow, th.shadowLeft = m.h.hide, int32(m.t.ROB)
				}
			}
			m.cum += ps
			ev.Time = m.openTime
			ev.Block = uint32(min(ps, math.MaxUint32))
			if m.speedup != nil && m.open >= 0 {
				m.openMem += ps
				m.openMemKept += ps * m.keepAt(ev.Aux) / keepUnit
			}
		}
	}
	m.close(batch)
}

// keepAt is what the speedup of the instruction at addr keeps of an access
// it made, in 1/keepUnit: the open block's mean keep for an address
// outside the block (0: the engine did not say).
func (m *Model) keepAt(addr uint64) int64 {
	b := m.openBlock
	if addr < b.addr || addr >= b.fall {
		return m.openKeep
	}
	return keepUnit - int64(min(max(m.speedup(addr), 0), 100))*keepUnit/100
}

// close sets the open block's Size to its cost so far, less its speedups'
// saving.
func (m *Model) close(batch []trace.Event) {
	if m.open >= 0 {
		if m.openKeep != keepUnit || m.openMemKept != m.openMem {
			m.cum = m.openStart + (m.cum-m.openStart-m.openMem)*m.openKeep/keepUnit + m.openMemKept
		}
		batch[m.open].Size = uint32(m.cum/1000 - m.openStart/1000)
		m.open = -1
	}
}

// block returns the cost of block id, working it out the first time.
func (m *Model) block(id uint32) *blockCost {
	for int(id) >= len(m.blocks) {
		m.blocks = append(m.blocks, make([]blockCost, len(m.blocks)+1024)...)
	}
	b := &m.blocks[id]
	if b.known {
		return b
	}
	if id > m.view.Len() {
		m.view = m.table.View()
	}
	info := m.view.Get(id)
	b.known = true
	b.keep = keepUnit
	b.slot = -1
	if info == nil {
		return b
	}
	if cap(m.code) < int(info.Len) {
		m.code = make([]byte, info.Len)
	}
	code := m.code[:info.Len]
	b.addr, b.fall = info.Addr, info.Addr+uint64(info.Len)
	b.insns = int32(min(info.Insns, math.MaxInt32))
	b.endKind = info.End
	if err := m.read(info.Addr, code); err != nil {
		b.ps = int64(info.Insns) * m.t.ps(m.t.Int)
		return b
	}
	c := m.t.decodeBlock(code)
	b.ps, b.pc, b.indirect, b.atomics, b.fence = c.ps, info.Addr+uint64(c.last), c.indirect, c.atomics, c.fence
	if b.indirect && !m.slow {
		s, ok := m.slots[b.pc]
		if !ok {
			s = int32(len(m.slots))
			m.slots[b.pc] = s
		}
		b.slot = s
	}
	if m.speedup != nil {
		b.keep = keepOf(code, info.Addr, m.speedup)
	}
	return b
}

// keepOf is the share (in 1/keepUnit) of the cost of the block of code at
// addr that its instructions' speedups keep: 1 − their mean speedup.
func keepOf(code []byte, addr uint64, speedup func(uint64) int) int64 {
	var n, pct int64
	for off := 0; off < len(code); {
		n++
		pct += int64(min(max(speedup(addr+uint64(off)), 0), 100))
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil || in.Len == 0 {
			break // as decode.Block: the rest is one instruction
		}
		off += in.Len
	}
	if n == 0 {
		return keepUnit
	}
	return keepUnit - pct*keepUnit/(100*n)
}

// Syscall returns the kernel's cost in ns of system call nr with first
// argument a0 that returned ret.
func (m *Model) Syscall(nr, a0 uint64, ret int64) int64 {
	m.Stats.Syscalls++
	if m.last != nil {
		m.last.shadow = 0 // the kernel entry: nothing hides across it
	}
	ns := m.t.Syscall
	switch nr {
	case 0, 1, 17, 18, 19, 20, 40, 44, 45, 46, 47, 275, 276, 278, 295, 296, 326:
		// read, write, pread64, pwrite64, readv, writev, sendfile,
		// sendto, recvfrom, sendmsg, recvmsg, splice, tee, vmsplice,
		// preadv, pwritev, copy_file_range: bytes through the kernel
		if ret > 0 {
			ns += ret * m.t.BytesPer1000 / 1000
		}
	case 202: // futex
		switch a0 &^ 0x180 { // FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME
		case 1, 3, 4, 5, 10: // WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAKE_BITSET
			if ret > 0 {
				ns += ret * m.t.FutexWake
			}
		}
	}
	return ns
}

// Resume returns what thread tid pays in ns when it runs again, given its
// scheduler wake count, CPU work (RunNs), time spent waiting for a CPU
// (QueuedNs) and blocked (BlockedNs): a wake-up and a context switch per
// wake since it last ran, unless its one wake came before it had blocked
// for any virtual time (the waker changed the futex word before the
// waiter's kernel entry was over: natively the wait returns without
// sleeping); else, if it has waited for a CPU since then, one switch per
// time slice of CPU work it has had since its slice began. The engine
// time-slices runnable threads in quanta of a few µs, the kernel in
// slices of kernel.slice: a thread sharing a CPU is switched out once per
// slice it runs, not once per quantum. A wake begins a new slice.
func (m *Model) Resume(tid uint32, wakeups uint64, runNs, queuedNs, blockedNs int64) int64 {
	th := m.thread(tid)
	n := wakeups - th.wakeups
	th.wakeups = wakeups
	waited := queuedNs > th.queued
	th.queued = queuedNs
	slept := blockedNs > th.blocked
	th.blocked = blockedNs
	if n > 0 {
		th.slice = runNs
		if n == 1 && !slept {
			m.Stats.Unslept++
			return 0
		}
		m.Stats.Wakes += n
		th.shadow = 0 // it slept: its misses are over
		return int64(n) * (m.t.FutexWait + m.t.Switch)
	}
	if !waited || runNs-th.slice < m.t.Slice {
		return 0
	}
	th.slice = runNs
	th.shadow = 0 // switched out
	m.Stats.Preempted++
	return m.t.Switch
}

// Totals returns the statistics with the cache hierarchy's counts.
func (m *Model) Totals() Stats {
	s := m.Stats
	s.L2, s.L3, s.Memory, s.Coherence = m.h.Misses[0], m.h.Misses[1], m.h.Misses[2], m.h.Misses[3]
	s.Prefetched, s.PageFaults = m.h.Prefetched, m.h.PageFaults
	s.Contended, s.Locked = m.h.Contended, m.h.Locked
	return s
}

// String summarizes the statistics for --stats.
func (s Stats) String() string {
	return fmt.Sprintf("%d blocks, %d memory accesses (%d from L2, %d from L3, %d from memory, %d prefetched, %d from another core, %d to a line both cores write, %d of them locked), %d mispredicted branches, %d page faults, %d syscalls, %d wakes (and %d before the waiter slept), %d time-slice switches",
		s.Blocks, s.Accesses, s.L2, s.L3, s.Memory, s.Prefetched, s.Coherence, s.Contended, s.Locked, s.Mispredicted, s.PageFaults, s.Syscalls, s.Wakes, s.Unslept, s.Preempted)
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Blocks += o.Blocks
	s.Accesses += o.Accesses
	s.Mispredicted += o.Mispredicted
	s.Syscalls += o.Syscalls
	s.Wakes += o.Wakes
	s.Preempted += o.Preempted
	s.Unslept += o.Unslept
	s.L2 += o.L2
	s.L3 += o.L3
	s.Memory += o.Memory
	s.Coherence += o.Coherence
	s.Prefetched += o.Prefetched
	s.PageFaults += o.PageFaults
	s.Contended += o.Contended
	s.Locked += o.Locked
}
