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
