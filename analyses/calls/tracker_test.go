package calls

import (
	"fmt"
	"strings"
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// fakeSyms maps address ranges to routines. Names follow the loader's
// conventions for kinds: "[.plt0]" is PLT0 (LazyBindingStub), "[.plt]" and
// "name@plt" are linker stubs; objects are "lib" from 0x7000 on, else "prog".
type fakeSyms []struct {
	lo, hi uint64
	name   string
}

func (s fakeSyms) Routine(pc uint64) (trace.Routine, bool) {
	for _, r := range s {
		if pc >= r.lo && pc < r.hi {
			return trace.Routine{Entry: r.lo, Name: r.name, Object: fakeObject(r.lo), Kind: fakeKind(r.name)}, true
		}
	}
	return trace.Routine{}, false
}

func (s fakeSyms) Line(pc uint64) (string, int, bool) { return "", 0, false }

func fakeObject(pc uint64) string {
	if pc >= 0x7000 {
		return "lib"
	}
	return "prog"
}

func fakeKind(name string) trace.RoutineKind {
	switch {
	case name == "[.plt0]":
		return trace.LazyBindingStub
	case name == "[.plt]" || strings.HasSuffix(name, "@plt"):
		return trace.LinkerStub
	}
	return trace.Ordinary
}

var syms = fakeSyms{
	{0x1000, 0x1100, "main"},
	{0x2000, 0x2100, "f"},
	{0x3000, 0x3100, "g"},
	{0x4000, 0x4010, "puts@plt"},
	{0x4010, 0x4020, "[.plt0]"},
	{0x4020, 0x4100, "[.plt]"},
	{0x4800, 0x4900, "ld.so!0x800"}, // a stripped resolver
	{0x4900, 0x4a00, "ld.so!0x900"}, // a stripped _dl_fixup
	{0x5000, 0x5100, "_dl_runtime_resolve_xsave"},
	{0x6000, 0x6100, "_dl_fixup"},
	{0x7000, 0x7100, "puts"},
	{0x8000, 0x8100, "thread_fn"},
}

// logger records listener calls as text.
type logger struct {
	t   *Tracker
	out []string
}

func (l *logger) Call(tid uint32, r RoutineID, entry uint64, ctx NodeID) {
	l.out = append(l.out, fmt.Sprintf("%d+%s", tid, l.t.Routines().Get(r).Name))
}

func (l *logger) Return(tid uint32, r RoutineID, ctx NodeID) {
	l.out = append(l.out, fmt.Sprintf("%d-%s", tid, l.t.Routines().Get(r).Name))
}

// tt holds the blocks of the hand-written events (ids as the emulator
// assigns them, routines from syms).
var tt = tracetest.New(syms)

func blk(tid uint32, addr, sp uint64, n uint16, end trace.End) trace.Event {
	id := tt.BlockID(addr, uint32(n), 1, end)
	return trace.Event{Kind: trace.KindBlock, Tid: tid, Block: id, Addr: addr, Aux: sp, Size: 1, End: end}
}

// feed hands a Block event to the tracker with its block.
func feed(tr *Tracker, ev *trace.Event) bool { return tr.Block(ev, tt.Blocks.View().Get(ev.Block)) }

func run(t *testing.T, evs ...trace.Event) (*Tracker, *logger) {
	t.Helper()
	l := &logger{}
	tr := NewTracker(l)
	l.t = tr
	for i := range evs {
		switch evs[i].Kind {
		case trace.KindBlock:
			feed(tr, &evs[i])
		case trace.KindThreadExit:
			tr.ThreadExit(evs[i].Tid)
		}
	}
	return tr, l
}

func expectLog(t *testing.T, l *logger, want string) {
	t.Helper()
	if got := strings.Join(l.out, " "); got != want {
		t.Errorf("log:\n got %s\nwant %s", got, want)
	}
}

const (
	call = trace.EndCall
	ret  = trace.EndRet
	jmp  = trace.EndJump
	oth  = trace.EndOther
)

func TestCallReturnRecursion(t *testing.T) {
	tr, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call), // main calls f
		blk(1, 0x2000, 0x7ff8, 5, call), // f calls f
		blk(1, 0x2000, 0x7fe0, 5, call), // f calls f
		blk(1, 0x2000, 0x7fc8, 3, ret),  // innermost returns
		blk(1, 0x2005, 0x7fe0, 3, ret),  // returns
		blk(1, 0x2005, 0x7ff8, 3, ret),  // returns to main
		blk(1, 0x1005, 0x8000, 3, oth),
	)
	expectLog(t, l, "1+main 1+f 1+f 1+f 1-f 1-f 1-f")
	if d := tr.Depth(1); d != 1 {
		t.Errorf("depth %d, want 1", d)
	}
	tr.Finish()
	expectLog(t, l, "1+main 1+f 1+f 1+f 1-f 1-f 1-f 1-main")
}

