package loader

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"emuprof/analyses"
)

var _ analyses.Symbols = (*SymbolTable)(nil)

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
	if e, n, ok := st.Routine(0x4000ba); !ok || e != 0x4000ba || n != "min!0x4000ba" {
		t.Errorf("Routine(uncovered) = %#x %q %v", e, n, ok)
	}
	if e, n, ok := st.Routine(0x4000b5); !ok || e != 0x4000b0 || n != "_start" {
		t.Errorf("Routine = %#x %q %v", e, n, ok)
	}
	if _, _, ok := st.Routine(0x10); ok {
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
	if e, n, _ := st.Routine(0x5000ba); e != 0x5000ba || n != "min!0x4000ba" {
		t.Errorf("Routine in second copy: %#x %q", e, n)
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
			if e, n, ok := st.Routine(pc); !ok || e != pc || n != fmt.Sprintf("%s!%#x", base, lo+0x10) {
				t.Errorf("Routine(%#x) = %#x %q %v", pc, e, n, ok)
			}
			if got := st.FormatLong(pc); !strings.HasPrefix(got, fmt.Sprintf("%#x (%s)", pc, base)) {
				t.Errorf("FormatLong(%#x) = %q", pc, got)
			}
		})
	}
}
