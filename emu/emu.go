// Package emu is emuprof's own binding of libunicorn (Unicorn 2.0.x C API)
// for x86-64: guest memory, register contexts, the run loop and the hooks.
// It is the only package that uses cgo. Per-event hooks (blocks, memory
// accesses) are C functions that append trace.Event records to a buffer;
// Go drains the buffer in batches, so no guest event costs a cgo round
// trip. Go is called back only once per distinct block (to decode it) and
// when the buffer fills up.
//
// By concern, C then Go: hooks.h (the state the hooks share, the calls Go
// makes), hook.c (block and syscall hooks), fold.h and fold.c (a block's
// events: runs, the Repeats ring; the fold state, which C owns), replay.h
// and replay.c (Options.Replay), memhooks.c (memory events and merging),
// faults.c (faults, interrupts, cpuid), table.c (the block table, its
// arena), engine.c; emu.go (options, engine lifecycle), translate.go (a
// block's first sight), run.go (the run loop), events.go (the stream),
// regs.go, memory.go and hostmem.go (guest memory), x87.go, missing.go.
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
	"os"
	"runtime/cgo"
	"sync"
	"unsafe"

	"emuprof/decode"
	"emuprof/trace"
)

// Options configure an engine.
type Options struct {
	BufferEvents int  // event buffer capacity (default 1<<16 with Memory, else 1<<12)
	Memory       bool // install the memory-access hooks
	Blocks       bool // emit Block events
	StackPointer bool // fill Block events' Aux with RSP
	// Replay lets the block hook stop making events while a thread's
	// blocks repeat a period whose events repeat, and write them when the
	// repetition ends: the same events in the same order, a hook that
	// only counts meanwhile (replay.h). Not with Memory or Speedup.
	Replay bool
	// Bare installs no block hook: no instruction counting, no quanta, no
	// virtual time. Only for measuring the engine's own speed (the floor).
	Bare bool
	// HookEveryBlock calls the block hook at every block even where the
	// generated code can count instructions itself (Unicorn 2.0.1 without
	// Block or memory events: inline.c); tests compare the two.
	HookEveryBlock bool
	// NoChain keeps Unicorn's rule for direct jumps to another page (a
	// lookup at every execution) instead of chaining them (chain.c); tests
	// compare the two, as EMUPROF_CHAIN=0 does for whole runs.
	NoChain bool
	// MemoryHook takes memory events from Unicorn's memory hooks even
	// where the generated code can write them itself (Unicorn 2.0.1:
	// meminline.c); tests compare the two.
	MemoryHook bool
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

	speedup func(uint64) int
	filter  func(*trace.BlockInfo) bool
	fold    func(*trace.BlockInfo) bool
	cycles  func(*trace.BlockInfo) bool
	runKeys map[runKey]uint32 // Options.Fold's keys: routine and line of foldable blocks
	repeats func(*trace.BlockInfo) bool
	rings   map[uint32]C.struct_emu_thread_fold // Options.Repeats: the threads' rings but the running one's
	starts  []uint32                            // instruction offsets of the block being translated
	dec     *decode.Decoder                     // decodes new blocks, remembering instructions met before

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

// memoryHookEnv: EMUPROF_MEMORY_HOOK=1 sets Options.MemoryHook for every
// engine (benchmarks and stream comparisons of the two paths only).
var memoryHookEnv = os.Getenv("EMUPROF_MEMORY_HOOK") == "1"

// chainEnv: EMUPROF_CHAIN=0 sets Options.NoChain for every engine (for
// comparisons).
var chainEnv = os.Getenv("EMUPROF_CHAIN") == "0"

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
	e := &Engine{patched: map[uint64]patchKind{}, codePages: map[uint64]bool{}, dec: decode.NewDecoder(),
		blocks: trace.NewBlockTable(), syms: opts.Symbols, lines: opts.Lines, speedup: opts.Speedup, filter: opts.BlockFilter,
		fold: opts.Fold, cycles: opts.FoldCycles, runKeys: map[runKey]uint32{},
		repeats: opts.Repeats, rings: map[uint32]C.struct_emu_thread_fold{}}
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
	slack := C.uint32_t(0)
	if opts.Memory && !opts.MemoryHook && !memoryHookEnv {
		slack = C.MEM_SLACK // room for the generated code's events (meminline.c)
	}
	e.st = C.emu_state_new(e.uc, C.uintptr_t(e.handle), C.uint32_t(opts.BufferEvents), slack)
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
	// be a whole number of ns (replay.h).
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
	if !opts.HookEveryBlock {
		e.st.inline_on = 1
	}
	bare := C.int(0)
	if opts.Bare {
		bare = 1
	}
	if err := ucErr("installing hooks", C.emu_install_base(e.st, bare)); err != nil {
		e.Close()
		return nil, err
	}
	if !opts.Bare && !opts.NoChain && !chainEnv {
		e.st.chain_on = 1 // the block hook tells which pages hold code (chain.c)
	}
	if opts.Memory {
		if slack != 0 {
			e.st.mem_inline = 1
		}
		if err := ucErr("installing memory hooks", C.emu_install_mem(e.st)); err != nil {
			e.Close()
			return nil, err
		}
		e.memEvents = true
	}
	return e, nil
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

// pageCollections and mappingHits report how often libunicorn called the
// page-collection lock that unicornfix.c puts in place of its own, and
// found a region in the cache of its memory_mapping (0 where there is
// none of that).
func pageCollections() uint64 { return uint64(C.emu_page_collections()) }

func mappingHits() uint64 { return uint64(C.emu_mapping_hits()) }

// cleanedFills reports how many TLB fills let stores take the generated
// code's fast path (unicornfix.c's tlb_set_page_with_attrs; 0 where
// there is none of that).
func cleanedFills() uint64 { return uint64(C.emu_cleaned_fills()) }

// tbCacheHits reports how many block lookups unicornfix.c's cache behind
// the jump cache answered (0 where there is none).
func tbCacheHits() uint64 { return uint64(C.emu_tb_cache_hits()) }

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
