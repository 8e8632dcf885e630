package trace

// BlockInfo is what was learnt about a translated block, once, when the
// emulator first met it: no analysis decodes or looks up a block again.
type BlockInfo struct {
	Addr    uint64 // first instruction
	Len     uint32 // bytes
	Insns   uint32 // instructions
	End     End    // terminator
	Routine Routine
	// File and Line locate the block's first instruction (DWARF), when an
	// analysis asked for lines (Wants.Lines) and the object has them.
	File string
	Line int
	// Lines, when the block's instructions come from more than one
	// file:line, lists them in order, consecutive instructions of one
	// line as one span (the first span is File:Line; instructions without
	// a line make spans of Line 0). Nil when the block is on one line.
	Lines []LineSpan
}

// LineSpan is a run of a block's instructions on one source line.
type LineSpan struct {
	File  string
	Line  int
	Insns uint32
	Off   uint32 // the span's first instruction, in bytes from the block's address
}

// blockChunkBits sizes the chunks of a BlockTable.
const blockChunkBits = 12

type blockChunk [1 << blockChunkBits]BlockInfo

// BlockTable maps dense block ids (1, 2, 3, ... in order of translation; 0
// means "no block") to what was learnt about each block. Entries never
// change: code that is retranslated after being changed or remapped gets a
// new id, so a consumer lagging behind the emulator never sees a newer
// mapping's data. One goroutine appends; others read through a BlockView
// taken at a synchronization point (a batch handoff), which stays valid
// while the table grows.
type BlockTable struct {
	chunks []*blockChunk
	n      uint32 // ids 1..n are in use
}

// NewBlockTable returns an empty table.
func NewBlockTable() *BlockTable { return &BlockTable{} }

// Add stores info under the next id and returns it.
func (t *BlockTable) Add(info BlockInfo) uint32 {
	t.n++
	id := t.n
	c := id >> blockChunkBits
	for int(c) >= len(t.chunks) {
		t.chunks = append(t.chunks, new(blockChunk))
	}
	t.chunks[c][id&(1<<blockChunkBits-1)] = info
	return id
}

// Len is the highest id in use.
func (t *BlockTable) Len() uint32 { return t.n }

// View returns a read-only view of the ids in use now.
func (t *BlockTable) View() BlockView { return BlockView{chunks: t.chunks, n: t.n} }

// BlockView is a snapshot of a BlockTable's first ids.
type BlockView struct {
	chunks []*blockChunk
	n      uint32
}

// Len is the highest id the view covers.
func (v BlockView) Len() uint32 { return v.n }

// Get returns the block with the given id; ids outside the view (0
// included) give nil.
func (v BlockView) Get(id uint32) *BlockInfo {
	if id == 0 || id > v.n {
		return nil
	}
	return &v.chunks[id>>blockChunkBits][id&(1<<blockChunkBits-1)]
}
