package trace

// The canonical expansions: each turns a stream in one encoding (Encoding)
// into the stream an analysis that does not accept it would see.

// ExpandRepeats returns evs with every Repeat event replaced by the copies
// it stands for (Encoding.RepeatEvents): the stream an analysis that takes no
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

// ExpandCallMarks returns evs with the calls and returns marked on Block
// events (FlagCalls, Encoding.CallMarks) written out as the Return and
// Call events before the block that they stand for: the stream an analysis
// that takes no marks would see, but for the marked blocks' Aux, which is
// 0 (the marks took the stack pointer's place). routine gives a calling
// context's routine id (the call-tracking stage's calling-context tree);
// the activations that marks end are known from the Call events and marks
// before them, so evs must start where its threads' stacks are empty.
// evs itself is not changed.
func ExpandCallMarks(evs []Event, routine func(ctx uint32) uint32) []Event {
	out := make([]Event, 0, len(evs))
	stacks := map[uint32][]uint32{} // per thread, the contexts of its activations
	for _, e := range evs {
		stack := stacks[e.Tid]
		switch {
		case e.Kind == KindCall:
			stack = append(stack, uint32(e.Aux))
		case e.Kind == KindReturn && len(stack) > 0:
			stack = stack[:len(stack)-1]
		case e.Kind == KindBlock && e.Flags&FlagCalls != 0:
			returns, call := e.CallMarks()
			for range returns {
				ctx := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				out = append(out, Event{Kind: KindReturn, Tid: e.Tid, Time: e.Time, Block: routine(ctx), Aux: uint64(ctx)})
			}
			if call != 0 {
				stack = append(stack, call-1)
				out = append(out, Event{Kind: KindCall, Tid: e.Tid, Time: e.Time, Block: routine(call - 1), Addr: e.Addr, Aux: uint64(call - 1)})
			}
			e.Flags &^= FlagCalls
			e.Aux = 0
		}
		stacks[e.Tid] = stack
		out = append(out, e)
	}
	return out
}

// ExpandPeriodicRuns returns evs with every periodic run (Event.Period,
// Encoding.FoldCycles) written out as a Block event per block, each from
// its thread's history as the run's rule says: its i-th block is the
// block the thread ran p − (i mod p) blocks before it (an ordinary run
// counts as its blocks, of which only the last is named). A written-out
// block has its block's address, instructions and terminator from
// blocks, the time of the run's start plus nsPerInsn per instruction
// before it (so only for runs without a time model or speedups), Aux 0
// (the engine keeps no stack pointer of them) and the run's flags but
// the period. Ordinary runs stay as they are. evs itself is not changed.
func ExpandPeriodicRuns(evs []Event, blocks BlockView, nsPerInsn int64) []Event {
	out := make([]Event, 0, len(evs))
	hists := map[uint32]*[4]uint32{} // per thread, its last blocks, most recent first
	push := func(h *[4]uint32, id uint32) { *h = [4]uint32{id, h[0], h[1], h[2]} }
	for _, e := range evs {
		switch e.Kind {
		case KindThreadExit:
			delete(hists, e.Tid)
		case KindBlock:
			h := hists[e.Tid]
			if h == nil {
				h = new([4]uint32)
				hists[e.Tid] = h
			}
			p := e.Period()
			if p == 0 {
				for range e.Folded {
					push(h, 0)
				}
				push(h, e.Block)
				break
			}
			t := e.Time
			for range int(e.Folded) + 1 {
				id := h[p-1]
				b := blocks.Get(id)
				out = append(out, Event{Kind: KindBlock, Tid: e.Tid, Time: t, Block: id, Addr: b.Addr,
					Size: b.Insns, End: b.End, Flags: e.Flags &^ (7 << 1)})
				t += int64(b.Insns) * nsPerInsn
				push(h, id)
			}
			continue
		}
		out = append(out, e)
	}
	return out
}
