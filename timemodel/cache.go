package timemodel

// cache is one set-associative cache with LRU replacement. Each set keeps
// its ways' tags most recently used first; tag 0 is an empty way (tags are
// line numbers + 1).
type cache struct {
	ways int
	mask uint64   // sets − 1
	tags []uint64 // sets × ways
}

func newCache(size, ways, line int) *cache {
	sets := size / line / ways
	return &cache{ways: ways, mask: uint64(sets - 1), tags: make([]uint64, sets*ways)}
}

// access looks line up, makes it the set's most recent, and reports whether
// it was there (a miss fills it, evicting the least recent way).
func (c *cache) access(line uint64) bool {
	set := c.tags[int(line&c.mask)*c.ways:][:c.ways]
	tag := line + 1
	i := 0
	for i < len(set) && set[i] != tag {
		i++
	}
	hit := i < len(set)
	if !hit {
		i = len(set) - 1
	}
	copy(set[1:i+1], set[:i])
	set[0] = tag
	return hit
}

// drop removes line if present (a coherence invalidation).
func (c *cache) drop(line uint64) {
	set := c.tags[int(line&c.mask)*c.ways:][:c.ways]
	for i, t := range set {
		if t == line+1 {
			copy(set[i:], set[i+1:])
			set[len(set)-1] = 0
			return
		}
	}
}

// core is one core's private caches and prefetcher.
type core struct {
	l1, l2  *cache
	streams []uint64 // each stream's last line + 1 (0: free)
	next    int      // the stream to replace next (round robin)
}

// lineState is the coherence state of a line some core wrote: its last
// writer with the span of virtual time over which that core kept writing
// it, and the other writer's span (a span goes on while the core writes
// the line at least once per coherence.window ns).
type lineState struct {
	owner         uint32 // the core that last wrote it
	shared        bool   // another core read it since
	first, last   int64  // virtual ns of the owner's span
	prev          uint32 // the other writer (0: none)
	pfirst, plast int64
}

// other returns the span of the latest writer other than core id.
func (st *lineState) other(id uint32) (uint32, int64, int64) {
	if st.owner != id {
		return st.owner, st.first, st.last
	}
	return st.prev, st.pfirst, st.plast
}

// own returns core id's span, ok false if it is neither writer.
func (st *lineState) own(id uint32) (first, last int64, ok bool) {
	switch id {
	case st.owner:
		return st.first, st.last, true
	case st.prev:
		return st.pfirst, st.plast, true
	}
	return 0, 0, false
}

// wrote records core id's write at now: it becomes the owner, its span
// going on if it wrote within win ns, the other writer kept as prev.
func (st *lineState) wrote(id uint32, now, win int64) {
	if st.owner != id {
		if st.prev == id {
			st.owner, st.first, st.last, st.prev, st.pfirst, st.plast = id, st.pfirst, st.plast, st.owner, st.first, st.last
		} else {
			st.owner, st.first, st.last, st.prev, st.pfirst, st.plast = id, now, now, st.owner, st.first, st.last
		}
	}
	if now > st.last+win || now < st.first-win {
		st.first, st.last = now, now
	}
	st.first, st.last = min(st.first, now), max(st.last, now)
}

// hierarchy is the cache model of one address space: private L1D and L2
// per core (a guest thread), a shared L3, and coherence between cores.
type hierarchy struct {
	t                      *Table
	shift                  uint
	l2ps, l3ps, memps      int64
	prefps, prefl3ps       int64 // a prefetched line from memory, from L2 or L3
	cohps                  int64
	l3                     *cache
	cores                  map[uint32]*core
	order                  []*core // cores in creation order (invalidations)
	ids                    []uint32
	lines                  map[uint64]lineState // lines written while more than one core exists
	pages                  map[uint64]*pageSet  // pages touched, by chunk of pageChunk pages
	recent                 [8]recentChunk       // chunks looked up lately, by number mod 8 (stack and heap alternate)
	seen                   [16]uint64           // pages touched before, + 1, by page number mod 16 (0: none)
	lastID                 uint32               // the core last looked up (lastCore)
	lastCore               *core
	sole                   uint64   // when one core exists, its id + 1 (else 0)
	l1tags                 []uint64 // when one core exists, its L1D's tags, mask and ways
	l1mask                 uint64
	l1ways                 int
	pageps                 int64
	win, contps, lockps    int64 // coherence.window (ns), .contended and .locked (ps)
	base                   int64 // the running slice's start (ns)
	alone                  bool  // no other thread can run during the slice
	atomics                int   // locked instructions of the running block not yet matched to an access
	atomLine               uint64
	Contended, Locked      uint64    // accesses to a line both cores write; of them, locked ones
	hide                   int64     // of the last access's cost, the misses' ps that work after it can hide behind
	faulted                bool      // the last access touched a new page (a trap: nothing hides across it)
	Misses                 [4]uint64 // accesses served by L2, L3, memory, another core
	Prefetched, PageFaults uint64
}

