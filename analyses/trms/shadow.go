package trms

// Shadow memories (TRMS paper §5, "Shadow memories"): a three-level lookup
// table over cell indexes (a cell is k aligned bytes, k the memory
// resolution). Level 3 is a chunk of 2^chunkBits timestamps, level 2 a node
// of 2^nodeBits chunk pointers, level 1 a short list of regions (a region
// covers 2^(nodeBits+chunkBits) cells: 1 GiB of address space at k=4), so
// that the top level stays tiny however sparse the 64-bit address space is.
// Everything is allocated lazily. A small direct-mapped cache of recently
// used chunks sits in front, so the common case is one compare. The global
// write-timestamp memory is allocated on reads too (at most one chunk per
// chunk some thread touched), which keeps the read path free of nil checks.

const (
	chunkBits = 14
	chunkMask = 1<<chunkBits - 1
	nodeBits  = 14
	nodeMask  = 1<<nodeBits - 1
	cacheBits = 4
	cacheMask = 1<<cacheBits - 1
	noKey     = ^uint64(0) // cell>>chunkBits never reaches it
)

// stamp is the storage type of timestamps: 32-bit counters (aprof's choice,
// half the memory) or 64-bit ones.
type stamp interface{ ~uint32 | ~uint64 }

// chunk holds the timestamps of 2^chunkBits consecutive cells. ext is used
// by the global write-timestamp memory only: bit i tells that the latest
// write of cell i was a kernel write (external input). anyExt tells that
// some bit of ext may be set: most chunks never see a kernel write, and
// their writes and reads then leave ext's cache lines alone.
type chunk[T stamp] struct {
	anyExt bool
	ts     [1 << chunkBits]T
	ext    [(1 << chunkBits) / 64]uint64
}

type node[T stamp] [1 << nodeBits]*chunk[T]

type region[T stamp] struct {
	key  uint64 // cell >> (chunkBits+nodeBits)
	node *node[T]
}

type cacheEntry[T stamp] struct {
	key uint64 // cell >> chunkBits; noKey when empty
	c   *chunk[T]
}

// chunkRef lists an allocated chunk with its key (for renumbering).
type chunkRef[T stamp] struct {
	key uint64
	c   *chunk[T]
}

// table is one shadow memory.
type table[T stamp] struct {
	pool    *chunkPool[T]
	cache   [1 << cacheBits]cacheEntry[T]
	regions []region[T]
	chunks  []chunkRef[T]
}

func newTable[T stamp](pool *chunkPool[T]) *table[T] {
	t := &table[T]{pool: pool}
	for i := range t.cache {
		t.cache[i].key = noKey
	}
	return t
}

// get returns the chunk for key (= cell >> chunkBits), allocating it.
// The cache only ever holds allocated chunks.
func (t *table[T]) get(key uint64) *chunk[T] {
	if e := &t.cache[key&cacheMask]; e.key == key {
		return e.c
	}
	return t.slow(key)
}

// slow finds or allocates the chunk for key and caches it.
func (t *table[T]) slow(key uint64) *chunk[T] {
	rkey := key >> nodeBits
	var n *node[T]
	for i := range t.regions {
		if t.regions[i].key == rkey {
			n = t.regions[i].node
			if i > 0 { // move to front: few regions, skewed use
				t.regions[0], t.regions[i] = t.regions[i], t.regions[0]
			}
			break
		}
	}
	if n == nil {
		n = new(node[T])
		t.regions = append(t.regions, region[T]{key: rkey, node: n})
	}
	c := n[key&nodeMask]
	if c == nil {
		c = t.pool.get()
		n[key&nodeMask] = c
		t.chunks = append(t.chunks, chunkRef[T]{key: key, c: c})
	}
	t.cache[key&cacheMask] = cacheEntry[T]{key: key, c: c}
	return c
}

// lookup returns the chunk for key without allocating it or touching the
// cache (nil if absent).
func (t *table[T]) lookup(key uint64) *chunk[T] {
	rkey := key >> nodeBits
	for i := range t.regions {
		if t.regions[i].key == rkey {
			return t.regions[i].node[key&nodeMask]
		}
	}
	return nil
}

// bytes is the memory held by the table's chunks and nodes.
func (t *table[T]) bytes() uint64 {
	var c chunk[T]
	return uint64(len(t.chunks))*uint64(len(c.ts)*int(sizeOf[T]())+len(c.ext)*8) +
		uint64(len(t.regions))*uint64(len(node[T]{}))*8
}

func sizeOf[T stamp]() uintptr {
	var z T
	if uint64(^z) > 1<<32 {
		return 8
	}
	return 4
}
