package guest

// The exact event stream of small threaded scenarios, run through the real
// run loop, scheduler and kernel on a fake CPU that executes scripts instead
// of x86 code. Each expected stream is written by hand from the semantics
// (1 ns per instruction, 8 virtual CPUs, ties to the thread with the least
// CPU work, then the lowest tid), so a test fails when an event is missing,
// duplicated, out of order or stamped with the wrong time, thread, object
// or waker.

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/syscalls"
	"emuprof/trace"
)

// ---------------------------------------------------------------------------
// Scripts: the fake CPU's "machine code".
//
// A guest program is a list of named scripts laid out in the text segment,
// script i at fakeText+0x1000*(i+1), its ops one after the other. Every fake
// instruction is 2 bytes long, so an op of n instructions spans 2n bytes and
// is one basic block. The CPU finds the op at RIP, so threads need no script
// id: a new thread's registers are a copy of its parent's (RIP just past the
// clone), and, as in glibc's clone wrapper, the op after a clone is a
// "test rax, rax; jz" (ifChild) that sends the child (rax = 0) to its own
// script.

const (
	fakeText  = 0x400000 // the R-X segment; scripts start one page in
	fakeData  = 0x600000 // one zeroed RW page: futex words, buffers
	insnBytes = 2
)

type opKind int

const (
	opRun     opKind = iota // n instructions, then the stores
	opSyscall               // load the syscall registers (n-1 instructions), syscall
	opIfChild               // test rax, rax; jz script
)

type memStore struct {
	addr uint64
	data []byte
}

type op struct {
	kind   opKind
	insns  uint32
	stores []memStore
	sys    [7]uint64 // rax, rdi, rsi, rdx, r10, r8, r9
	target string
}

// run is a block of n instructions whose stores (if any) land in memory.
func run(n uint32, stores ...memStore) op { return op{kind: opRun, insns: n, stores: stores} }

// store32 is a 4-byte store for run.
func store32(addr uint64, v uint32) memStore {
	return memStore{addr, binary.LittleEndian.AppendUint32(nil, v)}
}

// sys is "mov eax, nr; syscall": a 2-instruction block that loads the
// syscall registers and stops at the syscall. Re-executing it after a wake
// (RIP moved back by 2) runs the lone syscall instruction, which loads
// nothing: the registers are whatever the runtime left.
func sys(nr uint64, args ...uint64) op {
	o := op{kind: opSyscall, insns: 2}
	o.sys[0] = nr
	copy(o.sys[1:], args)
	return o
}

// ifChild is "test rax, rax; jz script".
func ifChild(script string) op { return op{kind: opIfChild, insns: 2, target: script} }

type script struct {
	name string
	ops  []op
}

// entry is what the fake CPU executes at one address.
type entry struct {
	op      *op
	addr    uint64
	insns   uint32
	next    uint64
	end     trace.End
	restart bool // the lone syscall instruction at the end of a syscall block
}

// ---------------------------------------------------------------------------
// The fake CPU.

type fakeCtx struct{ r cpu.Regs }

func (*fakeCtx) Free() {}

type fakeCPU struct {
	*mm.MemBackend
	regs       cpu.Regs
	code       map[uint64]*entry
	starts     map[string]uint64
	names      []string // script names by layout index
	ids        map[uint64]uint32
	blocks     *trace.BlockTable
	wantBlocks bool
	tid        uint32
	clock      int64
	buf        []trace.Event
	sink       func([]trace.Event)
}

func newFakeCPU(t *testing.T, scripts []script, wantBlocks bool) *fakeCPU {
	f := &fakeCPU{MemBackend: mm.NewMemBackend(), code: map[uint64]*entry{}, starts: map[string]uint64{},
		ids: map[uint64]uint32{}, blocks: trace.NewBlockTable(), wantBlocks: wantBlocks}
	for i, s := range scripts {
		base := uint64(fakeText + 0x1000*(i+1))
		f.starts[s.name] = base
		f.names = append(f.names, s.name)
		addr := base
		for j := range s.ops {
			o := &s.ops[j]
			size := uint64(o.insns) * insnBytes
			e := &entry{op: o, addr: addr, insns: o.insns, next: addr + size}
			switch o.kind {
			case opSyscall:
				e.end = trace.EndSyscall
				f.code[addr+size-insnBytes] = &entry{op: o, addr: addr + size - insnBytes, insns: 1,
					next: addr + size, end: trace.EndSyscall, restart: true}
			case opIfChild:
				e.end = trace.EndCond
			}
			f.code[addr] = e
			addr += size
		}
		if addr > base+0x1000 {
			t.Fatalf("script %s is longer than a page", s.name)
		}
	}
	for _, s := range scripts {
		for _, o := range s.ops {
			if o.kind == opIfChild {
				if _, ok := f.starts[o.target]; !ok {
					t.Fatalf("script %s: no script %q", s.name, o.target)
				}
			}
		}
	}
	return f
}

