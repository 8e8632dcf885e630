// The selected line's executions that the emulator ran ahead of or behind
// the visits: placed in an experiment once its window is known.

package causal

import "sort"

// selRun counts an execution of the selected line at virtual time at
// (cost ns; entry: an entry into the line). Once the experiment's start is
// fixed (baseFixed), one before it is not the experiment's and one between
// it and the last visit of the first point is (win); the rest wait in runs
// for the visits that place them (fold). Runs are merged into buckets of
// a doubling width when there are many, so their memory stays bounded.
func (p *Profiler) selRun(e *experiment, at, cost int64, entry bool) {
	n := int64(0)
	if entry {
		n = 1
	}
	if p.cfg.EndToEnd {
		e.win += cost
		e.winN += n
		return
	}
	if p.baseFixed(e) {
		switch {
		case at < e.base.t:
			return
		case at < e.lastT:
			e.win += cost
			e.winN += n
			return
		}
	}
	if k := len(e.runs); k > 0 && e.bucket > 0 {
		if r := &e.runs[k-1]; at >= r.at && at < r.at+e.bucket {
			r.cost += cost
			r.n += n
			return
		}
	}
	e.runs = append(e.runs, selRun{at: at, cost: cost, n: n})
	if len(e.runs) >= maxRuns {
		e.compact()
	}
}

// selRun is executions of the selected line from virtual time at on.
type selRun struct{ at, cost, n int64 }

// maxRuns bounds an experiment's runs (selRun).
const maxRuns = 1 << 12

// compact merges runs into buckets of twice the width (the first 1 µs),
// each at its earliest time, so that at most maxRuns/2 remain.
func (e *experiment) compact() {
	for len(e.runs) >= maxRuns/2 {
		e.bucket = max(2*e.bucket, 1000)
		sort.SliceStable(e.runs, func(i, j int) bool { return e.runs[i].at < e.runs[j].at })
		out := e.runs[:0]
		for _, r := range e.runs {
			if k := len(out); k > 0 && r.at < out[k-1].at+e.bucket {
				out[k-1].cost += r.cost
				out[k-1].n += r.n
				continue
			}
			out = append(out, r)
		}
		e.runs = out
	}
}

// baseFixed says whether the experiment's measured start (base) is final:
// after the warm-up, and once settled (Settle).
func (p *Profiler) baseFixed(e *experiment) bool {
	return e.warm == 0 && (p.cfg.Settle <= 0 || e.settled || p.cfg.EndToEnd)
}

// fold places the waiting runs at a visit of the first point at virtual
// time now: once the start is fixed, those from it to now are the
// experiment's, those before are not; before, those before every start the
// experiment may still take (the oldest mark kept) are dropped.
func (p *Profiler) fold(e *experiment, now int64) {
	e.lastT = max(e.lastT, now)
	from := e.base.t
	if !p.baseFixed(e) {
		if e.warm > 0 {
			return
		}
		if r := len(p.ring); r > 0 && e.n >= r {
			from = p.ring[(e.n+1)%r].t
		}
	}
	out := e.runs[:0]
	for _, r := range e.runs {
		switch {
		case r.at < from:
		case p.baseFixed(e) && r.at < now:
			e.win += r.cost
			e.winN += r.n
		default:
			out = append(out, r)
		}
	}
	e.runs = out
}
