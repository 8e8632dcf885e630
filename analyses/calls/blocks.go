package calls

// blockInfo is what call tracking needs to know about a block start
// address; it is computed once, on first sight of the address.
type blockInfo struct {
	routine RoutineID
	entry   bool // the address is the entry of its routine
}

// blockTable is an open-addressing hash table from block address to
// blockInfo, with linear probing. Address 0 marks an empty slot (no guest
// block starts at 0; such an address is handled outside the table).
type blockTable struct {
	keys  []uint64
	vals  []blockInfo
	n     int
	shift uint // 64 - log2(len(keys))
}

const blockTableInitBits = 10

func newBlockTable() *blockTable {
	t := &blockTable{}
	t.init(blockTableInitBits)
	return t
}

func (t *blockTable) init(bits uint) {
	t.keys = make([]uint64, 1<<bits)
	t.vals = make([]blockInfo, 1<<bits)
	t.shift = 64 - bits
	t.n = 0
}

func (t *blockTable) slot(addr uint64) uint64 {
	return (addr * 0x9e3779b97f4a7c15) >> t.shift
}

// get returns the info stored for addr.
func (t *blockTable) get(addr uint64) (blockInfo, bool) {
	mask := uint64(len(t.keys) - 1)
	for i := t.slot(addr); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case addr:
			return t.vals[i], true
		case 0:
			return blockInfo{}, false
		}
	}
}

// put stores info for addr (addr must not be present yet).
func (t *blockTable) put(addr uint64, info blockInfo) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := uint64(len(t.keys) - 1)
	i := t.slot(addr)
	for t.keys[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i] = addr
	t.vals[i] = info
	t.n++
}

func (t *blockTable) grow() {
	keys, vals := t.keys, t.vals
	t.init(64 - t.shift + 1)
	for i, k := range keys {
		if k != 0 {
			t.put(k, vals[i])
		}
	}
}