func TestTailCall(t *testing.T) {
	_, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call), // main calls f
		blk(1, 0x2000, 0x7ff8, 4, jmp),  // f jumps to g's entry: tail call
		blk(1, 0x3000, 0x7ff8, 2, jmp),  // g jumps to its own entry: a loop, not a call
		blk(1, 0x3000, 0x7ff8, 2, ret),  // g returns to main
		blk(1, 0x1005, 0x8000, 3, jmp),  // main jumps inside itself
		blk(1, 0x1040, 0x8000, 3, oth),
	)
	expectLog(t, l, "1+main 1+f 1-f 1+g 1-g")
}

func TestLongjmpAndStrayReturn(t *testing.T) {
	_, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call), // main calls f
		blk(1, 0x2000, 0x7ff8, 5, call), // f calls g
		blk(1, 0x3000, 0x7fd0, 5, jmp),  // g longjmps into main (not an entry)
		blk(1, 0x1050, 0x8000, 5, call), // main (sp back up: f and g unwound) calls f
		blk(1, 0x2000, 0x7ff8, 5, ret),  // f returns somewhere unexpected, above its frame
		blk(1, 0x1080, 0x8000, 5, oth),
	)
	expectLog(t, l, "1+main 1+f 1+g 1-g 1-f 1+f 1-f")
}

func TestCallNextAndRootProtected(t *testing.T) {
	tr, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call), // call next instruction (get-pc idiom): no frame
		blk(1, 0x1005, 0x7ff8, 1, oth),  // pop
		blk(1, 0x1006, 0x8010, 1, oth),  // root's sp goes above its entry sp (_start pops argc)
	)
	expectLog(t, l, "1+main")
	if d := tr.Depth(1); d != 1 {
		t.Errorf("depth %d, want 1", d)
	}
}

func TestResolverTransparent(t *testing.T) {
	l := &logger{}
	tr := NewTracker(l)
	l.t = tr
	steps := []struct {
		ev     trace.Event
		hidden bool
	}{
		{blk(1, 0x1000, 0x8000, 5, call), false}, // main calls puts@plt
		{blk(1, 0x4000, 0x7ff8, 6, jmp), true},   // the PLT stub (transparent) jumps to the resolver
		{blk(1, 0x5000, 0x7ff8, 8, call), true},  // resolver calls _dl_fixup
		{blk(1, 0x6000, 0x7f00, 4, ret), true},   // _dl_fixup returns
		{blk(1, 0x5008, 0x7ff8, 4, jmp), true},   // resolver jumps to puts (tail call)
		{blk(1, 0x7000, 0x7ff8, 4, ret), false},  // puts returns to main
		{blk(1, 0x1005, 0x8000, 4, oth), false},
	}
	for i, s := range steps {
		if h := feed(tr, &s.ev); h != s.hidden {
			t.Errorf("step %d: hidden %v, want %v", i, h, s.hidden)
		}
		if tr.InResolver(1) != s.hidden {
			t.Errorf("step %d: InResolver %v", i, !s.hidden)
		}
	}
	expectLog(t, l, "1+main 1+puts 1-puts")
}

