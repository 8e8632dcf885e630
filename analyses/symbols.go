package analyses

// Symbols names guest code for analyses. The loader's symbol table
// implements it; tests use hand-written tables.
type Symbols interface {
	// Routine returns the routine containing pc: the entry address of the
	// ELF symbol that contains it and its name ("name" for symbols of the
	// executable, "name" too for libraries; "object!0x1234" for code not
	// covered by any symbol, where 0x1234 is the offset in the object).
	// ok is false when pc lies in no known object.
	Routine(pc uint64) (entry uint64, name string, ok bool)
}
