package trms

import "github.com/ianlancetaylor/demangle"

// routineRecord is the record of a routine named sym (its symbol) in
// object: as aprof writes it, Name is the demangled name (what c++filt
// prints: parameters, templates, clone suffixes) and Mangled the symbol
// when demangling changed it (aprof's "u" line); a name that is not
// mangled is kept as it is. An empty symbol is "unknown".
func routineRecord(id uint32, sym, object string) RoutineRecord {
	rec := RoutineRecord{ID: id, Name: sym, Object: object}
	if sym == "" {
		rec.Name = "unknown"
		return rec
	}
	if d := demangle.Filter(sym); d != sym {
		rec.Name, rec.Mangled = d, sym
	}
	return rec
}
