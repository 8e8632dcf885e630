// Line attribution: which source line each executed instruction is
// charged to, in scope or through the in-scope caller (Coz §4.1).

package causal

import (
	"path/filepath"

	"emuprof/trace"
)

type lineKey struct {
	file   string
	line   int
	caller string // the routine that called the line's routine (--context)
	set    bool   // a line set: file is its name (lineset.go)
}

// ctxKey is a line in the context of a caller routine (by id).
type ctxKey struct {
	line   int32
	caller uint32
}

type lineInfo struct {
	key         lineKey
	cost        int64 // ns attributed over the run
	experiments int
	deck        []int // speedups still to run, drawn from the end
	// The line's cost during 0 % experiments (any line selected), for
	// the phase correction (Coz §4.6): base counts completed experiments,
	// pend the one numbered epoch (committed once it completes).
	base, pend int64
	epoch      int
	recent     int // == Profiler.recentGen: executed since the last experiment began
	// frac is the line's share of time-model block costs below a whole
	// ns, in 1/fracUnit ns, carried to its next execution (blockSpans).
	frac int64
	// set is the id of the fixed line set this line belongs to, or 0.
	set int32
}

// fracUnit is a ns in lineInfo.frac.
const fracUnit = 1 << 16

type blockData struct {
	done  bool
	scope int32 // in-scope line id, or 0
	any   int32 // id of the file:line of the block's last instruction, in scope or not (0: none)
	hits  []hit
	// spans: a block on several lines (BlockInfo.Lines), each charged
	// its own instructions; nil for a block on one line.
	spans []span
	addr  uint64 // the block's first instruction
	len   uint32 // and its bytes
}

// span is a run of a block's instructions on one line.
type span struct {
	scope, any int32
	insns      uint32
	off        uint32 // its first instruction, in bytes from the block's
}

func (p *Profiler) block(ev *trace.Event) {
	t := p.thread(ev.Tid)
	cost := int64(ev.Size) * p.opt.NsPerInsn
	if end := ev.Time + cost; end > p.now {
		p.now = end
	}
	bd := p.blockData(ev.Block)
	if bd.spans != nil {
		if p.opt.Timed {
			// Its accesses' costs (the events after it) go to their
			// instructions' lines: charged when they are known.
			p.pend = ev
			p.pendMem = append(p.pendMem[:0], make([]int64, len(bd.spans)+1)...)
			return
		}
		p.blockSpans(ev, t, bd, nil)
		return
	}
	line := p.lineOf(t, bd.scope, ev.Flags)
	if line != 0 {
		p.charge(t, line, cost, ev.Time)
	}
	t.prevLine = line
	for _, h := range bd.hits {
		if h.line && t.prevAny == bd.any {
			continue // still inside the line: not a new entry
		}
		p.visit(h, ev.Time)
	}
	t.prevAny = bd.any
}

// access adds a memory access of the pending block (a Read or Write
// event: Aux its instruction, Block its cost in ps under a time model) to
// the span of its instruction, or to the block's last slot when the
// instruction is not the block's.
func (p *Profiler) access(ev *trace.Event) {
	bd := &p.blocks[p.pend.Block]
	k := len(bd.spans)
	if off := ev.Aux - bd.addr; ev.Aux >= bd.addr && off < uint64(bd.len) {
		for k = len(bd.spans) - 1; k > 0 && uint64(bd.spans[k].off) > off; k-- {
		}
	}
	p.pendMem[k] += int64(ev.Block)
}

// settle charges the pending block.
func (p *Profiler) settle() {
	ev := p.pend
	p.pend = nil
	p.blockSpans(ev, p.thread(ev.Tid), &p.blocks[ev.Block], p.pendMem)
}

// blockSpans handles a block whose instructions come from several lines:
// each line is charged its own instructions, in order (the actual speedup
// of emuprof run --speedup is per instruction too). Under a time model
// mem holds the cost in ps of the block's accesses by span (the last
// slot: of no known instruction of the block).
func (p *Profiler) blockSpans(ev *trace.Event, t *thread, bd *blockData, mem []int64) {
	at := ev.Time
	var total, insns int64 // instructions, under a time model
	// The model's cost of the block (1/fracUnit ns), less its accesses'
	// that their lines take (memF): the rest (rest) is split by
	// instructions. Accesses priced above the block's Size (a block of
	// less than a ns of instructions, the rest rounded away) scale down.
	var sizeF, memF, rest, done int64
	if p.opt.Timed {
		for k, sp := range bd.spans {
			total += int64(sp.insns)
			memF += mem[k] * fracUnit / 1000
		}
		sizeF = int64(ev.Size) * fracUnit
		rest = max(sizeF-memF, 0)
	}
	for k, sp := range bd.spans {
		line := p.lineOf(t, sp.scope, ev.Flags)
		cost := int64(sp.insns) * p.opt.NsPerInsn
		if total > 0 {
			// A block costs a few ns, so a line's share is often below
			// one: each line carries its fraction to its next
			// execution (rounding each block's split would give a
			// line that is never last nothing, ever).
			m := mem[k] * fracUnit / 1000
			if memF > sizeF {
				m = m * sizeF / memF
			}
			was := done + rest*insns/total
			done, insns = done+m, insns+int64(sp.insns)
			if line != 0 {
				li := &p.lines[line]
				share := m + rest*int64(sp.insns)/total + li.frac
				cost, li.frac = share/fracUnit, share%fracUnit
			} else { // the block's sum so far rounded, less its sum before
				cost = (done+rest*insns/total)/fracUnit - was/fracUnit
			}
		}
		if line != 0 {
			p.charge(t, line, cost, at)
		}
		t.prevLine = line
		at += cost
	}
	for _, h := range bd.hits {
		if h.line && h.span == 0 && t.prevAny == bd.spans[0].any {
			continue // still inside the line: not a new entry
		}
		p.visit(h, ev.Time)
	}
	t.prevAny = bd.any
}

