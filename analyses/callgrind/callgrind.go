// Package callgrind writes a run's instruction counts in the Callgrind
// profile format (valgrind's callgrind.out.<pid>, version 1), which
// KCachegrind and callgrind_annotate read: instructions (Ir) and basic
// blocks (Bb) per function, per source line and per instruction address,
// and, through calls= lines, every call edge with its count and its
// inclusive cost. The counts are exact: every block the guest ran is
// counted once, so the file's total is the run's instruction count.
package callgrind

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/calls"
	"emuprof/decode"
	"emuprof/trace"
)

// fnKey names a function as callgrind does: the object and the symbol
// (the entry address separates routines of one name, static functions of
// different files).
type fnKey struct {
	object, name string
	entry        uint64
}

// fnID is a function interned by the profile (Profile.fns): a call and a
// return then cost no string work (routineKey formats names, and edges
// keyed by names hashed four strings per return).
type fnID int32

// frame is one activation on a thread's shadow stack.
type frame struct {
	ctx      calls.NodeID // its calling context
	callee   fnID
	caller   fnID
	site     uint32 // block id of the call site (the caller's last block), 0: none (a root)
	ir, bb   uint64 // the thread's counters when it was entered
	returned bool
}

type thread struct {
	ir, bb uint64 // instructions and blocks the thread ran
	last   uint32 // the block it ran last, of a routine whose frames are seen (not a linker stub)
	stack  []frame
}

// edgeKey is a call edge: caller function, call site block, callee.
type edgeKey struct {
	caller, callee fnID
	site           uint32
}

type edgeCost struct {
	calls, ir, bb uint64
}

// Profile collects the counts of one process image.
type Profile struct {
	routines func() *calls.Routines
	cct      func() *calls.CCT
	block    func(id uint32) *trace.BlockInfo
	ctxSelf  []uint64 // per calling context: its own instructions

	execs   []uint64 // per block id: times run
	insns   []uint32 // per block id: its instructions (0: not looked up yet)
	threads map[uint32]*thread
	cur     *thread
	curTid  uint32
	edges   map[edgeKey]*edgeCost
	total   uint64 // instructions
	blocks  uint64
	entries map[fnKey]cost // calleeFile's cache

	// The interned functions, and which one each routine id and block
	// id belongs to (fnID+1; 0: not seen yet). Routines and blocks never
	// change under an id (trace.BlockTable, calls.Routines).
	fns      []fnKey
	fnOf     map[fnKey]fnID
	routineF []fnID
	blockF   []fnID
	// bySite indexes edges by call site block id: the site's block gives
	// the caller, so an edge is its site's and callee's, found without
	// hashing (the edges' map is read when the profile is written).
	bySite [][]siteEdge

	// mapping, when set, locates code in its object file, whose bytes
	// give each instruction's address (SetMapper).
	mapping func(pc uint64) (trace.Mapping, bool)
	files   map[string][]byte   // object files read (nil: unreadable)
	decoded map[uint32][]uint32 // block id -> instruction offsets (nil: unknown)
}

// SetMapper lets the profile read the executed code from the objects'
// files when it is written, so that every instruction has its own cost
// line (KCachegrind's machine-code view); without it, or for code no
// file holds (the vDSO, code the program wrote), the instructions of a
// block on one line are charged to their first one.
func (p *Profile) SetMapper(m trace.Mapper) { p.mapping = m.Mapping }

// link is pc's link-time address in its object, as callgrind writes
// addresses (KCachegrind disassembles the object there); pc itself
// without a mapper or outside every object.
func (p *Profile) link(pc uint64) uint64 {
	if p.mapping == nil {
		return pc
	}
	if m, ok := p.mapping(pc); ok {
		return pc - m.Bias
	}
	return pc
}

// starts returns the offsets of b's instructions, decoded from its
// object file, or nil when the file does not hold the block as it ran
// (the decoded count differs).
func (p *Profile) starts(b *trace.BlockInfo) []uint32 {
	if p.mapping == nil {
		return nil
	}
	m, ok := p.mapping(b.Addr)
	if !ok || m.File == "" || b.Addr < m.Start || b.Addr+uint64(b.Len) > m.Limit {
		return nil
	}
	if p.files == nil {
		p.files = map[string][]byte{}
	}
	data, seen := p.files[m.File]
	if !seen {
		data, _ = os.ReadFile(m.File)
		p.files[m.File] = data
	}
	off := b.Addr - m.Start + m.Offset
	if off+uint64(b.Len) > uint64(len(data)) {
		return nil
	}
	st := decode.Starts(data[off:off+uint64(b.Len)], nil)
	if len(st) != int(b.Insns) || len(st) == 0 {
		return nil
	}
	return st
}