// where names an address as script+offset.
func (f *fakeCPU) where(addr uint64) string {
	if i := int((addr-fakeText)/0x1000) - 1; addr >= fakeText && i >= 0 && i < len(f.names) {
		return fmt.Sprintf("%s+%#x", f.names[i], addr-f.starts[f.names[i]])
	}
	return fmt.Sprintf("%#x", addr)
}

// Run executes blocks from pc like the engine: a Block event per block,
// stamped clock + instructions so far; it stops before a block that would
// exceed the budget (never before the first), after a syscall, or at an
// address without code.
func (f *fakeCPU) Run(pc, budget uint64) cpu.Stop {
	f.regs.RIP = pc
	var s cpu.Stop
	for {
		e := f.code[f.regs.RIP]
		if e == nil {
			s.Reason, s.FaultAddr, s.FaultAccess = cpu.StopFault, f.regs.RIP, cpu.FaultFetch
			return s
		}
		if budget > 0 && s.Insns > 0 && s.Insns+uint64(e.insns) > budget {
			s.Reason = cpu.StopQuantum
			return s
		}
		id := f.ids[e.addr]
		if id == 0 {
			id = f.blocks.Add(trace.BlockInfo{Addr: e.addr, Len: e.insns * insnBytes, Insns: e.insns, End: e.end})
			f.ids[e.addr] = id
		}
		if f.wantBlocks {
			f.buf = append(f.buf, trace.Event{Kind: trace.KindBlock, Tid: f.tid, Time: f.clock + int64(s.Insns),
				Addr: e.addr, Size: e.insns, Block: id, End: e.end})
		}
		s.Insns += uint64(e.insns)
		s.Blocks++
		f.regs.RIP = e.next
		switch o := e.op; o.kind {
		case opRun:
			for _, st := range o.stores {
				if err := f.WriteMem(st.addr, st.data); err != nil {
					s.Reason, s.FaultAddr, s.FaultAccess = cpu.StopFault, st.addr, cpu.FaultWrite
					return s
				}
			}
		case opIfChild:
			if f.regs.RAX == 0 {
				f.regs.RIP = f.starts[o.target]
			}
		case opSyscall:
			if !e.restart {
				r := &f.regs
				r.RAX, r.RDI, r.RSI, r.RDX, r.R10, r.R8, r.R9 = o.sys[0], o.sys[1], o.sys[2], o.sys[3], o.sys[4], o.sys[5], o.sys[6]
			}
			s.Reason = cpu.StopSyscall
			return s
		}
	}
}

func (f *fakeCPU) ReadRegs(r *cpu.Regs) error  { *r = f.regs; return nil }
func (f *fakeCPU) WriteRegs(r *cpu.Regs) error { f.regs = *r; return nil }
func (f *fakeCPU) PC() uint64                  { return f.regs.RIP }
func (f *fakeCPU) SP() uint64                  { return f.regs.RSP }
func (f *fakeCPU) SetFSBase(v uint64) error    { f.regs.FSBase = v; return nil }
func (f *fakeCPU) FSBase() uint64              { return f.regs.FSBase }
func (f *fakeCPU) NewContext() (cpu.Context, error) {
	return &fakeCtx{}, nil
}
func (f *fakeCPU) Save(c cpu.Context) error    { c.(*fakeCtx).r = f.regs; return nil }
func (f *fakeCPU) Restore(c cpu.Context) error { f.regs = c.(*fakeCtx).r; return nil }
func (f *fakeCPU) SetTid(tid uint32)           { f.tid = tid }
func (f *fakeCPU) SetSink(s func([]trace.Event)) {
	f.sink = s
}
func (f *fakeCPU) Emit(ev trace.Event) { f.buf = append(f.buf, ev) }

// Drain hands the buffer to the sink and starts a new one (the batch stays
// valid after the call, as with the engine's double buffering).
func (f *fakeCPU) Drain() {
	if len(f.buf) == 0 {
		return
	}
	b := f.buf
	f.buf = nil
	if f.sink != nil {
		f.sink(b)
	}
}
func (f *fakeCPU) SetClock(ns int64)                           { f.clock = ns }
func (f *fakeCPU) Blocks() *trace.BlockTable                   { return f.blocks }
func (f *fakeCPU) SetRDTSC(func(uint64) uint64)                {}
func (f *fakeCPU) FlushCode(addr, size uint64)                 {}
func (f *fakeCPU) Close()                                      {}
func (f *fakeCPU) ReadFPState(b *[cpu.FPStateSize]byte) error  { clear(b[:]); return nil }
func (f *fakeCPU) WriteFPState(b *[cpu.FPStateSize]byte) error { return nil }
func (f *fakeCPU) readData(addr uint64, n int) []byte {
	b := make([]byte, n)
	if err := f.ReadMem(addr, b); err != nil {
		panic(err)
	}
	return b
}