// kernel charges a system call's kernel work under a time model (a Syscall
// event's Block, in ns) to the line its thread is in: the in-scope line
// that called the library's wrapper, as code out of scope is charged
// (lineOf). Coz samples user time only (its perf events exclude the
// kernel), so a line whose cost is its system calls looks free to it; in
// virtual time the kernel's work is a known part of the thread's clock, and
// a virtual speedup of the line speeds it up too (batchwrite in
// docs/TIME-MODEL.md). The work ended at the event's time, unless the call
// blocked, where it is placed just before the wake-up.
func (p *Profiler) kernel(ev *trace.Event) {
	if ev.Block == 0 || ev.Addr >= trace.SyscallSignalEntry {
		return
	}
	t := p.thread(ev.Tid)
	if line := p.lineOf(t, 0, 0); line != 0 {
		p.charge(t, line, int64(ev.Block), ev.Time-int64(ev.Block))
		t.prevLine = line
	}
}

// lineOf returns the line a thread's code is charged to: scope, the code's
// own line in scope (in its calling context with --context), which becomes
// the thread's current line; else, for code out of scope or hidden, the
// current line (Coz's last in-scope callsite), unless --no-callees.
func (p *Profiler) lineOf(t *thread, scope int32, flags trace.Flags) int32 {
	if scope != 0 && flags&trace.FlagHidden == 0 {
		line := scope
		if p.cfg.Context {
			line = p.inContext(line, t)
		}
		t.cur = line
		return line
	}
	if !p.cfg.NoCallees {
		return t.cur
	}
	return 0
}

func (p *Profiler) blockData(id uint32) *blockData {
	for int(id) >= len(p.blocks) {
		p.blocks = append(p.blocks, make([]blockData, len(p.blocks)+256)...)
	}
	bd := &p.blocks[id]
	if bd.done {
		return bd
	}
	bd.done = true
	bi := p.opt.Block(id)
	if bi == nil {
		return bd
	}
	bd.scope, bd.any = p.lineIDsOf(bi, bi.File, bi.Line)
	bd.addr, bd.len = bi.Addr, bi.Len
	for _, ls := range bi.Lines {
		sp := span{insns: ls.Insns, off: ls.Off}
		sp.scope, sp.any = p.lineIDsOf(bi, ls.File, ls.Line)
		bd.spans = append(bd.spans, sp)
		bd.any = sp.any // the last instruction's line
	}
	bias, ok := p.cozBiasFor(bi)
	bd.hits = p.hitsFor(bi, bias, ok)
	return bd
}

// lineIDsOf returns the ids of file:line of a block (bi): in scope (0 if
// not) and among every line (0 if none).
func (p *Profiler) lineIDsOf(bi *trace.BlockInfo, file string, line int) (scope, anyID int32) {
	if file == "" || line <= 0 {
		return 0, 0
	}
	k := lineKey{file: file, line: line}
	if anyID = p.anyIDs[k]; anyID == 0 {
		anyID = int32(len(p.anyIDs) + 1)
		p.anyIDs[k] = anyID
	}
	if p.inScope(bi, file) {
		scope = p.lineID(k)
	}
	return scope, anyID
}

// inScope says whether the line of a block's code in file is in scope.
func (p *Profiler) inScope(bi *trace.BlockInfo, file string) bool {
	if p.cfg.Scope != "" {
		ok1, _ := filepath.Match(p.cfg.Scope, file)
		ok2, _ := filepath.Match(p.cfg.Scope, filepath.Base(file))
		return ok1 || ok2
	}
	if p.mainExe == "" {
		return true
	}
	obj := bi.Routine.Object
	if abs, err := filepath.Abs(obj); err == nil {
		obj = filepath.Clean(abs)
	}
	return obj == p.mainExe
}

func (p *Profiler) lineID(k lineKey) int32 {
	if id, ok := p.lineIDs[k]; ok {
		return id
	}
	id := int32(len(p.lines))
	p.lines = append(p.lines, lineInfo{key: k})
	p.lineIDs[k] = id
	if p.fixedSet != nil {
		p.bindSet(id)
		return id
	}
	if p.hasFix && p.fixedID == 0 && k.line == p.fixed.line && fileMatches(k.file, p.fixed.name) &&
		(!p.cfg.Context || k.caller != "" && (p.fixedCaller == "" || k.caller == p.fixedCaller)) {
		p.fixedID = id
		if p.exp != nil && p.exp.line == 0 {
			p.exp.line = id
		}
	}
	return id
}

func (p *Profiler) lineName(id int32) string {
	k := p.lines[id].key
	if k.set {
		if id == p.setID {
			return p.fixedSetName()
		}
		return k.file // a merged shard's (buildExact)
	}
	if k.caller != "" {
		return k.file + ":" + itoa(k.line) + " <- " + k.caller
	}
	return k.file + ":" + itoa(k.line)
}

// inContext returns the id of line in the context of the caller of the
// thread's current routine (the routine below the top of its call stack).
func (p *Profiler) inContext(line int32, t *thread) int32 {
	var caller uint32
	if n := len(t.routines); n >= 2 {
		caller = t.routines[n-2]
	}
	ck := ctxKey{line, caller}
	if id, ok := p.ctxIDs[ck]; ok {
		return id
	}
	k := p.lines[line].key
	k.caller = "?"
	if n := len(t.routines); n >= 2 && p.opt.RoutineName != nil {
		if name := p.opt.RoutineName(caller); name != "" {
			k.caller = name
		}
	}
	id := p.lineID(k)
	p.ctxIDs[ck] = id
	return id
}
