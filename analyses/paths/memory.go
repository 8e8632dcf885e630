package paths

// What the profiler holds that grows with the guest, for --memory-limit
// (trace.MemoryUser). MemoryBytes is asked between every two batches, so
// it sums only what can grow on the per-event path (the counts kept in maps,
// the tries of big routines, the threads' frames); what a routine's
// recovery builds (its CFG, DAG, numbering and dense counts) is counted
// once per build, the object files read for their code once each. The sizes are estimates of Go's layout, per entry.
const (
	mapEntryBytes  = 48  // a map entry of two words, with the map's overhead
	blockBytes     = 160 // a CFG block with its successors, DAG vertex, numbering and run-time tables
	trieNodeBytes  = 56  // parent and block (8) and a child map entry
	frameBytes     = 72  // a frame of a thread's stack
	cacheBytes     = 64  // a cache entry of an emulator block, with its static blocks
	truncBaseBytes = 128 // a truncated path's record and key, besides its blocks
)

// builtBytes estimates what rt's last build holds.
func (rt *routine) builtBytes() uint64 {
	n := uint64(len(rt.dense)) * 8
	if rt.cfg != nil {
		n += uint64(len(rt.cfg.Blocks)) * blockBytes
	}
	n += uint64(len(rt.extents)) * mapEntryBytes
	return n
}

// accountBuild counts rt's build in place of its previous one; a routine
// whose counts are in a map (too many paths for an array) is watched.
func (p *Profiler) accountBuild(rt *routine) {
	b := rt.builtBytes()
	p.built += b - rt.accounted // modular: the difference may be negative
	rt.accounted = b
	if rt.dense == nil && !rt.growing {
		rt.growing = true
		p.growing = append(p.growing, rt)
	}
}

// MemoryBytes implements trace.MemoryUser.
func (p *Profiler) MemoryBytes() uint64 {
	n := p.built + p.truncBytes + uint64(cap(p.cache))*cacheBytes
	if p.elf != nil {
		// The objects' files, read whole: shared with the symbol table
		// since the loader reads each once, still counted (as before).
		n += p.elf.Bytes()
	}
	for _, rt := range p.growing {
		if rt.dense == nil {
			n += uint64(len(rt.counts)) * mapEntryBytes
		}
		if rt.tr != nil {
			n += uint64(rt.tr.size) * trieNodeBytes
		}
	}
	for _, th := range p.threads {
		n += uint64(cap(th.frames)) * frameBytes
	}
	return n
}