// TestStrippedResolverThroughPLT0 is the lazy binding of a first call
// through the PLT when ld.so is stripped (Debian): the resolver is known
// only as the target of PLT0's jump, and PLT0 pushed two words, so the
// resolver is entered 16 bytes below the caller's frame. Before, the
// resolver's frame was dropped by the stack-pointer rule when it jumped to
// puts, and the tail-call rule replaced main with puts.
func TestStrippedResolverThroughPLT0(t *testing.T) {
	l := &logger{}
	tr := NewTracker(l)
	l.t = tr
	steps := []struct {
		ev     trace.Event
		hidden bool
	}{
		{blk(1, 0x1000, 0x8000, 5, call), false}, // main calls puts@plt
		{blk(1, 0x4030, 0x7ff8, 1, jmp), true},   // jmp *GOT[n]: still the lazy path
		{blk(1, 0x4036, 0x7ff8, 2, jmp), true},   // push n; jmp PLT0
		{blk(1, 0x4010, 0x7ff0, 2, jmp), true},   // PLT0: push GOT[1]; jmp *GOT[2]
		{blk(1, 0x4800, 0x7fe8, 8, call), true},  // the resolver calls _dl_fixup
		{blk(1, 0x4900, 0x7d00, 4, ret), true},   // _dl_fixup returns
		{blk(1, 0x4808, 0x7d08, 4, oth), true},   // the resolver restores registers
		{blk(1, 0x4810, 0x7ff8, 4, jmp), true},   // and, sp back, jumps to puts
		{blk(1, 0x7000, 0x7ff8, 4, ret), false},  // puts returns to main
		{blk(1, 0x1005, 0x8000, 4, call), false}, // main calls puts@plt again, bound now
		{blk(1, 0x4030, 0x7ff8, 1, jmp), true},   // jmp *GOT[n]
		{blk(1, 0x7000, 0x7ff8, 4, ret), false},  // puts
		{blk(1, 0x100a, 0x8000, 4, oth), false},
	}
	for i, s := range steps {
		if h := feed(tr, &s.ev); h != s.hidden {
			t.Errorf("step %d: hidden %v, want %v", i, h, s.hidden)
		}
	}
	expectLog(t, l, "1+main 1+puts 1-puts 1+puts 1-puts")
	if r := tr.Routines().Get(tr.Routines().byEntry[0x4800]); r.Kind != trace.LazyResolver {
		t.Errorf("the target of PLT0 is %v, want the lazy resolver", r.Kind)
	}
	if r := tr.Routines().Get(tr.Routines().byEntry[0x4900]); r.Kind != trace.Ordinary {
		t.Errorf("_dl_fixup's kind %v: only PLT0's target is the resolver", r.Kind)
	}
	if d := tr.Depth(1); d != 1 {
		t.Errorf("depth %d, want 1 (main)", d)
	}
}

func TestThreads(t *testing.T) {
	tr, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call), // main calls f
		trace.Event{Kind: trace.KindSwitch, Tid: 2, Aux: 1},
		blk(2, 0x8000, 0x9000, 5, call), // new thread: root thread_fn, calls g
		blk(2, 0x3000, 0x8ff8, 5, oth),
		blk(1, 0x2000, 0x7ff8, 5, call), // thread 1: f calls g
		blk(1, 0x3000, 0x7ff0, 5, oth),
		trace.Event{Kind: trace.KindThreadExit, Tid: 2},
	)
	expectLog(t, l, "1+main 2+thread_fn 2+g 1+f 1+g 2-g 2-thread_fn")
	tr.Finish()
	expectLog(t, l, "1+main 2+thread_fn 2+g 1+f 1+g 2-g 2-thread_fn 1-g 1-f 1-main")
}

func TestUnknownCodeAndObjects(t *testing.T) {
	tr := tracetest.New(fakeSyms{{0x7000, 0x7100, "lib!0x1000"}})
	tr.Block(1, 0x7000, 0x8000, 1, 5, call).Block(1, 0xdead0, 0x7ff8, 1, 5, oth)
	tk := NewTracker(nil)
	for i := range tr.Events {
		tk.Block(&tr.Events[i], tr.Blocks.View().Get(tr.Events[i].Block))
	}
	st := tk.Stack(1)
	if len(st) != 2 {
		t.Fatalf("stack %v", st)
	}
	if r := tk.Routines().Get(st[0]); r.Object != "lib" {
		t.Errorf("object %q", r.Object)
	}
	if r := tk.Routines().Get(st[1]); r.Name != "unknown" || r.Object != "NONE" {
		t.Errorf("unknown routine %+v", r)
	}
}

func TestCCT(t *testing.T) {
	c := NewCCT()
	root := c.Child(NoNode, 1)
	a := c.Child(root, 2)
	b := c.Child(a, 2)
	if c.Child(root, 2) != a || c.Child(NoNode, 1) != root || b == a {
		t.Fatal("CCT node identity")
	}
	if n := c.Node(b); n.Parent != a || n.Routine != 2 || c.Len() != 3 {
		t.Errorf("node %+v len %d", n, c.Len())
	}
}

func BenchmarkTrackerBlock(b *testing.B) {
	tr := NewTracker(nil)
	evs := []trace.Event{
		blk(1, 0x1000, 0x8000, 5, call),
		blk(1, 0x2000, 0x7ff8, 5, oth),
		blk(1, 0x2005, 0x7ff8, 5, ret),
		blk(1, 0x1005, 0x8000, 5, jmp),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		feed(tr, &evs[i&3])
	}
}
