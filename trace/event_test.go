package trace

import (
	"slices"
	"testing"
)

// Folding survives Or only when every side that sees blocks takes it: a
// block is folded if all of them accept it, and FoldRoutines and
// FoldMemory hold if all of them say so. Sides that see no blocks do not
// count.
func TestNeedsOrFold(t *testing.T) {
	even := func(b *BlockInfo) bool { return b.Addr%2 == 0 }
	small := func(b *BlockInfo) bool { return b.Addr < 10 }
	trms := Needs{Blocks: true, Calls: true, Fold: small, FoldRoutines: true, FoldMemory: true}
	par := Needs{Blocks: true, Calls: true, Fold: even, FoldMemory: true}
	paths := Needs{Blocks: true}
	syscalls := Needs{Syscalls: true}
	for _, c := range []struct {
		name             string
		n                Needs
		want             []uint64
		routines, memory bool
	}{
		{"trms", Needs{}.Or(trms), []uint64{3, 4}, true, true},
		{"trms+syscalls", syscalls.Or(trms), []uint64{3, 4}, true, true},
		{"trms+parallel", trms.Or(par), []uint64{4}, false, true},
		{"parallel+trms", par.Or(trms), []uint64{4}, false, true},
		{"trms+paths", trms.Or(paths), nil, false, false},
		{"paths+parallel", paths.Or(par), nil, false, false},
	} {
		got := taken(c.n.Fold, 3, 4, 12)
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] || c.n.FoldRoutines != c.routines || c.n.FoldMemory != c.memory {
			t.Errorf("%s: folds %v, routines %v, memory %v; want %v, %v, %v", c.name, got, c.n.FoldRoutines, c.n.FoldMemory, c.want, c.routines, c.memory)
		}
	}
}

// Accesses are merged only if every analysis that sees memory accepts it;
// analyses without memory events do not matter.
func TestNeedsOrMergeMemory(t *testing.T) {
	trms := Needs{Blocks: true, Memory: true, MergeMemory: true}
	strict := Needs{Memory: true}
	par := Needs{Blocks: true, Calls: true}
	checkNeedsFlag(t, "MergeMemory", func(n Needs) bool { return n.MergeMemory }, []needsCase{
		{"trms", Needs{}.Or(trms), true},
		{"trms+parallel", trms.Or(par), true},
		{"parallel+trms", par.Or(trms), true},
		{"trms+strict", trms.Or(strict), false},
		{"strict+trms", strict.Or(trms), false},
		{"parallel", Needs{}.Or(par), false},
	})
}

// Calls are marked on Block events (CallMarks) only if every analysis that
// sees blocks takes them so; analyses without blocks do not matter, and
// there are none without Calls.
func TestNeedsOrCallMarks(t *testing.T) {
	par := Needs{Blocks: true, Calls: true, CallMarks: true}
	trms := Needs{Blocks: true, Calls: true}
	paths := Needs{Blocks: true}
	syscalls := Needs{Syscalls: true, CallMarks: true}
	checkNeedsFlag(t, "CallMarks", func(n Needs) bool { return n.CallMarks }, []needsCase{
		{"parallel", Needs{}.Or(par), true},
		{"parallel+syscalls", syscalls.Or(par), true},
		{"parallel+parallel", par.Or(par), true},
		{"parallel+trms", par.Or(trms), false},
		{"trms+parallel", trms.Or(par), false},
		{"parallel+paths", par.Or(paths), false},
		{"syscalls", Needs{}.Or(syscalls), false},
	})
}

// Repeat events are made only if every analysis that sees blocks takes
// them and calls, if any analysis needs them, are marked (the stage passes
// a Repeat event on only then); analyses without blocks do not matter.
func TestNeedsOrRepeatEvents(t *testing.T) {
	par := Needs{Blocks: true, Calls: true, CallMarks: true, RepeatEvents: true}
	unmarked := Needs{Blocks: true, Calls: true, RepeatEvents: true}
	blocks := Needs{Blocks: true, RepeatEvents: true}
	paths := Needs{Blocks: true}
	syscalls := Needs{Syscalls: true}
	checkNeedsFlag(t, "RepeatEvents", func(n Needs) bool { return n.RepeatEvents }, []needsCase{
		{"parallel", Needs{}.Or(par), true},
		{"parallel+syscalls", syscalls.Or(par), true},
		{"parallel+paths", par.Or(paths), false},
		{"paths+parallel", paths.Or(par), false},
		{"calls unmarked", Needs{}.Or(unmarked), false},
		{"blocks without calls", Needs{}.Or(blocks), true},
		{"syscalls", Needs{}.Or(Needs{Syscalls: true, RepeatEvents: true}), false},
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
func TestNeedsOrFoldCycles(t *testing.T) {
	even := func(b *BlockInfo) bool { return b.Addr%2 == 0 }
	small := func(b *BlockInfo) bool { return b.Addr < 10 }
	all := func(*BlockInfo) bool { return true }
	trms := Needs{Blocks: true, Calls: true, Fold: small}
	par := Needs{Blocks: true, Calls: true, Fold: even, FoldCycles: all}
	other := Needs{Blocks: true, Calls: true, Fold: all, FoldCycles: small}
	paths := Needs{Blocks: true}
	for _, c := range []struct {
		name string
		n    Needs
		want []uint64
	}{
		{"parallel", Needs{Syscalls: true}.Or(par), []uint64{3, 4, 11, 12}},
		{"parallel+other", par.Or(other), []uint64{3, 4}},
		{"other+parallel", other.Or(par), []uint64{3, 4}},
		{"trms+parallel", trms.Or(par), nil},
		{"parallel+trms", par.Or(trms), nil},
		{"trms", Needs{}.Or(trms), nil},
		{"paths+parallel", paths.Or(par), nil},
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
