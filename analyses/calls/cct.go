package calls

// NodeID identifies a node of a CCT: 0, 1, 2, ... in creation order, so a
// parent always has a smaller id than its children. NoNode is the parent of
// roots.
type NodeID int32

// NoNode is the (absent) parent of a CCT root.
const NoNode NodeID = -1

// Node is one calling context: a routine reached from its parent context.
type Node struct {
	Parent  NodeID
	Routine RoutineID
}

// childCacheBits is log2 of the number of entries of a CCT's child cache.
const childCacheBits = 12

// CCT is a calling context tree (Ammons, Ball, Larus): one node per distinct
// path of routines from a root. Node creation is amortized O(1).
type CCT struct {
	nodes []Node
	index map[uint64]NodeID // (parent, routine) -> node
	// cache is a direct-mapped cache of index in front of the map, slot
	// chosen by a hash of (parent, routine): a loop calling the same few
	// routines from one context (a lock and an unlock) hits it for every
	// callee, not only for the one called last.
	cache [1 << childCacheBits]childEntry
}

// childEntry is one slot of the child cache; the zero value is empty.
type childEntry struct {
	key  uint64 // (parent, routine) as in index
	node NodeID // the child + 1, 0: empty
}

// NewCCT returns an empty tree.
func NewCCT() *CCT { return &CCT{index: make(map[uint64]NodeID)} }

// Child returns the node for routine r called from parent (NoNode for a
// root), creating it on first use.
func (c *CCT) Child(parent NodeID, r RoutineID) NodeID {
	key := uint64(uint32(parent))<<32 | uint64(r)
	e := &c.cache[(key*0x9e3779b97f4a7c15)>>(64-childCacheBits)]
	if e.node != 0 && e.key == key {
		return e.node - 1
	}
	id, ok := c.index[key]
	if !ok {
		id = NodeID(len(c.nodes))
		c.nodes = append(c.nodes, Node{Parent: parent, Routine: r})
		c.index[key] = id
	}
	*e = childEntry{key: key, node: id + 1}
	return id
}

// Len is the number of nodes.
func (c *CCT) Len() int { return len(c.nodes) }

// Node returns node id.
func (c *CCT) Node(id NodeID) Node { return c.nodes[id] }
