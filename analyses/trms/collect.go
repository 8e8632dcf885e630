package trms

import (
	"cmp"
	"slices"

	"emuprof/analyses/calls"
)

// tupleKey identifies a tuple: routine (or calling context) and input size.
type tupleKey struct {
	id uint32
	n  uint64
}

// threadStats is what one thread's completed activations produced. It
// outlives the thread's run-time state.
type threadStats struct {
	tid         uint32
	cost        uint64              // total cost counted for the thread
	rms, trms   map[tupleKey]*Tuple // per routine, keyed by RMS / TRMS
	crms, ctrms map[tupleKey]*Tuple // per calling context (CCT mode)
	cct         *calls.CCT          // nil unless CCT mode
	// cache fronts the four maps: most activations repeat a recent
	// (routine, input size), and a map lookup per return was the
	// analysis's largest cost on call-heavy guests.
	cache [4]tupleCache
}

// tupleCache is a direct-mapped cache of tuple pointers.
type tupleCache [256]struct {
	k tupleKey
	t *Tuple
}

// collector gathers the tuples of every thread.
type collector struct {
	cct     bool
	threads map[uint32]*threadStats
	// hook, when set (tests), sees every completed activation.
	hook func(tid uint32, r calls.RoutineID, a activation)
}

func newCollector(cct bool) *collector {
	return &collector{cct: cct, threads: make(map[uint32]*threadStats)}
}

func (c *collector) thread(tid uint32) *threadStats {
	s, ok := c.threads[tid]
	if !ok {
		s = &threadStats{
			tid:  tid,
			rms:  make(map[tupleKey]*Tuple),
			trms: make(map[tupleKey]*Tuple),
		}
		if c.cct {
			s.crms = make(map[tupleKey]*Tuple)
			s.ctrms = make(map[tupleKey]*Tuple)
			s.cct = calls.NewCCT()
		}
		c.threads[tid] = s
	}
	return s
}

// sortedThreads returns the threads in increasing tid order.
func (c *collector) sortedThreads() []*threadStats {
	out := make([]*threadStats, 0, len(c.threads))
	for _, s := range c.threads {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *threadStats) int { return cmp.Compare(a.tid, b.tid) })
	return out
}

// collect implements "collect(rtn, rms, cost)" of PLDI'12 Fig. 6 and TRMS
// Fig. 11 for both metrics at once.
func (c *collector) collect(s *threadStats, r calls.RoutineID, ctx calls.NodeID, a *activation) {
	if c.hook != nil {
		c.hook(s.tid, r, *a)
	}
	addTo(s.rms, &s.cache[0], tupleKey{uint32(r), a.rms}, a)
	addTo(s.trms, &s.cache[1], tupleKey{uint32(r), a.trms}, a)
	if s.cct != nil {
		addTo(s.crms, &s.cache[2], tupleKey{uint32(ctx), a.rms}, a)
		addTo(s.ctrms, &s.cache[3], tupleKey{uint32(ctx), a.trms}, a)
	}
}

func addTo(m map[tupleKey]*Tuple, c *tupleCache, k tupleKey, a *activation) {
	e := &c[(k.id*31+uint32(k.n))&uint32(len(c)-1)]
	if e.t == nil || e.k != k {
		t, ok := m[k]
		if !ok {
			t = &Tuple{N: k.n}
			m[k] = t
		}
		e.k, e.t = k, t
	}
	e.t.add(a)
}

// idPoints lists the tuples of m as points sorted by (id, N).
func idPoints(m map[tupleKey]*Tuple) []Point {
	out := make([]Point, 0, len(m))
	for k, t := range m {
		out = append(out, Point{ID: k.id, Tuple: *t})
	}
	sortPoints(out)
	return out
}

func sortPoints(ps []Point) {
	slices.SortFunc(ps, func(a, b Point) int {
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.N, b.N)
	})
}
