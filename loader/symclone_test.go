package loader

import "testing"

// TestSymbolTableClone: a forked process's table names what its parent's
// did; objects added to either later (an exec in the child) are that
// table's own, and replacing an object in the clone leaves the parent's.
func TestSymbolTableClone(t *testing.T) {
	o, err := OpenBytes("min", minimalELF())
	if err != nil {
		t.Fatal(err)
	}
	parent := NewSymbolTable()
	if err := parent.AddObjectFrom(o, 0, 0x400000, 0x402000); err != nil {
		t.Fatal(err)
	}
	if got := parent.Format(0x4000b1); got != "_start+0x1 (min)" { // fills the parent's cache
		t.Fatalf("parent: %q", got)
	}
	child := parent.Clone()
	if got := child.Format(0x4000b1); got != "_start+0x1 (min)" {
		t.Errorf("clone: %q", got)
	}
	// The child execs: a new image over the old one, and another object.
	if err := child.AddObjectFrom(o, 0x1000, 0x401000, 0x403000); err != nil {
		t.Fatal(err)
	}
	if err := child.AddObjectFrom(o, 0x100000, 0x500000, 0x502000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		st   *SymbolTable
		pc   uint64
		want string
	}{
		{child, 0x4000b0, "0x4000b0"}, {child, 0x4010b0, "_start (min)"}, {child, 0x5000b0, "_start (min)"},
		{parent, 0x4000b0, "_start (min)"}, {parent, 0x5000b0, "0x5000b0"},
		{parent, 0x4000b1, "_start+0x1 (min)"},
	} {
		if got := c.st.Format(c.pc); got != c.want {
			t.Errorf("%s %#x: %q, want %q", map[bool]string{true: "child", false: "parent"}[c.st == child], c.pc, got, c.want)
		}
	}
	if got := NewSymbolTable().Clone().Format(0x4000b0); got != "0x4000b0" {
		t.Errorf("clone of an empty table: %q", got)
	}
}
