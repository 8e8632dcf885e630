package parallel

import "slices"

// edge is a change of the number of working (dw) or idle (di) threads.
type edge struct {
	t      int64
	dw, di int32
}

// segment is a stretch of time with a constant number of working and idle
// threads.
type segment struct {
	start, end int64
	nw, ni     int32
}

// sweep integrates idleness over [a.swept, to): the number of working
// threads is piecewise constant between the ends of the pending pieces
// (spec §4.2: apply every change at t before integrating [t, t')); each
// working piece receives n_idle·dt in the numerator of its working-thread
// count (TM09 §2.1's n_w̄/n_w per unit of work, as an integral).
func (a *Analysis) sweep(to int64) {
	from := a.swept
	if to <= from {
		return
	}
	evs := a.evs[:0]
	for _, t := range a.all {
		ps := t.pieces[t.head:]
		for i := 0; i < len(ps) && ps[i].start < to; {
			work := ps[i].work
			s, e := max(ps[i].start, from), ps[i].end
			j := i + 1
			for j < len(ps) && ps[j].start == e && ps[j].work == work && e < to {
				e = ps[j].end
				j++
			}
			e = min(e, to)
			if e > s {
				if work {
					evs = append(evs, edge{s, 1, 0}, edge{e, -1, 0})
				} else {
					evs = append(evs, edge{s, 0, 1}, edge{e, 0, -1})
				}
			}
			i = j
		}
		if a.threads && t.state == blocked {
			if s := max(t.wait.start, from); s < to {
				evs = append(evs, edge{s, 0, 1}, edge{to, 0, -1})
			}
		}
	}
	slices.SortFunc(evs, func(x, y edge) int {
		switch {
		case x.t < y.t:
			return -1
		case x.t > y.t:
			return 1
		}
		return 0
	})
	segs := a.segs[:0]
	n := int32(a.cfg.CPUs)
	var nw, ni int32
	at := from
	for i := 0; i <= len(evs); i++ {
		tt := to
		if i < len(evs) {
			tt = evs[i].t
		}
		if tt > at {
			segs = append(segs, segment{at, tt, nw, ni})
			at = tt
		}
		if i < len(evs) {
			nw += evs[i].dw
			ni += evs[i].di
		}
	}
	for i := range segs {
		s := &segs[i]
		if s.nw > n {
			s.nw = n // cannot happen with the CPU model
		}
		if !a.threads {
			s.ni = n - s.nw
		}
		if s.nw == 0 {
			a.unattr += int64(s.ni) * (s.end - s.start)
		}
	}
	for _, t := range a.all {
		a.attribute(t, segs, to)
	}
	a.evs, a.segs = evs, segs
	a.swept = to
	a.blame(to, false)
}

// attribute charges t's working pieces before to with their idleness over
// segs, and drops what was swept. A piece within one segment (nearly all:
// a segment ends only when some thread starts or stops working) takes a
// short path; t's own share is summed per segment.
func (a *Analysis) attribute(t *thread, segs []segment, to int64) {
	ps := t.pieces
	h := t.head
	si := 0
	var acc int64 // t's idleness in segs[si] not yet added to t.idle
	for h < len(ps) && ps[h].start < to {
		p := &ps[h]
		if p.work {
			if si < len(segs) && segs[si].end <= p.start {
				a.threadIdle(t, &segs[si], acc)
				acc = 0
				si++
				for si < len(segs) && segs[si].end <= p.start {
					si++
				}
			}
			if si < len(segs) && p.key >= 0 && p.end <= segs[si].end && p.start >= segs[si].start {
				// Within segs[si].
				if s := &segs[si]; s.nw != 0 && s.ni != 0 {
					a.idleTo(p.key, s, p.end-p.start)
					acc += int64(s.ni) * (p.end - p.start)
				}
			} else {
				a.idleSpan(t, p, segs[si:])
			}
		}
		if p.end > to {
			p.start = to
			break
		}
		if pi, ok := p.periodic(); ok {
			t.patHead = pi + 1
		}
		h++
	}
	if si < len(segs) {
		a.threadIdle(t, &segs[si], acc)
	}
	t.head = h
	if h == len(ps) {
		t.pieces, t.head = ps[:0], 0
		t.pats, t.patHead = t.pats[:0], 0
	} else if pending := len(ps) - h; h >= pending || (h > cap(ps)-len(ps) && 4*h >= pending) {
		// Move the pending pieces to the front: when at least as many
		// were swept (so the slice stays within twice what is
		// pending), or when the swept ones leave more room than the
		// end of the backing array and are at least a quarter as many
		// (so appends reuse it instead of growing it). Each piece moved
		// is paid by at most four swept ones.
		n := copy(ps, ps[h:])
		t.pieces, t.head = ps[:n], 0
		if ph := t.patHead; ph > 0 {
			// Their patterns too, renumbered.
			t.pats = t.pats[:copy(t.pats, t.pats[ph:])]
			t.patHead = 0
			for i := range t.pieces {
				if t.pieces[i].key < 0 {
					t.pieces[i].key += int32(ph)
				}
			}
		}
	}
}

