package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// hugeAdvised returns the address ranges of this process's mappings that
// carry MADV_HUGEPAGE ("hg" among their VmFlags in /proc/self/smaps).
func hugeAdvised(t *testing.T) [][2]uintptr {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]uintptr
	var cur [2]uintptr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// A mapping's first line starts with its range; the others
		// with a field name ("Rss:", "VmFlags:").
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				cur = [2]uintptr{uintptr(a), uintptr(b)}
				continue
			}
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && strings.Contains(" "+flags+" ", " hg ") {
			out = append(out, cur)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHugeHeapPagesTakeNewObjects checks the runtime behaviour that
// preferHugeHeapPages relies on: after it, the objects emuprof allocates
// land in the range it advised. A Go release that places them elsewhere
// fails here rather than silently losing the speed. It runs in a process
// of its own, as main calls it: in this one, the other tests' freed
// memory comes first.
func TestHugeHeapPagesTakeNewObjects(t *testing.T) {
	if os.Getenv("EMUPROF_HUGE_HEAP_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeapPagesTakeNewObjects$", "-test.v")
		cmd.Env = append(os.Environ(), "EMUPROF_HUGE_HEAP_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("the check in a fresh process: %v", err)
		}
		if strings.Contains(string(out), "--- SKIP") {
			t.Skip("skipped in the fresh process (above)")
		}
		return
	}
	probe, err := syscall.Mmap(-1, 0, 4<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Madvise(probe, syscall.MADV_HUGEPAGE); err != nil {
		t.Skipf("this kernel takes no MADV_HUGEPAGE (%v): preferHugeHeapPages is a no-op here", err)
	}
	syscall.Munmap(probe)
	preferHugeHeapPages()
	advised := hugeAdvised(t)
	if len(advised) == 0 {
		t.Fatal("no mapping of the process is advised MADV_HUGEPAGE after preferHugeHeapPages")
	}
	// Small objects, as the analyses make: 8 MiB of them, kept alive.
	keep := make([][]byte, 0, 1<<17)
	in := 0
	for i := 0; i < cap(keep); i++ {
		b := make([]byte, 64)
		keep = append(keep, b)
		at := uintptr(unsafe.Pointer(&b[0]))
		for _, r := range advised {
			if at >= r[0] && at < r[1] {
				in++
				break
			}
		}
	}
	if in < len(keep)/2 {
		t.Fatalf("%d of %d new objects are in the advised range %x; want most of them", in, len(keep), advised)
	}
}