var _ cpu.CPU = (*fakeCPU)(nil)

// fakeELF is a static executable with no code of its own: an R-X segment
// covering the scripts (entry: the first script) and a zeroed RW page at
// fakeData.
func fakeELF() []byte {
	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
	const hdrs = 64 + 2*56
	w(elf.Header64{
		Ident:     [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)},
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(elf.EM_X86_64),
		Version:   uint32(elf.EV_CURRENT),
		Entry:     fakeText + 0x1000,
		Phoff:     64,
		Ehsize:    64,
		Phentsize: 56,
		Phnum:     2,
	})
	w(elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 0, Vaddr: fakeText, Paddr: fakeText,
		Filesz: hdrs, Memsz: 0x10000, Align: 0x1000})
	w(elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W), Off: 0, Vaddr: fakeData, Paddr: fakeData,
		Filesz: 0, Memsz: 0x1000, Align: 0x1000})
	return b.Bytes()
}

// recorder is an analysis that keeps every event.
type recorder struct {
	events   []trace.Event
	finished int
}

func (r *recorder) Events(b []trace.Event) { r.events = append(r.events, b...) }
func (r *recorder) Finish()                { r.finished++ }

// runScripts loads the scripts as a process (the first script is the main
// thread) and runs it with every thread, block and syscall event recorded.
func runScripts(t *testing.T, scripts []script, edit func(*Config)) (*Result, []trace.Event, *fakeCPU) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, fakeELF(), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg := Config{Program: path, Args: []string{"prog"}, Stdout: io.Discard, Stderr: io.Discard,
		Analyses: []trace.Analysis{rec},
		Needs:    trace.Needs{Wants: trace.Wants{Blocks: true, Syscalls: true, Threads: true}}}
	if edit != nil {
		edit(&cfg)
	}
	f := newFakeCPU(t, scripts, cfg.Needs.Blocks)
	p, err := Load(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run()
	if res.Partial {
		t.Fatalf("run ended early: %s\n%s", res.Reason, strings.Join(res.Report, "\n"))
	}
	if rec.finished != 1 {
		t.Fatalf("Finish called %d times", rec.finished)
	}
	return res, rec.events, f
}

// describe renders an event with the fields its kind uses; any other field
// that is set is shown too, so that stray payload fails the comparison.
func (f *fakeCPU) describe(e trace.Event) string {
	var s string
	used := map[string]bool{}
	switch e.Kind {
	case trace.KindBlock:
		s = fmt.Sprintf("block %s +%d", f.where(e.Addr), e.Size)
		used["addr"], used["size"], used["block"], used["end"] = true, true, true, true
		if bi := f.blocks.View().Get(e.Block); bi == nil || bi.Addr != e.Addr || bi.Insns != e.Size || bi.End != e.End {
			s += fmt.Sprintf(" (block id %d does not match %+v)", e.Block, bi)
		}
	case trace.KindSyscall:
		s = fmt.Sprintf("syscall %s = %d", syscalls.Name(e.Addr), int64(e.Aux))
		used["addr"], used["aux"] = true, true
	case trace.KindKernelRead, trace.KindKernelWrite:
		s = fmt.Sprintf("%v %#x +%d", e.Kind, e.Addr, e.Size)
		used["addr"], used["size"] = true, true
	case trace.KindThreadStart:
		s = fmt.Sprintf("start parent %d", e.Aux)
		used["aux"] = true
	case trace.KindThreadExit:
		s = fmt.Sprintf("exit %d", e.Aux)
		used["aux"] = true
	case trace.KindSwitch:
		s = fmt.Sprintf("switch from %d", e.Aux)
		used["aux"] = true
	case trace.KindBlockOn:
		s = fmt.Sprintf("block-on %v %#x", trace.WaitKind(e.Size), e.Addr)
		used["addr"], used["size"] = true, true
	case trace.KindWake:
		s = fmt.Sprintf("wake %v %#x by %d", trace.WaitKind(e.Size), e.Addr, e.Aux)
		used["addr"], used["size"], used["aux"] = true, true, true
	default:
		s = e.Kind.String()
	}
	extra := func(name string, v uint64) {
		if v != 0 && !used[name] {
			s += fmt.Sprintf(" %s=%#x", name, v)
		}
	}
	extra("addr", e.Addr)
	extra("aux", e.Aux)
	extra("size", uint64(e.Size))
	extra("block", uint64(e.Block))
	extra("end", uint64(e.End))
	extra("flags", uint64(e.Flags))
	return fmt.Sprintf("%d @%d %s", e.Tid, e.Time, s)
}

