package trace

import (
	"slices"
	"testing"
)

// Folding survives Or only when every side that sees blocks takes it: a
// block is folded if all of them accept it, and FoldRoutines and
// FoldMemory hold if all of them say so. Sides that see no blocks do not
// count.
func TestCombineFold(t *testing.T) {
	even := func(b *BlockInfo) bool { return b.Addr%2 == 0 }
	small := func(b *BlockInfo) bool { return b.Addr < 10 }
	trms := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{Fold: small, FoldRoutines: true, FoldMemory: true}}
	par := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{Fold: even, FoldMemory: true}}
	paths := Needs{Wants: Wants{Blocks: true}}
	syscalls := Needs{Wants: Wants{Syscalls: true}}
	for _, c := range []struct {
		name             string
		n                Needs
		want             []uint64
		routines, memory bool
	}{
		{"trms", Combine(Needs{}, trms), []uint64{3, 4}, true, true},
		{"trms+syscalls", Combine(syscalls, trms), []uint64{3, 4}, true, true},
		{"trms+parallel", Combine(trms, par), []uint64{4}, false, true},
		{"parallel+trms", Combine(par, trms), []uint64{4}, false, true},
		{"trms+paths", Combine(trms, paths), nil, false, false},
		{"paths+parallel", Combine(paths, par), nil, false, false},
	} {
		got := taken(c.n.Fold, 3, 4, 12)
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] || c.n.FoldRoutines != c.routines || c.n.FoldMemory != c.memory {
			t.Errorf("%s: folds %v, routines %v, memory %v; want %v, %v, %v", c.name, got, c.n.FoldRoutines, c.n.FoldMemory, c.want, c.routines, c.memory)
		}
	}
}

// Accesses are merged only if every analysis that sees memory accepts it;
// analyses without memory events do not matter.
func TestCombineMergeMemory(t *testing.T) {
	trms := Needs{Wants: Wants{Blocks: true, Memory: true}, Encoding: Encoding{MergeMemory: true}}
	strict := Needs{Wants: Wants{Memory: true}}
	par := Needs{Wants: Wants{Blocks: true, Calls: true}}
	checkNeedsFlag(t, "MergeMemory", func(n Needs) bool { return n.MergeMemory }, []needsCase{
		{"trms", Combine(Needs{}, trms), true},
		{"trms+parallel", Combine(trms, par), true},
		{"parallel+trms", Combine(par, trms), true},
		{"trms+strict", Combine(trms, strict), false},
		{"strict+trms", Combine(strict, trms), false},
		{"parallel", Combine(Needs{}, par), false},
	})
}

// Calls are marked on Block events (CallMarks) only if every analysis that
// sees blocks takes them so; analyses without blocks do not matter, and
// there are none without Calls.
func TestCombineCallMarks(t *testing.T) {
	par := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{CallMarks: true}}
	trms := Needs{Wants: Wants{Blocks: true, Calls: true}}
	paths := Needs{Wants: Wants{Blocks: true}}
	syscalls := Needs{Wants: Wants{Syscalls: true}, Encoding: Encoding{CallMarks: true}}
	checkNeedsFlag(t, "CallMarks", func(n Needs) bool { return n.CallMarks }, []needsCase{
		{"parallel", Combine(Needs{}, par), true},
		{"parallel+syscalls", Combine(syscalls, par), true},
		{"parallel+parallel", Combine(par, par), true},
		{"parallel+trms", Combine(par, trms), false},
		{"trms+parallel", Combine(trms, par), false},
		{"parallel+paths", Combine(par, paths), false},
		{"syscalls", Combine(Needs{}, syscalls), false},
	})
}

