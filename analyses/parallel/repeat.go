package parallel

import (
	"slices"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

// Repeat events (trace.Encoding.RepeatEvents): the engine replays a loop
// whose blocks and events repeat, and the call-tracking stage hands on a
// Repeat event when its own state repeats too: the period after the event
// comes again count more times, each dt later. The analysis handles the
// period as usual and checks that it left the thread as it found it (its
// stacks, last blocks, spin count, clock advanced by dt) and that its time
// is one stretch of working pieces. Then every repetition would charge
// what the period charged, and lay the same pieces on the timeline: the
// charges are multiplied and the repetitions become one periodic piece
// (a long pattern: the period's pieces), which the sweep splits by key
// arithmetically, as it does a periodic run's. Otherwise the repetitions
// are handled one by one, as if written out. Either way the profile is
// the one of the written-out stream (TestRepeatEvents).

// charged is what one charge of the period added to a key's metrics.
type charged struct {
	k                    int32
	work, overhead, spin int64
}

// repeatState is what the analysis keeps while it handles a Repeat
// event's period.
type repeatState struct {
	rec      bool      // record charges into journal
	journal  []charged // the period's charges
	stack    []int32   // the thread's stacks before the period
	phys     []calls.RoutineID
	scratch  []trace.Event // a repetition written out
	entries  []patEntry    // the period's timeline
	periodic int           // a.periodic before the period
	// Repeat events charged at once and handled one by one (tests).
	charged, written int
}

// record notes a charge of the period (rec).
func (a *Analysis) record(k int32, work, overhead, spin int64) {
	a.rep.journal = append(a.rep.journal, charged{k, work, overhead, spin})
}

// recordAccount records account's charge of d ns in key k.
func (a *Analysis) recordAccount(k int32, d int64, spinning, runtime bool) {
	switch {
	case spinning && a.spinIdle:
		a.record(k, 0, 0, d)
	case spinning:
		a.record(k, d, d, d)
	case runtime:
		a.record(k, d, d, 0)
	default:
		a.record(k, d, 0, 0)
	}
}

// repeat handles the Repeat event batch[h] and its period, and returns
// the index of the period's last event.
func (a *Analysis) repeat(batch []trace.Event, h int) int {
	r := batch[h]
	n := int(r.Size)
	if h+n >= len(batch) {
		panic("parallel: a Repeat event's period is not in its piece of the stream") // the stage hands them on together
	}
	period := batch[h+1 : h+1+n]
	count, dt := int64(r.Aux), int64(r.Addr)
	t := a.thread(r.Tid, r.Time)
	// The period must begin as its repetitions will: the thread's run
	// goes on, at its clock, after the watermark.
	ok := n > 0 && count > 0 && dt > 0 && a.cur == t && !t.fresh && t.state == runnable &&
		period[0].Time == t.known && t.known >= a.swept
	for i := range period {
		ok = ok && period[i].Kind == trace.KindBlock && period[i].Tid == t.tid
	}
	var before struct {
		known, lastEnd int64
		pieces         int
		hist           [histLen]uint32
		cyc            int
		lastBlock      uint32
	}
	if ok {
		rs := &a.rep
		rs.stack = append(rs.stack[:0], t.stack...)
		rs.phys = append(rs.phys[:0], t.phys...)
		before.known, before.pieces, before.hist, before.cyc, before.lastBlock = t.known, len(t.pieces), t.hist, t.cyc, t.lastBlock
		before.lastEnd = -1
		if k := len(t.pieces); k > t.head {
			before.lastEnd = t.pieces[k-1].end
		}
		rs.journal, rs.rec, rs.periodic = rs.journal[:0], true, a.periodic
	}
	a.events(period)
	a.rep.rec = false
	if ok && a.repeatsAlike(t, before.known+dt, before.hist, before.cyc, before.lastBlock) &&
		a.periodTimeline(t, before.pieces, before.lastEnd, before.known, before.known+dt) {
		a.chargeRepeats(t, count, dt)
		a.rep.charged++
		return h + n
	}
	// One by one.
	rs := &a.rep
	rs.written++
	for j := int64(1); j <= count; j++ {
		rs.scratch = append(rs.scratch[:0], period...)
		for i := range rs.scratch {
			rs.scratch[i].Time += j * dt
		}
		a.events(rs.scratch)
	}
	return h + n
}

// repeatsAlike reports whether the period left t as it found it (stacks,
// last blocks, spin count as far as it matters), with its clock at known.
func (a *Analysis) repeatsAlike(t *thread, known int64, hist [histLen]uint32, cyc int, lastBlock uint32) bool {
	rs := &a.rep
	if t.known != known || a.cur != t || t.state != runnable || t.hist != hist || t.lastBlock != lastBlock ||
		min(t.cyc, spinCycle) != min(cyc, spinCycle) {
		return false
	}
	return slices.Equal(t.stack, rs.stack) && slices.Equal(t.phys, rs.phys)
}

// patEntry is a stretch of a long pattern: d ns of key k.
type patEntry struct {
	k int32
	d int64
}

// maxPatEntries bounds a Repeat's pattern: a longer period is handled
// repetition by repetition.
const maxPatEntries = 64

// periodTimeline collects, into a.rep.entries, the timeline the period
// [from, to) of t added: the end of the piece before it (which ended at
// lastEnd, −1: none, and the period may have extended) and the pieces
// from index first on. It reports whether they are working pieces that
// cover the period without a gap, in at most maxPatEntries stretches.
func (a *Analysis) periodTimeline(t *thread, first int, lastEnd, from, to int64) bool {
	es := a.rep.entries[:0]
	at := from
	add := func(k int32, s, e int64) bool {
		if s != at || e <= s {
			return false
		}
		at = e
		if n := len(es); n > 0 && es[n-1].k == k {
			es[n-1].d += e - s
			return true
		}
		es = append(es, patEntry{k, e - s})
		return len(es) <= maxPatEntries
	}
	ps := t.pieces
	if first > t.head && first <= len(ps) && lastEnd >= 0 {
		if p := &ps[first-1]; p.end > lastEnd {
			if !p.work || p.key < 0 || !add(p.key, lastEnd, p.end) {
				return false
			}
		}
	}
	for i := first; i < len(ps); i++ {
		p := &ps[i]
		if !p.work {
			return false
		}
		if pi, ok := p.periodic(); ok {
			if !t.pats[pi].entries(p.start, p.end, add) {
				return false
			}
			continue
		}
		if !add(p.key, p.start, p.end) {
			return false
		}
	}
	a.rep.entries = es
	return at == to && len(es) > 0
}

// entries hands add the stretches of [s, e) of a periodic piece of pattern
// p, block by block, as long as add accepts them.
func (p *pattern) entries(s, e int64, add func(k int32, s, e int64) bool) bool {
	if p.long != nil {
		return false // not in a period: a Repeat's own
	}
	var total int64
	for j := range int(p.period) {
		total += p.pd[j]
	}
	if total <= 0 {
		return false
	}
	// The block at s, and where it began.
	off := (s - p.origin) % total
	i, bs := 0, s-off
	for ; off >= p.pd[i]; i = (i + 1) % int(p.period) {
		off -= p.pd[i]
		bs += p.pd[i]
	}
	for x := s; x < e; i = (i + 1) % int(p.period) {
		be := min(bs+p.pd[i], e)
		if be > x && !add(p.pk[i], x, be) { // a block without instructions has no stretch
			return false
		}
		x, bs = be, bs+p.pd[i]
	}
	return true
}

// chargeRepeats charges count more repetitions of the period just handled
// on t, each dt long: its charges count times over, and one periodic piece
// of the period's timeline.
func (a *Analysis) chargeRepeats(t *thread, count, dt int64) {
	rs := &a.rep
	for _, c := range rs.journal {
		st := &a.keys.stats[c.k]
		st.work += count * c.work
		st.overhead += count * c.overhead
		st.spin += count * c.spin
		t.work += count * c.work
		t.overhead += count * c.overhead
		t.spin += count * c.spin
	}
	a.periodic += int(count) * (a.periodic - rs.periodic)
	start := t.known
	end := start + count*dt
	lp := &longPattern{keys: make([]int32, len(rs.entries)), before: make([]int64, len(rs.entries)+1)}
	for i, e := range rs.entries {
		lp.keys[i] = e.k
		lp.before[i+1] = lp.before[i] + e.d
	}
	a.addPattern(t, start, end, &pattern{origin: start, long: lp})
	a.ran(t, end)
}

// longPattern is the pattern of a Repeat's periodic piece: its period's
// stretches of keys, keys[i] from before[i] to before[i+1] ns into each
// period (before[len(keys)] is the period).
type longPattern struct {
	keys   []int32
	before []int64
}

// share returns how much of [origin, x) the piece spends in stretch i.
func (l *longPattern) share(origin int64, i int, x int64) int64 {
	total := l.before[len(l.keys)]
	q, r := (x-origin)/total, (x-origin)%total
	d := l.before[i+1] - l.before[i]
	return q*d + min(max(r-l.before[i], 0), d)
}
