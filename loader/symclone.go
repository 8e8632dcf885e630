package loader

import "maps"

// Clone returns a table naming the same objects as t, for a forked process
// (its memory is a copy of its parent's). Objects added to either table
// later are that table's own. The objects themselves (their symbols and
// lazily read line tables) are shared, read-only; an object one table
// replaces stays in the other, which only skips its last-lookup cache for
// it. The files t has opened are the clone's too (Open).
func (t *SymbolTable) Clone() *SymbolTable {
	c := NewSymbolTable()
	t.mu.Lock()
	c.opened = maps.Clone(t.opened)
	t.mu.Unlock()
	if s := t.objs.Load(); s != nil {
		c.objs.Store(&symObjects{byAddr: s.byAddr, byAdded: s.byAdded})
	}
	return c
}
