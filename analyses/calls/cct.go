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

// CCT is a calling context tree (Ammons, Ball, Larus): one node per distinct
// path of routines from a root. Node creation is amortized O(1).
type CCT struct {
	nodes []Node
	index map[uint64]NodeID // (parent, routine) -> node
	// last[p+1] is the child of p (NoNode for roots) found last: a loop
	// calling the same routine again skips the map.
	last []lastChild
}

type lastChild struct {
	routine RoutineID
	node    NodeID // NoNode: none yet
}

// NewCCT returns an empty tree.
func NewCCT() *CCT { return &CCT{index: make(map[uint64]NodeID)} }

// Child returns the node for routine r called from parent (NoNode for a
// root), creating it on first use.
func (c *CCT) Child(parent NodeID, r RoutineID) NodeID {
	slot := int(parent) + 1
	for slot >= len(c.last) {
		c.last = append(c.last, lastChild{node: NoNode})
	}
	if l := c.last[slot]; l.node != NoNode && l.routine == r {
		return l.node
	}
	key := uint64(uint32(parent))<<32 | uint64(r)
	id, ok := c.index[key]
	if !ok {
		id = NodeID(len(c.nodes))
		c.nodes = append(c.nodes, Node{Parent: parent, Routine: r})
		c.index[key] = id
	}
	c.last[slot] = lastChild{routine: r, node: id}
	return id
}

// Len is the number of nodes.
func (c *CCT) Len() int { return len(c.nodes) }

// Node returns node id.
func (c *CCT) Node(id NodeID) Node { return c.nodes[id] }