// appendInsns appends a cost line per instruction of block b, run n
// times: its lines from b.Lines (runs of instructions), the block's
// entry counted at its first.
func appendInsns(costs []cost, b *trace.BlockInfo, starts []uint32, n uint64) []cost {
	span, left := 0, uint32(len(starts))
	if len(b.Lines) > 0 {
		left = b.Lines[0].Insns
	}
	for k, o := range starts {
		for len(b.Lines) > 0 && left == 0 && span+1 < len(b.Lines) {
			span++
			left = b.Lines[span].Insns
		}
		file, line := b.File, b.Line
		if len(b.Lines) > 0 {
			file, line = b.Lines[span].File, b.Lines[span].Line
		}
		c := cost{addr: b.Addr + uint64(o), file: file, line: line, ir: n}
		if k == 0 {
			c.bb = n
		}
		costs = append(costs, c)
		left--
	}
	return costs
}

// New returns an empty profile: block looks a block id up, routines and
// cct are the call-tracking stage's routine table and calling context
// tree (Call events index them).
func New(block func(uint32) *trace.BlockInfo, routines func() *calls.Routines, cct func() *calls.CCT) *Profile {
	return &Profile{block: block, routines: routines, cct: cct, threads: map[uint32]*thread{}, edges: map[edgeKey]*edgeCost{}, fnOf: map[fnKey]fnID{}}
}

// intern returns the id of function k.
func (p *Profile) intern(k fnKey) fnID {
	if id, ok := p.fnOf[k]; ok {
		return id
	}
	id := fnID(len(p.fns))
	p.fns = append(p.fns, k)
	p.fnOf[k] = id
	return id
}

// routineFn returns the function of routine r.
func (p *Profile) routineFn(r calls.RoutineID) fnID {
	return p.memoFn(&p.routineF, int(r), func() fnKey {
		rt := p.routines().Get(r)
		return routineKey(trace.Routine{Entry: rt.Entry, Name: rt.Name, Object: rt.Object})
	})
}

// blockFn returns the function of block id, whose table entry is b.
func (p *Profile) blockFn(id uint32, b *trace.BlockInfo) fnID {
	return p.memoFn(&p.blockF, int(id), func() fnKey { return routineKey(b.Routine) })
}

// memoFn returns the function remembered at (*tbl)[i] (fnID+1; 0: not
// yet), interning key() there on first use.
func (p *Profile) memoFn(tbl *[]fnID, i int, key func() fnKey) fnID {
	if i < len(*tbl) && (*tbl)[i] != 0 {
		return (*tbl)[i] - 1
	}
	id := p.intern(key())
	if i >= len(*tbl) {
		*tbl = slices.Grow(*tbl, i+1-len(*tbl))[:i+1]
	}
	(*tbl)[i] = id + 1
	return id
}

// Needs: blocks with their lines, and calls, marked on blocks (no stack
// pointer is read) and in repeated periods, so that the analyses that
// run with it keep those savings.
func (p *Profile) Needs() trace.Needs {
	return trace.Needs{
		Wants:    trace.Wants{Blocks: true, Calls: true, Lines: true, Threads: true},
		Encoding: trace.Encoding{CallMarks: true, RepeatEvents: true},
	}
}

func (p *Profile) thread(tid uint32) *thread {
	if p.cur != nil && p.curTid == tid {
		return p.cur
	}
	t := p.threads[tid]
	if t == nil {
		t = &thread{}
		p.threads[tid] = t
	}
	p.cur, p.curTid = t, tid
	return t
}

// routineKey is the function of a block's routine.
func routineKey(r trace.Routine) fnKey {
	if r.Name == "" {
		return fnKey{object: "???", name: "???"}
	}
	obj := r.Object
	if obj == "" || obj == "NONE" {
		obj = "???"
	}
	name := r.Name
	// Code no symbol covers is "object!0x1234" to emuprof; callgrind
	// names it by its address in the object, zero-padded.
	if i := strings.LastIndex(name, "!0x"); i > 0 {
		if off, err := strconv.ParseUint(name[i+3:], 16, 64); err == nil {
			name = fmt.Sprintf("0x%016x", off)
		}
	}
	return fnKey{object: obj, name: name, entry: r.Entry}
}

