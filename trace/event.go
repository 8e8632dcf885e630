// Package trace defines the event stream that the emulator, the syscall
// layer and the scheduler produce, and the Analysis interface that every
// profiler (trms, paths, causal, parallel) implements. It is the one contract
// between the guest-running side and the analyses: analyses never import emu,
// syscalls or sched, so each can be tested on hand-written event traces.
package trace

import "fmt"

// Kind says what an Event describes.
type Kind uint8

// Event kinds. The numeric values are shared with the C hooks in emu/
// (emu/hooks.h); change both together.
const (
	KindNone        Kind = iota
	KindBlock            // a basic block started executing
	KindRead             // the guest loaded from memory
	KindWrite            // the guest stored to memory
	KindKernelRead       // the kernel loaded from guest memory (write, writev, ...)
	KindKernelWrite      // the kernel stored into guest memory (read, readv, mmap of a file, ...)
	KindSyscall          // a system call completed
	KindThreadStart      // a thread was created
	KindThreadExit       // a thread exited
	KindSwitch           // the scheduler switched to another thread
	KindBlockOn          // a thread blocked (futex, pipe, sleep, join)
	KindWake             // a blocked thread was woken
	KindCall             // a routine was entered (from the call-tracking stage)
	KindReturn           // a routine activation ended (from the call-tracking stage)
	KindRepeat           // the events after it repeat (Encoding.RepeatEvents)
)

// A signal handler's entry and rt_sigreturn are Syscall events (the kernel
// acts between two blocks), made when an analysis needs Syscalls or Calls:
// the entry has Addr SyscallSignalEntry, Aux the handler's return address
// (sa_restorer) and Size the signal, with SignalOnAltStack when the handler
// runs on the alternate signal stack; the next Block of the thread is the
// handler's first. rt_sigreturn is the Syscall event of call
// SyscallSigreturn; the thread's next Block is where the signal interrupted
// it (or where the handler sent it).
const (
	SyscallSignalEntry = 1 << 20
	SyscallSigreturn   = 15
	SignalOnAltStack   = 1 << 8
)

