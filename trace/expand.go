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
