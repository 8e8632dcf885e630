// Package emu is emuprof's own binding of libunicorn (Unicorn 2.0.x C API)
// for x86-64: guest memory, register contexts, the run loop and the hooks.
// It is the only package that uses cgo. Per-event hooks (blocks, memory
// accesses) are C functions in hooks.c that append trace.Event records to
// a buffer; Go drains the buffer in batches, so no guest event costs a cgo
// round trip. Go is called back only once per distinct block (to decode it)
// and when the buffer fills up.
package emu

/*
#cgo darwin CFLAGS: -I/opt/homebrew/include -I/usr/local/include
#include <stdlib.h>
#include "hooks.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"slices"
	"sync"
	"unsafe"

	"emuprof/cpu"
	"emuprof/decode"
	"emuprof/mm"
	"emuprof/trace"
)

// Registers, in the order of cpu.Regs' fields.
var regIDs = [...]C.int{
	C.UC_X86_REG_RAX, C.UC_X86_REG_RBX, C.UC_X86_REG_RCX, C.UC_X86_REG_RDX,
	C.UC_X86_REG_RSI, C.UC_X86_REG_RDI, C.UC_X86_REG_RBP, C.UC_X86_REG_RSP,
	C.UC_X86_REG_R8, C.UC_X86_REG_R9, C.UC_X86_REG_R10, C.UC_X86_REG_R11,
	C.UC_X86_REG_R12, C.UC_X86_REG_R13, C.UC_X86_REG_R14, C.UC_X86_REG_R15,
	C.UC_X86_REG_RIP, C.UC_X86_REG_EFLAGS, C.UC_X86_REG_FS_BASE, C.UC_X86_REG_GS_BASE,
}

// Options configure an engine.
type Options struct {
	BufferEvents int  // event buffer capacity (default 1<<16 with Memory, else 1<<12)
	Memory       bool // install the memory-access hooks
	Blocks       bool // emit Block events
	StackPointer bool // fill Block events' Aux with RSP
	// Replay lets the block hook stop making events while a thread's
	// blocks repeat a period whose events repeat, and write them when the
	// repetition ends: the same events in the same order, a hook that
	// only counts meanwhile (hooks.c). Not with Memory or Speedup.
	Replay bool
	// Bare installs no block hook: no instruction counting, no quanta, no
	// virtual time. Only for measuring the engine's own speed (the floor).
	Bare bool
	// NsPerInsn is the virtual cost of one instruction (default 1), for
	// the time stamps of events.
	NsPerInsn int64
	// Symbols names blocks when they are first translated (may be nil);
	// Lines also looks up each block's file:line.
	Symbols trace.Symbols
	Lines   bool
	// Speedup, when not nil, gives the percentage (0 to 100) by which the
	// instruction at an address is sped up: it costs that much less virtual
	// time (emuprof run --speedup). It is asked once per instruction when
	// its block is first translated. Instruction counts (quanta, --stats,
	// --max-insns) are unchanged.
	Speedup func(addr uint64) int
	// Encoding is how the events may be shortened (trace.Encoding says
	// what each encoding does to them). RepeatEvents needs Replay; the
	// engine ignores CallMarks (the call-tracking stage's, in Go).
	// BlockFilter is asked once per block when it is first translated; a
	// block it refuses still counts for quanta and virtual time.
	trace.Encoding
}

// Engine is one Unicorn instance running one guest process.
type Engine struct {
	uc     *C.uc_engine
	st     *C.struct_emu_state
	handle cgo.Handle
	sink   func([]trace.Event)
	events []trace.Event // view of the C buffer

	blocks *trace.BlockTable
	syms   trace.Symbols
	lines  bool

	speedup  func(uint64) int
	filter   func(*trace.BlockInfo) bool
	fold     func(*trace.BlockInfo) bool
	cycles   func(*trace.BlockInfo) bool
	runKeys  map[runKey]uint32 // Options.Fold's keys: routine and line of foldable blocks
	runLines bool              // the keys have lines (not Options.FoldRoutines)
	repeats  func(*trace.BlockInfo) bool
	rings    map[uint32]ring // Options.Repeats: the threads' rings but the running one's
	starts   []uint32        // instruction offsets of the block being translated

	rdtsc func(uint64) uint64
	// patched maps the address of each instruction the guest executes that
	// was overwritten with a syscall instruction (rdtsc, rdtscp, and the
	// x87 instructions of x87.go) to what Run must do there instead.
	patched   map[uint64]patchKind
	flush     []uint64 // pages whose translations must be dropped before resuming
	codePages map[uint64]bool
	memEvents bool // the memory hooks are installed: record reads done in Go too
	scratch   []byte
	failure   error      // error raised inside a callback
	closeMu   sync.Mutex // Stop may race with Close (Ctrl-C at the end of a run)
	loanMu    sync.Mutex // guards mem.loans and mem.closed: other engines end their loans
	mem       hostMem    // the guest memory's regions and host memory (hostmem.go)
	touch     func(addr, size uint64) bool
}

// checkEventLayout compares struct emu_event (sizes, field offsets, kind
// codes) with trace.Event: a mismatch would make every batch garbage.
func checkEventLayout() error {
	var c [12]C.uint64_t
	C.emu_event_layout(&c[0])
	var ev trace.Event
	goSide := [12]uint64{uint64(unsafe.Sizeof(ev)), uint64(unsafe.Offsetof(ev.Aux)), uint64(unsafe.Offsetof(ev.Time)),
		uint64(unsafe.Offsetof(ev.Size)), uint64(unsafe.Offsetof(ev.Tid)), uint64(unsafe.Offsetof(ev.Block)),
		uint64(unsafe.Offsetof(ev.Kind)), uint64(unsafe.Offsetof(ev.End)), uint64(trace.KindRead),
		uint64(trace.KindWrite)<<8 | uint64(trace.KindBlock), uint64(trace.EndCond)<<16 | uint64(trace.EndJump)<<8 | uint64(trace.EndOther),
		uint64(unsafe.Offsetof(ev.Folded))}
	for i := range c {
		if uint64(c[i]) != goSide[i] {
			return fmt.Errorf("emu: struct emu_event and trace.Event differ (item %d: C %d, Go %d)", i, uint64(c[i]), goSide[i])
		}
	}
	if C.FLAG_REPEAT != int(trace.FlagRepeat) {
		return fmt.Errorf("emu: FLAG_REPEAT is %d in C, trace.FlagRepeat %d", C.FLAG_REPEAT, trace.FlagRepeat)
	}
	return nil
}

// ucErrf is ucErr with the operation formatted from format, a and b only
// when it failed (no boxing, no allocation on success): the memory
// accessors run for every kernel access to guest memory.
func ucErrf(e C.uc_err, format string, a, b uint64) error {
	if e == C.UC_ERR_OK {
		return nil
	}
	return fmt.Errorf("%s: %s", fmt.Sprintf(format, a, b), C.GoString(C.uc_strerror(e)))
}

func ucErr(op string, e C.uc_err) error {
	if e == C.UC_ERR_OK {
		return nil
	}
	return fmt.Errorf("%s: %s", op, C.GoString(C.uc_strerror(e)))
}

// New opens an x86-64 engine.
func New(opts Options) (*Engine, error) {
	if err := loadUnicorn(); err != nil {
		return nil, err
	}
	if err := checkEventLayout(); err != nil {
		return nil, err
	}
	if opts.BufferEvents <= 0 {
		// Block events alone come ten times fewer than memory events:
		// a 160 KB buffer stays in the host's L2 cache and costs a few
		// page faults, where 2.5 MB cost about 600 on every run (6 % of
		// `parallel` on a 0.1 s guest). Memory tracing keeps the large
		// one (the same speed either way on qsort and mallocstress).
		opts.BufferEvents = 1 << 12
		if opts.Memory {
			opts.BufferEvents = 1 << 16
		}
	}
	e := &Engine{patched: map[uint64]patchKind{}, codePages: map[uint64]bool{},
		blocks: trace.NewBlockTable(), syms: opts.Symbols, lines: opts.Lines, speedup: opts.Speedup, filter: opts.BlockFilter,
		fold: opts.Fold, cycles: opts.FoldCycles, runKeys: map[runKey]uint32{}, runLines: !opts.FoldRoutines,
		repeats: opts.Repeats, rings: map[uint32]ring{}}
	if err := ucErr("uc_open", C.uc_open(C.UC_ARCH_X86, C.UC_MODE_64, &e.uc)); err != nil {
		return nil, err
	}
	// Linux starts processes with the x87 in extended precision, all
	// exceptions masked (FCW 0x37f), and SSE likewise (MXCSR 0x1f80);
	// Unicorn's reset state has single precision, which breaks long double.
	if err := e.setReg(C.UC_X86_REG_FPCW, 0x37f); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.setReg(C.UC_X86_REG_MXCSR, 0x1f80); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.linuxControlRegisters(); err != nil {
		e.Close()
		return nil, err
	}
	e.handle = cgo.NewHandle(e)
	e.st = C.emu_state_new(e.uc, C.uintptr_t(e.handle), C.uint32_t(opts.BufferEvents))
	if e.st == nil {
		e.Close()
		return nil, errors.New("emu: out of memory")
	}
	e.events = unsafe.Slice((*trace.Event)(unsafe.Pointer(e.st.buf)), opts.BufferEvents)
	if opts.Blocks {
		e.st.want_blocks = 1
	}
	if opts.StackPointer {
		e.st.want_sp = 1
		e.st.rsp = C.emu_rsp_slot(e.uc)
	}
	if opts.FoldMemory {
		e.st.fold_mem = 1
	}
	if opts.MergeMemory {
		e.st.mem_merge = 1
	}
	if opts.Memory {
		e.st.eager_time = 1
	}
	if opts.Repeats != nil {
		e.st.want_repeat = 1
	}
	// Replay needs every event to be a block's, and a period's time to
	// be a whole number of ns (hooks.c).
	if opts.Replay && opts.Blocks && !opts.Memory && opts.Speedup == nil {
		if C.emu_replay_init(e.st) == 0 {
			e.Close()
			return nil, errors.New("emu: out of memory")
		}
		if opts.RepeatEvents {
			e.st.repeat_events = 1
		}
	}
	if opts.NsPerInsn > 0 {
		e.st.ns_per_insn = C.int64_t(opts.NsPerInsn)
	}
	bare := C.int(0)
	if opts.Bare {
		bare = 1
	}
	if err := ucErr("installing hooks", C.emu_install_base(e.st, bare)); err != nil {
		e.Close()
		return nil, err
	}
	if opts.Memory {
		if err := ucErr("installing memory hooks", C.emu_install_mem(e.st)); err != nil {
			e.Close()
			return nil, err
		}
		e.memEvents = true
	}
	return e, nil
}

// Control register bits Linux sets for every x86-64 process (arch/x86:
// cr4_init, fpu__init_cpu_generic).
const (
	cr0MP         = 1 << 1  // monitor coprocessor: wait/fwait honour TS
	cr0EM         = 1 << 2  // x87 emulation: must be clear or every x87 op traps
	cr0TS         = 1 << 3  // task switched: clear, the FPU state is live
	cr0NE         = 1 << 5  // native x87 error reporting
	cr4OSFXSR     = 1 << 9  // fxsave/fxrstor include XMM0-15 and MXCSR
	cr4OSXMMEXCPT = 1 << 10 // unmasked SSE exceptions raise #XM (SIGFPE), not #UD
)

// linuxControlRegisters gives the CPU the control state a Linux process
// runs under. Unicorn 2.0.1 resets CR4 to 0, and QEMU's fxsave/fxrstor then
// skip the XMM registers: glibc's lazy-binding trampoline
// (_dl_runtime_resolve_fxsave) would hand every first PLT call with a
// floating-point argument a zeroed xmm0 (issue 7). Its reset also tags all
// eight x87 registers valid, where a process starts with them empty (after
// finit): fxsave/fnstenv/fnsave would show a full stack.
func (e *Engine) linuxControlRegisters() error {
	cr0 := e.reg(C.UC_X86_REG_CR0)
	if err := e.setReg(C.UC_X86_REG_CR0, (cr0|cr0MP|cr0NE)&^(cr0EM|cr0TS)); err != nil {
		return err
	}
	cr4 := e.reg(C.UC_X86_REG_CR4)
	if err := e.setReg(C.UC_X86_REG_CR4, cr4|cr4OSFXSR|cr4OSXMMEXCPT); err != nil {
		return err
	}
	return e.setReg(C.UC_X86_REG_FPTAG, 0xffff) // 11 = empty, for each register
}

// ControlRegisters returns CR0 and CR4 (for tests of the CPU state).
func (e *Engine) ControlRegisters() (cr0, cr4 uint64) {
	return e.reg(C.UC_X86_REG_CR0), e.reg(C.UC_X86_REG_CR4)
}

// Stop makes a running Run return soon (at the next block boundary); it may
// be called from any goroutine, e.g. on Ctrl-C. Run then reports StopNone.
func (e *Engine) Stop() {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.uc != nil {
		C.uc_emu_stop(e.uc)
	}
}

// Close releases the engine.
func (e *Engine) Close() {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.uc != nil {
		C.emu_close(e.uc)
		e.uc = nil
		e.freeHost()
	}
	if e.st != nil {
		C.emu_state_free(e.st)
		e.st = nil
	}
	if e.handle != 0 {
		e.handle.Delete()
		e.handle = 0
	}
}

// SetSink sets where drained event batches go.
func (e *Engine) SetSink(f func([]trace.Event)) { e.sink = f }

// SetTid sets the thread id stamped on events from now on.
func (e *Engine) SetTid(tid uint32) {
	if old := uint32(e.st.tid); e.repeats != nil && old != tid {
		// Options.Repeats: each thread's last blocks are its own.
		e.rings[old] = ring{e.st.ring, e.st.ring_at}
		r := e.rings[tid]
		e.st.ring, e.st.ring_at = r.ids, r.at
	}
	e.st.tid = C.uint32_t(tid)
	e.st.hist_n = 0 // the blocks it ran last are another thread's
}

// ring is a thread's last blocks for Options.Repeats while another runs.
type ring struct {
	ids [4]C.uint32_t
	at  C.uint32_t
}

// forgetRing drops an exited thread's last blocks (Options.Repeats): a
// thread that reuses its id starts afresh, as the analyses see it.
func (e *Engine) forgetRing(tid uint32) {
	delete(e.rings, tid)
	if uint32(e.st.tid) == tid {
		e.st.ring, e.st.ring_at = [4]C.uint32_t{}, 0
	}
}

// Emit appends an event produced in Go (a syscall, a scheduling decision,
// a kernel access to guest memory) to the buffer the hooks fill, so that
// there is one stream in one order and no event forces a delivery.
func (e *Engine) Emit(ev trace.Event) {
	if e.st.n == e.st.cap {
		e.Drain()
	}
	e.events[e.st.n] = ev
	e.st.n++
	e.st.fold_at = 0
	e.st.win_at = e.st.n
	if ev.Kind == trace.KindThreadExit && e.repeats != nil {
		e.forgetRing(ev.Tid)
	}
}

// SetClock sets the virtual time of the running thread at the start of the
// next run slice; events of the slice are stamped from it.
func (e *Engine) SetClock(ns int64) {
	e.st.time_base = C.int64_t(ns)
	e.st.cur_time = C.int64_t(ns)
}

// Blocks returns the table of every block translated so far.
func (e *Engine) Blocks() *trace.BlockTable { return e.blocks }

// Drain hands buffered events to the sink and continues in the other
// buffer: a batch stays valid until the sink's next call returns, so the
// sink may process it on another goroutine meanwhile (double buffering).
func (e *Engine) Drain() {
	n := int(e.st.n)
	if n == 0 {
		return
	}
	batch := e.events[:n]
	e.st.buf, e.st.spare = e.st.spare, e.st.buf
	e.events = unsafe.Slice((*trace.Event)(unsafe.Pointer(e.st.buf)), int(e.st.cap))
	e.st.n = 0
	e.st.fold_at = 0
	e.st.win_at = 0
	if e.sink != nil {
		e.sink(batch)
	}
}

//export emuDrain
func emuDrain(h C.uintptr_t) {
	cgo.Handle(h).Value().(*Engine).Drain()
}

//export emuBlockMiss
func emuBlockMiss(h C.uintptr_t, addr C.uint64_t, length C.uint32_t) {
	e := cgo.Handle(h).Value().(*Engine)
	n := int(length)
	if cap(e.scratch) < n {
		e.scratch = make([]byte, n)
	}
	code := e.scratch[:n]
	if n > 0 {
		if err := ucErr("reading code", C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&code[0]), C.size_t(n))); err != nil {
			e.failure = fmt.Errorf("decoding block at %#x: %w", uint64(addr), err)
			e.st.reason = C.STOP_REQUEST
			return
		}
	}
	info := decode.Block(code)
	for p := uint64(addr) &^ 0xfff; p < uint64(addr)+uint64(n); p += 0x1000 {
		e.codePages[p] = true
	}
	if (len(info.RDTSC) > 0 || len(info.X87) > 0) && e.patch(uint64(addr), code, info) {
		return
	}
	bi := trace.BlockInfo{Addr: uint64(addr), Len: uint32(length), Insns: uint32(info.Insns), End: info.End}
	if e.syms != nil {
		bi.Routine, _ = e.syms.Routine(uint64(addr))
		switch {
		case e.lines:
			bi.File, bi.Line, _ = e.syms.Line(uint64(addr))
			bi.Lines = e.lineSpans(uint64(addr), code)
		case e.fold != nil && e.runLines:
			// Runs are cut by line: the line looked up for them is
			// the block's, for the analyses too.
			bi.File, bi.Line, _ = e.syms.Line(uint64(addr))
		}
	}
	id := e.blocks.Add(bi)
	var saved uint32
	if e.speedup != nil {
		saved = e.saved(uint64(addr), code)
	}
	var quiet C.uint8_t
	if e.filter != nil && !e.filter(&bi) {
		quiet = 1
	}
	track := e.repeats != nil && e.repeats(&bi)
	key, cycle := e.runKey(&bi, track)
	C.emu_table_put(e.st, addr, length, C.uint32_t(info.Insns), C.uint32_t(saved), C.uint8_t(info.End), C.uint32_t(id), quiet, C.uint32_t(key), boolC(bi.Routine.Entry == bi.Addr), C.uint32_t(cycle), boolC(track))
}

// lineSpans returns the spans of a block's instructions on distinct source
// lines (trace.BlockInfo.Lines), nil when the block is on one line:
// each instruction is looked up only when the block crosses a line-table
// row of another line.
func (e *Engine) lineSpans(addr uint64, code []byte) []trace.LineSpan {
	if lr, ok := e.syms.(interface {
		LineRange(pc uint64) (string, int, uint64, bool)
	}); ok {
		if _, _, end, _ := lr.LineRange(addr); end >= addr+uint64(len(code)) {
			return nil
		}
	}
	e.starts = decode.Starts(code, e.starts[:0])
	var spans []trace.LineSpan
	for _, off := range e.starts {
		file, line, _ := e.syms.Line(addr + uint64(off))
		if n := len(spans); n > 0 && spans[n-1].File == file && spans[n-1].Line == line {
			spans[n-1].Insns++
			continue
		}
		spans = append(spans, trace.LineSpan{File: file, Line: line, Insns: 1, Off: off})
	}
	if len(spans) < 2 {
		return nil
	}
	return spans
}

// runKey identifies a block's routine and line for Options.Fold: blocks
// with equal non-zero keys may be reported as one run. Blocks of no named
// routine, and of linker stubs and the lazy-binding resolver (whose every
// jump call tracking reads as a tail call), are never folded.
type runKey struct {
	entry  uint64
	object string
	file   string
	line   int
	track  bool // Options.Repeats accepts the block: a run holds only such blocks or none
}

// runKey returns a block's key for ordinary runs (Options.Fold) and its
// key for periodic runs (Options.FoldCycles: its routine), 0 when it is
// not taken in them.
func (e *Engine) runKey(bi *trace.BlockInfo, track bool) (key, cycle uint32) {
	if e.fold == nil || bi.Routine.Name == "" || bi.Routine.Kind != trace.Ordinary {
		return 0, 0
	}
	k := runKey{entry: bi.Routine.Entry, object: bi.Routine.Object}
	if e.cycles != nil && e.cycles(bi) {
		cycle = e.keyID(k)
	}
	if !e.fold(bi) {
		return 0, cycle
	}
	if e.runLines {
		k.file, k.line = bi.File, bi.Line
	}
	k.track = track
	return e.keyID(k), cycle
}

// keyID numbers run keys from 1.
func (e *Engine) keyID(k runKey) uint32 {
	id, ok := e.runKeys[k]
	if !ok {
		id = uint32(len(e.runKeys) + 1)
		e.runKeys[k] = id
	}
	return id
}

// saved is what a block's sped-up instructions save, in hundredths of an
// instruction: the sum of their speedups in percent.
func (e *Engine) saved(addr uint64, code []byte) uint32 {
	e.starts = decode.Starts(code, e.starts[:0])
	var saved uint32
	for _, off := range e.starts {
		if pct := e.speedup(addr + uint64(off)); pct > 0 {
			saved += uint32(min(pct, 100))
		}
	}
	return saved
}

// patchKind is what a patched instruction was.
type patchKind uint8

const (
	patchRDTSC patchKind = iota + 1
	patchRDTSCP
	patchFPREM
	patchFPREM1
	patchFSCALE
	patchFLDL2T
)

// patch makes rdtsc and rdtscp return virtual time, and the x87
// instructions Unicorn computes wrongly (x87.go) compute what the hardware
// does. Unicorn 2.0 can neither hook rdtsc (UC_HOOK_INSN refuses RDTSC) nor
// keep a code hook on an instruction without miscompiling the surrounding
// code (measured: ld.so crashes), so each one is overwritten with `syscall`
// (plus a nop for rdtscp's third byte; the x87 ones are two bytes, d9 xx)
// and Run answers those syscalls itself. The block is stopped before it
// runs and retranslated from the patched bytes. It reports whether it
// stopped the block (it patched something, or failed).
func (e *Engine) patch(addr uint64, code []byte, info decode.Info) bool {
	stop := false
	put := func(off uint32, kind patchKind, bytes []byte) bool {
		a := addr + uint64(off)
		stop = true
		if err := e.writeMem(a, bytes); err != nil {
			e.failure = fmt.Errorf("patching the instruction at %#x: %w", a, err)
			return false
		}
		e.patched[a] = kind
		e.flush = append(e.flush, a&^0xfff)
		return true
	}
	for _, off := range info.RDTSC {
		kind, bytes := patchRDTSC, []byte{0x0f, 0x05}
		if code[off+1] == 0x01 { // rdtscp: 0f 01 f9
			kind, bytes = patchRDTSCP, []byte{0x0f, 0x05, 0x90}
		}
		if !put(off, kind, bytes) {
			break
		}
	}
	for _, off := range info.X87 {
		var kind patchKind
		switch code[off+1] {
		case 0xf8:
			kind = patchFPREM
		case 0xf5:
			kind = patchFPREM1
		case 0xfd:
			kind = patchFSCALE
		case 0xe9:
			kind = patchFLDL2T
		default:
			continue
		}
		if !put(off, kind, []byte{0x0f, 0x05}) {
			break
		}
	}
	if stop {
		e.st.reason = C.STOP_REQUEST
	}
	return stop
}

// answer completes a patched instruction (RIP is past the syscall bytes).
func (e *Engine) answer(kind patchKind, sliceInsns uint64) {
	switch kind {
	case patchRDTSC, patchRDTSCP:
		var tsc uint64
		if e.rdtsc != nil {
			tsc = e.rdtsc(sliceInsns)
		}
		_ = e.setReg(C.UC_X86_REG_RAX, tsc&0xffffffff)
		_ = e.setReg(C.UC_X86_REG_RDX, tsc>>32)
		if kind == patchRDTSCP {
			_ = e.setReg(C.UC_X86_REG_RCX, 0) // IA32_TSC_AUX: cpu 0
		}
	case patchFPREM, patchFPREM1:
		e.answerFPREM(kind == patchFPREM1)
	case patchFSCALE:
		e.answerFSCALE()
	case patchFLDL2T:
		e.answerFLDL2T()
	}
}

// Run executes from pc until a syscall, the instruction budget runs out, a
// fault, or an exception. budget 0 means no limit.
func (e *Engine) Run(pc, budget uint64) cpu.Stop {
	if budget == 0 {
		budget = ^uint64(0)
	}
	var total cpu.Stop
	if len(e.mem.later) > 0 {
		// Regions mapped from inside the engine in the last run.
		if err := e.coalesceLater(); err != nil {
			return cpu.Stop{Err: err}
		}
	}
	for {
		// A slice may take several engine runs (retranslation, an
		// instruction completed here): later runs' events continue the
		// slice's time instead of starting again from its beginning.
		e.st.prior = C.int64_t(int64(total.Insns)*100 - int64(total.Saved))
		s := e.run(pc, budget-total.Insns)
		total.Insns += s.Insns
		total.Blocks += s.Blocks
		total.Saved += s.Saved
		s.Insns, s.Blocks, s.Saved = total.Insns, total.Blocks, total.Saved
		if s.Reason == cpu.StopRequest && s.Err == nil && len(e.flush) > 0 {
			for _, page := range e.flush {
				C.emu_remove_cache(e.uc, C.uint64_t(page), C.uint64_t(page+0x1000))
			}
			e.flush = e.flush[:0]
			pc = e.PC()
			continue
		}
		if s.Reason == cpu.StopInvalid && s.Err == nil {
			if done, fault := e.emulateMissing(); done {
				if fault != nil {
					fault.Insns, fault.Blocks, fault.Saved = s.Insns, s.Blocks, s.Saved
					return *fault
				}
				pc = e.PC()
				if total.Insns >= budget {
					s.Reason = cpu.StopQuantum
					return s
				}
				continue
			}
		}
		if s.Reason == cpu.StopSyscall {
			if kind, ok := e.patched[e.PC()-2]; ok {
				// The TSC counts virtual time: sped-up instructions
				// count for less (total.Saved is 0 without speedups).
				e.answer(kind, total.Insns-total.Saved/100)
				pc = e.PC()
				if total.Insns >= budget {
					s.Reason = cpu.StopQuantum
					return s
				}
				continue
			}
		}
		return s
	}
}

func (e *Engine) run(pc, budget uint64) cpu.Stop {
	e.st.insns, e.st.blocks, e.st.saved, e.st.budget = 0, 0, 0, C.uint64_t(budget)
	e.st.reason = C.STOP_NONE
	e.st.fault_pc = 0
	e.st.last_block, e.st.last_len = 0, 0
	C.emu_replay_begin(e.st)
	err := C.emu_emu_start(e.uc, C.uint64_t(pc))
	C.emu_replay_end(e.st) // before Go emits or drains
	s := cpu.Stop{Reason: cpu.StopReason(e.st.reason), Insns: uint64(e.st.insns), Blocks: uint64(e.st.blocks), Saved: uint64(e.st.saved),
		IntNo: uint32(e.st.intno)}
	if e.failure != nil {
		s.Err, e.failure = e.failure, nil
		return s
	}
	switch err {
	case C.UC_ERR_OK:
	case C.UC_ERR_INSN_INVALID:
		s.Reason = cpu.StopInvalid
	case C.UC_ERR_READ_UNMAPPED, C.UC_ERR_WRITE_UNMAPPED, C.UC_ERR_FETCH_UNMAPPED,
		C.UC_ERR_READ_PROT, C.UC_ERR_WRITE_PROT, C.UC_ERR_FETCH_PROT:
		s.Reason = cpu.StopFault
		s.FaultAddr = uint64(e.st.fault_addr)
		switch err {
		case C.UC_ERR_READ_UNMAPPED, C.UC_ERR_READ_PROT:
			s.FaultAccess = cpu.FaultRead
		case C.UC_ERR_WRITE_UNMAPPED, C.UC_ERR_WRITE_PROT:
			s.FaultAccess = cpu.FaultWrite
		default:
			s.FaultAccess = cpu.FaultFetch
		}
		s.FaultProt = err == C.UC_ERR_READ_PROT || err == C.UC_ERR_WRITE_PROT || err == C.UC_ERR_FETCH_PROT
		if pc := uint64(e.st.fault_pc); pc != 0 {
			// The engine's RIP after a fault can be a block start before
			// the faulting instruction; the hook saw the precise one when
			// memory hooks are on. Without them it saw the last RIP
			// stored, which can be an earlier block's chained to the
			// faulting one: then the faulting block's start is the best
			// known (guest.faultPC finds the instruction in it).
			if lb, n := uint64(e.st.last_block), uint64(e.st.last_len); n != 0 && pc-lb >= n && s.FaultAccess != cpu.FaultFetch {
				pc = lb
			}
			_ = e.setReg(C.UC_X86_REG_RIP, pc)
		}
	default:
		if s.Reason != cpu.StopIntr {
			s.Err = ucErr("emulation", err)
		}
	}
	return s
}

// ReadRegs reads the general-purpose registers.
func (e *Engine) ReadRegs(r *cpu.Regs) error {
	var vals [len(regIDs)]C.uint64_t
	if err := ucErr("reading registers", C.emu_reg_read_batch(e.uc, &regIDs[0], &vals[0], C.int(len(regIDs)))); err != nil {
		return err
	}
	p := (*[len(regIDs)]uint64)(unsafe.Pointer(r))
	for i := range vals {
		p[i] = uint64(vals[i])
	}
	return nil
}

// WriteRegs writes the general-purpose registers.
func (e *Engine) WriteRegs(r *cpu.Regs) error {
	var vals [len(regIDs)]C.uint64_t
	p := (*[len(regIDs)]uint64)(unsafe.Pointer(r))
	for i := range vals {
		vals[i] = C.uint64_t(p[i])
	}
	return ucErr("writing registers", C.emu_reg_write_batch(e.uc, &regIDs[0], &vals[0], C.int(len(regIDs))))
}

// Reg reads one register by Unicorn id; used for RIP/RSP/FS base.
func (e *Engine) reg(id C.int) uint64 {
	var v C.uint64_t
	C.uc_reg_read(e.uc, id, unsafe.Pointer(&v))
	return uint64(v)
}

func (e *Engine) setReg(id C.int, v uint64) error {
	cv := C.uint64_t(v)
	return ucErr("writing register", C.uc_reg_write(e.uc, id, unsafe.Pointer(&cv)))
}

// PC returns RIP.
func (e *Engine) PC() uint64 { return e.reg(C.UC_X86_REG_RIP) }

// SP returns RSP.
func (e *Engine) SP() uint64 { return e.reg(C.UC_X86_REG_RSP) }

// SetFSBase sets the FS segment base (arch_prctl ARCH_SET_FS).
func (e *Engine) SetFSBase(v uint64) error { return e.setReg(C.UC_X86_REG_FS_BASE, v) }

// FSBase returns the FS segment base.
func (e *Engine) FSBase() uint64 { return e.reg(C.UC_X86_REG_FS_BASE) }

// context is a saved register state (including SSE and FS base).
type context struct{ c *C.uc_context }

// NewContext allocates a context; allocate one per thread and reuse it.
func (e *Engine) NewContext() (cpu.Context, error) {
	c := &context{}
	if err := ucErr("allocating context", C.uc_context_alloc(e.uc, &c.c)); err != nil {
		return nil, err
	}
	return c, nil
}

// Save stores the current registers into c.
func (e *Engine) Save(c cpu.Context) error {
	return ucErr("saving context", C.uc_context_save(e.uc, c.(*context).c))
}

// Restore loads the registers from c.
func (e *Engine) Restore(c cpu.Context) error {
	return ucErr("restoring context", C.uc_context_restore(e.uc, c.(*context).c))
}

// SetRDTSC sets the source of the guest's time stamp counter.
func (e *Engine) SetRDTSC(f func(uint64) uint64) { e.rdtsc = f }

// Free releases the context.
func (c *context) Free() {
	if c.c != nil {
		C.uc_context_free(c.c)
		c.c = nil
	}
}

// ucProt converts a guest protection to Unicorn's. PROT_WRITE and
// PROT_EXEC imply reading, as x86-64 page tables make them without
// protection keys (Linux maps write-only and execute-only memory readable
// on such CPUs, and so does emuprof's virtual one).
func ucProt(p mm.Prot) C.uint32_t {
	var r C.uint32_t
	if p != 0 {
		r |= C.UC_PROT_READ
	}
	if p&mm.ProtWrite != 0 {
		r |= C.UC_PROT_WRITE
	}
	if p&mm.ProtExec != 0 {
		r |= C.UC_PROT_EXEC
	}
	return r
}

// ReadMem copies guest memory into p.
func (e *Engine) ReadMem(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return ucErrf(C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p))), "reading %d bytes at %#x", uint64(len(p)), addr)
}

// WriteMem copies p into guest memory, as the kernel does (a read(2) into
// a buffer, a signal frame). Code translated from the pages it changes is
// dropped: Unicorn does that for the guest's own stores, not for
// uc_mem_write, so a kernel write into code that already ran would
// otherwise leave the old translation running.
func (e *Engine) WriteMem(addr uint64, p []byte) error {
	if err := e.writeMem(addr, p); err != nil {
		return err
	}
	if len(e.codePages) > 0 {
		e.forgetCode(addr, uint64(len(p)))
	}
	return nil
}

// writeMem copies p into guest memory and nothing else: patch rewrites an
// instruction of the block being translated with it (and retranslates).
func (e *Engine) writeMem(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return ucErrf(C.uc_mem_write(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p))), "writing %d bytes at %#x", uint64(len(p)), addr)
}

// FlushCode drops translated code and decoded blocks in [addr, addr+size):
// needed when the guest unmaps or changes code.
func (e *Engine) FlushCode(addr, size uint64) {
	C.emu_remove_cache(e.uc, C.uint64_t(addr), C.uint64_t(addr+size))
	C.emu_table_clear(e.st)
}

// forgetCode drops what was learnt about code in [addr, addr+size), when
// it stops being code (unmapped, no longer executable, dropped) or the
// kernel rewrites it: its translations, its decoded blocks, its patched
// instructions. Cheap when the range held no code. Translations are
// removed one run of code pages at a time, from the run's first page:
// Unicorn's removal (uc_ctl_remove_cache) finds a range's guest-physical
// address through its first page, as an instruction fetch, and removes
// nothing when that page is not executable.
func (e *Engine) forgetCode(addr, size uint64) {
	lo, hi := addr&^0xfff, addr+size
	var pages []uint64
	if uint64(len(e.codePages)) < size/0x1000 {
		for p := range e.codePages {
			if p >= lo && p < hi {
				pages = append(pages, p)
			}
		}
		slices.Sort(pages)
	} else {
		for p := lo; p < hi; p += 0x1000 {
			if e.codePages[p] {
				pages = append(pages, p)
			}
		}
	}
	if len(pages) == 0 {
		return
	}
	for _, p := range pages {
		delete(e.codePages, p)
	}
	for a := range e.patched {
		if a >= addr && a < hi {
			delete(e.patched, a)
		}
	}
	for i := 0; i < len(pages); {
		j := i + 1
		for j < len(pages) && pages[j] == pages[j-1]+0x1000 {
			j++
		}
		C.emu_remove_cache(e.uc, C.uint64_t(pages[i]), C.uint64_t(pages[j-1]+0x1000))
		i = j
	}
	C.emu_table_clear(e.st)
}

func boolC(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}

// pageCollections and mappingHits report how often libunicorn called the
// page-collection lock that unicornfix.c puts in place of its own, and
// found a region in the cache of its memory_mapping (0 where there is
// none of that).
func pageCollections() uint64 { return uint64(C.emu_page_collections()) }
func mappingHits() uint64     { return uint64(C.emu_mapping_hits()) }

// cleanedFills reports how many TLB fills let stores take the generated
// code's fast path (unicornfix.c's tlb_set_page_with_attrs; 0 where
// there is none of that).
func cleanedFills() uint64 { return uint64(C.emu_cleaned_fills()) }

// replayedBlocks returns how many blocks the hook replayed (tests).
func (e *Engine) replayedBlocks() uint64 { return uint64(C.emu_replayed_blocks(e.st)) }

// unicornVersion returns the major and minor version of the libunicorn
// the engine runs on.
func unicornVersion() (major, minor int) {
	v := unicornVersionFull()
	return int(v >> 24), int(v >> 16 & 0xff)
}

// unicornVersionFull returns uc_version's whole number: major, minor,
// patch and extra, a byte each.
func unicornVersionFull() uint32 {
	if loadUnicorn() != nil {
		return 0
	}
	return uint32(C.uc_version(nil, nil))
}
