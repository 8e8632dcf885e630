package loader

import (
	"os"
	"path/filepath"
	"testing"
)

// The analyses get each object file from the run's symbol table: the one
// the guest mapped, with its DWARF parsed once for all of them.
func TestSymbolTableOpenSharesObjects(t *testing.T) {
	path := testBinary(t, "static")
	st := NewSymbolTable()
	mapped, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := mapped.Span()
	if err := st.AddObjectFrom(mapped, 0, lo, hi); err != nil {
		t.Fatal(err)
	}
	got, err := OpenFrom(st, path)
	if err != nil {
		t.Fatal(err)
	}
	if got != mapped {
		t.Fatalf("OpenFrom(table, %s) read the file again, want the mapped object", path)
	}
	d1, err := got.DWARF()
	if err != nil {
		t.Fatalf("DWARF of a -g binary: %v", err)
	}
	if _, _, ok := st.Line(elfSymbol(t, path, "main")); !ok {
		t.Fatal("no line for main")
	}
	if d2, _ := mapped.DWARF(); d2 != d1 {
		t.Error("DWARF parsed twice")
	}
	// The same file opened again by a process (exec, dlopen) is the kept
	// object; a clone of the table (fork) keeps it too.
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddObjectFrom(again, 1<<32, lo+1<<32, hi+1<<32); err != nil {
		t.Fatal(err)
	}
	if o, _ := st.Clone().Open(path); o != mapped {
		t.Error("a clone or a second mapping of the same file holds another object")
	}
}

// A file that changed since it was kept (the guest rewrote it) is a new
// object; an unreadable one is an error, as from Open.
func TestSymbolTableOpenChangedFile(t *testing.T) {
	data, err := os.ReadFile(testBinary(t, "static"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	st := NewSymbolTable()
	first, err := st.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	changed, err := OpenBytes(path, data)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := changed.Span()
	if err := st.AddObjectFrom(changed, 0, lo, hi); err != nil {
		t.Fatal(err)
	}
	if o, _ := st.Open(path); o != changed || o == first {
		t.Error("Open after a changed file was mapped: want the changed object")
	}
	if _, err := st.Open(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("Open of a missing file: no error")
	}
}
