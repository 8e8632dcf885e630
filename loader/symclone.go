package loader

// Clone returns a table naming the same objects as t, for a forked process
// (its memory is a copy of its parent's). Objects added to either table
// later are that table's own. The objects themselves (their symbols and
// lazily read line tables) are shared, read-only; an object one table
// replaces stays in the other, which only skips its last-lookup cache for
// it.
func (t *SymbolTable) Clone() *SymbolTable {
	c := NewSymbolTable()
	if s := t.objs.Load(); s != nil {
		c.objs.Store(&symObjects{byAddr: s.byAddr, byAdded: s.byAdded})
	}
	return c
}