// Events counts a batch.
func (p *Profile) Events(batch []trace.Event) {
	for i := 0; i < len(batch); i++ {
		ev := &batch[i]
		switch ev.Kind {
		case trace.KindBlock:
			p.blockEvent(ev, 1)
		case trace.KindCall:
			p.call(p.thread(ev.Tid), calls.RoutineID(ev.Block), calls.NodeID(ev.Aux))
		case trace.KindReturn:
			t := p.thread(ev.Tid)
			if len(t.stack) > 0 {
				p.pop(t)
			}
		case trace.KindThreadExit:
			t := p.thread(ev.Tid)
			for len(t.stack) > 0 {
				p.pop(t)
			}
		case trace.KindRepeat:
			i += p.repeat(ev, batch[i+1:])
		}
	}
}

// blockEvent counts a Block event n times: its calls and returns (call
// marks, Encoding.CallMarks) come before it.
func (p *Profile) blockEvent(ev *trace.Event, n uint64) {
	t := p.thread(ev.Tid)
	if ev.Flags&trace.FlagCalls != 0 {
		returns, call := ev.CallMarks()
		for ; returns > 0 && len(t.stack) > 0; returns-- {
			p.pop(t)
		}
		if call != 0 {
			ctx := calls.NodeID(call - 1)
			p.call(t, p.cct().Node(ctx).Routine, ctx)
		}
	}
	id := ev.Block
	if int(id) >= len(p.execs) {
		p.execs = slices.Grow(p.execs, int(id)+1-len(p.execs))[:id+1]
		p.insns = slices.Grow(p.insns, int(id)+1-len(p.insns))[:id+1]
	}
	// The block table's count, not the event's Size: under a time model
	// (--time-model) Size is the block's cost in ns.
	if p.insns[id] == 0 {
		p.insns[id] = p.block(id).Insns
	}
	ir := n * uint64(p.insns[id])
	p.execs[id] += n
	t.ir += ir
	t.bb += n
	// A call through a linker stub (or the lazy-binding resolver) is made
	// by the code that called the stub: the call site is the last block
	// before.
	if ev.Flags&trace.FlagHidden == 0 {
		t.last = id
	}
	p.total += ir
	p.blocks += n
	if k := len(t.stack); k > 0 {
		ctx := int(t.stack[k-1].ctx)
		if ctx >= len(p.ctxSelf) {
			p.ctxSelf = slices.Grow(p.ctxSelf, ctx+1-len(p.ctxSelf))[:ctx+1]
		}
		p.ctxSelf[ctx] += ir
	}
}

// call enters routine r in calling context ctx on thread t.
func (p *Profile) call(t *thread, r calls.RoutineID, ctx calls.NodeID) {
	f := frame{ctx: ctx, callee: p.routineFn(r), ir: t.ir, bb: t.bb}
	if b := p.block(t.last); b != nil && len(t.stack) > 0 {
		f.caller, f.site = p.blockFn(t.last, b), t.last
	}
	t.stack = append(t.stack, f)
}

// repeat handles a Repeat event (Encoding.RepeatEvents): the period after it
// (in the same batch: the call stage hands them on together) happens
// Aux+1 times. A period of blocks alone is counted at once; one with
// calls or returns is handled once per repetition (the stage's state
// repeats, so each does the same). It returns the period's length.
func (p *Profile) repeat(r *trace.Event, rest []trace.Event) int {
	n := min(int(r.Size), len(rest))
	period := rest[:n]
	plain := true
	for i := range period {
		plain = plain && period[i].Kind == trace.KindBlock && period[i].Flags&trace.FlagCalls == 0
	}
	if plain {
		for i := range period {
			p.blockEvent(&period[i], r.Aux+1)
		}
		return n
	}
	for j := uint64(0); j <= r.Aux; j++ {
		p.Events(period)
	}
	return n
}

// pop ends the thread's innermost activation: its call edge gets the
// thread's instructions since it was entered.
func (p *Profile) pop(t *thread) {
	f := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	if f.site == 0 {
		return
	}
	e := p.edge(f)
	e.calls++
	e.ir += t.ir - f.ir
	e.bb += t.bb - f.bb
}

type siteEdge struct {
	callee fnID
	cost   *edgeCost
}

