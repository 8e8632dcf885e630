package emu

import (
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/trace"
)

const codeAddr = 0x10000

func newEngine(t *testing.T, opts Options, code []byte) *Engine {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.MapPages(codeAddr, 0x1000, mm.ProtRead|mm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if err := e.MapPages(0x20000, 0x2000, mm.ProtRead|mm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteMem(codeAddr, code); err != nil {
		t.Fatal(err)
	}
	regs := cpu.Regs{RIP: codeAddr, RSP: 0x21000}
	if err := e.WriteRegs(&regs); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSyscallStop(t *testing.T) {
	// mov eax, 60; mov edi, 7; syscall; hlt
	e := newEngine(t, Options{}, []byte{0xb8, 60, 0, 0, 0, 0xbf, 7, 0, 0, 0, 0x0f, 0x05, 0xf4})
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopSyscall || s.Insns != 3 || s.Blocks != 1 {
		t.Fatalf("stop = %+v, want syscall after 3 instructions in 1 block", s)
	}
	var r cpu.Regs
	if err := e.ReadRegs(&r); err != nil {
		t.Fatal(err)
	}
	if r.RIP != codeAddr+12 || r.RAX != 60 || r.RDI != 7 {
		t.Errorf("regs after syscall: rip %#x rax %d rdi %d", r.RIP, r.RAX, r.RDI)
	}
}

// loop: mov ecx, 1000; L: add [0x20000], ecx; dec ecx; jnz L; syscall
var loopCode = []byte{
	0xb9, 0xe8, 0x03, 0, 0, // mov ecx, 1000
	0x01, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00, // add [0x20000], ecx
	0xff, 0xc9, // dec ecx
	0x75, 0xf5, // jnz -11
	0x0f, 0x05, // syscall
}

func TestQuantumCountsExactly(t *testing.T) {
	for _, budget := range []uint64{1, 7, 100, 0} {
		e := newEngine(t, Options{}, loopCode)
		var total, slices uint64
		pc := uint64(codeAddr)
		for {
			s := e.Run(pc, budget)
			total += s.Insns
			slices++
			if s.Reason == cpu.StopSyscall {
				break
			}
			if s.Reason != cpu.StopQuantum {
				t.Fatalf("budget %d: unexpected stop %+v", budget, s)
			}
			if budget > 3 && s.Insns > budget {
				t.Fatalf("budget %d: slice ran %d instructions", budget, s.Insns)
			}
			pc = e.PC()
		}
		// 1 mov + 1000 * 3 loop instructions + syscall
		if total != 3002 {
			t.Errorf("budget %d: counted %d instructions over %d slices, want 3002", budget, total, slices)
		}
		var b [4]byte
		_ = e.ReadMem(0x20000, b[:])
		if got := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16; got != 500500 {
			t.Errorf("budget %d: sum %d, want 500500 (a block ran twice or not at all)", budget, got)
		}
	}
}

func TestEventsInOrder(t *testing.T) {
	e := newEngine(t, Options{Memory: true, Blocks: true, StackPointer: true, BufferEvents: 64}, loopCode)
	e.SetTid(1000)
	var reads, writes, blocks int
	e.SetSink(func(b []trace.Event) {
		for _, ev := range b {
			switch ev.Kind {
			case trace.KindRead:
				reads++
				if ev.Addr != 0x20000 || ev.Size != 4 {
					t.Fatalf("read %+v", ev)
				}
			case trace.KindWrite:
				writes++
			case trace.KindBlock:
				blocks++
				if ev.Aux != 0x21000 || ev.Tid != 1000 {
					t.Fatalf("block %+v", ev)
				}
			}
		}
	})
	s := e.Run(codeAddr, 0)
	e.Drain()
	if s.Reason != cpu.StopSyscall {
		t.Fatalf("stop %+v", s)
	}
	if reads != 1000 || writes != 1000 {
		t.Errorf("reads %d writes %d, want 1000 each", reads, writes)
	}
	if uint64(blocks) != s.Blocks {
		t.Errorf("%d block events, %d blocks counted", blocks, s.Blocks)
	}
}

func TestFault(t *testing.T) {
	// mov rax, [0]
	e := newEngine(t, Options{}, []byte{0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0})
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopFault || s.FaultAddr != 0 || s.FaultAccess != cpu.FaultRead {
		t.Fatalf("stop = %+v, want read fault at 0", s)
	}
	if pc := e.PC(); pc != codeAddr {
		t.Errorf("pc at fault %#x, want %#x", pc, codeAddr)
	}
}

func TestInvalidInstruction(t *testing.T) {
	e := newEngine(t, Options{}, []byte{0x0f, 0x0b}) // ud2
	s := e.Run(codeAddr, 0)
	if s.Reason != cpu.StopInvalid && !(s.Reason == cpu.StopIntr && s.IntNo == 6) {
		t.Fatalf("stop = %+v, want invalid instruction", s)
	}
}

func TestRDTSC(t *testing.T) {
	// nop; rdtsc; syscall
	e := newEngine(t, Options{}, []byte{0x90, 0x0f, 0x31, 0x0f, 0x05})
	e.SetRDTSC(func(n uint64) uint64 { return 0x1234_0000_5678 + n })
	pc := uint64(codeAddr)
	var s cpu.Stop
	for i := 0; i < 5; i++ {
		s = e.Run(pc, 0)
		if s.Reason != cpu.StopRequest {
			break
		}
		pc = e.PC()
	}
	if s.Reason != cpu.StopSyscall {
		t.Fatalf("stop = %+v", s)
	}
	var r cpu.Regs
	_ = e.ReadRegs(&r)
	if r.RAX != 0x5678 && r.RDX != 0x1234 {
		t.Errorf("rdtsc gave rdx:rax %#x:%#x", r.RDX, r.RAX)
	}
	if r.RDX != 0x1234 || r.RAX < 0x5678 || r.RAX > 0x5678+3 {
		t.Errorf("rdtsc gave rdx:rax %#x:%#x, want virtual time 0x1234:0x5678+n", r.RDX, r.RAX)
	}
}

func TestContextSwitch(t *testing.T) {
	e := newEngine(t, Options{}, loopCode)
	a, _ := e.NewContext()
	defer a.Free()
	if err := e.SetFSBase(0x7000); err != nil {
		t.Fatal(err)
	}
	_ = e.Save(a)
	_ = e.SetFSBase(0x9000)
	_ = e.Restore(a)
	if fs := e.FSBase(); fs != 0x7000 {
		t.Errorf("fs base after restore %#x, want 0x7000", fs)
	}
}

// BenchmarkContextSwitch measures what a guest thread switch costs the
// engine: save the running thread's registers, restore another's.
func BenchmarkContextSwitch(b *testing.B) {
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	x, _ := e.NewContext()
	y, _ := e.NewContext()
	defer x.Free()
	defer y.Free()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = e.Save(x)
		_ = e.Restore(y)
		e.SetTid(uint32(i))
	}
}

// BenchmarkRunSlice measures one scheduling slice: resume the engine and
// stop at the first syscall (the fixed cost of returning to Go).
func BenchmarkRunSlice(b *testing.B) {
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.MapPages(codeAddr, 0x1000, mm.ProtRead|mm.ProtExec); err != nil {
		b.Fatal(err)
	}
	_ = e.WriteMem(codeAddr, []byte{0x0f, 0x05}) // syscall
	for i := 0; i < b.N; i++ {
		e.Run(codeAddr, 0)
	}
}
