package trms

import "slices"

// renumber is procedure counterOverflow of TRMS Fig. 13: a global
// renumbering of timestamps that preserves every comparison the read
// procedure makes (ts_t[ℓ] vs wts[ℓ], ts_t[ℓ] vs S_t[i].ts) so that the
// computed RMS and TRMS values do not change.
//
// Notation: A = a_1 < ... < a_m, the timestamps of all pending activations
// (they are distinct: each is a value of count taken at a call), with the
// virtual a_0 = 0 and a_{m+1} = +inf. Activation a_p becomes 3p. The figure
// has two typos, fixed here as its text (§4.4) describes: line 10 picks
// the max q with a_q <= wts[ℓ], and line 13 the max j with a_j <= ts_t[ℓ].
// Timestamp 0 ("never accessed", "never written") stays 0; a nonzero ts_t
// below a_1 may become 0, which the read procedure treats identically.
func (e *engine[T]) renumber() {
	// Lines 1-4: the sorted set A of active timestamps.
	tids := make([]uint32, 0, len(e.threads))
	for tid := range e.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	var a []T
	for _, tid := range tids {
		for _, f := range e.threads[tid].stack {
			a = append(a, f.ts)
		}
	}
	slices.Sort(a)

	// Lines 9-17: thread timestamps, which need the old wts values.
	for _, tid := range tids {
		for _, cr := range e.threads[tid].ts.chunks {
			wc := e.wts.lookup(cr.key)
			for i, ts := range cr.c.ts {
				if ts == 0 {
					continue
				}
				var w T
				if wc != nil {
					w = wc.ts[i]
				}
				cr.c.ts[i] = remapThread(a, ts, w)
			}
		}
	}
	// Line 18: write timestamps.
	for _, cr := range e.wts.chunks {
		for i, w := range cr.c.ts {
			if w != 0 {
				cr.c.ts[i] = T(3*rank(a, w) + 1)
			}
		}
	}
	// Lines 5-8: activation timestamps become multiples of 3.
	for _, tid := range tids {
		st := e.threads[tid].stack
		for i := range st {
			st[i].ts = T(3 * rank(a, st[i].ts))
		}
	}
	// Line 19.
	e.count = T(3*len(a) + 3)
	e.renumberings++
}

// remapThread renumbers ts_t[ℓ] = ts (nonzero) given wts[ℓ] = w (Fig. 13
// lines 10-17).
func remapThread[T stamp](a []T, ts, w T) T {
	if w == 0 { // never written: only the order w.r.t. activations matters
		return T(3 * rank(a, ts))
	}
	q := rank(a, w) // line 10: a_q <= w < a_{q+1}
	var lo T
	if q > 0 {
		lo = a[q-1]
	}
	if ts < lo || (q < len(a) && ts >= a[q]) { // lines 12-14
		return T(3 * rank(a, ts))
	}
	switch { // a_q <= ts < a_{q+1}
	case w == ts: // line 15: t was the last writer
		return T(3*q + 1)
	case w > ts: // line 16: written after t's access
		return T(3 * q)
	default: // line 17: accessed by t after the write
		return T(3*q + 2)
	}
}

// rank returns the number of elements of the sorted a that are <= x, i.e.
// the 1-based index of the last a_j <= x (0 if none).
func rank[T stamp](a []T, x T) int {
	l, r := 0, len(a)
	for l < r {
		m := int(uint(l+r) >> 1)
		if a[m] <= x {
			l = m + 1
		} else {
			r = m
		}
	}
	return l
}
