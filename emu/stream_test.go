package emu

import (
	"testing"

	"emuprof/cpu"
	"emuprof/trace"
)

// Events carry the thread's virtual time (slice start + instructions before
// the block × ns per instruction; a memory access has its block's time) and
// the dense id of their block, whose table entry says what the block is.
// Events emitted from Go land in the same stream, in order, and batches
// alternate between two buffers (each valid until the next delivery).
func TestEventTimesBlockIDsAndEmit(t *testing.T) {
	e := newEngine(t, Options{Memory: true, Blocks: true, StackPointer: true, BufferEvents: 16, NsPerInsn: 2}, loopCode)
	e.SetTid(7)
	var got []trace.Event
	var prevBatch []trace.Event
	var prevCopy []trace.Event
	e.SetSink(func(b []trace.Event) {
		// The previous batch must still be intact while this one arrives.
		for i := range prevBatch {
			if prevBatch[i] != prevCopy[i] {
				t.Fatalf("previous batch overwritten at %d", i)
			}
		}
		got = append(got, b...)
		prevBatch, prevCopy = b, append([]trace.Event(nil), b...)
	})
	e.Emit(trace.Event{Kind: trace.KindSyscall, Tid: 7, Time: 999, Addr: 1})
	e.SetClock(1000)
	s := e.Run(codeAddr, 0)
	e.Emit(trace.Event{Kind: trace.KindSyscall, Tid: 7, Time: 7007, Addr: 60})
	e.Drain()
	if s.Reason != cpu.StopSyscall || s.Insns != 3002 {
		t.Fatalf("stop %+v", s)
	}
	if got[0].Kind != trace.KindSyscall || got[0].Addr != 1 || got[len(got)-1].Addr != 60 {
		t.Fatalf("Go events out of order: first %+v last %+v", got[0], got[len(got)-1])
	}
	blocks := e.Blocks().View()
	want := int64(1000)
	var blockTime int64
	var nBlocks int
	ids := map[uint64]uint32{}
	for _, ev := range got[1 : len(got)-1] {
		switch ev.Kind {
		case trace.KindBlock:
			nBlocks++
			if ev.Time != want {
				t.Fatalf("block %d at %#x: time %d, want %d", nBlocks, ev.Addr, ev.Time, want)
			}
			bi := blocks.Get(ev.Block)
			if bi == nil || bi.Addr != ev.Addr || bi.Insns != ev.Size || bi.End != ev.End {
				t.Fatalf("block id %d: table %+v, event %+v", ev.Block, bi, ev)
			}
			if id, ok := ids[ev.Addr]; ok && id != ev.Block {
				t.Fatalf("block %#x got ids %d and %d", ev.Addr, id, ev.Block)
			}
			ids[ev.Addr] = ev.Block
			blockTime = ev.Time
			want += 2 * int64(ev.Size)
		case trace.KindRead, trace.KindWrite:
			if ev.Time != blockTime || ev.Block != 0 {
				t.Fatalf("access %+v: time %d, want its block's %d", ev, ev.Time, blockTime)
			}
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	if want != 1000+2*3002 {
		t.Errorf("blocks cover %d ns, want %d", want-1000, 2*3002)
	}
	if len(ids) != 3 || blocks.Len() != 3 {
		t.Errorf("%d distinct blocks, table has %d, want 3", len(ids), blocks.Len())
	}
}

// The C record and trace.Event agree field by field, kinds included.
func TestEventLayoutMatchesC(t *testing.T) {
	if err := checkEventLayout(); err != nil {
		t.Fatal(err)
	}
}

// A slice that the engine runs in several pieces (here: popcnt, which
// Unicorn refuses and Run completes itself, between blocks) keeps one time
// line: a block after the re-entry is stamped after the blocks before it,
// at slice start + the instructions executed before it.
func TestEventTimesContinueAcrossReentry(t *testing.T) {
	code := []byte{
		0xb9, 0x05, 0, 0, 0, // mov ecx, 5
		0xeb, 0x00, // jmp +0 (ends the block)
		0xf3, 0x0f, 0xb8, 0xc1, // popcnt eax, ecx: completed by Run
		0xeb, 0x00, // jmp +0
		0x90,       // nop
		0x0f, 0x05, // syscall
	}
	e := newEngine(t, Options{Blocks: true, NsPerInsn: 3}, code)
	var blocks []trace.Event
	e.SetSink(func(b []trace.Event) {
		for _, ev := range b {
			if ev.Kind == trace.KindBlock {
				blocks = append(blocks, ev)
			}
		}
	})
	e.SetClock(500)
	s := e.Run(codeAddr, 0)
	e.Drain()
	if s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	var prev int64 = -1
	var insns int64
	for _, b := range blocks {
		if b.Time < prev {
			t.Fatalf("block at %#x stamped %d, after a block at %d: time went backwards", b.Addr, b.Time, prev)
		}
		prev = b.Time
		insns += int64(b.Size)
	}
	last := blocks[len(blocks)-1]
	if want := 500 + 3*(int64(s.Insns)-int64(last.Size)); last.Time != want {
		t.Errorf("last block stamped %d, want %d (slice start + earlier instructions × 3)", last.Time, want)
	}
}
