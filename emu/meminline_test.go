package emu

import (
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/trace"
)

// memInlineCode: loads and stores of 1 to 16 bytes, loads and stores across
// the page at 0x21000, push/pop, lock cmpxchg, xadd, xchg, fxsave/fxrstor and
// fld/fstp tbyte (helpers), rep movsb, a loop, cmpxchg16b, enter/leave, then
// a syscall (assembled with as(1) from the list above). memFaultCode: a read
// and a write, then the access named, which faults (0x30000 unmapped,
// 0x40000 mapped without access).
var memInlineCode = []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x8b, 0x5e, 0x08, 0x0f, 0xb7, 0x4e, 0x0c, 0x0f, 0xb6, 0x56, 0x0e, 0x48, 0x89, 0x46, 0x10, 0x89, 0x5e, 0x18, 0x66, 0x89, 0x4e, 0x1c, 0x88, 0x56, 0x1e, 0xf3, 0x0f, 0x6f, 0x46, 0x20, 0xf3, 0x0f, 0x7f, 0x46, 0x30, 0x48, 0x8b, 0x86, 0xfd, 0x0f, 0x00, 0x00, 0x89, 0x86, 0xfe, 0x0f, 0x00, 0x00, 0x0f, 0xb7, 0x86, 0xff, 0x0f, 0x00, 0x00, 0x50, 0x5b, 0xf0, 0x48, 0x0f, 0xb1, 0x5e, 0x40, 0xf0, 0x0f, 0xc1, 0x46, 0x48, 0x48, 0x87, 0x4e, 0x50, 0x0f, 0xae, 0x86, 0x00, 0x02, 0x00, 0x00, 0x0f, 0xae, 0x8e, 0x00, 0x02, 0x00, 0x00, 0xdb, 0xae, 0x00, 0x04, 0x00, 0x00, 0xdb, 0xbe, 0x10, 0x04, 0x00, 0x00, 0x48, 0x8d, 0xbe, 0x00, 0x08, 0x00, 0x00, 0xb9, 0xf0, 0x1f, 0x00, 0x00, 0x83, 0xe1, 0x00, 0xb9, 0x28, 0x00, 0x00, 0x00, 0x56, 0x48, 0x8d, 0xb6, 0x00, 0x01, 0x00, 0x00, 0xf3, 0xa4, 0x5e, 0xb9, 0x03, 0x00, 0x00, 0x00, 0x01, 0x8e, 0x00, 0x09, 0x00, 0x00, 0x4c, 0x8b, 0x86, 0x08, 0x09, 0x00, 0x00, 0xff, 0xc9, 0x75, 0xef, 0x48, 0x0f, 0xc7, 0x8e, 0x00, 0x0a, 0x00, 0x00, 0x48, 0xc7, 0xc5, 0x00, 0x18, 0x02, 0x00, 0xc8, 0x10, 0x00, 0x03, 0xc9, 0x8b, 0x86, 0xfc, 0x0f, 0x00, 0x00, 0x0f, 0x05}
var memFaultCode = []struct {
	name string
	code []byte
}{
	{"read unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x03, 0x00, 0x0f, 0x05}},
	{"read crossing into unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x8b, 0x04, 0x25, 0xfc, 0x1f, 0x02, 0x00, 0x0f, 0x05}},
	{"read crossing from unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x8b, 0x04, 0x25, 0xfc, 0xff, 0x01, 0x00, 0x0f, 0x05}},
	{"write unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x89, 0x04, 0x25, 0x00, 0x00, 0x03, 0x00, 0x0f, 0x05}},
	{"write crossing into unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x89, 0x04, 0x25, 0xfc, 0x1f, 0x02, 0x00, 0x0f, 0x05}},
	{"read prot none", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x04, 0x00, 0x0f, 0x05}},
	{"read crossing into prot none", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x48, 0x8b, 0x04, 0x25, 0xfc, 0xff, 0x03, 0x00, 0x0f, 0x05}},
	{"helper read unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0xdb, 0x2c, 0x25, 0x00, 0x00, 0x03, 0x00, 0x0f, 0x05}},
	{"helper write unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0x0f, 0xae, 0x04, 0x25, 0x00, 0x00, 0x03, 0x00, 0x0f, 0x05}},
	{"helper read crossing into unmapped", []byte{0xbe, 0x00, 0x00, 0x02, 0x00, 0x48, 0x8b, 0x06, 0x48, 0x89, 0x46, 0x08, 0xdb, 0x2c, 0x25, 0xfc, 0x1f, 0x02, 0x00, 0x0f, 0x05}},
}

type memRun struct {
	events []trace.Event
	stops  []cpu.Stop
	inline bool
}

// runMem runs code to its syscall or fault, in slices of budget
// instructions, with memory events from the generated code or the hook.
func runMem(t *testing.T, opts Options, code []byte, budget uint64, hook bool) memRun {
	t.Helper()
	opts.Memory = true
	opts.MemoryHook = hook
	e := newEngine(t, opts, code)
	if err := e.MapPages(0x40000, 0x1000, mm.Prot(0)); err != nil {
		t.Fatal(err)
	}
	e.SetTid(5)
	var r memRun
	e.SetSink(func(b []trace.Event) { r.events = append(r.events, b...) })
	pc := uint64(codeAddr)
	for i := 0; i < 10000; i++ {
		e.SetClock(int64(i) * 1000)
		s := e.Run(pc, budget)
		s.Insns, s.Blocks = 0, 0 // their sums are compared through the events' times
		r.stops = append(r.stops, s)
		if s.Reason != cpu.StopQuantum {
			break
		}
		pc = e.PC()
	}
	e.Drain()
	r.inline = e.MemoryInline()
	return r
}

// The generated code's memory events are the hook's, field for field and
// in the same batches' order, with Block events or without, across small
// buffers (the slack's settling) and slices; and on Unicorn 2.0.1 the
// engine does write them inline (MemoryHook keeps the hook). Merged
// (MergeMemory) and folded (FoldMemory) streams too.
func TestMemoryInlineMatchesHook(t *testing.T) {
	skipUnlessUnicorn201(t)
	type config struct {
		name string
		opts Options
	}
	configs := []config{
		{"memory", Options{}},
		{"memory and blocks", Options{Blocks: true, StackPointer: true}},
		{"small buffer", Options{Blocks: true, BufferEvents: 7}},
		{"small buffer, no blocks", Options{BufferEvents: 3}},
	}
	for _, c := range configs[:] {
		// Merged (emu_compact), and merged and folded.
		c.name += ", merged"
		c.opts.MergeMemory = true
		configs = append(configs, c)
		c.name += " and folded"
		c.opts.Fold, c.opts.FoldMemory = func(*trace.BlockInfo) bool { return true }, true
		c.opts.Symbols = foldSyms{func(uint64) int { return 1 }}
		configs = append(configs, c)
	}
	for _, o := range configs {
		for _, budget := range []uint64{0, 1, 5} {
			with := runMem(t, o.opts, memInlineCode, budget, false)
			without := runMem(t, o.opts, memInlineCode, budget, true)
			if !with.inline || without.inline {
				t.Fatalf("%s: inline %v with, %v without MemoryHook", o.name, with.inline, without.inline)
			}
			compareMem(t, o.name, budget, with, without)
			if last := with.stops[len(with.stops)-1]; last.Reason != cpu.StopSyscall {
				t.Fatalf("%s: stop %+v", o.name, last)
			}
		}
	}
}

// A faulting access is reported as the hook reports it: a read of an
// unmapped page not at all, of a page without access before the fault,
// a crossing read with the halves made before the faulting page's check,
// a write always; by the generated code and by helpers alike.
func TestMemoryInlineFaults(t *testing.T) {
	skipUnlessUnicorn201(t)
	for _, c := range memFaultCode {
		for _, merge := range []bool{false, true} {
			o := Options{Blocks: true}
			o.MergeMemory = merge
			with := runMem(t, o, c.code, 0, false)
			without := runMem(t, o, c.code, 0, true)
			compareMem(t, c.name, 0, with, without)
		}
		with := runMem(t, Options{Blocks: true}, c.code, 0, false)
		if last := with.stops[len(with.stops)-1]; last.Reason != cpu.StopFault {
			t.Fatalf("%s: stop %+v", c.name, last)
		}
	}
}

func compareMem(t *testing.T, name string, budget uint64, with, without memRun) {
	t.Helper()
	var reads, writes int
	for _, ev := range without.events {
		switch ev.Kind {
		case trace.KindRead:
			reads++
		case trace.KindWrite:
			writes++
		}
	}
	if reads == 0 || writes == 0 {
		t.Fatalf("%s: %d reads, %d writes: the test tests nothing", name, reads, writes)
	}
	if !slices.Equal(with.events, without.events) {
		n := min(len(with.events), len(without.events))
		i := 0
		for i < n && with.events[i] == without.events[i] {
			i++
		}
		t.Fatalf("%s, budget %d: %d events inline, %d with the hook; first difference at %d:\n inline %+v\n hook   %+v",
			name, budget, len(with.events), len(without.events), i, at(with.events, i), at(without.events, i))
	}
	if len(with.stops) != len(without.stops) {
		t.Fatalf("%s, budget %d: %d slices inline, %d with the hook", name, budget, len(with.stops), len(without.stops))
	}
	for i := range with.stops {
		if with.stops[i] != without.stops[i] {
			t.Fatalf("%s, budget %d, slice %d: inline %+v, hook %+v", name, budget, i, with.stops[i], without.stops[i])
		}
	}
}

func at(evs []trace.Event, i int) any {
	if i < len(evs) {
		return evs[i]
	}
	return "none"
}

// Every memory event's Aux is the address of the instruction that made
// it, with the hook as inline: a plain load, SSE's (which 2.0.1 does not
// store RIP before), a crossing load's three events, the helpers'
// (fxsave, fxrstor, fld/fstp tbyte, cmpxchg16b), push, rep movsb.
func TestMemoryEventInstruction(t *testing.T) {
	skipUnlessUnicorn201(t)
	type insn struct {
		off uint64
		in  x86asm.Inst
	}
	var insns []insn
	for off := 0; off < len(memInlineCode); {
		in, err := x86asm.Decode(memInlineCode[off:], 64)
		if err != nil {
			t.Fatal(err)
		}
		insns = append(insns, insn{uint64(off), in})
		off += in.Len
	}
	// find returns the address of the first instruction op whose memory
	// operand has displacement disp.
	find := func(op x86asm.Op, disp int64) uint64 {
		for _, i := range insns {
			if i.in.Op != op {
				continue
			}
			for _, a := range i.in.Args {
				if m, ok := a.(x86asm.Mem); ok && m.Disp == disp {
					return codeAddr + i.off
				}
			}
		}
		t.Fatalf("no %v with displacement %#x", op, disp)
		return 0
	}
	want := []struct {
		kind     trace.Kind
		lo, hi   uint64 // the event's address in [lo, hi)
		pc       uint64
		min, max int // events
	}{
		{trace.KindRead, 0x20000, 0x20001, find(x86asm.MOV, 0), 1, 1},
		{trace.KindRead, 0x20020, 0x20030, find(x86asm.MOVDQU, 0x20), 2, 2},
		{trace.KindWrite, 0x20030, 0x20040, find(x86asm.MOVDQU, 0x30), 2, 2},
		{trace.KindWrite, 0x20200, 0x20400, find(x86asm.FXSAVE, 0x200), 10, 100},
		{trace.KindRead, 0x20200, 0x20400, find(x86asm.FXRSTOR, 0x200), 10, 100},
		{trace.KindRead, 0x20400, 0x20410, find(x86asm.FLD, 0x400), 1, 2},
		{trace.KindWrite, 0x20410, 0x20420, find(x86asm.FSTP, 0x410), 1, 2},
		{trace.KindRead, 0x20a00, 0x20a10, find(x86asm.CMPXCHG16B, 0xa00), 1, 2},
	}
	starts := map[uint64]bool{}
	for _, i := range insns {
		starts[codeAddr+i.off] = true
	}
	for _, hook := range []bool{false, true} {
		r := runMem(t, Options{Blocks: true}, memInlineCode, 0, hook)
		n := make([]int, len(want))
		crossing := find(x86asm.MOV, 0xffd)
		for i, ev := range r.events {
			if ev.Kind == trace.KindRead && ev.Addr == 0x20ffd { // the load, then its halves
				if i+2 >= len(r.events) || r.events[i+1].Addr != 0x20ff8 || r.events[i+2].Addr != 0x21000 {
					t.Fatalf("hook %v: the crossing load's halves are not after it", hook)
				}
				for _, h := range r.events[i : i+3] {
					if h.Aux != crossing {
						t.Errorf("hook %v: crossing read at %#x: Aux %#x, want %#x", hook, h.Addr, h.Aux, crossing)
					}
				}
			}
			if ev.Kind != trace.KindRead && ev.Kind != trace.KindWrite {
				continue
			}
			if !starts[ev.Aux] {
				t.Fatalf("hook %v: %v of %d bytes at %#x: Aux %#x is no instruction", hook, ev.Kind, ev.Size, ev.Addr, ev.Aux)
			}
			for i, w := range want {
				if ev.Kind == w.kind && w.lo <= ev.Addr && ev.Addr < w.hi {
					n[i]++
					if ev.Aux != w.pc {
						t.Errorf("hook %v: %v at %#x: Aux %#x, want %#x", hook, ev.Kind, ev.Addr, ev.Aux, w.pc)
					}
				}
			}
		}
		for i, w := range want {
			if n[i] < w.min || n[i] > w.max {
				t.Errorf("hook %v: %d %v events in [%#x, %#x), want %d..%d", hook, n[i], w.kind, w.lo, w.hi, w.min, w.max)
			}
		}
	}
}