// checkStream compares the recorded stream with the expected one, line by
// line, and checks invariants whatever the scenario: a thread's events never
// go back in time, a thread has no event between a BlockOn and its Wake, and
// every thread starts once and exits once (the runs end normally).
func checkStream(t *testing.T, f *fakeCPU, events []trace.Event, want []string) {
	t.Helper()
	got := make([]string, len(events))
	for i, e := range events {
		got[i] = f.describe(e)
	}
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			var b strings.Builder
			for j := range max(len(got), len(want)) {
				mark := "  "
				if j == i {
					mark = "> "
				}
				var gj, wj string
				if j < len(got) {
					gj = got[j]
				}
				if j < len(want) {
					wj = want[j]
				}
				fmt.Fprintf(&b, "%s%3d  %-40s | %s\n", mark, j+1, gj, wj)
			}
			t.Fatalf("event %d: got %q, want %q\n     got%38s | want\n%s", i+1, g, w, "", b.String())
		}
	}
	last := map[uint32]int64{}
	blocked := map[uint32]bool{}
	starts, exits := map[uint32]int{}, map[uint32]int{}
	for i, e := range events {
		if tm, ok := last[e.Tid]; ok && e.Time < tm {
			t.Errorf("event %d (%s): thread %d goes back in time from %d", i+1, got[i], e.Tid, tm)
		}
		last[e.Tid] = e.Time
		switch {
		case e.Kind == trace.KindBlockOn:
			blocked[e.Tid] = true
		case e.Kind == trace.KindWake:
			if !blocked[e.Tid] {
				t.Errorf("event %d (%s): wake of a thread that is not blocked", i+1, got[i])
			}
			blocked[e.Tid] = false
		case blocked[e.Tid] && e.Kind != trace.KindThreadExit:
			t.Errorf("event %d (%s): thread %d is blocked", i+1, got[i], e.Tid)
		}
		switch e.Kind {
		case trace.KindThreadStart:
			starts[e.Tid]++
		case trace.KindThreadExit:
			exits[e.Tid]++
		}
	}
	for tid, n := range starts {
		if n != 1 || exits[tid] != 1 {
			t.Errorf("thread %d: %d starts, %d exits", tid, n, exits[tid])
		}
	}
}

// Linux values used by the scripts.
const (
	sysRead           = 0
	sysWrite          = 1
	sysNanosleep      = 35
	sysClone          = 56
	sysExit           = 60
	sysClockNanosleep = 230
	sysExitGroup      = 231
	sysPipe2          = 293

	futexWaitPrivate = futexWait | futexPrivate
	futexWakePrivate = futexWake | futexPrivate

	// pthread_create's flags, less CLONE_SETTLS and the tid stores.
	threadFlags = cloneVM | 0x200 /* FS */ | 0x400 /* FILES */ | 0x800 /* SIGHAND */ | cloneThread | 0x40000 /* SYSVSEM */

	clockMonotonic = 1
	timerAbstime   = 1
)

// Guest data addresses.
const (
	mutexWord = fakeData + 0x00
	condWord  = fakeData + 0x10
	tidWord   = fakeData + 0x20
	fdsAddr   = fakeData + 0x30
	bufAddr   = fakeData + 0x40
	srcAddr   = fakeData + 0x60
	tsAddr    = fakeData + 0x80
	ts2Addr   = fakeData + 0x90
	stack1    = fakeData + 0xc00
	stack2    = fakeData + 0xe00
)

