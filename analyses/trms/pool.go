package trms

import "unsafe"

// chunkPool hands out the zeroed chunks of an engine's shadow memories.
// Chunks are carved from large regions mapped from the operating system
// (on Linux with transparent huge pages requested): a memory-hungry guest
// makes tens of thousands of them, and taking each from the Go heap in
// 4 KiB pages made its page faults a fifth of trms's time. Chunks of an
// exited thread are zeroed and reused. Where no region can be mapped, the
// Go heap serves.
type chunkPool[T stamp] struct {
	rest    []byte   // the unused end of the current region
	regions [][]byte // every mapped region, for release
	free    []*chunk[T]
}

// poolRegionBytes is the size of one mapped region (a multiple of the
// 2 MiB huge page).
const poolRegionBytes = 64 << 20

// get returns a zeroed chunk.
func (p *chunkPool[T]) get() *chunk[T] {
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free = p.free[:n-1]
		*c = chunk[T]{}
		return c
	}
	size := (int(unsafe.Sizeof(chunk[T]{})) + 63) &^ 63
	if len(p.rest) < size {
		r := mapRegion(poolRegionBytes)
		if r == nil {
			return new(chunk[T])
		}
		p.regions = append(p.regions, r)
		p.rest = r
	}
	// A chunk holds no pointers, so it may live outside the Go heap; a
	// fresh mapping is zero and aligned to a page.
	c := (*chunk[T])(unsafe.Pointer(&p.rest[0]))
	p.rest = p.rest[size:]
	return c
}

// put takes back the chunks of a table that is no longer used.
func (p *chunkPool[T]) put(t *table[T]) {
	for _, cr := range t.chunks {
		p.free = append(p.free, cr.c)
	}
}

// release returns every region to the operating system: no chunk of the
// pool may be used afterwards.
func (p *chunkPool[T]) release() {
	for _, r := range p.regions {
		unmapRegion(r)
	}
	p.regions, p.rest, p.free = nil, nil, nil
}
