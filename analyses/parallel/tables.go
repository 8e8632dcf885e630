package parallel

import "emuprof/analyses/calls"

// ctxTree is the logical calling context tree: node 0 is the root (no
// routine); every other node is a routine called from its parent at a call
// site (a line id, or -1). Children have larger ids than their parents.
type ctxTree struct {
	nodes []ctxNode
	index map[ctxKey]int32
	// cache is a direct-mapped cache of index in front of the map: a
	// context that calls a few routines in turn (a lock and an unlock)
	// finds each without hashing a struct key. Out of line: inline, it
	// parted Analysis's fields by 112 KB.
	cache *[1 << ctxCacheBits]ctxCache
}

// ctxCacheBits is log2 of the number of slots of ctxTree.cache.
const ctxCacheBits = 12

// ctxCache is one slot of ctxTree.cache; the zero value is empty.
type ctxCache struct {
	key ctxKey
	id  int32 // the node + 1, 0: empty
}

type ctxNode struct {
	parent  int32
	routine calls.RoutineID
	site    int32 // line of the call in the parent's routine, -1 if unknown
	runtime bool  // a runtime routine (its callees are collapsed into it)
}

type ctxKey struct {
	parent  int32
	routine calls.RoutineID
	site    int32
}

func (c *ctxTree) init() {
	c.nodes = []ctxNode{{parent: -1, site: -1}}
	c.index = map[ctxKey]int32{}
	c.cache = new([1 << ctxCacheBits]ctxCache)
}

func (c *ctxTree) child(parent int32, r calls.RoutineID, site int32, runtime bool) int32 {
	k := ctxKey{parent, r, site}
	h := (uint64(uint32(parent))<<32 | uint64(r)) ^ uint64(uint32(site))<<16
	e := &c.cache[(h*0x9e3779b97f4a7c15)>>(64-ctxCacheBits)]
	if e.id != 0 && e.key == k {
		return e.id - 1
	}
	id, ok := c.index[k]
	if !ok {
		id = int32(len(c.nodes))
		c.nodes = append(c.nodes, ctxNode{parent: parent, routine: r, site: site, runtime: runtime})
		c.index[k] = id
	}
	*e = ctxCache{key: k, id: id + 1}
	return id
}

// lineInfo is a leaf or call site: a source line of a routine (line 0: the
// routine without line information).
type lineInfo struct {
	fn, obj, file string
	line          int
}

type lineTable struct {
	list  []lineInfo
	addr  []uint64 // per line: its lowest statement address in its routine (pprof locations), 0 if unknown
	index map[lineInfo]int32
}

func (l *lineTable) init() { l.index = map[lineInfo]int32{} }

// intern returns li's id; addr gives a new line's address.
func (l *lineTable) intern(li lineInfo, addr func() uint64) int32 {
	if id, ok := l.index[li]; ok {
		return id
	}
	id := int32(len(l.list))
	l.list = append(l.list, li)
	a := uint64(0)
	if addr != nil {
		a = addr()
	}
	l.addr = append(l.addr, a)
	l.index[li] = id
	return id
}

// keyTable interns (context, leaf line) pairs, the unit every metric is
// accumulated in, with a direct-mapped cache keyed by (context, block) in
// front of the map: a loop's few blocks hit it.
type keyTable struct {
	list  []keyPair
	stats []stats
	index map[keyPair]int32
	cache *[1 << 12]keyCache // out of line, as ctxTree.cache
}

type keyPair struct{ node, line int32 }

// keyCache is one slot of keyTable.cache; the zero value is empty, so a
// new table's cache needs no initialization (nor its pages touched).
type keyCache struct {
	node  int32
	block uint32
	key   int32 // the key + 1, 0: empty
}

// stats are the metrics of one (context, line), in ns.
type stats struct {
	work, overhead, spin, wait, lockwait, blame int64
	// idle[k] = Σ n_idle·dt over the time this key worked while k threads
	// worked: its idleness is Σ_k idle[k]/k.
	idle []int64
}

func (k *keyTable) init() {
	k.index = map[keyPair]int32{}
	k.cache = new([1 << 12]keyCache)
}

func (k *keyTable) get(node, line int32, block uint32) int32 {
	h := (uint32(node)*0x9e3779b1 ^ block*0x85ebca6b) >> 20
	c := &k.cache[h&(1<<12-1)]
	if c.key != 0 && c.node == node && c.block == block {
		return c.key - 1
	}
	id := k.intern(node, line)
	*c = keyCache{node: node, block: block, key: id + 1}
	return id
}

func (k *keyTable) intern(node, line int32) int32 {
	p := keyPair{node, line}
	if id, ok := k.index[p]; ok {
		return id
	}
	id := int32(len(k.list))
	k.list = append(k.list, p)
	k.stats = append(k.stats, stats{})
	k.index[p] = id
	return id
}
