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
	KindRepeat           // the events after it repeat (Needs.RepeatEvents)
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

// Period returns, for a Block event of a periodic run (Needs.FoldCycles),
// its period p (1 to 4), and 0 for any other event: the run's blocks
// repeat the thread's last p blocks, so its i-th block (from 0) is the
// block the thread ran p − (i mod p) blocks before the run. It is kept in
// bits 1–3 of Flags.
func (e *Event) Period() int { return int(e.Flags>>1) & 7 }

// FlagRepeat marks a Block event whose block (the run's first, for a run)
// is one of the last four blocks its thread ran that Needs.Repeats accepts,
// since it last ran one Repeats refuses (Needs.Repeats).
const FlagRepeat Flags = 1 << 4

// Repeat reports whether a Block event has FlagRepeat.
func (e *Event) Repeat() bool { return e.Flags&FlagRepeat != 0 }

// FlagCalls marks a Block event that carries the calls and returns the
// call-tracking stage derived before it (Needs.CallMarks), in place of the
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
//	Read/Write:   Addr = address, Size = bytes
//	KernelRead/Write: Addr = address, Size = bytes
//	Syscall:      Addr = number, Aux = result (as the guest sees it in rax)
//	ThreadStart:  Aux = parent tid (0 for the first thread)
//	ThreadExit:   Aux = exit status
//	Switch:       Aux = tid switched away from (0 at the start)
//	BlockOn:      Addr = what the thread waits on (futex address, object id), Size = WaitKind
//	Wake:         Addr, Size = the wait that ended, Aux = waker tid (0: a timeout or the outside world)
//	Call:         Block = routine id, Addr = entry address, Aux = calling-context id
//	Return:       Block = routine id, Aux = calling-context id of the activation that ended
//	Repeat:       Size = events of the period after it, Aux = times they repeat, Addr = ns between repetitions (Needs.RepeatEvents)
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
	// run of blocks (Needs.Fold), at most 255 more.
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

// Needs says which event kinds an analysis wants, so that only the hooks an
// enabled analysis needs are installed.
type Needs struct {
	Blocks    bool // Block events (with stack pointer)
	Memory    bool // Read/Write events
	KernelMem bool // KernelRead/KernelWrite events
	Syscalls  bool
	Threads   bool // ThreadStart/Exit, Switch, BlockOn, Wake
	Calls     bool // Call/Return from the shared call-tracking stage (implies Blocks)
	Lines     bool // file:line of every block in the BlockTable
	// TimeControl: the analysis delays threads through its Clock, so the
	// scheduler waits for it to catch up before every decision.
	TimeControl bool
	// BlockFilter, when not nil, selects the blocks whose Block events the
	// analysis wants (asked once per block, at translation); the others
	// run without events. Only for analyses that do without the call
	// stage (Calls needs every block).
	BlockFilter func(*BlockInfo) bool
	// Fold, when not nil, says the analysis takes a run of blocks as one
	// Block event for the blocks it accepts (asked once per block, at
	// translation): consecutive blocks of one thread, of the same routine
	// and file:line, each entered from the previous one by falling through
	// or by a branch (not a call or a return), none but the first a
	// routine's entry, none of a linker stub or the lazy-binding resolver,
	// with no other event between them. The
	// event then has Block = the run's last block, Addr = its first block's
	// address, Aux = the stack pointer at its first block, Size = the run's
	// instructions, End = the last block's terminator, and Time = the
	// run's start, and Folded = its blocks but one. Call tracking handles
	// runs itself. An analysis that needs every block's own event, or its
	// stack pointer, leaves it nil; then nothing is folded.
	Fold func(*BlockInfo) bool
	// FoldRoutines: a run may span the lines of its routine (only the
	// routine must be the same). FoldMemory: a run may go on past the
	// Read and Write events of its blocks, which then follow its Block
	// event (they still come in order, before the next Block event).
	// Folding has them only if every analysis that sees blocks says so.
	FoldRoutines, FoldMemory bool
	// MergeMemory: the Read and Write events of one thread between two
	// other events may be merged. An access that repeats the previous one
	// of that stretch (a read of bytes it read or wrote, a write of bytes
	// it wrote) is dropped, and one of the same kind that continues its
	// bytes extends it. Exact for an analysis to
	// which, between two other events, an access only matters through
	// which bytes were read or written (RMS/TRMS: the count stays the
	// same). Merging happens only if every analysis that sees memory says
	// so.
	MergeMemory bool
	// FoldCycles, when not nil (with Fold), is asked once per block too:
	// the blocks it accepts may also come in periodic runs, within their
	// routine (across its lines). A periodic run starts at a block the
	// thread ran p ≤ 4 blocks before, those p blocks all of its routine
	// and each named by its event (a single block, the last of an
	// ordinary run, or one of a periodic run), and goes on only with the
	// block the thread ran p blocks before each, so that it repeats them
	// (Event.Period). The analysis recovers every block of the run from
	// the blocks it saw last: for spin detection by block cycles, or to
	// charge a loop that spans lines to its lines. A block is taken this
	// way only if every analysis that sees blocks has FoldCycles and
	// accepts it.
	FoldCycles func(*BlockInfo) bool
	// Repeats, when not nil, is asked once per block too: the engine
	// keeps, per thread and across switches, the last four blocks it
	// accepts that the thread ran since it last ran a block it refuses
	// (whose Block events the analyses see; forgotten when the thread
	// exits), and marks a Block event with FlagRepeat when its block is
	// one of them. An analysis that spots loops by their blocks (spin
	// detection) needs no memory of its own then, and ordinary runs
	// (Fold) can hold such blocks: one holds only blocks Repeats accepts,
	// none of which repeats, or only blocks it refuses. A block that
	// repeats comes as an event of its own or starts a periodic run. At
	// most one analysis of a run asks (the first one's is kept).
	Repeats func(*BlockInfo) bool
	// CallMarks (with Calls): the analysis takes the calls and returns
	// of the call-tracking stage marked on Block events (FlagCalls), with
	// no stack pointer, wherever they come right before a block (a return
	// elsewhere, at rt_sigreturn or a thread's end, is still a Return
	// event): handing on the batch in place is cheaper than inserting
	// events into it. The stage marks only if every analysis that sees
	// blocks says so.
	CallMarks bool
	// RepeatEvents: the analysis takes Repeat events. A Repeat event
	// of thread Tid, at the Time of the first event after it, says that
	// the Size events after it (its period: Block events of Tid, the
	// engine's replay, emu/hooks.c) are followed, once they are handled,
	// by Aux more copies of them, the j-th Addr·j ns later (ExpandRepeats
	// writes them out), and then by the stream's next event. The engine
	// makes them only if every analysis that sees blocks says so and the
	// call-tracking stage marks calls (CallMarks); the stage passes one on
	// only when its own state repeats over the period, else it writes
	// the copies out. An analysis can then charge the repetitions at
	// once, when its state repeats too.
	RepeatEvents bool
}

