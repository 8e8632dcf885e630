// The experiment state machine: choosing a line and a speedup, starting
// and ending an experiment at visits of the first progress point.

package causal

import "sort"

type experiment struct {
	seq     int // 1, 2 ... in order of start
	line    int32
	speedup int
	// The selected line's executions in the experiment, in virtual
	// time: win and winN sum the cost and entries of those known to lie
	// in it (from base.t to the last visit of the first point, lastT);
	// runs holds the others, which the emulator may have run ahead of
	// or behind the visits (see selRun).
	win, winN int64
	lastT     int64
	runs      []selRun
	bucket    int64 // runs' merge width, ns (0: exact)
	warm      int   // visits of the first point still to run before measuring
	// base is the state where the measurement begins; n counts the
	// visits of the first point since the warm-up ended (marks kept in
	// Profiler.ring, for Settle).
	base mark
	n    int
	// agree counts the successive visits at which the last two windows
	// agreed (Settle); settled: base is where the measurement begins.
	agree   int
	settled bool
	idle    int // visits since measured (maxIdle)
}

// mark is the state of the counters at a visit of the first progress point
// (or an experiment's start): where a measurement may begin or end.
type mark struct {
	t, global int64
	// per point: arrivals, departures, in-flight integral, and its part
	// inside inserted delays (point.removed)
	arr, dep, area, rem []int64
}

// effective is the virtual time from m to now with the inserted delays
// taken out (§3), in ns.
func (p *Profiler) effective(m *mark, now int64) int64 {
	return now - m.t - (p.global-m.global)/scale
}

// skewFactor is how many times the threads' skew an experiment lasts at
// least (minLength).
const skewFactor = 10

// minLength is an experiment's minimal effective length (delays taken
// out, so that a bottleneck sped up by 100 % still runs that long):
// Config.MinNs, and, while several threads live, skewFactor times the scheduler's skew (twice
// the quantum, in ns). The emulator runs one thread up to 2×quantum
// instructions before another, so at an experiment's two ends the other
// threads' work is up to that far ahead of or behind the visit that ends
// it; an experiment much shorter than a quantum (12 µs on Coz's
// producer_consumer, 4 % of one) measured one thread's burst, its
// selected line run by another thread outside it in virtual time.
func (p *Profiler) minLength() int64 {
	n := p.cfg.MinNs
	if len(p.order) > 1 {
		q := int64(p.opt.Quantum)
		if q <= 0 {
			q = 10000
		}
		n = max(n, skewFactor*2*q*p.opt.NsPerInsn)
	}
	return n
}

func (p *Profiler) newMark() mark {
	n := len(p.points)
	v := make([]int64, 4*n)
	return mark{arr: v[:n:n], dep: v[n : 2*n : 2*n], area: v[2*n : 3*n : 3*n], rem: v[3*n:]}
}

// setMark records the counters at virtual time now in m.
func (p *Profiler) setMark(m *mark, e *experiment, now int64) {
	m.t, m.global = now, p.global
	for i := range p.points {
		pt := &p.points[i]
		m.arr[i], m.dep[i], m.area[i], m.rem[i] = pt.arrivals, pt.departures, pt.areaAt(now), pt.removed
	}
}

func copyMark(dst, src *mark) {
	dst.t, dst.global = src.t, src.global
	copy(dst.arr, src.arr)
	copy(dst.dep, src.dep)
	copy(dst.area, src.area)
	copy(dst.rem, src.rem)
}

