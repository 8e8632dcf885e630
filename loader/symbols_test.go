package loader

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"emuprof/trace"
)

var _ trace.Symbols = (*SymbolTable)(nil)

func TestSymbolsMinimal(t *testing.T) {
	o, err := OpenBytes("dir/min", minimalELF())
	if err != nil {
		t.Fatal(err)
	}
	st := NewSymbolTable()
	if err := st.AddObjectFrom(o, 0, 0x400000, 0x402000); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pc   uint64
		want string
	}{
		{0x4000b0, "_start (min)"},
		{0x4000b3, "_start+0x3 (min)"},
		{0x4000ba, "0x4000ba (min)"},      // after _start's 9 bytes
		{0x4000c0, "helper (min)"},        // size 0 ...
		{0x401fff, "helper+0x1f3f (min)"}, // ... extends to the object's end
		{0x402000, "0x402000"},            // outside every object
		{0x3fffff, "0x3fffff"},
	}
	for _, tc := range tests {
		if got := st.Format(tc.pc); got != tc.want {
			t.Errorf("Format(%#x) = %q, want %q", tc.pc, got, tc.want)
		}
	}
	loc := st.Lookup(0x4000b3)
	if !loc.Known || loc.Object != "min" || loc.ObjectPath != "dir/min" || loc.Func != "_start" || loc.FuncAddr != 0x4000b0 || loc.Offset != 3 || loc.Line != 0 {
		t.Errorf("Lookup: %+v", loc)
	}
	if r, ok := st.Routine(0x4000ba); !ok || r.Entry != 0x4000ba || r.Name != "min!0x4000ba" || r.Object != "dir/min" {
		t.Errorf("Routine(uncovered) = %+v %v", r, ok)
	}
	if r, ok := st.Routine(0x4000b5); !ok || r.Entry != 0x4000b0 || r.Name != "_start" || r.Object != "dir/min" || r.Kind != trace.Ordinary {
		t.Errorf("Routine = %+v %v", r, ok)
	}
	if _, ok := st.Routine(0x10); ok {
		t.Errorf("Routine outside every object is ok")
	}
	if a, ok := st.FuncAddr("helper"); !ok || a != 0x4000c0 {
		t.Errorf("FuncAddr(helper) = %#x %v", a, ok)
	}
	if _, ok := st.FuncAddr("nope"); ok {
		t.Errorf("FuncAddr(nope) found")
	}
	if allocs := testing.AllocsPerRun(100, func() { st.Routine(0x4000b5); st.Routine(0x4000c4) }); allocs != 0 {
		t.Errorf("Routine allocates %v times", allocs)
	}
}

func TestSymbolTableObjects(t *testing.T) {
	o, err := OpenBytes("min", minimalELF())
	if err != nil {
		t.Fatal(err)
	}
	st := NewSymbolTable()
	for range 2 { // the second is a no-op
		if err := st.AddObjectFrom(o, 0, 0x400000, 0x402000); err != nil {
			t.Fatal(err)
		}
	}
	// The same object again, elsewhere (a library mapped at another bias).
	if err := st.AddObjectFrom(o, 0x100000, 0x500000, 0x502000); err != nil {
		t.Fatal(err)
	}
	if got := st.Format(0x5000b1); got != "_start+0x1 (min)" {
		t.Errorf("second copy: %q", got)
	}
	if r, _ := st.Routine(0x5000ba); r.Entry != 0x5000ba || r.Name != "min!0x4000ba" {
		t.Errorf("Routine in second copy: %+v", r)
	}
	if a, _ := st.FuncAddr("_start"); a != 0x4000b0 {
		t.Errorf("FuncAddr prefers the first object added, got %#x", a)
	}
	if err := st.AddObjectFrom(o, 0, 5, 5); err == nil {
		t.Errorf("empty range accepted")
	}
	// Concurrent lookups on a shared table.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				pc := uint64(0x4000b0 + (i+g)%0x20 + 0x100000*(i%2))
				if !st.Lookup(pc).Known {
					t.Errorf("lookup %#x unknown", pc)
					return
				}
			}
		}()
	}
	wg.Wait()
	// An object mapped over the first copy replaces it.
	if err := st.AddObjectFrom(o, 0x1000, 0x401000, 0x403000); err != nil {
		t.Fatal(err)
	}
	if got := st.Format(0x4000b0); got != "0x4000b0" {
		t.Errorf("replaced object still named: %q", got)
	}
	if got := st.Format(0x4010b0); got != "_start (min)" {
		t.Errorf("replacement: %q", got)
	}
}

