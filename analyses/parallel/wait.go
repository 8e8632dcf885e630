package parallel

import "emuprof/analyses"

// waitRec is a thread's current wait.
type waitRec struct {
	start int64
	addr  uint64 // futex address (or object id) it blocked on
	kind  analyses.WaitKind
	class WaitClass
	key   int32 // the waiter's context and line
}

// lock is what happened on one futex address (spec §4.5: keyed by address,
// lossless).
type lock struct {
	addr    uint64
	class   WaitClass // of its first wait
	waiters []*thread // blocked on it, in blocking order
	lastRel int64     // time of its latest release
	carry   int64     // blame of waits that ended without a release (timeouts) since then
	// Statistics.
	waits                   int
	waitNs, blameNs         int64
	unreleased              int64
	releases                int
	topReleaser             int32 // key that received the most blame
	releaserBlame           map[int32]int64
	firstWaitAt, lastWaitAt int64
}

func (a *Analysis) lock(addr uint64, class WaitClass) *lock {
	l := a.locks[addr]
	if l == nil {
		l = &lock{addr: addr, class: class, topReleaser: -1, releaserBlame: map[int32]int64{}}
		a.locks[addr] = l
	}
	return l
}

func (a *Analysis) blockOn(ev *analyses.Event) {
	t := a.thread(ev.Tid, ev.Time)
	if t.state == blocked {
		a.endWait(t, ev.Time, 0, 0)
	}
	t.known = max(t.known, ev.Time)
	kind := analyses.WaitKind(ev.Size)
	w := waitRec{start: ev.Time, addr: ev.Addr, kind: kind}
	line := int32(-1)
	if t.lastBlock != 0 {
		line = a.blockClass(t.lastBlock).line
	}
	if line < 0 {
		line = a.lines.intern(lineInfo{fn: "unknown"})
	}
	w.key = a.keys.intern(t.top(), line)
	switch kind {
	case analyses.WaitFutex:
		w.class = WaitFutex
		for i := len(t.phys) - 1; i >= 0; i-- {
			if c, ok := futexClass(a.env.Routines().Get(t.phys[i]).Name); ok {
				w.class = c
				break
			}
		}
		l := a.lock(ev.Addr, w.class)
		l.waiters = append(l.waiters, t)
		l.waits++
	case analyses.WaitSleep:
		w.class = WaitSleep
	case analyses.WaitPipeRead, analyses.WaitPipeWrite, analyses.WaitPoll, analyses.WaitStdin:
		w.class = WaitIO
	case analyses.WaitJoin:
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

func (a *Analysis) wake(ev *analyses.Event) {
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
// not 0) on address addr is a release of addr by waker: the blame
// accumulated on addr since its previous release goes to the waker's
// context (spec §1.4, blame_at_release).
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
	if w.kind != analyses.WaitFutex {
		return
	}
	l := a.locks[w.addr]
	l.waitNs += d
	// Leave the waiter list of the address it blocked on.
	for i, u := range l.waiters {
		if u == t {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			break
		}
	}
	own := at - max(w.start, l.lastRel) // t's wait not yet blamed on anyone
	var r *thread
	if waker != 0 {
		r = a.byTid[waker]
	}
	if r == nil || r == t {
		// A timeout or a wake from outside: nobody released; the blame
		// waits for the next release of the address (HPCToolkit keeps it
		// in its blame map) or ends unreleased.
		l.carry += max(own, 0)
		return
	}
	// A release of addr (the wake's address: after a requeue it differs
	// from the one t blocked on).
	rl := l
	if addr != w.addr {
		rl = a.lock(addr, w.class)
	}
	lockBlame, blame := int64(0), int64(0)
	add := func(v int64, c WaitClass) {
		if v <= 0 {
			return
		}
		blame += v
		if c == WaitLock {
			lockBlame += v
		}
	}
	add(own, w.class)
	add(rl.carry, rl.class)
	rl.carry = 0
	for _, u := range rl.waiters {
		add(at-max(u.wait.start, rl.lastRel), u.wait.class)
	}
	rl.lastRel = at
	rl.releases++
	if blame == 0 {
		return
	}
	line := int32(-1)
	if r.lastBlock != 0 {
		line = a.blockClass(r.lastBlock).line
	}
	if line < 0 {
		line = a.lines.intern(lineInfo{fn: "unknown"})
	}
	k := a.keys.intern(r.top(), line)
	st := &a.keys.stats[k]
	st.blame += blame
	st.lockwait += lockBlame
	rl.blameNs += blame
	rl.releaserBlame[k] += blame
	if rl.topReleaser < 0 || rl.releaserBlame[k] > rl.releaserBlame[rl.topReleaser] ||
		rl.releaserBlame[k] == rl.releaserBlame[rl.topReleaser] && k < rl.topReleaser {
		rl.topReleaser = k
	}
}
