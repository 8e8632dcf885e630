package syscalls

import (
	"testing"

	"emuprof/mm"
)

// RLIMIT_AS and RLIMIT_DATA bound mmap, mremap and brk as on Linux.
func TestAddressSpaceLimits(t *testing.T) {
	h := newHarness(t, Config{})
	h.k.SetBrkStart(0x600000)
	var total uint64
	for _, v := range h.as.VMAs() {
		total += v.Size()
	}
	lim := h.alloc(16)
	setLimit := func(res int, n uint64) {
		h.poke(lim, le.AppendUint64(le.AppendUint64(nil, n), rlimInfinity))
		h.must(nrSetrlimit, uint64(res), lim)
	}
	setLimit(rlimitAS, total+4*mm.PageSize)
	a := h.must(nrMmap, 0, 2*mm.PageSize, protRW, mapPrivAnon, negOne, 0)
	h.errno(eNOMEM, nrMmap, 0, 3*mm.PageSize, protRW, mapPrivAnon, negOne, 0)
	h.errno(eNOMEM, nrMremap, a, 2*mm.PageSize, 5*mm.PageSize, mremapMayMove)
	// Replacing mapped pages does not grow the address space.
	h.must(nrMmap, a, 2*mm.PageSize, protRead, mapPrivAnon|mapFixed, negOne, 0)
	if b := h.must(nrBrk, 0x600000+3*mm.PageSize); b != 0x600000 {
		t.Errorf("brk past RLIMIT_AS moved to %#x", b)
	}
	if b := h.must(nrBrk, 0x600000+mm.PageSize); b != 0x600000+mm.PageSize {
		t.Errorf("brk within RLIMIT_AS = %#x", b)
	}

	// RLIMIT_DATA counts private writable memory only.
	setLimit(rlimitAS, rlimInfinity)
	var data uint64
	for _, v := range h.as.VMAs() {
		if v.Prot&mm.ProtWrite != 0 && !v.Shared && v.Name != "[stack]" {
			data += v.Size()
		}
	}
	setLimit(rlimitData, data+mm.PageSize)
	h.errno(eNOMEM, nrMmap, 0, 2*mm.PageSize, protRW, mapPrivAnon, negOne, 0)
	h.must(nrMmap, 0, 8*mm.PageSize, protRead, mapPrivAnon, negOne, 0)
	h.must(nrMmap, 0, 8*mm.PageSize, protRW, mapShared|mapAnonymous, negOne, 0)
	h.must(nrMmap, 0, mm.PageSize, protRW, mapPrivAnon, negOne, 0)
}
