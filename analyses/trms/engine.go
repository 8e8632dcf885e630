package trms

import (
	"fmt"
	"slices"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

// frame is one shadow stack entry S_t[i] of PLDI'12 Fig. 6 / TRMS Fig. 11,
// carrying the partial RMS and the partial TRMS of the same activation.
type frame[T stamp] struct {
	ts     T // activation timestamp S_t[i].ts
	rtn    calls.RoutineID
	ctx    calls.NodeID
	nested bool // a pending activation of the same routine lies below
	// Partial read memory sizes (Invariants 1 and 2 of the papers): the
	// RMS / TRMS of activation i is the sum of the partials from i to top.
	rms, trms int64
	// Induced first-accesses of the subtree so far (external, thread) and
	// of the activation itself.
	ext, thr, extSelf, thrSelf uint64
	cost0                      uint64 // thread cost at entry
	child                      uint64 // cumulative cost of completed callees
}

// thread is the run-time state of one guest thread.
type thread[T stamp] struct {
	tid     uint32
	stack   []frame[T]
	ts      *table[T] // ts_t: latest access by this thread, per cell
	cost    uint64
	pending []uint32 // pending activations per routine (for real cost)
	stats   *threadStats
}

// engine computes RMS and TRMS in one pass. T is the timestamp storage.
type engine[T stamp] struct {
	shift        uint  // log2 of the memory resolution
	insns        bool  // cost = instructions (else basic blocks)
	timeNs       int64 // cost = virtual ns: Size × timeNs (0: not time)
	blockInsns   func(id uint32) uint32
	count        T // the global counter "count" of Fig. 11
	limit        T // largest value count may take (2^CounterBits - 1)
	wts          *table[T]
	pool         *chunkPool[T] // the shadow memories' chunks
	threads      map[uint32]*thread[T]
	cur          *thread[T]
	col          *collector
	renumberings int
	err          error
	// cct names the routine of a call marked on a Block event
	// (trace.Encoding.CallMarks; nil: the profiler takes no marks).
	cct *calls.CCT
}

func newEngine[T stamp](cfg *Config, col *collector) *engine[T] {
	pool := &chunkPool[T]{}
	e := &engine[T]{
		insns: cfg.Cost == CostInsns,
		// Under a time model Size is ns (and there are no runs).
		blockInsns: cfg.BlockInsns,
		timeNs:     timeNs(cfg),
		pool:       pool,
		wts:        newTable(pool),
		threads:    make(map[uint32]*thread[T]),
		col:        col,
		cur:        &thread[T]{tid: noThread},
	}
	for 1<<e.shift < cfg.Resolution {
		e.shift++
	}
	e.limit = T(^uint64(0) >> (64 - cfg.CounterBits))
	return e
}

// noThread is the tid of the sentinel "current thread" before any thread
// ran (Linux thread ids never reach it), so that cur is never nil.
const noThread = ^uint32(0)

// threadOf returns the state of tid, creating it.
func (e *engine[T]) threadOf(tid uint32) *thread[T] {
	if e.cur.tid == tid {
		return e.cur
	}
	th, ok := e.threads[tid]
	if !ok {
		th = &thread[T]{tid: tid, ts: newTable(e.pool), stats: e.col.thread(tid)}
		e.threads[tid] = th
	}
	return th
}

// current returns the running thread tid, switching to it if another
// thread was running (the papers assume a switchThread event between
// operations of different threads).
func (e *engine[T]) current(tid uint32) *thread[T] {
	if th := e.cur; th.tid == tid {
		return th
	}
	e.switchTo(tid)
	return e.cur
}

// switchTo is procedure switchThread of TRMS Fig. 11.
func (e *engine[T]) switchTo(tid uint32) {
	e.tick()
	e.cur = e.threadOf(tid)
}

// tick increments count, renumbering timestamps first when the counter is
// about to overflow (TRMS §4.4, Fig. 13).
func (e *engine[T]) tick() {
	if e.count >= e.limit {
		e.renumber()
		if e.count >= e.limit {
			if e.err == nil {
				e.err = fmt.Errorf("trms: a %d-value counter cannot number %d pending activations", uint64(e.limit), (uint64(e.count)-3)/3)
			}
			return
		}
	}
	e.count++
}

// Call is procedure call of TRMS Fig. 11 (and PLDI'12 Fig. 6).
func (e *engine[T]) Call(tid uint32, r calls.RoutineID) {
	th := e.current(tid)
	e.tick()
	ctx := calls.NoNode
	if th.stats.cct != nil {
		parent := calls.NoNode
		if n := len(th.stack); n > 0 {
			parent = th.stack[n-1].ctx
		}
		ctx = th.stats.cct.Child(parent, r)
	}
	if int(r) >= len(th.pending) {
		th.pending = append(th.pending, make([]uint32, int(r)+1-len(th.pending))...)
	}
	th.stack = append(th.stack, frame[T]{
		ts:     e.count,
		rtn:    r,
		ctx:    ctx,
		nested: th.pending[r] > 0,
		cost0:  th.cost,
	})
	th.pending[r]++
}

// Return is procedure return of TRMS Fig. 11 for thread tid.
func (e *engine[T]) Return(tid uint32) {
	e.pop(e.threadOf(tid))
}

// pop completes the topmost activation: collect its tuple (line 1) and add
// its partials to its parent's (line 2).
func (e *engine[T]) pop(th *thread[T]) {
	n := len(th.stack)
	if n == 0 {
		return
	}
	f := &th.stack[n-1]
	cum := th.cost - f.cost0
	a := activation{
		rms:     uint64(max(f.rms, 0)), // RMS(top) = S[top].rms >= 0 (Eq. 2)
		trms:    uint64(max(f.trms, 0)),
		cost:    cum,
		self:    cum - f.child,
		ext:     f.ext,
		thr:     f.thr,
		extSelf: f.extSelf,
		thrSelf: f.thrSelf,
		nested:  f.nested,
	}
	if n > 1 {
		p := &th.stack[n-2]
		p.rms += f.rms
		p.trms += f.trms
		p.ext += f.ext
		p.thr += f.thr
		p.child += cum
	}
	th.pending[f.rtn]--
	e.col.collect(th.stats, f.rtn, f.ctx, &a)
	th.stack = th.stack[:n-1]
}

// cellRange returns the first and last cells (k-aligned units) that
// [addr, addr+size) touches; size must be positive.
func (e *engine[T]) cellRange(addr uint64, size uint32) (first, last uint64) {
	end := addr + uint64(size) - 1
	if end < addr {
		end = ^uint64(0)
	}
	return addr >> e.shift, end >> e.shift
}

// segment returns the last cell of [c, last] in c's chunk: an access is
// handled a chunk at a time, so the shadow lookups are made once per chunk.
func segment(c, last uint64) uint64 {
	return min(last, c|chunkMask)
}

// read is procedure read(ℓ, t) of TRMS Fig. 11, applied to every cell ℓ
// of an access, with PLDI'12 Fig. 6 computed alongside on the same
// thread-local timestamps ts_t (the two algorithms update ts_t
// identically; TRMS additionally consults wts).
func (e *engine[T]) read(th *thread[T], addr uint64, size uint32) {
	if size == 0 {
		return
	}
	c, last := e.cellRange(addr, size)
	for {
		key, end := c>>chunkBits, segment(c, last)
		// th.ts.get(key) and e.wts.get(key), inlined by hand (hot path).
		var tc, wc *chunk[T]
		if ce := &th.ts.cache[key&cacheMask]; ce.key == key {
			tc = ce.c
		} else {
			tc = th.ts.slow(key)
		}
		n := len(th.stack)
		if n == 0 {
			fill(tc.ts[c&chunkMask:end&chunkMask+1], e.count)
		} else {
			if ce := &e.wts.cache[key&cacheMask]; ce.key == key {
				wc = ce.c
			} else {
				wc = e.wts.slow(key)
			}
			e.readCells(th, tc, wc, c&chunkMask, end&chunkMask)
		}
		if end == last {
			return
		}
		c = end + 1
	}
}

// readCells reads cells lo..hi of one chunk: tc and wc are their chunks
// of ts_t and wts; the thread has a pending activation.
func (e *engine[T]) readCells(th *thread[T], tc, wc *chunk[T], lo, hi uint64) {
	n := len(th.stack)
	top := &th.stack[n-1]
	for idx := lo; idx <= hi; idx++ {
		old := tc.ts[idx]
		tc.ts[idx] = e.count // Fig. 11 line 12 / Fig. 6 line 8
		w := wc.ts[idx]
		if old < top.ts { // first access w.r.t. the topmost activation
			top.rms++ // Fig. 6 lines 1-2
			i := -1
			if old != 0 { // Fig. 6 lines 3-5: the deepest ancestor that accessed ℓ
				i = th.latest(old, n-2)
				if i >= 0 {
					th.stack[i].rms--
				}
			}
			top.trms++
			if old < w { // Fig. 11 lines 1-2: induced, new for every ancestor too
				induced(top, wc, idx)
			} else if i >= 0 { // Fig. 11 lines 4-9
				th.stack[i].trms--
			}
		} else if old < w { // Fig. 11 lines 1-2
			top.trms++
			induced(top, wc, idx)
		}
	}
}

// fill sets every timestamp of s to v.
func fill[T stamp](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// induced classifies an induced first-access: external if the latest write
// of the cell was a kernel write (Fig. 12), else thread-induced.
func induced[T stamp](f *frame[T], wc *chunk[T], idx uint64) {
	if wc.anyExt && wc.ext[idx>>6]&(1<<(idx&63)) != 0 {
		f.ext++
		f.extSelf++
	} else {
		f.thr++
		f.thrSelf++
	}
}

// latest returns the max index i <= hi with S_t[i].ts <= ts (Fig. 6 line
// 4, Fig. 11 line 7), or -1. Timestamps increase up the stack; like aprof
// (PLDI'12 §5), scan a few frames linearly, then search binarily.
func (th *thread[T]) latest(ts T, hi int) int {
	s := th.stack
	lo := max(hi-7, 0)
	for i := hi; i >= lo; i-- {
		if s[i].ts <= ts {
			return i
		}
	}
	// s[lo].ts > ts: answer in [-1, lo-1]
	l, r := 0, lo // invariant: s[r].ts > ts; answer < r
	for l < r {
		m := int(uint(l+r) >> 1)
		if s[m].ts <= ts {
			l = m + 1
		} else {
			r = m
		}
	}
	return l - 1
}

// write is procedure write of TRMS Fig. 11 on every cell of an access.
func (e *engine[T]) write(th *thread[T], addr uint64, size uint32) {
	if size == 0 {
		return
	}
	c, last := e.cellRange(addr, size)
	for {
		key, end := c>>chunkBits, segment(c, last)
		var tc, wc *chunk[T]
		if ce := &th.ts.cache[key&cacheMask]; ce.key == key {
			tc = ce.c
		} else {
			tc = th.ts.slow(key)
		}
		if ce := &e.wts.cache[key&cacheMask]; ce.key == key {
			wc = ce.c
		} else {
			wc = e.wts.slow(key)
		}
		lo, hi := c&chunkMask, end&chunkMask
		fill(tc.ts[lo:hi+1], e.count) // line 1
		fill(wc.ts[lo:hi+1], e.count) // line 2
		if wc.anyExt {
			clearBits(wc.ext[:], lo, hi)
		}
		if end == last {
			return
		}
		c = end + 1
	}
}

// clearBits clears bits lo..hi of the bit set b.
func clearBits(b []uint64, lo, hi uint64) {
	for lo <= hi {
		w, bit := lo>>6, lo&63
		n := min(64-bit, hi-lo+1) // bits of word w to clear
		b[w] &^= (^uint64(0) >> (64 - n)) << bit
		lo += n
	}
}

// kernelWrite is procedure kernelWrite of TRMS Fig. 12: the kernel stores
// external data; later reads by any thread are induced first-accesses. One
// increment of count per event suffices to make the write newer than every
// thread's timestamps.
func (e *engine[T]) kernelWrite(addr uint64, size uint32) {
	if size == 0 {
		return
	}
	e.tick()
	c, last := e.cellRange(addr, size)
	for {
		key, idx := c>>chunkBits, c&chunkMask
		wc := e.wts.get(key)
		wc.ts[idx] = e.count
		wc.ext[idx>>6] |= 1 << (idx & 63)
		wc.anyExt = true
		if c == last {
			return
		}
		c++
	}
}

// events handles one batch of the event stream.
func (e *engine[T]) events(batch []trace.Event) {
	for i := range batch {
		if e.err != nil {
			return
		}
		ev := &batch[i]
		if ev.Flags&trace.FlagCalls != 0 {
			// The Return and Call events before the block, marked on
			// it (of a hidden block too: they are not hidden).
			returns, call := ev.CallMarks()
			for range returns {
				e.Return(ev.Tid)
			}
			if call != 0 {
				e.Call(ev.Tid, e.cct.Node(calls.NodeID(call-1)).Routine)
			}
		}
		// Hidden code (linker stubs, the lazy-binding resolver) has no
		// cost and no input: aprof excludes it (PLDI'12 §5).
		if ev.Flags&trace.FlagHidden != 0 {
			continue
		}
		switch ev.Kind {
		case trace.KindRead, trace.KindKernelRead: // kernelRead = read (Fig. 12)
			e.read(e.current(ev.Tid), ev.Addr, ev.Size)
		case trace.KindWrite:
			e.write(e.current(ev.Tid), ev.Addr, ev.Size)
		case trace.KindBlock:
			th := e.current(ev.Tid)
			switch {
			case e.timeNs > 0:
				th.cost += uint64(ev.Size) * uint64(e.timeNs)
			case e.insns && e.blockInsns != nil:
				th.cost += uint64(e.blockInsns(ev.Block))
			case e.insns:
				th.cost += uint64(ev.Size)
			default:
				th.cost += 1 + uint64(ev.Folded) // a run of blocks counts each
			}
		case trace.KindCall:
			e.Call(ev.Tid, calls.RoutineID(ev.Block))
		case trace.KindReturn:
			e.Return(ev.Tid)
		case trace.KindKernelWrite:
			e.kernelWrite(ev.Addr, ev.Size)
		case trace.KindSwitch:
			e.switchTo(ev.Tid)
		case trace.KindThreadExit:
			e.threadExit(ev.Tid)
		}
	}
}

func (e *engine[T]) setCCT(c *calls.CCT) { e.cct = c }

// threadExit completes the pending activations of tid and frees its
// shadow memory.
func (e *engine[T]) threadExit(tid uint32) {
	th, ok := e.threads[tid]
	if !ok {
		return
	}
	for len(th.stack) > 0 {
		e.pop(th)
	}
	th.stats.cost += th.cost
	e.pool.put(th.ts)
	delete(e.threads, tid)
	if e.cur == th {
		e.cur = &thread[T]{tid: noThread}
	}
}

// finish completes every pending activation (threads in tid order).
func (e *engine[T]) finish() {
	tids := make([]uint32, 0, len(e.threads))
	for tid := range e.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		e.threadExit(tid)
	}
	// Every tuple is collected: the shadow memories are no longer read
	// (status only counts their chunks).
	e.pool.release()
}

// shadowBytes is the memory held by all shadow memories.
func (e *engine[T]) shadowBytes() uint64 {
	b := e.wts.bytes()
	for _, th := range e.threads {
		b += th.ts.bytes()
	}
	return b
}

// addCost adds n units of cost to thread tid.
func (e *engine[T]) addCost(tid uint32, n uint64) { e.current(tid).cost += n }

// status reports the engine's health and resource use.
func (e *engine[T]) status() status {
	return status{renumberings: e.renumberings, shadowBytes: e.shadowBytes(), err: e.err}
}

// timeNs is the engine's ns per Size unit for CostTime, 0 for other costs.
func timeNs(cfg *Config) int64 {
	if cfg.Cost != CostTime {
		return 0
	}
	return cfg.NsPerInsn
}