func newHierarchy(t *Table) *hierarchy {
	h := &hierarchy{t: t, l3: newCache(t.L3Size, t.L3Ways, t.Line), cores: map[uint32]*core{},
		lines: map[uint64]lineState{}, pages: map[uint64]*pageSet{},
		l2ps: t.ps(t.L2Latency) * 100 / t.MLP, l3ps: t.ps(t.L3Latency) * 100 / t.MLP, memps: t.ps(t.MemLatency) * 100 / t.MLP,
		prefps: t.ps(t.PrefetchCost), prefl3ps: t.ps(t.PrefetchCacheCost), cohps: t.ps(t.CoherenceLatency), pageps: t.PageFault * 1000,
		atomLine: ^uint64(0), win: t.CoherenceWindow, contps: t.ps(t.CoherenceContended), lockps: t.ps(t.CoherenceLocked)}
	for l := t.Line; l > 1; l >>= 1 {
		h.shift++
	}
	return h
}

// pageSet is a bitmap of the pages of one chunk that were touched: a bit
// test instead of a map lookup per access (the model's dearest step).
type pageSet [pageChunk / 64]uint64

const pageChunk = 1 << 15 // pages per chunk (128 MiB)

type recentChunk struct {
	key uint64 // chunk number + 1 (0: none)
	set *pageSet
}

// touch marks page p touched and reports whether it was the first time.
func (h *hierarchy) touch(p uint64) bool {
	e := &h.seen[p%uint64(len(h.seen))]
	if *e == p+1 {
		return false
	}
	*e = p + 1
	k := p/pageChunk + 1
	r := &h.recent[k%uint64(len(h.recent))]
	if r.key != k {
		r.set = h.pages[k]
		if r.set == nil {
			r.set = new(pageSet)
			h.pages[k] = r.set
		}
		r.key = k
	}
	w, b := &r.set[p%pageChunk/64], uint64(1)<<(p%64)
	if *w&b != 0 {
		return false
	}
	*w |= b
	return true
}

func (h *hierarchy) core(id uint32) *core {
	if h.lastCore != nil && id == h.lastID {
		return h.lastCore
	}
	c := h.cores[id]
	if c == nil {
		c = &core{l1: newCache(h.t.L1Size, h.t.L1Ways, h.t.Line), l2: newCache(h.t.L2Size, h.t.L2Ways, h.t.Line),
			streams: make([]uint64, h.t.PrefetchStreams)}
		h.cores[id] = c
		h.order = append(h.order, c)
		h.ids = append(h.ids, id)
		h.sole = 0
		if len(h.order) == 1 {
			h.sole, h.l1tags, h.l1mask, h.l1ways = uint64(id)+1, c.l1.tags, c.l1.mask, c.l1.ways
		}
	}
	h.lastID, h.lastCore = id, c
	return c
}

// l1hit reports an access that access would find, on the only core, in
// the most recent way of its L1D set: one that costs nothing and changes no
// state (its page was touched when the line was filled; TestFastPathsAsSlow).
func (h *hierarchy) l1hit(id uint32, addr uint64, size uint32) bool {
	line := addr >> h.shift
	if uint64(id)+1 != h.sole || (addr+uint64(size)-1)>>h.shift != line { // size 0 (access: 1) passes only within a line
		return false
	}
	return h.l1tags[int(line&h.l1mask)*h.l1ways] == line+1
}

// access charges core id's access of size bytes at addr at virtual time
// now (ns), in picoseconds beyond an L1D hit (which the instruction cost
// includes).
func (h *hierarchy) access(id uint32, addr uint64, size uint32, write bool, now int64) int64 {
	if size == 0 {
		size = 1
	}
	c := h.core(id)
	var ps int64
	h.hide, h.faulted = 0, false
	first, last := addr>>h.shift, (addr+uint64(size)-1)>>h.shift
	if first == last && h.sole != 0 {
		// line's path on the only core
		if !c.l1.access(first) {
			ps = h.fill(c, first, false)
		}
	} else {
		for line := first; line <= last; line++ {
			ps += h.line(id, c, line, write, now)
		}
	}
	for p := addr >> 12; p <= (addr+uint64(size)-1)>>12; p++ {
		if h.touch(p) {
			h.PageFaults++
			ps += h.pageps
			h.faulted = h.pageps > 0
		}
	}
	return ps
}

