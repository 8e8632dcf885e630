package main

import (
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
// heap grows to map it), its 2 MiB-aligned part advised, and the block
// freed by a collection; the runtime's page allocator is address-ordered
// first-fit (runtime/mpagealloc.go), so the next spans are carved from
// the lowest free pages, the block's among them. The advice is only a
// hint: if the runtime places memory otherwise, or the host has no THP,
// nothing changes but speed.
func preferHugeHeapPages() {
	const huge = 2 << 20
	warm := make([]byte, hugeHeapWarm)
	at := uintptr(unsafe.Pointer(unsafe.SliceData(warm)))
	skip := int((at+huge-1)&^(huge-1) - at)
	n := (len(warm) - skip) &^ (huge - 1)
	if n > 0 {
		_ = syscall.Madvise(warm[skip:skip+n], syscall.MADV_HUGEPAGE) // a hint: an old kernel's EINVAL changes nothing
	}
	runtime.KeepAlive(warm)
	warm = nil
	runtime.GC()
}