// threadIdle adds v, t's idleness in segment s, to t's.
func (a *Analysis) threadIdle(t *thread, s *segment, v int64) {
	if v == 0 {
		return
	}
	if t.idle == nil {
		t.idle = make([]int64, a.cfg.CPUs+1)
	}
	t.idle[s.nw] += v
}

// idleSpan charges working piece p of t, which starts in segs[0] or later,
// with its idleness over the segments it overlaps.
func (a *Analysis) idleSpan(t *thread, p *piece, segs []segment) {
	for j := 0; j < len(segs) && segs[j].start < p.end; j++ {
		s := segs[j]
		o := min(s.end, p.end) - max(s.start, p.start)
		if o <= 0 || s.nw == 0 || s.ni == 0 {
			continue
		}
		if pi, ok := p.periodic(); ok {
			// A periodic piece: to each block of its pattern, its
			// blocks within the overlap.
			pat := &t.pats[pi]
			from, to := max(s.start, p.start), min(s.end, p.end)
			if l := pat.long; l != nil {
				for i, k := range l.keys {
					a.idleTo(k, &s, l.share(pat.origin, i, to)-l.share(pat.origin, i, from))
				}
			} else {
				for i := range int(pat.period) {
					a.idleTo(pat.pk[i], &s, pat.share(i, to)-pat.share(i, from))
				}
			}
		} else {
			a.idleTo(p.key, &s, o)
		}
		a.threadIdle(t, &s, int64(s.ni)*o)
	}
}

// idleTo adds the idleness of o ns of key k's work in segment s.
func (a *Analysis) idleTo(k int32, s *segment, o int64) {
	st := &a.keys.stats[k]
	if st.idle == nil {
		st.idle = make([]int64, a.cfg.CPUs+1)
	}
	st.idle[s.nw] += int64(s.ni) * o
}

// sweepPending sweeps the timeline up to where every thread has been seen
// (called after each batch of events), once that watermark is sweepNs/sweepDiv
// past what was swept. A thread making many system calls ends a batch at
// each, and a sweep after each such batch handled a piece or two for the
// cost of a pass over every thread; this way each sweep handles at least
// sweepNs/sweepDiv of time. A sweep's results do not depend on where the
// timeline is cut (a segment's n_idle·dt is additive, a periodic piece's
// shares telescope), so this only changes how often it runs. The pending
// pieces stay within sweepNs/sweepDiv of time per thread more than sweeping
// after every batch keeps: a longer wait lets them outgrow the caches.
//
// It runs after every piece of the stream the call-tracking stage hands
// on (a few events on lock-heavy code), so it first tries two bounds of
// the watermark that need no pass over the threads: the latest pick's
// clock, and the clock of the runnable thread that held the watermark
// back last time (a thread's clock never goes back while it is runnable).
func (a *Analysis) sweepPending() {
	d := a.sweepNs / sweepDiv
	if a.pickLB-a.swept < d {
		return // the watermark is at most pickLB
	}
	if t := a.limit; t != nil && t.state == runnable && t.known-a.swept < d {
		return // nor more than a runnable thread's clock
	}
	w, t := a.watermark()
	if w-a.swept >= d {
		a.sweep(w)
		return
	}
	a.limit = t
}

// sweepDiv: a sweep waits for sweepNs/sweepDiv of new time.
const sweepDiv = 8

// watermark returns a time before which no running interval can arrive any
// more (package comment), and the runnable thread whose clock it is (nil:
// it is pickLB).
func (a *Analysis) watermark() (int64, *thread) {
	w := a.pickLB
	var lim *thread
	for _, t := range a.all {
		if t.state == runnable && t.known < w {
			w, lim = t.known, t
		}
	}
	return w, lim
}