// Mutex hand-off: A holds the lock and starts B; B marks it contended and
// waits on the futex; A unlocks and wakes it. The Wake is B's, emitted
// during A's futex call (before A's Syscall event), stamped with A's clock
// (B's new clock), with waker A; B's futex returns 0 when it resumes, at
// that time, and B's later events are later.
func TestStreamMutexHandoff(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10, store32(mutexWord, 1)),               // +0x00 lock
			sys(sysClone, threadFlags, stack1),           // +0x14
			ifChild("B"),                                 // +0x18
			run(100),                                     // +0x1c critical section
			run(1, store32(mutexWord, 0)),                // +0xe4 unlock: was 2, so wake
			sys(nrFutex, mutexWord, futexWakePrivate, 1), // +0xe6
			sys(sysExit, 0),                              // +0xea
		}},
		{"B", []op{
			run(5, store32(mutexWord, 2)),                   // +0x0 contended
			sys(nrFutex, mutexWord, futexWaitPrivate, 2, 0), // +0xa
			run(7, store32(mutexWord, 1)),                   // +0xe acquired
			sys(sysExit, 0),                                 // +0x1c
		}},
	}
	res, events, f := runScripts(t, scripts, nil)
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		// Equal clocks: the thread with less CPU work first.
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block B+0x0 +5",
		"1001 @19 block B+0xa +2",
		"1001 @21 block-on futex 0x600000",
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +100",
		"1000 @114 block main+0xe4 +1",
		"1000 @115 block main+0xe6 +2",
		"1001 @117 wake futex 0x600000 by 1000",
		"1000 @117 syscall futex = 1",
		"1001 @117 switch from 1000",
		"1001 @117 syscall futex = 0",
		"1001 @117 block B+0xe +7",
		"1001 @124 block B+0x1c +2",
		"1001 @126 syscall exit = 0",
		"1001 @126 exit 0",
		"1000 @117 switch from 1001",
		"1000 @117 block main+0xea +2",
		"1000 @119 syscall exit = 0",
		"1000 @119 exit 0",
	})
	if res.ExitStatus != 0 || res.Makespan != 126 {
		t.Errorf("exit status %d, makespan %d; want 0, 126", res.ExitStatus, res.Makespan)
	}
	if got := binary.LittleEndian.Uint32(f.readData(mutexWord, 4)); got != 1 {
		t.Errorf("mutex word %d, want 1 (held by B when it exited)", got)
	}
}

// Condition variable: two waiters block on the condition word; the
// broadcaster stores the new value and wakes them all (one Wake each, in
// arrival order, both by the broadcaster at its clock, then its Syscall
// with the count). A later wait with the stale value fails with EAGAIN
// without blocking: no BlockOn, no Wake.
func TestStreamCondvarBroadcast(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10),                            // +0x00
			sys(sysClone, threadFlags, stack1), // +0x14
			ifChild("waiter"),                  // +0x18
			sys(sysClone, threadFlags, stack2), // +0x1c
			ifChild("waiter"),                  // +0x20
			run(50, store32(condWord, 1)),      // +0x24
			sys(nrFutex, condWord, futexWakePrivate, 0x7fffffff), // +0x88
			sys(sysExit, 0), // +0x8c
		}},
		{"waiter", []op{
			run(4), // +0x0
			sys(nrFutex, condWord, futexWaitPrivate, 0, 0), // +0x8
			sys(nrFutex, condWord, futexWaitPrivate, 0, 0), // +0xc stale value
			run(3),          // +0x10
			sys(sysExit, 5), // +0x16
		}},
	}
	res, events, f := runScripts(t, scripts, nil)
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block waiter+0x0 +4",
		"1001 @18 block waiter+0x8 +2",
		"1001 @20 block-on futex 0x600010",
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +2",
		"1002 @16 start parent 1000",
		"1000 @16 syscall clone = 1002",
		"1002 @16 switch from 1000",
		"1002 @16 block main+0x20 +2",
		"1002 @18 block waiter+0x0 +4",
		"1002 @22 block waiter+0x8 +2",
		"1002 @24 block-on futex 0x600010",
		"1000 @16 switch from 1002",
		"1000 @16 block main+0x20 +2",
		"1000 @18 block main+0x24 +50",
		"1000 @68 block main+0x88 +2",
		"1001 @70 wake futex 0x600010 by 1000",
		"1002 @70 wake futex 0x600010 by 1000",
		"1000 @70 syscall futex = 2",
		// Three threads at 70: the waiters have done less work.
		"1001 @70 switch from 1000",
		"1001 @70 syscall futex = 0",
		"1001 @70 block waiter+0xc +2",
		"1001 @72 syscall futex = -11",
		"1002 @70 switch from 1001",
		"1002 @70 syscall futex = 0",
		"1002 @70 block waiter+0xc +2",
		"1002 @72 syscall futex = -11",
		"1000 @70 switch from 1002",
		"1000 @70 block main+0x8c +2",
		"1000 @72 syscall exit = 0",
		"1000 @72 exit 0",
		"1001 @72 switch from 1000",
		"1001 @72 block waiter+0x10 +3",
		"1001 @75 block waiter+0x16 +2",
		"1001 @77 syscall exit = 5",
		"1001 @77 exit 5",
		"1002 @72 switch from 1001",
		"1002 @72 block waiter+0x10 +3",
		"1002 @75 block waiter+0x16 +2",
		"1002 @77 syscall exit = 5",
		"1002 @77 exit 5",
	})
	if res.ExitStatus != 5 || res.Makespan != 77 {
		t.Errorf("exit status %d, makespan %d; want 5, 77", res.ExitStatus, res.Makespan)
	}
}