// ExpandRepeats returns evs with every Repeat event replaced by the copies
// it stands for (Needs.RepeatEvents): the stream an analysis that takes no
// Repeat events would see. evs itself is not changed.
func ExpandRepeats(evs []Event) []Event {
	out := make([]Event, 0, len(evs))
	for i := 0; i < len(evs); i++ {
		if evs[i].Kind != KindRepeat {
			out = append(out, evs[i])
			continue
		}
		r := evs[i]
		n := min(int(r.Size), len(evs)-i-1)
		period := evs[i+1 : i+1+n]
		out = append(out, period...)
		for j := int64(1); j <= int64(r.Aux); j++ {
			for _, e := range period {
				e.Time += j * int64(r.Addr)
				out = append(out, e)
			}
		}
		i += n
	}
	return out
}

// Or merges two sets of needs. A block filter survives only if every side
// that wants blocks has one (then a block is wanted if either wants it).
func (n Needs) Or(m Needs) Needs {
	o := Needs{n.Blocks || m.Blocks, n.Memory || m.Memory, n.KernelMem || m.KernelMem,
		n.Syscalls || m.Syscalls, n.Threads || m.Threads, n.Calls || m.Calls, n.Lines || m.Lines,
		n.TimeControl || m.TimeControl, nil, nil, false, false, false, nil, n.Repeats, false, false}
	if o.Repeats == nil {
		o.Repeats = m.Repeats
	}
	o.Fold = orFold(n, m)
	o.FoldCycles = orFoldCycles(n, m, o.Fold)
	o.FoldRoutines, o.FoldMemory = orFoldFlag(n, m, n.FoldRoutines, m.FoldRoutines), orFoldFlag(n, m, n.FoldMemory, m.FoldMemory)
	o.MergeMemory = (n.MergeMemory || !n.Memory) && (m.MergeMemory || !m.Memory) && o.Memory
	o.CallMarks = orFoldFlag(n, m, n.CallMarks, m.CallMarks) && o.Calls
	o.RepeatEvents = orFoldFlag(n, m, n.RepeatEvents, m.RepeatEvents) && (o.Blocks || o.Calls) && (o.CallMarks || !o.Calls)
	nf, mf := n.BlockFilter, m.BlockFilter
	switch {
	case o.Calls || n.Blocks && nf == nil || m.Blocks && mf == nil:
	case nf == nil:
		o.BlockFilter = mf
	case mf == nil:
		o.BlockFilter = nf
	default:
		o.BlockFilter = func(b *BlockInfo) bool { return nf(b) || mf(b) }
	}
	return o
}

// orFoldFlag combines a Fold option of two sides: every side that sees
// blocks must have it.
func orFoldFlag(n, m Needs, nf, mf bool) bool {
	return (nf || !n.Blocks && !n.Calls) && (mf || !m.Blocks && !m.Calls)
}

// orFold combines two sides' Fold: a block is folded only if every side
// that sees blocks accepts it.
func orFold(n, m Needs) func(*BlockInfo) bool { return andFold(n, m, n.Fold, m.Fold) }

// orFoldCycles combines two sides' FoldCycles, given their combined Fold: a
// block is taken in periodic runs if every side that sees blocks takes it
// so.
func orFoldCycles(n, m Needs, fold func(*BlockInfo) bool) func(*BlockInfo) bool {
	if fold == nil {
		return nil
	}
	return andFold(n, m, n.FoldCycles, m.FoldCycles)
}

// andFold combines a block predicate of two sides (nf of n, mf of m): nil
// if a side that sees blocks has none, else true where every side that
// sees blocks says true.
func andFold(n, m Needs, nf, mf func(*BlockInfo) bool) func(*BlockInfo) bool {
	nb, mb := n.Blocks || n.Calls, m.Blocks || m.Calls
	switch {
	case nb && nf == nil || mb && mf == nil:
		return nil
	case !mb:
		return nf
	case !nb:
		return mf
	}
	return func(b *BlockInfo) bool { return nf(b) && mf(b) }
}

// Delay is a pause of a thread's virtual clock that an analysis asks for
// (causal profiling's virtual speedups).
type Delay struct {
	Tid uint32
	Ns  int64
}
