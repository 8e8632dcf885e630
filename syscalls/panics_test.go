package syscalls

import "testing"

// mincore with a length that wraps around the address space (or runs past
// user space) is ENOMEM, as on Linux, not a slice of 2^52 bytes; a range of
// mapped pages gives one byte per page.
func TestMincoreLengths(t *testing.T) {
	const nrMincore = 27
	h := newHarness(t, Config{})
	vec := h.alloc(16)
	for _, length := range []uint64{^uint64(0), ^uint64(0) - scratchBase + 1, 1 << 62, 1 << 47} {
		h.errno(eNOMEM, nrMincore, scratchBase, length, vec)
	}
	h.errno(eINVAL, nrMincore, scratchBase+1, 4096, vec)
	if got := h.must(nrMincore, scratchBase, 3*4096-1, vec); got != 0 {
		t.Fatalf("mincore = %d", got)
	}
	if got := h.peek(vec, 4); string(got) != "\x01\x01\x01\x00" {
		t.Errorf("vector % x, want 01 01 01 00", got)
	}
	h.must(nrMincore, scratchBase, 0, vec)
	h.errno(eFAULT, nrMincore, scratchBase, 4096, 8)
}
