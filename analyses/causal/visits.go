// Progress point visits: the points a block holds, and what a visit does
// to the current experiment.

package causal

import (
	"path/filepath"

	"emuprof/trace"
)

type hit struct {
	point int
	end   bool // a latency point's END
	line  bool // entry semantics (file:line)
	span  int  // the span of BlockInfo.Lines it is on (line points)
}

// foldable says whether a block may come folded into a run of blocks of its
// line: it holds no progress point. It is asked on the engine's goroutine,
// at translation, so it reads only what New set.
func (p *Profiler) foldable(bi *trace.BlockInfo) bool {
	bias, ok := uint64(0), true
	if p.cozPIE {
		// The load bias, from this block itself when it is the main
		// executable's (sites are in no other object).
		ok = false
		if v, known := p.cozSyms[bi.Routine.Name]; known && bi.Routine.Entry >= v && p.isMain(bi) {
			bias, ok = bi.Routine.Entry-v, true
		} else if p.isMain(bi) {
			return false // cannot tell: do not fold
		}
	}
	return bi.Lines == nil && len(p.hitsFor(bi, bias, ok)) == 0
}

// hitsFor returns the progress points a block holds; bias is the main
// executable's load bias for Coz macro sites (cozOK false: not known yet).
// It reads only the points' locations, which New set.
func (p *Profiler) hitsFor(bi *trace.BlockInfo, bias uint64, cozOK bool) []hit {
	var hits []hit
	for i := range p.points {
		pt := &p.points[i]
		for _, end := range []bool{false, true} {
			sp := pt.begin
			if end {
				if !pt.latency {
					continue
				}
				sp = pt.end
			}
			switch sp.kind {
			case pointAddr:
				if sp.addr >= bi.Addr && sp.addr < bi.Addr+uint64(bi.Len) {
					hits = append(hits, hit{point: i, end: end})
				}
			case pointLine:
				if bi.Lines == nil && bi.Line == sp.line && fileMatches(bi.File, sp.name) {
					hits = append(hits, hit{point: i, end: end, line: true})
				}
				for k, ls := range bi.Lines {
					if ls.Line == sp.line && fileMatches(ls.File, sp.name) {
						hits = append(hits, hit{point: i, end: end, line: true, span: k})
					}
				}
			case pointCoz:
				if cozOK {
					for _, a := range sp.addrs {
						if a+bias >= bi.Addr && a+bias < bi.Addr+uint64(bi.Len) {
							hits = append(hits, hit{point: i, end: end})
						}
					}
				}
			}
		}
	}
	return hits
}

// cozBiasFor returns the main executable's load bias, once a block of it
// tells it (a routine's runtime entry minus its symbol's value).
func (p *Profiler) cozBiasFor(bi *trace.BlockInfo) (uint64, bool) {
	switch {
	case !p.cozPIE:
		return 0, true
	case p.cozBiasKnown:
		return p.cozBias, true
	case !p.isMain(bi):
		return 0, false
	}
	if v, ok := p.cozSyms[bi.Routine.Name]; ok && bi.Routine.Entry >= v {
		p.cozBias, p.cozBiasKnown = bi.Routine.Entry-v, true
	}
	return p.cozBias, p.cozBiasKnown
}

// isMain says whether a block is the main executable's.
func (p *Profiler) isMain(bi *trace.BlockInfo) bool {
	obj := bi.Routine.Object
	if abs, err := filepath.Abs(obj); err == nil {
		obj = filepath.Clean(abs)
	}
	return obj == p.mainExe
}

func (p *Profiler) routineHits(id uint32) []hit {
	if h, ok := p.routHits[id]; ok {
		return h
	}
	var hs []hit
	if p.opt.RoutineName != nil {
		name := p.opt.RoutineName(id)
		for i := range p.points {
			pt := &p.points[i]
			if pt.begin.kind == pointSymbol && pt.begin.name == name {
				hs = append(hs, hit{point: i})
			}
			if pt.latency && pt.end.kind == pointSymbol && pt.end.name == name {
				hs = append(hs, hit{point: i, end: true})
			}
		}
	}
	p.routHits[id] = hs
	return hs
}

// visit counts a progress point. Experiments begin and end at visits of the
// first point, so that every experiment measures whole periods between
// visits: its rate is exact, not off by a fraction of a period.
func (p *Profiler) visit(h hit, now int64) {
	pt := &p.points[h.point]
	if pt.latency {
		pt.area, pt.lastT = pt.areaAt(now), now
	}
	if h.end {
		pt.departures++
		pt.sumDep += now
		return
	}
	pt.arrivals++
	pt.sumArr += now
	if pt.arrivals == 1 {
		pt.first = now
	}
	pt.last = now
	if h.point != 0 || p.cfg.EndToEnd || p.cfg.Observe {
		return
	}
	if e := p.exp; e != nil {
		if e.warm > 0 {
			if e.warm--; e.warm == 0 {
				p.setMark(&e.base, e, now)
			}
			return
		}
		if !p.measured(e, now) {
			p.fold(e, now)
			return
		}
		p.fold(e, now)
		// An experiment lasts until its line has run in it, in virtual
		// time (a line of one phase may be selected just as the program
		// leaves it), for at most maxIdle visits; one whose line never
		// ran is dropped.
		if e.idle++; e.win == 0 && e.idle < maxIdle*p.cfg.MinVisits {
			return
		}
		p.end(now)
	}
	p.start(now)
}
