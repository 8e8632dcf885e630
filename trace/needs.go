package trace

// Needs is what an analysis asks of the stream: which events (Wants) and
// which encodings of them it accepts (Encoding). The engine installs only
// the hooks the enabled analyses want, and uses an encoding only when every
// analysis that sees the events it changes accepts it (Combine).
type Needs struct {
	Wants
	Encoding
}

// Wants says which event kinds an analysis consumes.
type Wants struct {
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
}

// Or is the set of events either side wants.
func (w Wants) Or(v Wants) Wants {
	return Wants{
		Blocks:      w.Blocks || v.Blocks,
		Memory:      w.Memory || v.Memory,
		KernelMem:   w.KernelMem || v.KernelMem,
		Syscalls:    w.Syscalls || v.Syscalls,
		Threads:     w.Threads || v.Threads,
		Calls:       w.Calls || v.Calls,
		Lines:       w.Lines || v.Lines,
		TimeControl: w.TimeControl || v.TimeControl,
	}
}

// seesBlocks reports whether the side gets Block events (Calls implies
// them: the call-tracking stage reads them and hands them on).
func (w Wants) seesBlocks() bool { return w.Blocks || w.Calls }

// Encoding lists the ways the engine and the call-tracking stage may shorten
// the stream, each of which an analysis accepts or not (the zero Encoding
// is the plain stream: one Block event per block executed, one Read or
// Write per access, Call and Return as events). An encoding changes what
// some Event fields mean; the table says which, and how the plain stream is
// recovered (its canonical expansion):
//
//	encoding      changes                                    expansion
//	BlockFilter   no Block event for some blocks             none: the events are dropped
//	Fold          Block: Block, Addr, Aux, Size, End, Folded none: a run keeps no branch taken inside it
//	FoldMemory    Read/Write follow their run's Block        as Fold
//	FoldCycles    Block: Flags (Period), Folded              ExpandPeriodicRuns
//	MergeMemory   Read/Write: fewer, wider accesses          none: lossy, exact for byte sets only
//	Repeats       Block: Flags (FlagRepeat)                  tracetest.MarkRepeats computes the flag
//	CallMarks     Block: Flags (FlagCalls), Aux              ExpandCallMarks
//	RepeatEvents  Repeat events stand for copies             ExpandRepeats
//
// Every field's zero value is the plain stream's. Encodings are permissions,
// not promises: the engine may deliver any event plainly (--no-fold does).
type Encoding struct {
	// BlockFilter, when not nil, selects the blocks whose Block events the
	// analysis wants (asked once per block, at translation); the others
	// run without events. Only for analyses that do without the call
	// stage (Calls needs every block).
	// Not measured: it selects events (paths' copies) more than it
	// encodes them.
	BlockFilter func(*BlockInfo) bool
	// Fold, when not nil, says the analysis takes a run of blocks as one
	// Block event for the blocks it accepts (asked once per block, at
	// translation): consecutive blocks of one thread, of the same routine
	// and file:line, each entered from the previous one by falling through
	// or by a branch (not a call or a return), none but the first a
	// routine's entry, none of a linker stub or the lazy-binding resolver,
	// with no other event between them. The event then has Block = the
	// run's last block, Addr = its first block's address, Aux = the stack
	// pointer at its first block, Size = the run's instructions, End = the
	// last block's terminator, Time = the run's start, and Folded = its
	// blocks but one. Call tracking handles runs itself. An analysis that
	// needs every block's own event, or its stack pointer, leaves it nil;
	// then nothing is folded.
	// Pays (CPU without it, notes/s3/stream.md): trms +22 % on xz, causal
	// +82 % on xz and +30 % on python3, parallel +94 % on xz -T2.
	Fold func(*BlockInfo) bool
	// FoldMemory: a run may go on past the Read and Write events of its
	// blocks, which then follow its Block event (they still come in
	// order, before the next Block event).
	// Pays: trms +26 % CPU on xz without it (+38 % events; +19 % on qsort).
	FoldMemory bool
	// FoldCycles, when not nil (with Fold), is asked once per block too:
	// the blocks it accepts may also come in periodic runs, within their
	// routine (across its lines). A periodic run starts at a block the
	// thread ran p ≤ 4 blocks before, those p blocks all of its routine
	// and each named by its event (a single block, the last of an
	// ordinary run, or one of a periodic run), and goes on only with the
	// block the thread ran p blocks before each, so that it repeats them
	// (Event.Period). The analysis recovers every block of the run from
	// the blocks it saw last: for spin detection by block cycles, or to
	// charge a loop that spans lines to its lines. Pays: parallel +27 %
	// CPU on omp_imbalance without it (+24 % events), within noise on
	// mutex_counter and xz.
	FoldCycles func(*BlockInfo) bool
	// MergeMemory: the Read and Write events of one thread between two
	// other events may be merged. An access that repeats the previous one
	// of that stretch (a read of bytes it read or wrote, a write of bytes
	// it wrote) is dropped, and one of the same kind that continues its
	// bytes extends it. Exact for an analysis to which, between two other
	// events, an access only matters through which bytes were read or
	// written (RMS/TRMS: the count stays the same).
	// Pays: trms +13 % CPU on xz without it (+18 % events; +34 % on
	// python3, +27 % on qsort).
	MergeMemory bool
	// Repeats, when not nil, is asked once per block too: the engine
	// keeps, per thread and across switches, the last four blocks it
	// accepts that the thread ran since it last ran a block it refuses
	// (whose Block events the analyses see; forgotten when the thread
	// exits), and marks a Block event with FlagRepeat when its block is
	// one of them (tracetest.MarkRepeats is the rule). An analysis that spots loops
	// by their blocks (spin detection) needs no memory of its own then,
	// and ordinary runs (Fold) can hold such blocks: one holds only
	// blocks Repeats accepts, none of which repeats, or only blocks it
	// refuses. A block that repeats comes as an event of its own or
	// starts a periodic run. At most one analysis of a run asks (the
	// first one's is kept).
	// Information more than an encoding: without it parallel would keep
	// the rings itself, so it is not measured by switching it off.
	Repeats func(*BlockInfo) bool
	// CallMarks (with Calls): the analysis takes the calls and returns
	// of the call-tracking stage marked on Block events (FlagCalls), with
	// no stack pointer, wherever they come right before a block (a return
	// elsewhere, at rt_sigreturn or a thread's end, is still a Return
	// event): handing on the batch in place is cheaper than inserting
	// events into it. The engine ignores it (the stage is in Go).
	// Pays: parallel +7 % CPU on python3 without it, and RepeatEvents
	// needs it; profile (trms and paths too) +11 % on qsort and +8 % on
	// sqlite3 (docs/PERFORMANCE.md, session 9).
	CallMarks bool
	// RepeatEvents: the analysis takes Repeat events. A Repeat event
	// of thread Tid, at the Time of the first event after it, says that
	// the Size events after it (its period: Block events of Tid, the
	// engine's replay, emu/replay.c) are followed, once they are handled,
	// by Aux more copies of them, the j-th Addr·j ns later (ExpandRepeats
	// writes them out), and then by the stream's next event. The engine
	// makes them only if the call-tracking stage marks calls (CallMarks)
	// when there is one; the stage passes one on only when its own state
	// repeats over the period, else it writes the copies out. An analysis
	// can then charge the repetitions at once, when its state repeats too.
	// Pays: parallel +127 % and callgrind +25 % CPU on mutex_counter 4
	// 2000000 without it; callgrind's events ×19 there, ×80 on
	// omp_imbalance.
	RepeatEvents bool
}