// line charges one line's access. Threads run one at a time, a quantum
// each, so two threads that write one line "at the same time" run at the
// same virtual times but one after the other: an access inside the span of
// virtual time over which another core kept writing the line is a
// coherence miss, as it would be with the two interleaved on real cores
// (the line ping-pongs). Outside such spans the usual MESI-like rule
// holds: a write invalidates the other cores' copies, and the first access
// after another core's write takes the line from that core.
func (h *hierarchy) line(id uint32, c *core, line uint64, write bool, now int64) int64 {
	remote := false
	if len(h.order) > 1 {
		st, known := h.lines[line]
		var extra int64
		contended := known && h.contended(&st, id, now)
		if contended {
			// Both cores keep writing the line (a ping-pong, or a
			// mutex both take): natively a store to it waits in the
			// store queue and a load of it forwards from there, so a
			// transfer per access is far too dear; what an access
			// pays is the average calibthreads.c measures per kind.
			h.Contended++
			switch {
			case line == h.atomLine: // the locked op's other half
				h.atomLine = ^uint64(0)
			case h.atomics > 0:
				h.atomics--
				h.atomLine = line
				h.Locked++
				extra = h.lockps
			case !write && h.writer(&st, id, now):
				extra = h.contps
			}
		} else if known && st.owner != id && !st.shared {
			remote = true // modified in another core's cache
		}
		switch {
		case write:
			if !known || st.owner != id || st.shared {
				h.invalidate(id, line)
			}
			st.shared = false
			st.wrote(id, now, h.win)
			h.lines[line] = st
		case known && st.owner != id && !st.shared:
			st.shared = true
			h.lines[line] = st
		}
		if contended {
			c.l1.access(line)
			return extra
		}
	}
	if c.l1.access(line) {
		return 0
	}
	return h.fill(c, line, remote)
}

// fill charges an L1D miss of line on core c: from L2, L3, memory or,
// remote, another core's cache.
func (h *hierarchy) fill(c *core, line uint64, remote bool) int64 {
	// L2 and L3 are indexed by physical address: the line's page is
	// placed in a pseudo-random frame (deterministic), so that large
	// power-of-two strides do not all fall into a few sets, as they do not
	// on a real machine whose page frames are scattered.
	pl := h.physical(line)
	l2 := c.l2.access(pl)
	l3 := h.l3.access(pl)
	var ps int64
	pref := h.prefl3ps
	switch {
	case remote:
		h.Misses[3]++
		return h.cohps
	case l2:
		h.Misses[0]++
		ps = h.l2ps
	case l3:
		h.Misses[1]++
		ps = h.l3ps
	default:
		h.Misses[2]++
		ps, pref = h.memps, h.prefps
	}
	if c.stream(line) && ps > pref {
		h.Prefetched++
		ps = pref
	}
	h.hide += ps
	return ps
}

// contended says whether another core keeps writing line over the
// virtual time core id accesses it at now. The engine runs one thread's
// quantum, then another's over the same virtual time: a span of the other
// core's writes that reaches now (within coherence.window) is known; the
// other core's writes over the rest of this slice are not yet, so a span
// that reached the slice's start is taken to go on through it unless the
// slice runs alone (every other thread blocked: their spans are over).
func (h *hierarchy) contended(st *lineState, id uint32, now int64) bool {
	o, f, l := st.other(id)
	return o != 0 && now >= f-h.win && (now <= l+h.win || !h.alone && l >= h.base-h.win)
}

// writer says whether core id itself keeps writing line at now (its
// reads then wait for the line's round trips; a core that only reads a
// line another writes reads a shared copy, cheaply).
func (h *hierarchy) writer(st *lineState, id uint32, now int64) bool {
	f, l, ok := st.own(id)
	return ok && now >= f-h.win && (now <= l+h.win || l >= h.base-h.win)
}

// physical returns the line number in the pseudo-physical address space:
// the page number goes through a fixed bijective mix, the line within the
// page stays.
func (h *hierarchy) physical(line uint64) uint64 {
	per := uint(12) - h.shift // lines per page, log2
	page := line >> per
	page ^= page >> 17
	page *= 0xed5ad4bb
	page ^= page >> 11
	return page<<per | line&(1<<per-1)
}

// invalidate drops line from every core's private caches but id's.
func (h *hierarchy) invalidate(id uint32, line uint64) {
	for i, o := range h.order {
		if h.ids[i] != id {
			o.l1.drop(line)
			o.l2.drop(line)
		}
	}
}

// stream feeds an L1D miss to the prefetcher and reports whether a
// sequential stream (ascending or descending by one line) predicted it.
func (c *core) stream(line uint64) bool {
	for i, s := range c.streams {
		if s != 0 && (line+1 == s || line == s || line+2 == s) {
			// s-1 is the stream's last line: line is its successor or
			// predecessor.
			c.streams[i] = line + 1
			return line != s-1
		}
	}
	if len(c.streams) > 0 {
		c.streams[c.next] = line + 1
		c.next = (c.next + 1) % len(c.streams)
	}
	return false
}
