package trms

import "syscall"

// mapRegion maps n bytes of zeroed private memory, asking for transparent
// huge pages (fewer page faults and TLB misses on a dense shadow memory),
// or returns nil.
func mapRegion(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // advice only: regular pages serve as well
	return b
}

func unmapRegion(b []byte) { _ = syscall.Munmap(b) }