// Combine is what the engine must deliver for two analyses (or groups of
// them): the events either wants, in the encodings both accept. A side
// that does not see the events an encoding changes accepts it.
func Combine(n, m Needs) Needs {
	w := n.Wants.Or(m.Wants)
	e := Encoding{
		BlockFilter: eitherBlockFilter(n, m, w),
		Fold:        everyBlockPredicate(n, m, n.Fold, m.Fold),
		FoldMemory:  everyBlockFlag(n, m, n.FoldMemory, m.FoldMemory),
		MergeMemory: (n.MergeMemory || !n.Memory) && (m.MergeMemory || !m.Memory) && w.Memory,
		Repeats:     n.Repeats,
		CallMarks:   everyBlockFlag(n, m, n.CallMarks, m.CallMarks) && w.Calls,
	}
	if e.Fold != nil {
		e.FoldCycles = everyBlockPredicate(n, m, n.FoldCycles, m.FoldCycles)
	}
	if e.Repeats == nil {
		e.Repeats = m.Repeats
	}
	e.RepeatEvents = everyBlockFlag(n, m, n.RepeatEvents, m.RepeatEvents) && w.seesBlocks() && (e.CallMarks || !w.Calls)
	return Needs{Wants: w, Encoding: e}
}

// everyBlockFlag combines an encoding that changes Block events: every
// side that sees blocks must accept it.
func everyBlockFlag(n, m Needs, nf, mf bool) bool {
	return (nf || !n.seesBlocks()) && (mf || !m.seesBlocks())
}

// everyBlockPredicate combines a per-block encoding (nf of n, mf of m): nil
// if a side that sees blocks has none, else true where every side that
// sees blocks says true.
func everyBlockPredicate(n, m Needs, nf, mf func(*BlockInfo) bool) func(*BlockInfo) bool {
	nb, mb := n.seesBlocks(), m.seesBlocks()
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

// eitherBlockFilter combines two sides' BlockFilter, given the combined
// wants w: a filter survives only if every side that wants blocks has one
// and nobody wants calls (then a block is wanted if either wants it).
func eitherBlockFilter(n, m Needs, w Wants) func(*BlockInfo) bool {
	nf, mf := n.BlockFilter, m.BlockFilter
	switch {
	case w.Calls || n.Blocks && nf == nil || m.Blocks && mf == nil:
		return nil
	case nf == nil:
		return mf
	case mf == nil:
		return nf
	}
	return func(b *BlockInfo) bool { return nf(b) || mf(b) }
}
