package parallel

import (
	"cmp"
	"slices"

	"emuprof/trace"
)

// waitRec is a thread's current wait.
type waitRec struct {
	start int64
	addr  uint64 // futex address (or object id) it blocked on
	kind  trace.WaitKind
	class WaitClass
	key   int32     // the waiter's context and line
	iv    *interval // its interval on the futex's lock
}

// lock is what happened on one futex address (spec §4.5: keyed by address,
// lossless). Directed blame (spec §1.4, blame_at_release) is computed in
// time order by the sweep: waits and releases arrive in emulation order,
// not in time order (a waiter's timeout can arrive after a release that is
// later in virtual time), but none arrives behind the sweep's watermark.
type lock struct {
	addr     uint64
	class    WaitClass   // of its first wait
	ivs      []*interval // waits not yet entirely blamed
	releases []release   // releases not yet processed
	lastRel  int64       // time of the latest processed release
	pending  bool        // in a.dirty
	// Statistics.
	waits, nrel                 int
	waitNs, blameNs, unreleased int64
	topReleaser                 int32 // key that received the most blame
	releaserBlame               map[int32]int64
}

// interval is one wait on a lock: [start, end), end < 0 while it lasts.
type interval struct {
	start, end int64
	class      WaitClass
}

// release is a wake of a waiter of the lock by another thread: the lock's
// release, at time at, by a thread in context and line key.
type release struct {
	at  int64
	key int32
}

func (a *Analysis) lock(addr uint64, class WaitClass) *lock {
	l := a.locks[addr]
	if l == nil {
		l = &lock{addr: addr, class: class, topReleaser: -1, releaserBlame: map[int32]int64{}}
		a.locks[addr] = l
		a.lockOrder = append(a.lockOrder, l)
	}
	return l
}

// leafKey is t's current context with the line of its last block.
func (a *Analysis) leafKey(t *thread) int32 {
	line := int32(-1)
	if t.lastBlock != 0 {
		line = a.blockClass(t.lastBlock).line
	}
	if line < 0 {
		line = a.lines.intern(lineInfo{fn: "unknown"}, nil)
	}
	return a.keys.intern(t.top(), line)
}

func (a *Analysis) blockOn(ev *trace.Event) {
	t := a.thread(ev.Tid, ev.Time)
	if t.state == blocked {
		a.endWait(t, ev.Time, 0, 0)
	}
	t.known = max(t.known, ev.Time)
	kind := trace.WaitKind(ev.Size)
	w := waitRec{start: ev.Time, addr: ev.Addr, kind: kind, key: a.leafKey(t)}
	switch kind {
	case trace.WaitFutex:
		w.class = WaitFutex
		for i := len(t.phys) - 1; i >= 0; i-- {
			if c, ok := futexClass(a.env.Routines().Get(t.phys[i]).Name); ok {
				w.class = c
				break
			}
		}
		l := a.lock(ev.Addr, w.class)
		w.iv = &interval{start: ev.Time, end: -1, class: w.class}
		l.ivs = append(l.ivs, w.iv)
		l.waits++
	case trace.WaitSleep:
		w.class = WaitSleep
	case trace.WaitPipeRead, trace.WaitPipeWrite, trace.WaitPoll, trace.WaitStdin:
		w.class = WaitIO
	case trace.WaitJoin:
		w.class = WaitJoin
	default:
		w.class = WaitOther
	}
	t.wait = w
	t.state = blocked
	if a.cur == t {
		// Its run ends here; what it does next starts a new one.
		t.fresh = true
	}
}

func (a *Analysis) wake(ev *trace.Event) {
	t := a.byTid[ev.Tid]
	if t == nil || t.state != blocked {
		return
	}
	a.endWait(t, ev.Time, uint32(ev.Aux), ev.Addr)
	t.known = max(t.known, ev.Time)
	t.end = max(t.end, t.known)
	t.fresh = true
}

// endWait ends t's wait at time at. A futex wait woken by waker (a thread,
// not 0) on address addr is a release of addr by waker at at: the blame
// accumulated on addr since its previous release goes to the waker's
// context at that moment (spec §1.4, blame_at_release).
func (a *Analysis) endWait(t *thread, at int64, waker uint32, addr uint64) {
	w := &t.wait
	at = max(at, w.start)
	d := at - w.start
	a.keys.stats[w.key].wait += d
	a.waitTotals[w.class] += d
	t.blocked += d
	t.state = runnable
	if a.threads && d > 0 {
		a.addPiece(t, w.start, at, w.key, false)
	}
	if w.kind != trace.WaitFutex {
		return
	}
	w.iv.end = at
	l := a.locks[w.addr]
	l.waitNs += d
	a.markLock(l)
	if waker == 0 || waker == t.tid {
		return // a timeout or a wake from outside: no release
	}
	r := a.byTid[waker]
	if r == nil || r.state == exited {
		return
	}
	// The wake's address (after a requeue it differs from the one t
	// blocked on: t's remaining wait stays with the first).
	rl := a.lock(addr, w.class)
	rl.releases = append(rl.releases, release{at: at, key: a.leafKey(r)})
	a.markLock(rl)
}

func (a *Analysis) markLock(l *lock) {
	if !l.pending {
		l.pending = true
		a.dirty = append(a.dirty, l)
	}
}

// blame processes the releases before to (all of them when final), in time
// order: each charges the waiting on its lock since the lock's previous
// release to the releaser. What no release charged at the end is
// unreleased (spec invariant 4).
func (a *Analysis) blame(to int64, final bool) {
	list := a.dirty
	if final {
		list = a.lockOrder
	}
	keep := a.dirty[:0]
	for _, l := range list {
		slices.SortStableFunc(l.releases, func(x, y release) int { return cmp.Compare(x.at, y.at) })
		n := 0
		for _, r := range l.releases {
			if r.at >= to && !final {
				break
			}
			a.release(l, r)
			n++
		}
		l.releases = append(l.releases[:0], l.releases[n:]...)
		// Drop the waits that are blamed entirely.
		ivs := l.ivs[:0]
		for _, iv := range l.ivs {
			if iv.end < 0 || iv.end > l.lastRel {
				ivs = append(ivs, iv)
			}
		}
		clear(l.ivs[len(ivs):])
		l.ivs = ivs
		if final {
			for _, iv := range l.ivs {
				if v := iv.end - max(iv.start, l.lastRel); iv.end >= 0 && v > 0 {
					l.unreleased += v
					a.unreleased += v
				}
			}
			l.ivs = nil
		}
		if len(l.releases) > 0 && !final {
			keep = append(keep, l)
		} else {
			l.pending = false
		}
	}
	if final {
		keep = keep[:0]
	}
	a.dirty = keep
}

func (a *Analysis) release(l *lock, r release) {
	var blame, lockBlame int64
	for _, iv := range l.ivs {
		end := r.at
		if iv.end >= 0 {
			end = min(end, iv.end)
		}
		if v := end - max(iv.start, l.lastRel); v > 0 {
			blame += v
			if iv.class == WaitLock {
				lockBlame += v
			}
		}
	}
	l.lastRel = max(l.lastRel, r.at)
	l.nrel++
	if blame == 0 {
		return
	}
	st := &a.keys.stats[r.key]
	st.blame += blame
	st.lockwait += lockBlame
	l.blameNs += blame
	l.releaserBlame[r.key] += blame
	if t := l.topReleaser; t < 0 || l.releaserBlame[r.key] > l.releaserBlame[t] ||
		l.releaserBlame[r.key] == l.releaserBlame[t] && r.key < t {
		l.topReleaser = r.key
	}
}