// Join: pthread_join waits on the tid word that CLONE_PARENT_SETTID filled
// and CLONE_CHILD_CLEARTID clears when the child exits. The child's exit
// clears the word and wakes the joiner (waker: the child, at its final
// clock) before the child's ThreadExit, as Linux does (mm_release runs
// before exit_notify): the waker is still alive when it wakes. The join is
// a futex wait on the tid word (kind futex, not join): nothing tells the
// runtime that the word is a thread's. A small
// quantum lets the joiner block before the child is done. exit_group ends
// the process and the thread that called it.
func TestStreamJoin(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10), // +0x00
			sys(sysClone, threadFlags|cloneParentSettid|cloneChildCleartid, stack1, tidWord, tidWord), // +0x14
			ifChild("child"), // +0x18
			run(20),          // +0x1c
			sys(nrFutex, tidWord, futexWait, 1001, 0), // +0x44 pthread_join
			run(6),               // +0x48
			sys(sysExitGroup, 3), // +0x54
		}},
		{"child", []op{
			run(40),         // +0x00
			run(40),         // +0x50
			run(40),         // +0xa0
			sys(sysExit, 7), // +0xf0
		}},
	}
	res, events, f := runScripts(t, scripts, func(c *Config) { c.Quantum = 50 })
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		// Alone: no quantum.
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block child+0x0 +40",
		// 42 + 40 > 50: preempted.
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +20",
		"1000 @34 block main+0x44 +2",
		"1000 @36 block-on futex 0x600020",
		"1001 @54 switch from 1000",
		"1001 @54 block child+0x50 +40",
		"1001 @94 block child+0xa0 +40",
		"1001 @134 block child+0xf0 +2",
		"1001 @136 syscall exit = 7",
		"1000 @136 wake futex 0x600020 by 1001",
		"1001 @136 exit 7",
		"1000 @136 switch from 1001",
		"1000 @136 syscall futex = 0",
		"1000 @136 block main+0x48 +6",
		"1000 @142 block main+0x54 +2",
		"1000 @144 syscall exit_group = 3",
		"1000 @144 exit 3",
	})
	if res.ExitStatus != 3 || res.Makespan != 144 {
		t.Errorf("exit status %d, makespan %d; want 3, 144", res.ExitStatus, res.Makespan)
	}
	if got := binary.LittleEndian.Uint32(f.readData(tidWord, 4)); got != 0 {
		t.Errorf("tid word %d after the child's exit, want 0", got)
	}
}

// Sleep: nanosleep and an absolute clock_nanosleep block with kind sleep and
// are woken by no thread (waker 0) exactly at their deadlines, while another
// thread computes in quanta: the Wake comes at the first scheduling
// decision after the spinner's clock passes the deadline, stamped with the
// deadline, and the sleeper's Syscall (result 0) follows when it resumes.
func TestStreamSleep(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10, storeTimespec(tsAddr, 0, 1000), storeTimespec(ts2Addr, 1, 3000)), // +0x00
			sys(sysClone, threadFlags, stack1),                                       // +0x14
			ifChild("spin"),                                                          // +0x18
			sys(sysNanosleep, tsAddr, 0),                                             // +0x1c 1000 ns
			run(5),                                                                   // +0x20
			// CLOCK_MONOTONIC reads MonotonicOffset (1 s) at virtual time 0.
			sys(sysClockNanosleep, clockMonotonic, timerAbstime, ts2Addr, 0), // +0x2a
			sys(sysExitGroup, 0), // +0x2e
		}},
		{"spin", []op{
			run(400), run(400), run(400), run(400), run(400), // +0x0, +0x320, +0x640, +0x960, +0xc80
			sys(sysExit, 0), // +0xfa0
		}},
	}
	res, events, f := runScripts(t, scripts, func(c *Config) { c.Quantum = 500 })
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block spin+0x0 +400",
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +2",
		"1000 @16 block-on sleep 0x0",
		"1001 @414 switch from 1000",
		"1001 @414 block spin+0x320 +400",
		"1001 @814 block spin+0x640 +400",
		// The spinner is at 1214, past the deadline 16 + 1000.
		"1000 @1016 wake sleep 0x0 by 0",
		"1000 @1016 switch from 1001",
		"1000 @1016 syscall nanosleep = 0",
		"1000 @1016 block main+0x20 +5",
		"1000 @1021 block main+0x2a +2",
		"1000 @1023 block-on sleep 0x0",
		"1001 @1214 switch from 1000",
		"1001 @1214 block spin+0x960 +400",
		"1001 @1614 block spin+0xc80 +400",
		"1001 @2014 block spin+0xfa0 +2",
		"1001 @2016 syscall exit = 0",
		"1001 @2016 exit 0",
		// Nobody is left to run: the timer fires.
		"1000 @3000 wake sleep 0x0 by 0",
		"1000 @3000 switch from 1001",
		"1000 @3000 syscall clock_nanosleep = 0",
		"1000 @3000 block main+0x2e +2",
		"1000 @3002 syscall exit_group = 0",
		"1000 @3002 exit 0",
	})
	if res.ExitStatus != 0 || res.Makespan != 3002 {
		t.Errorf("exit status %d, makespan %d; want 0, 3002", res.ExitStatus, res.Makespan)
	}
}