func TestSymbolsBinaries(t *testing.T) {
	mainLine, squareLine := sourceLine(t, "main"), sourceLine(t, "square")
	for _, flavour := range []string{"static", "static-pie", "dynamic"} {
		t.Run(flavour, func(t *testing.T) {
			path := testBinary(t, flavour)
			o, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			bias := uint64(0)
			if flavour != "static" {
				bias = PIEBase
			}
			lo, hi := o.Span()
			st := NewSymbolTable()
			if err := st.AddObject(path, bias, lo+bias, hi+bias); err != nil {
				t.Fatal(err)
			}
			base := "prog-" + flavour
			mainAddr := elfSymbol(t, path, "main") + bias
			if got, ok := st.FuncAddr("main"); !ok || got != mainAddr {
				t.Fatalf("FuncAddr(main) = %#x, want %#x", got, mainAddr)
			}
			loc := st.Lookup(mainAddr + 4)
			if loc.Func != "main" || loc.FuncAddr != mainAddr || loc.Offset != 4 || loc.Object != base {
				t.Errorf("Lookup(main+4) = %+v", loc)
			}
			if got, want := st.Format(mainAddr+4), "main+0x4 ("+base+")"; got != want {
				t.Errorf("Format = %q, want %q", got, want)
			}
			if got, want := st.FormatLong(mainAddr), fmt.Sprintf("main (%s) at prog.c:%d", base, mainLine); got != want {
				t.Errorf("FormatLong = %q, want %q", got, want)
			}
			sq := elfSymbol(t, path, "square") + bias
			if got, want := st.FormatLong(sq), fmt.Sprintf("square (%s) at prog.c:%d", base, squareLine); got != want {
				t.Errorf("FormatLong = %q, want %q", got, want)
			}
			// The analyses' view: routine, object path, kind, file:line.
			if r, ok := st.Routine(mainAddr + 4); !ok || r.Entry != mainAddr || r.Name != "main" || r.Object != path || r.Kind != trace.Ordinary {
				t.Errorf("Routine(main+4) = %+v %v", r, ok)
			}
			if file, line, ok := st.Line(sq); !ok || filepath.Base(file) != "prog.c" || line != squareLine {
				t.Errorf("Line(square) = %s:%d %v, want prog.c:%d", file, line, ok, squareLine)
			}
			checkPLTKinds(t, st, path, bias, flavour == "dynamic")
			if addrs := st.LineAddrs("prog.c", mainLine); !slices.Contains(addrs, mainAddr) {
				t.Errorf("LineAddrs(prog.c:%d) = %#x, want main %#x", mainLine, addrs, mainAddr)
			}
			if addrs := st.LineAddrs("testdata/prog.c", squareLine); !slices.Contains(addrs, sq) {
				t.Errorf("LineAddrs(testdata/prog.c:%d) = %#x, want %#x", squareLine, addrs, sq)
			}
			if addrs := st.LineAddrs("rog.c", mainLine); len(addrs) != 0 {
				t.Errorf("partial base name matched: %#x", addrs)
			}
			// The ELF header page holds no code.
			pc := lo + bias + 0x10
			if r, ok := st.Routine(pc); !ok || r.Entry != pc || r.Name != fmt.Sprintf("%s!%#x", base, lo+0x10) {
				t.Errorf("Routine(%#x) = %+v %v", pc, r, ok)
			}
			if got := st.FormatLong(pc); !strings.HasPrefix(got, fmt.Sprintf("%#x (%s)", pc, base)) {
				t.Errorf("FormatLong(%#x) = %q", pc, got)
			}
		})
	}
}

// checkPLTKinds checks that PLT stubs are linker stubs, and that PLT0 is
// told apart exactly when the object is linked for lazy binding (it has
// R_X86_64_JUMP_SLOT relocations), reading the ELF file independently.
func checkPLTKinds(t *testing.T, st *SymbolTable, path string, bias uint64, lazy bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plt := f.Section(".plt")
	if plt == nil {
		if lazy {
			t.Fatalf("%s: no .plt", path)
		}
		return
	}
	if rela := f.Section(".rela.plt"); lazy && (rela == nil || rela.Size == 0) {
		t.Fatalf("%s: no .rela.plt in a lazily bound program", path)
	}
	start := plt.Addr + bias
	r0, ok := st.Routine(start)
	r1, _ := st.Routine(start + 16)
	switch {
	case !ok:
		t.Errorf("Routine(.plt) unknown")
	case lazy && (r0.Kind != trace.LazyBindingStub || r0.Entry != start || r1.Kind != trace.LinkerStub || r1.Entry != start+16):
		t.Errorf("lazy .plt: PLT0 %+v, next %+v", r0, r1)
	case !lazy && (r0.Kind != trace.LinkerStub || r1.Kind != trace.LinkerStub):
		t.Errorf("non-lazy .plt: %+v, %+v", r0, r1)
	}
}
