// Package calls derives calls and returns from the Block event stream and
// keeps a shadow run-time stack per guest thread (DESIGN.md, "The event
// stream"), interns routine identities to small ids, and offers a calling
// context tree that analyses can share.
package calls

import (
	"strings"

	"emuprof/trace"
)

// RoutineID is a small dense identifier of a routine within one Routines
// table (0, 1, 2, ... in order of first sight).
type RoutineID uint32

// Routine describes one interned routine.
type Routine struct {
	Entry  uint64 // entry address (0 for synthetic or unknown routines)
	Name   string // symbol name as Symbols reports it
	Object string // object (executable or library) containing it; "NONE" if unknown
	// Kind says whether the routine's frames are reported (Ordinary) or
	// transparent (linker stubs, the lazy-binding resolver).
	Kind trace.RoutineKind
}

// Routines interns routines by entry address (or, for synthetic routines, by
// name) to dense RoutineIDs.
type Routines struct {
	byEntry map[uint64]RoutineID
	byName  map[string]RoutineID // synthetic routines (no address)
	list    []Routine
	kinds   []trace.RoutineKind // list[i].Kind, dense: call tracking reads it at every block
}

// NewRoutines returns an empty table.
func NewRoutines() *Routines {
	return &Routines{byEntry: make(map[uint64]RoutineID), byName: make(map[string]RoutineID)}
}

// Intern returns the id of the routine r.Entry, creating it on first sight.
// A routine named like the lazy-binding resolver is marked LazyResolver
// whatever Symbols said, so unstripped dynamic linkers need no other help.
func (r *Routines) Intern(rt trace.Routine) RoutineID {
	if id, ok := r.byEntry[rt.Entry]; ok {
		return id
	}
	kind := rt.Kind
	if IsResolver(rt.Name) {
		kind = trace.LazyResolver
	}
	id := r.add(Routine{Entry: rt.Entry, Name: rt.Name, Object: rt.Object, Kind: kind})
	r.byEntry[rt.Entry] = id
	return id
}

// Synthetic returns the id of a routine that has no address (hand-written
// traces, code outside every known object), keyed by name and object.
func (r *Routines) Synthetic(name, object string) RoutineID {
	key := object + "\x00" + name
	if id, ok := r.byName[key]; ok {
		return id
	}
	rt := Routine{Name: name, Object: object}
	if IsResolver(name) {
		rt.Kind = trace.LazyResolver
	}
	id := r.add(rt)
	r.byName[key] = id
	return id
}

// markResolver records that routine id is the lazy-binding resolver (it was
// entered from a LazyBindingStub).
func (r *Routines) markResolver(id RoutineID) {
	r.list[id].Kind, r.kinds[id] = trace.LazyResolver, trace.LazyResolver
}

func (r *Routines) add(rt Routine) RoutineID {
	if rt.Object == "" {
		rt.Object = "NONE"
	}
	id := RoutineID(len(r.list))
	r.list = append(r.list, rt)
	r.kinds = append(r.kinds, rt.Kind)
	return id
}

// Len is the number of interned routines; ids are 0..Len()-1.
func (r *Routines) Len() int { return len(r.list) }

// Get returns the routine with the given id. It panics on an id that this
// table never returned, which is a programming error.
func (r *Routines) Get(id RoutineID) Routine { return r.list[id] }

// IsResolver reports whether a routine name belongs to the dynamic linker's
// lazy-binding machinery, whose memory accesses aprof excludes from every
// input size (PLDI'12 §5, "Other issues").
func IsResolver(name string) bool {
	return strings.HasPrefix(name, "_dl_runtime_resolve") ||
		strings.HasPrefix(name, "_dl_runtime_profile") ||
		name == "_dl_fixup"
}
