// Package tracetest builds event streams by hand for the analyses' tests:
// the papers' examples and small scenarios, written as blocks, memory
// accesses and thread events, with the block table and virtual times the
// emulator would produce.
package tracetest

import "emuprof/trace"

// Trace is a hand-written event stream and its block table.
type Trace struct {
	Events []trace.Event
	Blocks *trace.BlockTable
	syms   trace.Symbols
	ids    map[[2]uint64]uint32 // (address, length) -> block id
	clock  map[uint32]int64     // per thread: virtual time, 1 ns per instruction
}

// New returns an empty trace whose blocks are named by syms (may be nil).
func New(syms trace.Symbols) *Trace {
	return &Trace{Blocks: trace.NewBlockTable(), syms: syms, ids: map[[2]uint64]uint32{}, clock: map[uint32]int64{}}
}

// BlockID returns the id of the block at addr of length bytes, creating
// it (with insns instructions and terminator end) on first use, as the
// emulator does when it first translates a block.
func (t *Trace) BlockID(addr uint64, length, insns uint32, end trace.End) uint32 {
	key := [2]uint64{addr, uint64(length)}
	if id, ok := t.ids[key]; ok {
		return id
	}
	bi := trace.BlockInfo{Addr: addr, Len: length, Insns: insns, End: end}
	if t.syms != nil {
		bi.Routine, _ = t.syms.Routine(addr)
		bi.File, bi.Line, _ = t.syms.Line(addr)
	}
	id := t.Blocks.Add(bi)
	t.ids[key] = id
	return id
}

// Block appends a Block event: thread tid runs insns instructions from addr
// (length bytes, ending with end) with stack pointer sp at entry. The
// thread's clock advances by insns.
func (t *Trace) Block(tid uint32, addr, sp uint64, insns, length uint32, end trace.End) *Trace {
	id := t.BlockID(addr, length, insns, end)
	now := t.clock[tid]
	t.clock[tid] = now + int64(insns)
	t.Events = append(t.Events, trace.Event{Kind: trace.KindBlock, Tid: tid, Time: now, Block: id,
		Addr: addr, Aux: sp, Size: insns, End: end})
	return t
}

// Mem appends a memory access of the given kind (Read, Write, KernelRead,
// KernelWrite).
func (t *Trace) Mem(kind trace.Kind, tid uint32, addr uint64, size uint32) *Trace {
	t.Events = append(t.Events, trace.Event{Kind: kind, Tid: tid, Time: t.clock[tid], Addr: addr, Size: size})
	return t
}

// Other appends an event of another kind (Switch, ThreadStart, ThreadExit,
// Syscall...) with the given Addr and Aux.
func (t *Trace) Other(kind trace.Kind, tid uint32, addr, aux uint64) *Trace {
	t.Events = append(t.Events, trace.Event{Kind: kind, Tid: tid, Time: t.clock[tid], Addr: addr, Aux: aux})
	return t
}

// SetClock sets thread tid's virtual time (a wake-up, a delay).
func (t *Trace) SetClock(tid uint32, ns int64) *Trace {
	t.clock[tid] = ns
	return t
}

// Repeat makes the events from index from on, which must all be Block
// events of thread tid, a period that repeats count more times (a Repeat
// event before them, trace.Encoding.RepeatEvents): the thread's clock
// advances by count periods.
func (t *Trace) Repeat(tid uint32, from int, count uint64) *Trace {
	period := t.Events[from:]
	start := period[0].Time
	dt := t.clock[tid] - start
	r := trace.Event{Kind: trace.KindRepeat, Tid: tid, Time: start, Size: uint32(len(period)), Aux: count, Addr: uint64(dt)}
	t.Events = append(t.Events[:from], append([]trace.Event{r}, period...)...)
	t.clock[tid] += int64(count) * dt
	return t
}

// MarkRepeats returns a copy of evs with trace.FlagRepeat set as the
// engine sets it for Encoding.Repeats (emu/fold.h): a Block event of a block
// repeats accepts has it when the block is one of the last four blocks
// repeats accepts that its thread ran since it ran one repeats refuses.
// Each thread keeps its own until it exits. evs must be block by block (no
// runs): folding comes after (it reads the flags).
func MarkRepeats(evs []trace.Event, blocks trace.BlockView, repeats func(*trace.BlockInfo) bool) []trace.Event {
	out := append([]trace.Event(nil), evs...)
	rings := map[uint32]*[4]uint32{}
	for i := range out {
		ev := &out[i]
		switch ev.Kind {
		case trace.KindThreadExit:
			delete(rings, ev.Tid)
			continue
		case trace.KindBlock:
		default:
			continue
		}
		r := rings[ev.Tid]
		if r == nil {
			r = new([4]uint32)
			rings[ev.Tid] = r
		}
		ev.Flags &^= trace.FlagRepeat
		if b := blocks.Get(ev.Block); b == nil || !repeats(b) {
			*r = [4]uint32{}
			continue
		}
		for _, id := range r {
			if id == ev.Block {
				ev.Flags |= trace.FlagRepeat
			}
		}
		*r = [4]uint32{ev.Block, r[0], r[1], r[2]}
	}
	return out
}