var kindNames = [...]string{"none", "block", "read", "write", "kread", "kwrite",
	"syscall", "thread-start", "thread-exit", "switch", "block-on", "wake", "call", "return", "repeat"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// End classifies the instruction that ends a basic block. Call tracking
// derives calls and returns from it (DESIGN.md, "The event stream").
type End uint8

// Block terminators, as decoded once per block by package decode.
const (
	EndOther   End = iota // falls through or the block was cut (page end, size limit)
	EndCall               // call (direct or indirect)
	EndRet                // ret
	EndJump               // unconditional jmp (direct or indirect): a tail call if it lands on a routine entry
	EndCond               // conditional branch
	EndSyscall            // syscall
)

// Flags qualify an event.
type Flags uint8

// FlagHidden marks a Block, Read or Write event of code that belongs to no
// routine the analyses see: linker stubs and the lazy-binding resolver
// (set by the call-tracking stage).
const FlagHidden Flags = 1

// Period returns, for a Block event of a periodic run (Encoding.FoldCycles),
// its period p (1 to 4), and 0 for any other event: the run's blocks
// repeat the thread's last p blocks, so its i-th block (from 0) is the
// block the thread ran p − (i mod p) blocks before the run. It is kept in
// bits 1–3 of Flags.
func (e *Event) Period() int { return int(e.Flags>>1) & 7 }

// FlagRepeat marks a Block event whose block (the run's first, for a run)
// is one of the last four blocks its thread ran that Encoding.Repeats accepts,
// since it last ran one Repeats refuses (Encoding.Repeats).
const FlagRepeat Flags = 1 << 4

// Repeat reports whether a Block event has FlagRepeat.
func (e *Event) Repeat() bool { return e.Flags&FlagRepeat != 0 }

// FlagCalls marks a Block event that carries the calls and returns the
// call-tracking stage derived before it (Encoding.CallMarks), in place of the
// Call and Return events it would insert; its Aux is then no stack
// pointer but what CallMarks returns.
const FlagCalls Flags = 1 << 5

// CallMarks returns, for a Block event with FlagCalls, how many reported
// activations ended before the block (Return events without their
// routine and context) and, when its block enters a routine (a Call event
// before it), that activation's calling-context id + 1 (0: none), whose
// node names the routine; the entry address is the event's Addr. Returns
// come before the call.
func (e *Event) CallMarks() (returns, call uint32) { return uint32(e.Aux >> 32), uint32(e.Aux) }

// Event is one record of the stream. It is 40 bytes and laid out exactly like
// struct emu_event in emu/hooks.h so that batches filled by C hooks are read
// in place, without copying or per-event allocation.
//
// Field use by kind:
//
//	Block:        Block = block id (BlockTable), Addr = first instruction, Aux = stack pointer at entry, Size = instructions, End = terminator
//	Read/Write:   Addr = address, Size = bytes, Aux = the instruction's address (0: unknown: a Unicorn other than 2.0.1), Block = its cost in ps under a time model (timemodel.Model; 0 otherwise)
//	KernelRead/Write: Addr = address, Size = bytes
//	Syscall:      Addr = number, Aux = result (as the guest sees it in rax), Block = the kernel's work in ns under a time model (timemodel.Model.Syscall; 0 otherwise)
//	ThreadStart:  Aux = parent tid (0 for the first thread)
//	ThreadExit:   Aux = exit status
//	Switch:       Aux = tid switched away from (0 at the start)
//	BlockOn:      Addr = what the thread waits on (futex address, object id), Size = WaitKind
//	Wake:         Addr, Size = the wait that ended, Aux = waker tid (0: a timeout or the outside world)
//	Call:         Block = routine id, Addr = entry address, Aux = calling-context id
//	Return:       Block = routine id, Aux = calling-context id of the activation that ended
//	Repeat:       Size = events of the period after it, Aux = times they repeat, Addr = ns between repetitions (Encoding.RepeatEvents)
//
// Tid is the guest thread the event belongs to; Time is that thread's
// virtual clock when the event happened, in ns (a memory access has the time
// of its block's start; a Wake has the woken thread's new clock).
type Event struct {
	Addr  uint64
	Aux   uint64
	Time  int64
	Size  uint32
	Tid   uint32
	Block uint32
	Kind  Kind
	End   End
	Flags Flags
	// Folded is, for a Block event, how many more blocks it stands for: a
	// run of blocks (Encoding.Fold), at most 255 more.
	Folded uint8
}

// WaitKind says what a blocked thread waits for (BlockOn and Wake events).
// The values are those of package sched's wait kinds.
type WaitKind uint32

// Wait kinds.
const (
	WaitNone      WaitKind = iota
	WaitFutex              // futex word; Addr = guest address
	WaitSleep              // nanosleep / clock_nanosleep
	WaitPipeRead           // empty pipe; Addr = object id
	WaitPipeWrite          // full pipe; Addr = object id
	WaitPoll               // poll / select; Addr = object id
	WaitJoin               // a thread or child; Addr = its id
	WaitStdin              // host input
	WaitOther              // anything else
)

var waitKindNames = [...]string{"none", "futex", "sleep", "read", "write", "poll", "join", "stdin", "wait"}

// String returns the kind's short name ("futex", "read", ...).
func (k WaitKind) String() string {
	if int(k) < len(waitKindNames) {
		return waitKindNames[k]
	}
	return fmt.Sprintf("WaitKind(%d)", uint32(k))
}

// Analysis consumes the event stream. Batches arrive in exact guest order.
// An analysis may use a batch only during its Events call: the slice
// aliases the emulator's buffer or the call stage's (calls.Stage.Process),
// both reused afterwards, so events kept longer are copied. (The emulator
// promises its sink more: a batch stays unchanged until the sink's next
// call returns, which lets platform.Pipeline process it on a goroutine of
// its own; see cpu.CPU.SetSink.)
type Analysis interface {
	// Events handles one batch.
	Events(batch []Event)
	// Finish is called once after the last batch (also when the run failed
	// or was interrupted, so that partial profiles can be written).
	Finish()
}

// MemoryUser is an optional interface of an Analysis whose memory grows
// with the guest's (trms's shadow memories): MemoryBytes is what it holds
// now, counted against emuprof's --memory-limit. It is asked between
// batches, never while the analysis handles one.
type MemoryUser interface {
	MemoryBytes() uint64
}

// Delay is a pause of a thread's virtual clock that an analysis asks for
// (causal profiling's virtual speedups).
type Delay struct {
	Tid uint32
	Ns  int64
}
