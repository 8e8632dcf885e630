// The adaptive warm-up (Config.Settle): when an experiment's windows agree
// and its measurement may begin.

package causal

import "math"

// maxWindows bounds an experiment whose rate does not settle (Settle): after
// maxWindows windows of MinVisits visits it is measured over its last half.
const maxWindows = 8

// maxIdle bounds, in windows of MinVisits visits, how long a measured
// experiment waits for its line to run.
const maxIdle = 16

// measured says, at a visit of the first point at virtual time now, whether
// the experiment has been measured long enough, and sets where its
// measurement begins. Without Settle: MinVisits visits of every point since
// the warm-up (Coz §4.3). With Settle, an adaptive warm-up: the experiment
// runs until its last two windows of w = MinVisits visits of the first
// point agree within Settle % (see settled) at w successive visits, that is
// at every alignment of the windows, and is measured from the first of its
// last two windows on (at least those 2w visits, MinNs, and MinVisits
// visits of every point: whole cycles when w is a multiple of the cycle);
// what came before (the queue another speed left) is warm-up. Every
// alignment: a stream whose periods repeat in a cycle that w is not a
// multiple of (the emulator runs a thread a quantum at a time, so a
// consumer may see four items come in a burst, then a long gap) has windows that agree at some alignments only, each
// measuring a share of bursts that is not the stream's. Rates are compared
// per effective ns (the inserted delays taken out, §3), in virtual time, so
// the decision is exact and deterministic. An experiment that does not
// settle within maxWindows windows is measured over its last half.
func (p *Profiler) measured(e *experiment, now int64) bool {
	w := p.cfg.MinVisits
	if p.cfg.Settle <= 0 {
		return p.effective(&e.base, now) >= p.minLength() && p.enough(&e.base)
	}
	e.n++
	r := len(p.ring)
	if r != maxWindows/2*w+1 {
		p.ring = make([]mark, maxWindows/2*w+1)
		for i := range p.ring {
			p.ring[i] = p.newMark()
		}
		r = len(p.ring)
	}
	if e.n == 1 {
		copyMark(&p.ring[0], &e.base) // the warm-up's end
	}
	b := &p.ring[e.n%r]
	p.setMark(b, e, now)
	if e.n < 2*w {
		return false
	}
	if !e.settled {
		if a, mid := &p.ring[(e.n-2*w)%r], &p.ring[(e.n-w)%r]; p.settled(a, mid, b) {
			e.agree++
		} else {
			e.agree = 0
		}
		switch {
		case e.agree >= w:
			// Agreed at w successive visits: from the last pair of
			// windows on.
			e.settled = true
			copyMark(&e.base, &p.ring[(e.n-2*w)%r])
		case e.n >= maxWindows*w:
			// Never settled: the last half.
			e.settled = true
			copyMark(&e.base, &p.ring[(e.n-maxWindows/2*w)%r])
		default:
			return false
		}
	}
	return p.effective(&e.base, now) >= p.minLength() && p.enough(&e.base)
}

// settled says whether the window a..mid and the window mid..b (as many
// visits of the first point each) agree within Settle %: the first point's
// rate (the effective durations, ns × scale, delays taken out, §3) and
// every latency point's mean number in flight (L of Little's law, §4.5: a
// queue still filling or draining changes it before the rate). Explicit
// float64 conversions round each product, so no fused multiply-add makes
// the answer differ between hosts.
func (p *Profiler) settled(a, mid, b *mark) bool {
	e1 := float64((mid.t-a.t)*scale - (mid.global - a.global))
	e2 := float64((b.t-mid.t)*scale - (b.global - mid.global))
	if !p.agree(e1, e2) {
		return false
	}
	for i := range p.points {
		if !p.points[i].latency {
			continue
		}
		// In-flight integrals (ns × scale) over effective durations,
		// compared as l1 = A1/e1 and l2 = A2/e2 cross-multiplied.
		a1 := float64((mid.area[i]-a.area[i])*scale - (mid.rem[i] - a.rem[i]))
		a2 := float64((b.area[i]-mid.area[i])*scale - (b.rem[i] - mid.rem[i]))
		if !p.agree(float64(a1*e2), float64(a2*e1)) {
			return false
		}
	}
	return true
}

// agree says whether x and y differ by at most Settle % of the larger.
func (p *Profiler) agree(x, y float64) bool {
	return float64(math.Abs(x-y)*100) <= float64(float64(p.cfg.Settle)*math.Max(math.Abs(x), math.Abs(y)))
}

// enough says whether every point was visited MinVisits times since m
// (Coz §4.3).
func (p *Profiler) enough(m *mark) bool {
	for i := range p.points {
		pt := &p.points[i]
		if pt.arrivals-m.arr[i] < int64(p.cfg.MinVisits) {
			return false
		}
		if pt.latency && pt.departures-m.dep[i] < int64(p.cfg.MinVisits) {
			return false
		}
	}
	return true
}