// start begins an experiment (Coz §4.2): the line is one that executed since
// the previous experiment began (a recently executed line, §4.6). Coz
// picks it by sampling, so lines get experiments in proportion to their
// share of the run's time; here the shares are exact (the virtual time
// charged to each line so far), and the line whose experiments lag its
// share most is chosen: the one with the largest cost / (experiments + 1),
// a deterministic proportional allocation (ties broken by the seeded
// generator). The speedup is drawn from the line's deck (see draw).
func (p *Profiler) start(now int64) {
	var line int32
	if p.hasFix {
		line = p.fixedID
	} else {
		cands := append([]int32(nil), p.recent...)
		if len(cands) == 0 {
			for l := 1; l < len(p.lines); l++ {
				cands = append(cands, int32(l))
			}
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i] < cands[j] })
		var best []int32
		for _, l := range cands {
			if len(best) == 0 {
				best = append(best, l)
				continue
			}
			// cost_l/(n_l+1) vs cost_b/(n_b+1), cross-multiplied exactly.
			a, b := &p.lines[l], &p.lines[best[0]]
			x, y := a.cost*int64(b.experiments+1), b.cost*int64(a.experiments+1)
			switch {
			case x > y:
				best = append(best[:0], l)
			case x == y:
				best = append(best, l)
			}
		}
		if len(best) > 0 {
			line = best[p.rng.IntN(len(best))]
		}
	}
	p.recent = p.recent[:0]
	p.recentGen++
	if line == 0 {
		p.exp = nil
		return
	}
	p.seq++
	e := &experiment{seq: p.seq, line: line, base: p.newMark()}
	e.speedup = p.draw(line)
	e.warm = p.cfg.Warmup
	p.setMark(&e.base, e, now)
	p.exp = e
}

// draw returns the next speedup of a line's deck: 0 %, then ten distinct
// speedups of 5 ... 100 %, so that a line's first eleven experiments give a
// curve, then the other ten interleaved with ten more 0 % (Coz's weight of
// one half for the baseline), shuffled by the seeded generator. With
// --fixed-line, the whole deck is shuffled (Coz's order).
func (p *Profiler) draw(line int32) int {
	if p.cfg.FixedSpeedup >= 0 {
		return p.cfg.FixedSpeedup
	}
	li := &p.lines[line]
	if len(li.deck) == 0 {
		var sp []int
		for s := 5; s <= 100; s += 5 {
			sp = append(sp, s)
		}
		if p.hasFix {
			// Every experiment is the line's: no hurry for a curve, and
			// a 0 % between speedups lets the state settle.
			for _, s := range sp {
				li.deck = append(li.deck, s, 0)
			}
			p.rng.Shuffle(len(li.deck), func(i, j int) { li.deck[i], li.deck[j] = li.deck[j], li.deck[i] })
		} else {
			p.rng.Shuffle(len(sp), func(i, j int) { sp[i], sp[j] = sp[j], sp[i] })
			// Drawn from the end: the last eleven entries come first.
			for _, s := range sp[10:] {
				li.deck = append(li.deck, s, 0)
			}
			li.deck = append(li.deck, sp[:10]...)
			li.deck = append(li.deck, 0)
		}
	}
	s := li.deck[len(li.deck)-1]
	li.deck = li.deck[:len(li.deck)-1]
	return s
}

// end closes the current experiment at virtual time now: its effective
// duration is its virtual duration minus the delay inserted meanwhile (§3,
// Figure 3; §4.3).
func (p *Profiler) end(now int64) {
	e := p.exp
	p.exp = nil
	if e.line == 0 {
		return
	}
	b := &e.base
	p.fold(e, now)
	units := (now-b.t)*scale - (p.global - b.global)
	x := Experiment{Line: p.lineName(e.line), Speedup: e.speedup, Start: b.t, Elapsed: now - b.t,
		Duration: (units + scale/2) / scale, Selected: e.winN, SelectedNs: e.win, units: units, key: p.lines[e.line].key}
	x.Delay = x.Elapsed - x.Duration
	if x.SelectedNs == 0 && !p.cfg.EndToEnd {
		// The line did not run while the experiment was measured (the
		// program left the phase where it runs): it tells nothing of
		// the line, and counted at its speedup it would show the other
		// lines' noise as the line's effect.
		p.dropped++
		return
	}
	for i := range p.points {
		pt := &p.points[i]
		d := PointDelta{Name: pt.name, Latency: pt.latency, Arrivals: pt.arrivals - b.arr[i]}
		if pt.latency {
			d.Departures = pt.departures - b.dep[i]
			d.Difference = pt.arrivals - pt.departures
			d.Area = pt.areaAt(now) - b.area[i] - (pt.removed-b.rem[i]+scale/2)/scale
		}
		x.Points = append(x.Points, d)
	}
	if p.lines[e.line].experiments++; p.lines[e.line].experiments == 1 {
		p.nLines.Add(1)
	}
	p.done = append(p.done, x)
	p.lastDone = e.seq
	p.nDone.Add(1)
}
