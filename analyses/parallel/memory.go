package parallel

import "unsafe"

// mapEntryBytes estimates what one entry costs a Go map beyond its key and
// value: its share of buckets, control bytes and growth.
const mapEntryBytes = 24

// MemoryBytes implements trace.MemoryUser: what the analysis holds that
// grows with the guest (calling contexts, keys and their metrics, lines,
// per-block and per-call tables, the pending timeline, threads and
// locks), for --memory-limit. It is asked between every two batches, so
// it sums lengths and per-thread figures only; the sizes are Go's layout
// and an estimate of each map's overhead.
func (a *Analysis) MemoryBytes() uint64 {
	idle := uint64(a.cfg.CPUs+1) * 8 // a key's or thread's idleness by working threads (timeline.go)
	n := uint64(len(a.tree.nodes)) * uint64(unsafe.Sizeof(ctxNode{})+unsafe.Sizeof(ctxKey{})+4+mapEntryBytes)
	n += uint64(len(a.keys.list)) * (uint64(unsafe.Sizeof(keyPair{})*2+unsafe.Sizeof(stats{})+4+mapEntryBytes) + idle)
	n += uint64(len(a.lines.list)) * uint64(unsafe.Sizeof(lineInfo{})*2+8+4+mapEntryBytes)
	n += uint64(cap(a.blocks))*uint64(unsafe.Sizeof(blockClass{})) + uint64(cap(a.calls))*uint64(unsafe.Sizeof(callMemo{})) +
		uint64(cap(a.routines))*uint64(unsafe.Sizeof(routineClass{}))
	n += uint64(cap(a.evs))*uint64(unsafe.Sizeof(edge{})) + uint64(cap(a.segs))*uint64(unsafe.Sizeof(segment{}))
	n += uint64(len(a.lockOrder)) * uint64(unsafe.Sizeof(lock{})+8+8+mapEntryBytes)
	for _, t := range a.all {
		n += uint64(unsafe.Sizeof(thread{})) + idle + uint64(cap(t.stack))*4 + uint64(cap(t.phys))*4 +
			uint64(cap(t.pieces))*uint64(unsafe.Sizeof(piece{})) + uint64(cap(t.pats))*uint64(unsafe.Sizeof(pattern{}))
	}
	return n
}
