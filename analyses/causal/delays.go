// Delays and their propagation (Coz §4.4): what each execution of the
// selected line owes the other threads, and the pauses that pay it.

package causal

// pay requests the pauses that running threads owe.
func (p *Profiler) pay() {
	live := p.order[:0]
	for _, t := range p.order {
		if t.exited {
			delete(p.threads, t.tid)
			if p.last == t {
				p.last = nil
			}
			continue
		}
		live = append(live, t)
		if t.blocked {
			continue
		}
		if owed := (p.global - t.local) / scale; owed > 0 {
			p.opt.Clock.Delay(t.tid, owed)
			t.local += owed * scale
			p.delayed += owed
		}
	}
	clear(p.order[len(live):])
	p.order = live
}

// account adds cost ns to a line's cost, and to the phase correction's
// count while a 0 % experiment runs.
func (p *Profiler) account(line int32, cost int64) {
	li := &p.lines[line]
	li.cost += cost
	if li.recent != p.recentGen {
		li.recent = p.recentGen
		p.recent = append(p.recent, line)
	}
	if e := p.exp; e != nil && e.speedup == 0 {
		if li.epoch != e.seq {
			li.base += li.pend // the experiment li.epoch completed
			li.pend, li.epoch = 0, e.seq
		}
		li.pend += cost
	}
}

// charge counts cost ns of line's code executed by t from virtual time at:
// the line's cost, the phase correction's, and, when line is the selected
// line or in the selected set, the delay the other threads owe.
func (p *Profiler) charge(t *thread, line int32, cost, at int64) {
	p.account(line, cost)
	set := p.lines[line].set
	if set != 0 {
		p.account(set, cost) // a fixed set's cost is its lines'
	}
	e := p.exp
	if e == nil || e.line != line && (set == 0 || e.line != set) {
		return
	}
	p.selRun(e, at, cost, t.prevLine != line)
	if e.speedup > 0 {
		// The executing thread counts its own share; others owe the
		// difference (§4.4, "Minimizing Delays").
		t.local += cost * int64(e.speedup)
		if t.local > p.global {
			inc := t.local - p.global
			for i := range p.points {
				if pt := &p.points[i]; pt.latency {
					pt.removed += (pt.arrivals - pt.departures) * inc
				}
			}
			p.global = t.local
			p.inVirtualTime(t, at*scale, inc)
		}
	}
}

// inVirtualTime places an increase inc of the global count, made by t at
// virtual time at (ns × scale), in the other threads' virtual timelines:
// the emulator runs threads one after the other, a quantum or more at a
// time, so another thread may already have blocked, or been woken, at a
// later virtual time. Coz pays delays as they arise (§4.4), so a thread
// whose wait began, in virtual time, after at still owes the increase,
// and its wait begins that much later; a thread already woken that was
// blocked at at does not owe it.
func (p *Profiler) inVirtualTime(t *thread, at, inc int64) {
	for _, o := range p.order {
		switch {
		case o == t || o.exited:
		case o.blocked:
			if at < o.blockEnd {
				o.blockEnd += inc
			}
		case o.wokeAt > 0 && at >= o.blockEnd && at < o.wokeAt:
			o.local += inc
		}
	}
}