// Repeat events are made only if every analysis that sees blocks takes
// them and calls, if any analysis needs them, are marked (the stage passes
// a Repeat event on only then); analyses without blocks do not matter.
func TestCombineRepeatEvents(t *testing.T) {
	par := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{CallMarks: true, RepeatEvents: true}}
	unmarked := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{RepeatEvents: true}}
	blocks := Needs{Wants: Wants{Blocks: true}, Encoding: Encoding{RepeatEvents: true}}
	paths := Needs{Wants: Wants{Blocks: true}}
	syscalls := Needs{Wants: Wants{Syscalls: true}}
	checkNeedsFlag(t, "RepeatEvents", func(n Needs) bool { return n.RepeatEvents }, []needsCase{
		{"parallel", Combine(Needs{}, par), true},
		{"parallel+syscalls", Combine(syscalls, par), true},
		{"parallel+paths", Combine(par, paths), false},
		{"paths+parallel", Combine(paths, par), false},
		{"calls unmarked", Combine(Needs{}, unmarked), false},
		{"blocks without calls", Combine(Needs{}, blocks), true},
		{"syscalls", Combine(Needs{}, Needs{Wants: Wants{Syscalls: true}, Encoding: Encoding{RepeatEvents: true}}), false},
	})
}

// ExpandRepeats writes a Repeat event's copies out after its period, each
// later by the event's Addr, and keeps what follows.
func TestExpandRepeats(t *testing.T) {
	b := func(tid uint32, at int64, id uint32) Event {
		return Event{Kind: KindBlock, Tid: tid, Time: at, Block: id, Size: 2}
	}
	in := []Event{b(1, 0, 7), {Kind: KindRepeat, Tid: 1, Time: 2, Size: 2, Aux: 2, Addr: 5}, b(1, 2, 8), b(1, 4, 9), b(2, 0, 3)}
	want := []Event{b(1, 0, 7), b(1, 2, 8), b(1, 4, 9), b(1, 7, 8), b(1, 9, 9), b(1, 12, 8), b(1, 14, 9), b(2, 0, 3)}
	got := ExpandRepeats(in)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A block is taken in periodic runs (FoldCycles) when every side that sees
// blocks has FoldCycles and takes it. Without a combined Fold there are
// none.
func TestCombineFoldCycles(t *testing.T) {
	even := func(b *BlockInfo) bool { return b.Addr%2 == 0 }
	small := func(b *BlockInfo) bool { return b.Addr < 10 }
	all := func(*BlockInfo) bool { return true }
	trms := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{Fold: small}}
	par := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{Fold: even, FoldCycles: all}}
	other := Needs{Wants: Wants{Blocks: true, Calls: true}, Encoding: Encoding{Fold: all, FoldCycles: small}}
	paths := Needs{Wants: Wants{Blocks: true}}
	for _, c := range []struct {
		name string
		n    Needs
		want []uint64
	}{
		{"parallel", Combine(Needs{Wants: Wants{Syscalls: true}}, par), []uint64{3, 4, 11, 12}},
		{"parallel+other", Combine(par, other), []uint64{3, 4}},
		{"other+parallel", Combine(other, par), []uint64{3, 4}},
		{"trms+parallel", Combine(trms, par), nil},
		{"parallel+trms", Combine(par, trms), nil},
		{"trms", Combine(Needs{}, trms), nil},
		{"paths+parallel", Combine(paths, par), nil},
	} {
		if got := taken(c.n.FoldCycles, 3, 4, 11, 12); !slices.Equal(got, c.want) {
			t.Errorf("%s: periodic runs of %v, want %v", c.name, got, c.want)
		}
	}
}

// taken returns the addresses of the blocks a fold predicate (nil: none)
// takes.
func taken(f func(*BlockInfo) bool, addrs ...uint64) (got []uint64) {
	for _, a := range addrs {
		if f != nil && f(&BlockInfo{Addr: a}) {
			got = append(got, a)
		}
	}
	return got
}

// needsCase is a set of needs and whether a flag must be on in it.
type needsCase struct {
	name string
	n    Needs
	want bool
}

// checkNeedsFlag checks flag (named name) in every case.
func checkNeedsFlag(t *testing.T, name string, flag func(Needs) bool, cases []needsCase) {
	t.Helper()
	for _, c := range cases {
		if got := flag(c.n); got != c.want {
			t.Errorf("%s: %s %v, want %v", c.name, name, got, c.want)
		}
	}
}