// edge returns the cost of frame f's call edge.
func (p *Profile) edge(f frame) *edgeCost {
	if int(f.site) < len(p.bySite) {
		for _, se := range p.bySite[f.site] {
			if se.callee == f.callee {
				return se.cost
			}
		}
	}
	k := edgeKey{caller: f.caller, callee: f.callee, site: f.site}
	e := p.edges[k]
	if e == nil {
		e = &edgeCost{}
		p.edges[k] = e
	}
	if int(f.site) >= len(p.bySite) {
		p.bySite = slices.Grow(p.bySite, int(f.site)+1-len(p.bySite))[:f.site+1]
	}
	p.bySite[f.site] = append(p.bySite[f.site], siteEdge{f.callee, e})
	return e
}

// Finish ends the activations still open (a program that exits from
// main), as callgrind does at its dump: their costs so far are inclusive.
func (p *Profile) Finish() {
	tids := make([]uint32, 0, len(p.threads))
	for tid := range p.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		t := p.threads[tid]
		for len(t.stack) > 0 {
			p.pop(t)
		}
	}
}

// Instructions is the number of instructions counted.
func (p *Profile) Instructions() uint64 { return p.total }

// cost is one cost line: a position and its counts.
type cost struct {
	addr   uint64
	file   string
	line   int
	ir, bb uint64
}

// fnData is what the file says about one function.
type fnData struct {
	key   fnKey
	costs []cost
	calls []call
}

type call struct {
	callee fnKey
	site   cost // the call site's position; ir, bb: inclusive
	calls  uint64
}

// Header describes the run in the file's header.
type Header struct {
	Pid     int
	Command string
	Partial string // why the run did not finish ("": it did)
}

// functions builds the per-function costs, sorted by object, name, entry.
func (p *Profile) functions() []*fnData {
	fns := map[fnKey]*fnData{}
	get := func(k fnKey) *fnData {
		f := fns[k]
		if f == nil {
			f = &fnData{key: k}
			fns[k] = f
		}
		return f
	}
	for id, n := range p.execs {
		if n == 0 {
			continue
		}
		b := p.block(uint32(id))
		if b == nil {
			continue
		}
		f := get(routineKey(b.Routine))
		if starts := p.starts(b); starts != nil {
			f.costs = appendInsns(f.costs, b, starts, n)
			continue
		}
		if len(b.Lines) == 0 {
			f.costs = append(f.costs, cost{addr: b.Addr, file: b.File, line: b.Line, ir: n * uint64(b.Insns), bb: n})
			continue
		}
		for i, s := range b.Lines {
			c := cost{addr: b.Addr + uint64(s.Off), file: s.File, line: s.Line, ir: n * uint64(s.Insns)}
			if i == 0 {
				c.bb = n // the block is entered once per run, at its first line
			}
			f.costs = append(f.costs, c)
		}
	}
	for k, e := range p.edges {
		f := get(p.fns[k.caller])
		site := cost{file: "", ir: e.ir, bb: e.bb}
		if b := p.block(k.site); b != nil {
			// The call is the block's last instruction.
			site.addr, site.file, site.line = b.Addr, b.File, b.Line
			if n := len(b.Lines); n > 0 {
				s := b.Lines[n-1]
				site.addr, site.file, site.line = b.Addr+uint64(s.Off), s.File, s.Line
			}
			if starts := p.starts(b); starts != nil {
				site.addr = b.Addr + uint64(starts[len(starts)-1])
			}
		}
		f.calls = append(f.calls, call{callee: p.fns[k.callee], site: site, calls: e.calls})
	}
	out := make([]*fnData, 0, len(fns))
	for _, f := range fns {
		// Several blocks may share an address (code retranslated after
		// it changed): one line per position.
		slices.SortFunc(f.costs, func(a, b cost) int {
			return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
		})
		merged := f.costs[:0]
		for _, c := range f.costs {
			if n := len(merged); n > 0 && merged[n-1].addr == c.addr && merged[n-1].file == c.file && merged[n-1].line == c.line {
				merged[n-1].ir += c.ir
				merged[n-1].bb += c.bb
				continue
			}
			merged = append(merged, c)
		}
		f.costs = merged
		// Blocks that end at one call (entered at different addresses)
		// are one call site: one calls= line each, in an order that
		// does not depend on the edges' map.
		slices.SortFunc(f.calls, func(a, b call) int {
			return cmp.Or(cmp.Compare(a.site.addr, b.site.addr), compareKey(a.callee, b.callee),
				cmp.Compare(a.site.file, b.site.file), cmp.Compare(a.site.line, b.site.line))
		})
		calls := f.calls[:0]
		for _, c := range f.calls {
			if n := len(calls); n > 0 && calls[n-1].site.addr == c.site.addr && calls[n-1].callee == c.callee &&
				calls[n-1].site.file == c.site.file && calls[n-1].site.line == c.site.line {
				calls[n-1].calls += c.calls
				calls[n-1].site.ir += c.site.ir
				calls[n-1].site.bb += c.site.bb
				continue
			}
			calls = append(calls, c)
		}
		f.calls = calls
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *fnData) int { return compareKey(a.key, b.key) })
	return out
}