// Pipe: the reader blocks on the empty pipe (kind read, the pipe's inode);
// the writer's write wakes it (waker: the writer, at its clock) during the
// call, and the reader re-executes its read, which now returns the bytes.
// Kernel accesses are in the stream too: the pipe2 fds, the writer's load
// of its buffer and the reader's store.
func TestStreamPipe(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10),                            // +0x00
			sys(sysPipe2, fdsAddr, 0),          // +0x14 fds 3 and 4
			run(4),                             // +0x18
			sys(sysClone, threadFlags, stack1), // +0x20
			ifChild("writer"),                  // +0x24
			sys(sysRead, 3, bufAddr, 16),       // +0x28 (the syscall at +0x2a)
			run(8),                             // +0x2c
			sys(sysExitGroup, 0),               // +0x3c
		}},
		{"writer", []op{
			run(15, memStore{srcAddr, []byte("hello")}), // +0x00
			run(15),                      // +0x1e
			sys(sysWrite, 4, srcAddr, 5), // +0x3c
			sys(sysExit, 0),              // +0x40
		}},
	}
	res, events, f := runScripts(t, scripts, func(c *Config) {
		c.Quantum = 20
		c.Needs.KernelMem = true
	})
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1000 @12 kwrite 0x600030 +8",
		"1000 @12 syscall pipe2 = 0",
		"1000 @12 block main+0x18 +4",
		"1000 @16 block main+0x20 +2",
		"1001 @18 start parent 1000",
		"1000 @18 syscall clone = 1001",
		"1001 @18 switch from 1000",
		"1001 @18 block main+0x24 +2",
		"1001 @20 block writer+0x0 +15",
		"1000 @18 switch from 1001",
		"1000 @18 block main+0x24 +2",
		"1000 @20 block main+0x28 +2",
		"1000 @22 block-on read 0x64",
		"1001 @35 switch from 1000",
		"1001 @35 block writer+0x1e +15",
		"1001 @50 block writer+0x3c +2",
		"1000 @52 wake read 0x64 by 1001",
		"1001 @52 kread 0x600060 +5",
		"1001 @52 syscall write = 5",
		"1000 @52 switch from 1001",
		// The read is re-executed: the lone syscall instruction.
		"1000 @52 block main+0x2a +1",
		"1000 @53 kwrite 0x600040 +5",
		"1000 @53 syscall read = 5",
		"1001 @52 switch from 1000",
		"1001 @52 block writer+0x40 +2",
		"1001 @54 syscall exit = 0",
		"1001 @54 exit 0",
		"1000 @53 switch from 1001",
		"1000 @53 block main+0x2c +8",
		"1000 @61 block main+0x3c +2",
		"1000 @63 syscall exit_group = 0",
		"1000 @63 exit 0",
	})
	if res.ExitStatus != 0 || res.Makespan != 63 {
		t.Errorf("exit status %d, makespan %d; want 0, 63", res.ExitStatus, res.Makespan)
	}
	if got := string(f.readData(bufAddr, 6)); got != "hello\x00" {
		t.Errorf("read %q, want hello", got)
	}
}

// exit_group ends every thread: each gets its ThreadExit with the group's
// status, in tid order, at its own clock; a thread killed while blocked
// gets no Wake.
func TestStreamExitGroupEndsAllThreads(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10),                            // +0x00
			sys(sysClone, threadFlags, stack1), // +0x14
			ifChild("blocked"),                 // +0x18
			sys(sysClone, threadFlags, stack2), // +0x1c
			ifChild("runner"),                  // +0x20
			run(30),                            // +0x24
			sys(sysExitGroup, 9),               // +0x60
		}},
		{"blocked", []op{
			sys(nrFutex, condWord, futexWaitPrivate, 0, 0), // +0x0, forever
		}},
		{"runner", []op{
			run(3), // +0x0
			sys(nrFutex, condWord, futexWakePrivate, 0), // +0x6 wakes nobody
			run(100), // +0xa
		}},
	}
	res, events, f := runScripts(t, scripts, nil)
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block blocked+0x0 +2",
		"1001 @16 block-on futex 0x600010",
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +2",
		"1002 @16 start parent 1000",
		"1000 @16 syscall clone = 1002",
		"1002 @16 switch from 1000",
		"1002 @16 block main+0x20 +2",
		"1002 @18 block runner+0x0 +3",
		"1002 @21 block runner+0x6 +2",
		"1002 @23 syscall futex = 0",
		"1000 @16 switch from 1002",
		"1000 @16 block main+0x20 +2",
		"1000 @18 block main+0x24 +30",
		"1000 @48 block main+0x60 +2",
		"1000 @50 syscall exit_group = 9",
		"1000 @50 exit 9",
		"1001 @16 exit 9",
		"1002 @23 exit 9",
	})
	if res.ExitStatus != 9 {
		t.Errorf("exit status %d, want 9", res.ExitStatus)
	}
}

