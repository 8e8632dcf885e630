package trace

// Symbols names guest code for analyses. The loader's symbol table
// implements it; tests use hand-written tables.
type Symbols interface {
	// Routine returns the routine containing pc. ok is false when pc lies in
	// no known object.
	Routine(pc uint64) (r Routine, ok bool)
	// Line returns the source file and line of the statement containing pc,
	// from the object's DWARF line table; ok is false without one.
	Line(pc uint64) (file string, line int, ok bool)
}

// Mapping is where an object file lies in the guest: [Start, Limit) holds
// the file's bytes from Offset on. Formats that name the binary (pprof's
// mappings) need it.
type Mapping struct {
	Start, Limit, Offset uint64
	File                 string // the object's path
	BuildID              string // hex GNU build id, "" if none
	// Bias is where the object was loaded: a guest address less Bias is
	// its link-time address (the one objdump and the symbol table show).
	Bias uint64
}

// Mapper is implemented by Symbols that know the objects' mappings, and
// where a line starts: LineStart is the lowest address of pc's function
// on pc's source line (0 if unknown), the same for every pc of the line.
type Mapper interface {
	Mapping(pc uint64) (m Mapping, ok bool)
	LineStart(pc uint64) uint64
}

// Routine is what Symbols knows about the routine containing an address.
type Routine struct {
	// Entry is the guest address of the routine's first instruction.
	Entry uint64
	// Name is the symbol's name; code that no symbol covers is named
	// "object!0x1234", where 0x1234 is its link-time address in the object.
	Name string
	// Object is the path of the executable or library containing it.
	Object string
	// Kind tells call tracking how to treat the routine's frames.
	Kind RoutineKind
}

// RoutineKind classifies code for call tracking.
type RoutineKind uint8

const (
	// Ordinary code: its activations are reported.
	Ordinary RoutineKind = iota
	// LinkerStub is a PLT entry (.plt, .plt.sec, .plt.got): linker glue
	// that jumps to the function the program called. Its frame is
	// transparent, so a call through the PLT reads as a call of the target
	// in static and dynamic builds alike, and its load of the GOT entry
	// counts in no input size.
	LinkerStub
	// LazyBindingStub is the first PLT entry of an object linked for lazy
	// binding (PLT0: push the link map, jump through GOT[2]). The routine
	// it jumps to is the dynamic linker's lazy-binding resolver, whatever
	// its name; this is how the resolver of a stripped ld.so is recognised.
	LazyBindingStub
	// LazyResolver is the dynamic linker's resolver known by name
	// (_dl_runtime_resolve*, _dl_fixup): transparent, like everything it
	// calls; aprof excludes its accesses from every input size (PLDI'12 §5).
	LazyResolver
)

// Transparent reports whether frames of such routines are hidden from
// analyses.
func (k RoutineKind) Transparent() bool { return k != Ordinary }
