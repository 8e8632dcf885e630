package callgrind

import (
	"bytes"
	"strings"
	"testing"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

// handRun is a hand-made run: main (entry block 1, a call block 2, an exit
// block 3) calls f through a linker stub (block 4); f (block 5, its
// recursive call block 6, its return block 7) calls itself once.
type handRun struct {
	blocks []trace.BlockInfo // by id; 0 unused
	rts    *calls.Routines
	cct    *calls.CCT
	main   calls.RoutineID
	f      calls.RoutineID
	ctxs   [3]calls.NodeID // main, main>f, main>f>f
}

func newTrace() *handRun {
	mainR := trace.Routine{Entry: 0x1000, Name: "main", Object: "/bin/p"}
	fR := trace.Routine{Entry: 0x2000, Name: "f", Object: "/bin/p"}
	stub := trace.Routine{Entry: 0x3000, Name: "f@plt", Object: "/bin/p", Kind: trace.LinkerStub}
	tr := &handRun{rts: calls.NewRoutines(), cct: calls.NewCCT()}
	tr.blocks = []trace.BlockInfo{{},
		{Addr: 0x1000, Insns: 3, Routine: mainR, File: "/src/p.c", Line: 10},
		{Addr: 0x1010, Insns: 2, Routine: mainR, File: "/src/p.c", Line: 11, Lines: []trace.LineSpan{{File: "/src/p.c", Line: 11, Insns: 1}, {File: "/src/p.c", Line: 12, Insns: 1, Off: 4}}},
		{Addr: 0x1020, Insns: 4, Routine: mainR, File: "/src/p.c", Line: 13},
		{Addr: 0x3000, Insns: 1, Routine: stub},
		{Addr: 0x2000, Insns: 5, Routine: fR, File: "/src/f.c", Line: 3},
		{Addr: 0x2010, Insns: 2, Routine: fR, File: "/src/f.c", Line: 4},
		{Addr: 0x2020, Insns: 1, Routine: fR, File: "/src/f.c", Line: 5},
	}
	tr.main, tr.f = tr.rts.Intern(mainR), tr.rts.Intern(fR)
	tr.ctxs[0] = tr.cct.Child(calls.NoNode, tr.main)
	tr.ctxs[1] = tr.cct.Child(tr.ctxs[0], tr.f)
	tr.ctxs[2] = tr.cct.Child(tr.ctxs[1], tr.f)
	return tr
}

func (tr *handRun) profile() *Profile {
	return New(func(id uint32) *trace.BlockInfo {
		if id == 0 || int(id) >= len(tr.blocks) {
			return nil
		}
		return &tr.blocks[id]
	}, func() *calls.Routines { return tr.rts }, func() *calls.CCT { return tr.cct })
}

func blk(id uint32, n uint32, flags trace.Flags) trace.Event {
	return trace.Event{Kind: trace.KindBlock, Tid: 1, Block: id, Size: n, Flags: flags}
}

// events is the run with Call and Return events; main does not return
// (the program exits from it).
func (tr *handRun) events() []trace.Event {
	call := func(r calls.RoutineID, ctx calls.NodeID) trace.Event {
		return trace.Event{Kind: trace.KindCall, Tid: 1, Block: uint32(r), Aux: uint64(ctx)}
	}
	ret := trace.Event{Kind: trace.KindReturn, Tid: 1}
	return []trace.Event{
		call(tr.main, tr.ctxs[0]), blk(1, 3, 0), blk(2, 2, 0),
		blk(4, 1, trace.FlagHidden), call(tr.f, tr.ctxs[1]), blk(5, 5, 0), blk(6, 2, 0),
		call(tr.f, tr.ctxs[2]), blk(5, 5, 0), blk(7, 1, 0), ret,
		blk(7, 1, 0), ret,
		blk(3, 4, 0),
	}
}

func write(t *testing.T, p *Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b, Header{Pid: 7, Command: "p"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The file's costs: 24 instructions in 9 blocks; main's call of f (made
// by its block 2, whose last line is 12, through the stub) costs 14 in 5
// blocks with f's recursion; the recursive call 6; the stub's instruction is its own
// function's. Parsed back, f's inclusive cost is its outer activation's
// (the recursive call is inside it), main's is everything but the stub's
// as it was never called (a root: itself and its calls), and the lines
// carry their own instructions and the calls they make.
func TestProfileFile(t *testing.T) {
	tr := newTrace()
	p := tr.profile()
	p.Events(tr.events())
	p.Finish()
	out := write(t, p)
	for _, want := range []string{"summary: 24 9\n", "fn=(1) f\n", "fn=(2) f@plt\n0x3000 0 1 1\n",
		"fn=(3) main\n", "calls=1 0x2000 3\n0x1014 12 14 5\n", "calls=1 0x2000 3\n0x2010 4 6 2\n", "0x1010 11 1 1\n0x1014 12 1 0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("file lacks %q:\n%s", want, out)
		}
	}
	s, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != (Costs{24, 9}) {
		t.Errorf("total %+v", s.Total)
	}
	if f := s.Fns["f"]; f.Inclusive.Ir != 14 || f.Self.Ir != 14 || f.Calls != 2 {
		t.Errorf("f: %+v, want inclusive 14, self 14, 2 calls", *f)
	}
	if m := s.Fns["main"]; m.Inclusive.Ir != 23 || m.Self.Ir != 9 {
		t.Errorf("main: %+v, want inclusive 23, self 9", *m)
	}
	if l := s.LineCalls[Line{"/src/p.c", 12}]; l.Ir != 14 {
		t.Errorf("line 12's calls cost %d, want 14", l.Ir)
	}
}

// Under a time model a Block event's Size is its cost in ns, not its
// instructions: the file is the same, its Ir the block table's.
func TestTimedSizesAreNotInstructions(t *testing.T) {
	tr := newTrace()
	want := write(t, func() *Profile { p := tr.profile(); p.Events(tr.events()); p.Finish(); return p }())
	evs := tr.events()
	for i := range evs {
		if evs[i].Kind == trace.KindBlock {
			evs[i].Size = 1000 + uint32(i) // ns
		}
	}
	p := tr.profile()
	p.Events(evs)
	p.Finish()
	if got := write(t, p); got != want {
		t.Errorf("with ns sizes:\n%s\nwant:\n%s", got, want)
	}
}

// The same run with its calls and returns marked on blocks (call marks)
// and a Repeat event gives the file of the written-out stream.
func TestCallMarksAndRepeats(t *testing.T) {
	tr := newTrace()
	marked := func(ev trace.Event, returns uint32, ctx calls.NodeID, call bool) trace.Event {
		ev.Flags |= trace.FlagCalls
		ev.Aux = uint64(returns) << 32
		if call {
			ev.Aux |= uint64(ctx + 1)
		}
		return ev
	}
	ret := trace.Event{Kind: trace.KindReturn, Tid: 1}
	// Blocks 1 and 3 of main, repeated: 3 more times.
	rep := trace.Event{Kind: trace.KindRepeat, Tid: 1, Size: 2, Aux: 3, Addr: 7}
	events := []trace.Event{
		marked(blk(1, 3, 0), 0, tr.ctxs[0], true), blk(2, 2, 0),
		marked(blk(4, 1, trace.FlagHidden), 0, 0, false), marked(blk(5, 5, 0), 0, tr.ctxs[1], true), blk(6, 2, 0),
		marked(blk(5, 5, 0), 0, tr.ctxs[2], true), blk(7, 1, 0),
		marked(blk(7, 1, 0), 1, 0, false), ret,
		blk(3, 4, 0), rep, blk(1, 3, 0), blk(3, 4, 0),
	}
	got := tr.profile()
	got.Events(events)
	got.Finish()
	want := tr.profile()
	plain := tr.events()
	for range 4 {
		plain = append(plain, blk(1, 3, 0), blk(3, 4, 0))
	}
	want.Events(plain)
	want.Finish()
	if g, w := write(t, got), write(t, want); g != w {
		t.Errorf("call marks and repeats:\n%s\nwant (written out):\n%s", g, w)
	}
}

// The canonical expansions of the marked stream with a Repeat event
// (trace.ExpandRepeats, then trace.ExpandCallMarks) give the same file as
// the encoded stream, and as the hand-written plain one.
func TestExpandedStreamSameProfile(t *testing.T) {
	tr := newTrace()
	mark := func(ev trace.Event, returns uint32, call uint32) trace.Event {
		ev.Flags |= trace.FlagCalls
		ev.Aux = uint64(returns)<<32 | uint64(call)
		return ev
	}
	ctx := func(i int) uint32 { return uint32(tr.ctxs[i]) + 1 }
	encoded := []trace.Event{
		mark(blk(1, 3, 0), 0, ctx(0)), blk(2, 2, 0),
		blk(4, 1, trace.FlagHidden), mark(blk(5, 5, 0), 0, ctx(1)), blk(6, 2, 0),
		mark(blk(5, 5, 0), 0, ctx(2)), blk(7, 1, 0),
		mark(blk(7, 1, 0), 1, 0), {Kind: trace.KindReturn, Tid: 1, Block: uint32(tr.f), Aux: uint64(tr.ctxs[1])},
		blk(3, 4, 0), {Kind: trace.KindRepeat, Tid: 1, Size: 2, Aux: 3, Addr: 7}, blk(1, 3, 0), blk(3, 4, 0),
	}
	routine := func(c uint32) uint32 { return uint32(tr.cct.Node(calls.NodeID(c)).Routine) }
	expanded := trace.ExpandCallMarks(trace.ExpandRepeats(encoded), routine)
	for _, ev := range expanded {
		if ev.Kind == trace.KindRepeat || ev.Flags&trace.FlagCalls != 0 {
			t.Fatalf("expanded stream still encoded: %+v", ev)
		}
	}
	plain := tr.events()
	for range 4 {
		plain = append(plain, blk(1, 3, 0), blk(3, 4, 0))
	}
	var files []string
	for _, evs := range [][]trace.Event{encoded, expanded, plain} {
		p := tr.profile()
		p.Events(evs)
		p.Finish()
		files = append(files, write(t, p))
	}
	if files[0] != files[1] || files[1] != files[2] {
		t.Errorf("encoded:\n%s\nexpanded:\n%s\nplain:\n%s", files[0], files[1], files[2])
	}
}
