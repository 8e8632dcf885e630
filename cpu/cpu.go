// Package cpu is the contract between the emulator binding (package emu, the
// only cgo code) and the runtime that drives it (package guest): register
// files, why a run slice stopped, and the CPU interface. Keeping it apart
// lets the runtime build and vet without cgo, on any host.
package cpu

import (
	"emuprof/mm"
	"emuprof/trace"
)

// Regs are the general-purpose registers the runtime reads and writes.
type Regs struct {
	RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP uint64
	R8, R9, R10, R11, R12, R13, R14, R15   uint64
	RIP, RFLAGS, FSBase, GSBase            uint64
}

// StopReason says why a run slice ended.
type StopReason int

// Stop reasons.
const (
	StopNone    StopReason = iota // the engine stopped on its own
	StopSyscall                   // a syscall instruction executed; RIP is past it
	StopQuantum                   // the instruction budget ran out; RIP is at an unexecuted block
	StopFault                     // invalid memory access
	StopIntr                      // CPU exception (divide error, int3, ud2...)
	StopRequest                   // the engine stopped to retranslate code; resume at RIP
	StopInvalid                   // invalid instruction
)

// Access kinds of a memory fault.
const (
	FaultRead  = "read"
	FaultWrite = "write"
	FaultFetch = "fetch"
)

// Stop describes the end of one run slice.
type Stop struct {
	Reason StopReason
	Insns  uint64 // instructions executed in the slice
	Blocks uint64 // blocks executed in the slice
	// Saved is the virtual cost the slice's sped-up instructions did not
	// cost (emuprof run --speedup), in hundredths of an instruction: the
	// slice cost Insns×100 − Saved hundredths. 0 without speedups.
	Saved       uint64
	FaultAddr   uint64
	FaultAccess string // FaultRead, FaultWrite or FaultFetch
	FaultProt   bool   // the page was mapped but the access was not allowed
	IntNo       uint32 // the exception vector for StopIntr
	Err         error  // the engine's own error, if any
}

// FPStateSize is the size of an fxsave64 image.
const FPStateSize = 512

// Context is a saved register state of one thread (including SSE and FS base).
type Context interface{ Free() }

// CPU is one emulated x86-64 processor with its memory.
type CPU interface {
	mm.Backend
	// Run executes from pc until a syscall, a fault, an exception, or until
	// the next block would exceed budget instructions (0: no limit).
	Run(pc, budget uint64) Stop
	ReadRegs(r *Regs) error
	WriteRegs(r *Regs) error
	PC() uint64
	SP() uint64
	SetFSBase(v uint64) error
	FSBase() uint64
	NewContext() (Context, error)
	Save(c Context) error
	Restore(c Context) error
	// SetTid stamps events with the running thread.
	SetTid(tid uint32)
	// SetSink receives event batches; Drain flushes the buffer into it.
	// A batch stays unchanged until the sink's next call returns (the
	// engine fills the other of two buffers meanwhile), so the sink may
	// go on processing it on another goroutine after returning
	// (platform.Pipeline does); after that next call it is overwritten.
	SetSink(f func([]trace.Event))
	Drain()
	// Emit appends an event produced outside the engine (syscalls, the
	// scheduler, kernel accesses) to the same buffer, in order.
	Emit(ev trace.Event)
	// SetClock sets the running thread's virtual time at the start of the
	// next run slice; events are stamped from it.
	SetClock(ns int64)
	// Blocks is the table of translated blocks that Block events' ids
	// point into.
	Blocks() *trace.BlockTable
	// SetRDTSC sets the source of the guest's time stamp counter; it gets
	// the instructions executed so far in the current run slice.
	SetRDTSC(f func(sliceInsns uint64) uint64)
	// FlushCode drops translated code in a range the guest unmapped or changed.
	FlushCode(addr, size uint64)
	// ReadFPState and WriteFPState move the x87 and SSE registers as an
	// fxsave64 image (signal frames).
	ReadFPState(b *[FPStateSize]byte) error
	WriteFPState(b *[FPStateSize]byte) error
	Close()
}