// A woken thread's clock never goes back: a waiter that blocked later in
// virtual time than its waker's clock is woken at its own clock.
func TestStreamWakeKeepsLaterClock(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10),                            // +0x00
			sys(sysClone, threadFlags, stack1), // +0x14
			ifChild("B"),                       // +0x18
			run(60, store32(condWord, 1)),      // +0x1c
			sys(nrFutex, condWord, futexWakePrivate, 1), // +0x94
			sys(sysExit, 0), // +0x98
		}},
		{"B", []op{
			run(300), // +0x0
			sys(nrFutex, condWord, futexWaitPrivate, 0, 0), // +0x258
			sys(sysExit, 0), // +0x25c
		}},
	}
	_, events, f := runScripts(t, scripts, nil)
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block B+0x0 +300",
		"1001 @314 block B+0x258 +2",
		"1001 @316 block-on futex 0x600010",
		"1000 @12 switch from 1001",
		"1000 @12 block main+0x18 +2",
		"1000 @14 block main+0x1c +60",
		"1000 @74 block main+0x94 +2",
		"1001 @316 wake futex 0x600010 by 1000",
		"1000 @76 syscall futex = 1",
		"1000 @76 block main+0x98 +2",
		"1000 @78 syscall exit = 0",
		"1000 @78 exit 0",
		"1001 @316 switch from 1000",
		"1001 @316 syscall futex = 0",
		"1001 @316 block B+0x25c +2",
		"1001 @318 syscall exit = 0",
		"1001 @318 exit 0",
	})
}

// With one virtual CPU a thread waits for the CPU: its Switch carries its
// clock, but its blocks are stamped from when the CPU is free (the run
// loop's SetClock(StartTime)), as its clock then says.
func TestStreamOneCPU(t *testing.T) {
	scripts := []script{
		{"main", []op{
			run(10),                            // +0x00
			sys(sysClone, threadFlags, stack1), // +0x14
			ifChild("B"),                       // +0x18
			run(60),                            // +0x1c
			run(60, store32(condWord, 1)),      // +0x94
			sys(nrFutex, condWord, futexWakePrivate, 1), // +0x10c
			sys(sysExit, 0), // +0x110
		}},
		{"B", []op{
			run(30), // +0x0
			sys(nrFutex, condWord, futexWaitPrivate, 0, 0), // +0x3c
			run(5),          // +0x40
			sys(sysExit, 0), // +0x4a
		}},
	}
	res, events, f := runScripts(t, scripts, func(c *Config) { c.CPUs, c.Quantum = 1, 100 })
	checkStream(t, f, events, []string{
		"1000 @0 start parent 0",
		"1000 @0 switch from 0",
		"1000 @0 block main+0x0 +10",
		"1000 @10 block main+0x14 +2",
		"1001 @12 start parent 1000",
		"1000 @12 syscall clone = 1001",
		"1001 @12 switch from 1000",
		"1001 @12 block main+0x18 +2",
		"1001 @14 block B+0x0 +30",
		"1001 @44 block B+0x3c +2",
		"1001 @46 block-on futex 0x600010",
		"1000 @12 switch from 1001",
		// B held the CPU until 46.
		"1000 @46 block main+0x18 +2",
		"1000 @48 block main+0x1c +60",
		"1000 @108 block main+0x94 +60",
		"1000 @168 block main+0x10c +2",
		"1001 @170 wake futex 0x600010 by 1000",
		"1000 @170 syscall futex = 1",
		"1001 @170 switch from 1000",
		"1001 @170 syscall futex = 0",
		"1001 @170 block B+0x40 +5",
		"1001 @175 block B+0x4a +2",
		"1001 @177 syscall exit = 0",
		"1001 @177 exit 0",
		"1000 @170 switch from 1001",
		"1000 @177 block main+0x110 +2",
		"1000 @179 syscall exit = 0",
		"1000 @179 exit 0",
	})
	if res.Makespan != 179 {
		t.Errorf("makespan %d, want 179", res.Makespan)
	}
}

// storeTimespec is a struct timespec store for run.
func storeTimespec(addr uint64, sec, nsec int64) memStore {
	b := binary.LittleEndian.AppendUint64(nil, uint64(sec))
	return memStore{addr, binary.LittleEndian.AppendUint64(b, uint64(nsec))}
}
