package paths

// A routine's CFG grows when the run takes a transition the disassembly
// missed (an unresolved indirect jump, a jump into a block's middle, code
// never reached statically), and its DAG gains heads and tails (landing
// sites, noreturn calls). The numbering then changes. What was counted so
// far is kept exactly: every counted path and every path in progress is
// turned back into its block sequence under the old numbering, mapped onto
// the new blocks by address, and walked again under the new DAG. A path
// the new DFS cuts at a new back edge is counted as the two paths it now
// is; a path head or end that is no longer one (a back edge that became a
// forward edge) is kept as an extra head (ENTRY->w) or tail (v->EXIT), so
// that every execution counted before still names one path of the final
// DAG. Counts never change by renumbering; only ids do.

// pathOf returns the block sequence of a counted path key.
func (rt *routine) pathOf(key uint64) ([]int32, bool) {
	if rt.big {
		if int(key) >= len(rt.tr.parent) {
			return nil, false
		}
		return rt.tr.seq(int32(key)), true
	}
	vp, err := rt.dag.Num.Decode(key)
	if err != nil {
		return nil, false
	}
	return BlockPath(vp), true
}

// prefix returns the block sequence of a path in progress at block cur
// with register r. Under Ball-Larus labels the first out-edge of every
// vertex has label 0, so r is also the id of the path that continues from
// cur along first out-edges: decoding it and cutting at cur gives the
// prefix.
func (rt *routine) prefix(cur int32, r uint64) ([]int32, bool) {
	if rt.big {
		if int(r) >= len(rt.tr.parent) {
			return nil, false
		}
		return rt.tr.seq(int32(r)), true
	}
	vp, err := rt.dag.Num.Decode(r)
	if err != nil {
		return nil, false
	}
	bp := BlockPath(vp)
	i := indexOf(bp, cur)
	if i < 0 {
		return nil, false
	}
	return bp[:i+1], true
}

// edge returns the run-time edge u->w.
func (rt *routine) edge(u, w int32) *rtEdge {
	for i := range rt.vi[u].succ {
		if rt.vi[u].succ[i].to == w {
			return &rt.vi[u].succ[i]
		}
	}
	return nil
}

// walk follows the block sequence seq from its head under the current
// DAG, calling done with the count key of every path completed at a back
// edge, and returns where it stands at the end (block and register).
func (rt *routine) walk(seq []int32, done func(key uint64)) (cur int32, reg uint64, ok bool) {
	if len(seq) == 0 || !rt.vi[seq[0]].isHead {
		return -1, 0, false
	}
	start := func(b int32) uint64 {
		if rt.big {
			return uint64(rt.tr.next(-1, b))
		}
		return rt.vi[b].headVal
	}
	reg = start(seq[0])
	for k := 1; k < len(seq); k++ {
		e := rt.edge(seq[k-1], seq[k])
		switch {
		case e == nil:
			return -1, 0, false
		case e.back:
			done(rt.endKey(seq[k-1], reg))
			reg = start(seq[k])
		case rt.big:
			reg = uint64(rt.tr.next(int32(reg), seq[k]))
		default:
			reg += e.val
		}
	}
	return seq[len(seq)-1], reg, true
}

// endKey is the count key of a path ending at block b with register reg.
func (rt *routine) endKey(b int32, reg uint64) uint64 {
	if rt.big {
		return reg
	}
	return reg + rt.vi[b].exitVal
}

// expand maps a block sequence of CFG old onto the current CFG by
// address. A block split in several gives all its pieces; for a path in
// progress (lastEnd != 0) the last block gives the pieces before lastEnd.
func (rt *routine) expand(old *CFG, seq []int32, lastEnd uint64) []int32 {
	nb := rt.cfg.Blocks
	var out []int32
	for i, b := range seq {
		s, e := old.Blocks[b].Start, old.Blocks[b].End
		j, ok := rt.cfg.Leader(s)
		if !ok {
			return nil
		}
		out = append(out, j)
		for int(j)+1 < len(nb) && nb[j+1].Start < e && nb[j].End == nb[j+1].Start {
			if i == len(seq)-1 && lastEnd != 0 && nb[j+1].Start >= lastEnd {
				break
			}
			j++
			out = append(out, j)
		}
	}
	return out
}

// rebuild rebuilds rt's CFG (recover) or only its DAG, and carries the
// counts and every frame in progress over to the new numbering.
func (p *Profiler) rebuild(rt *routine, recover bool) {
	if recover {
		p.rebuildWith(rt, rt.build)
	} else {
		p.rebuildWith(rt, rt.number)
	}
}

// sameBlocks reports whether a and b have the same blocks (successors
// aside): a block sequence of one is then one of the other (expand is the
// identity).
func sameBlocks(a, b *CFG) bool {
	if a == nil || b == nil || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		if a.Blocks[i].Start != b.Blocks[i].Start || a.Blocks[i].End != b.Blocks[i].End {
			return false
		}
	}
	return true
}

