package main

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// hugeHeapWarm is the stretch of Go heap that preferHugeHeapPages advises
// the kernel to back with transparent huge pages.
const hugeHeapWarm = 16 << 20

// preferHugeHeapPages makes the next hugeHeapWarm bytes of Go heap that
// emuprof allocates come in 2 MiB pages where the host's THP mode is
// "madvise" (Debian's default), instead of one page fault per 4 KiB.
//
// Why: with the collector's floor (main) a short run never reuses memory,
// so every object lands on a fresh page, and a page fault costs 10-12 µs
// on the virtual machines we measure on (docs/PERFORMANCE.md): a third of
// `emuprof run` on a short guest, and most of what an analysis adds to it.
//
// How: the runtime does not advise its heap itself, and maps it in 4 MiB
// steps as it grows, so the advice must go on a range that is mapped
// already and that new objects will fill. A large block is allocated (the
// heap grows to map it), the heap's range from its first 4 MiB chunk
// (where the runtime's own first objects are, and the next small ones go)
// to the block's end is advised, and the block freed by a collection; the
// runtime's page allocator is address-ordered first-fit
// (runtime/mpagealloc.go), so the next spans are carved from the lowest
// free pages: the first chunk's, then the block's. Pages already in use
// stay small; the collector's floor (main), in between, is never touched.
// The advice is only a hint: if the runtime places memory otherwise, or
// the host has no THP, nothing changes but speed.
func preferHugeHeapPages() {
	const huge, chunk = 2 << 20, 4 << 20
	first := make([]byte, 64+len(os.Args)) // of a size known only now: on the heap
	warm := make([]byte, hugeHeapWarm)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(first))) &^ (chunk - 1)
	hi := (uintptr(unsafe.Pointer(unsafe.SliceData(warm))) + hugeHeapWarm) &^ (huge - 1)
	if hi > lo && hi-lo <= 4*(gcFloor+hugeHeapWarm) {
		// A hint: an old kernel's EINVAL, or ENOMEM for a hole in the
		// range (advised still where mapped), changes nothing.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(warm) // the last use: the collection below frees it
	runtime.GC()
}