func compareKey(a, b fnKey) int {
	return cmp.Or(cmp.Compare(a.object, b.object), cmp.Compare(a.name, b.name), cmp.Compare(a.entry, b.entry))
}

// mainFile is the file a function's fl= line names: the file of its
// lowest-addressed cost ("???" without one).
func (f *fnData) mainFile() string {
	for _, c := range f.costs {
		if c.file != "" {
			return c.file
		}
	}
	return ""
}

func fileName(f string) string {
	if f == "" {
		return "???"
	}
	return f
}

// oneLine keeps a header value on its line.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// Write writes the profile in the Callgrind format.
func (p *Profile) Write(w io.Writer, h Header) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# callgrind format\nversion: 1\ncreator: emuprof\npid: %d\ncmd: %s\npart: 1\n", h.Pid, oneLine(h.Command))
	if h.Partial != "" {
		fmt.Fprintf(bw, "desc: Partial: %s\n", oneLine(h.Partial))
	}
	fmt.Fprintf(bw, "desc: Trigger: Program termination\n")
	fmt.Fprintf(bw, "positions: instr line\nevent: Ir : Instructions\nevent: Bb : Basic blocks\nevents: Ir Bb\n")
	fmt.Fprintf(bw, "summary: %d %d\n", p.total, p.blocks)
	// Name compression (spec: "(id) name" once, "(id)" after) keeps
	// large profiles small; ids are per kind.
	names := map[string]map[string]int{"ob": {}, "fl": {}, "fn": {}}
	name := func(kind, s string) string {
		m := names[kind]
		if id, ok := m[s]; ok {
			return fmt.Sprintf("(%d)", id)
		}
		id := len(m) + 1
		m[s] = id
		return fmt.Sprintf("(%d) %s", id, s)
	}
	fnName := func(k fnKey) string { return name("fn", k.name) }
	// Files share the "fl" ids with fi=, fe=, cfi= (the spec's file
	// names); objects share "ob" with cob=.
	for _, f := range p.functions() {
		fmt.Fprintf(bw, "\nob=%s\n", name("ob", f.key.object))
		file := f.mainFile()
		fmt.Fprintf(bw, "fl=%s\n", name("fl", fileName(file)))
		fmt.Fprintf(bw, "fn=%s\n", fnName(f.key))
		cur := file
		setFile := func(fl string) {
			if fl != cur {
				kind := "fi"
				if fl == file {
					kind = "fe"
				}
				fmt.Fprintf(bw, "%s=%s\n", kind, name("fl", fileName(fl)))
				cur = fl
			}
		}
		for _, c := range f.costs {
			setFile(c.file)
			fmt.Fprintf(bw, "%#x %d %d %d\n", p.link(c.addr), c.line, c.ir, c.bb)
		}
		for _, c := range f.calls {
			setFile(c.site.file)
			fmt.Fprintf(bw, "cob=%s\n", name("ob", c.callee.object))
			target := p.calleeFile(c.callee)
			fmt.Fprintf(bw, "cfi=%s\n", name("fl", fileName(target.file)))
			fmt.Fprintf(bw, "cfn=%s\n", fnName(c.callee))
			fmt.Fprintf(bw, "calls=%d %#x %d\n", c.calls, p.link(c.callee.entry), target.line)
			fmt.Fprintf(bw, "%#x %d %d %d\n", p.link(c.site.addr), c.site.line, c.site.ir, c.site.bb)
		}
	}
	fmt.Fprintf(bw, "\ntotals: %d %d\n", p.total, p.blocks)
	return bw.Flush()
}

// calleeFile is the file and line of a callee's entry: those of the
// block at its entry address, which every call ran.
func (p *Profile) calleeFile(k fnKey) cost {
	if p.entries == nil {
		p.entries = map[fnKey]cost{}
		for id, n := range p.execs {
			if n == 0 {
				continue
			}
			if b := p.block(uint32(id)); b != nil && b.Addr == b.Routine.Entry {
				p.entries[routineKey(b.Routine)] = cost{file: b.File, line: b.Line}
			}
		}
	}
	return p.entries[k]
}