// keepsPaths reports whether the run-time tables now (vi) keep every edge
// of the old ones (old) with its kind (DAG or back edge), every head and
// every exit: every counted path and every path in progress is then a
// path (or a prefix) of the new DAG as it is, with no new cut, head or
// tail (rebuildWith would walk each to itself).
func keepsPaths(old, vi []vinfo) bool {
	if len(old) != len(vi) {
		return false
	}
	for b := range old {
		o, n := &old[b], &vi[b]
		if o.isHead && !n.isHead || o.hasExit && !n.hasExit {
			return false
		}
	next:
		for _, e := range o.succ {
			for _, f := range n.succ {
				if f.to == e.to {
					if f.back != e.back {
						return false
					}
					continue next
				}
			}
			return false
		}
	}
	return true
}

// rebuildWith is rebuild with update making rt's new CFG and DAG, called
// once the old paths are read (their blocks come from the old DAG and
// CFG).
func (p *Profiler) rebuildWith(rt *routine, update func()) {
	oldCFG, oldVI := rt.cfg, rt.vi
	updated, newBig := false, false
	if rt.big && rt.tr != nil {
		// A big routine's paths are trie nodes, not numbers: the
		// renumbering changes none of them when the new DAG keeps every
		// edge, head and exit of the old one as it was (a learnt edge
		// that leaves the DFS as it was, the common case), and then
		// only the trie's order is rebuilt (rerank), not the trie and
		// the counts (which walked every path again: python3's eval
		// loop is renumbered once per learnt edge).
		update()
		if rt.big && !p.noRerank && sameBlocks(oldCFG, rt.cfg) && keepsPaths(oldVI, rt.vi) {
			p.reranks++
			keys, _ := rt.sortedCounts()
			var lives []int32
			for _, t := range p.sortedThreads() {
				for i := range t.frames {
					if f := &t.frames[i]; f.rt == rt && f.cur >= 0 {
						lives = append(lives, int32(f.r))
					}
				}
			}
			rt.tr.rerank(keys, lives)
			p.accountBuild(rt)
			return
		}
		// The paths are read from the trie, which the update left as
		// it was (as from a big routine's, whatever the new DAG is).
		updated, newBig = true, rt.big
		rt.big = true
	}
	type counted struct {
		seq   []int32
		count uint64
	}
	keys, cs := rt.sortedCounts()
	var olds []counted
	for i, k := range keys {
		seq, ok := rt.pathOf(k)
		if !ok {
			rt.lost += cs[i]
			continue
		}
		olds = append(olds, counted{seq, cs[i]})
	}
	type live struct {
		f   *frame
		seq []int32
	}
	var lives []live
	for _, t := range p.sortedThreads() {
		for i := range t.frames {
			f := &t.frames[i]
			if f.rt != rt || f.cur < 0 {
				continue
			}
			seq, ok := rt.prefix(f.cur, f.r)
			if !ok {
				f.cur = -1
				rt.lost++
				continue
			}
			lives = append(lives, live{f, seq})
		}
	}
	if updated {
		rt.big = newBig
	} else {
		update()
	}
	if !sameBlocks(oldCFG, rt.cfg) {
		for i := range olds {
			olds[i].seq = rt.expand(oldCFG, olds[i].seq, 0)
		}
		for i := range lives {
			lives[i].seq = rt.expand(oldCFG, lives[i].seq, lives[i].f.lastEnd)
		}
	}
	// Heads and tails the old paths need.
	for round := 0; round < 3; round++ {
		changed := false
		need := func(seq []int32, complete bool) {
			if len(seq) == 0 {
				return
			}
			if !rt.vi[seq[0]].isHead && rt.addHead(rt.cfg.Blocks[seq[0]].Start) {
				changed = true
			}
			last := seq[len(seq)-1]
			if complete && !rt.vi[last].hasExit && rt.addTail(rt.cfg.Blocks[last].End) {
				changed = true
			}
		}
		for _, o := range olds {
			need(o.seq, true)
		}
		for _, l := range lives {
			need(l.seq, false)
		}
		if !changed {
			break
		}
		rt.number()
	}
	oldTrie := rt.tr
	rt.tr = nil
	if rt.big {
		// The old paths make about as many nodes again: a map sized
		// for them does not grow while they are walked.
		n := 0
		if oldTrie != nil {
			n = oldTrie.size
		}
		rt.tr = newTrieSize(n)
	}
	rt.resetCounts()
	p.accountBuild(rt)
	for _, o := range olds {
		cur, reg, ok := rt.walk(o.seq, func(k uint64) { rt.add(k, o.count) })
		if !ok || !rt.vi[cur].hasExit {
			rt.lost += o.count
			continue
		}
		rt.add(rt.endKey(cur, reg), o.count)
	}
	for _, l := range lives {
		cur, reg, ok := rt.walk(l.seq, func(k uint64) { rt.add(k, 1) })
		if !ok {
			l.f.cur = -1
			rt.lost++
			continue
		}
		l.f.cur, l.f.r = cur, reg
	}
	// Emulator blocks map again (the cache checks the version).
}
