// What the profiler reports while and after it runs: progress, memory, the
// completed experiments and totals.

package causal

import "unsafe"

// MarkPartial records that the run did not finish.
func (p *Profiler) MarkPartial(reason string) { p.partial = reason }

// Progress says, for the live status line, how many experiments are done
// and how many lines they covered; it may be called from another goroutine.
func (p *Profiler) Progress() (what string, done, total int) {
	if p.cfg.Observe || p.cfg.EndToEnd {
		return "", 0, 0
	}
	return "causal: lines covered " + itoa(int(p.nLines.Load())) + ", experiments", int(p.nDone.Load()), 0
}

// MemoryBytes implements trace.MemoryUser: what the profiler holds, which
// grows with the experiments (one record each, bounded by the run's
// effective virtual time over minLength), the lines and the blocks.
func (p *Profiler) MemoryBytes() uint64 {
	n := uintptr(cap(p.done))*unsafe.Sizeof(Experiment{}) + uintptr(p.nDone.Load())*uintptr(len(p.points))*unsafe.Sizeof(PointDelta{}) +
		uintptr(cap(p.lines))*unsafe.Sizeof(lineInfo{}) + uintptr(cap(p.blocks))*unsafe.Sizeof(blockData{})
	if e := p.exp; e != nil {
		n += uintptr(cap(e.runs)) * unsafe.Sizeof(selRun{})
	}
	return uint64(n) + uint64(len(p.lineIDs)+len(p.anyIDs))*64
}

// Experiments returns the completed experiments, in order.
func (p *Profiler) Experiments() []Experiment { p.nameSet(); return p.done }

// Delayed is the total pause requested, in ns.
func (p *Profiler) Delayed() int64 { return p.delayed }

// Runtime is the latest virtual time seen: the run's virtual duration.
func (p *Profiler) Runtime() int64 { return p.now }
