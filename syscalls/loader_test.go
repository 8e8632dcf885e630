package syscalls

import (
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"emuprof/mm"
)

// TestLoaderSequence replays what glibc's dynamic loader does to map a
// shared library, against the host's libc (a Linux host must have one).
func TestLoaderSequence(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("needs an x86-64 Linux host's libc, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	ef, err := elf.Open(libc)
	if err != nil {
		t.Fatalf("no host libc %s (apt-get install libc6): %v", libc, err)
	}
	defer ef.Close()
	if ef.Machine != elf.EM_X86_64 {
		t.Fatalf("%s is not an x86-64 library", libc)
	}
	raw, err := os.ReadFile(libc)
	if err != nil {
		t.Fatal(err)
	}
	// Paths are resolved like the kernel does: hooks and maps see the
	// physical path.
	physical, err := filepath.EvalSymlinks(libc)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{})
	var execMaps int
	h.k.OnMapFile = func(p string, _, _, _ uint64, prot mm.Prot) {
		if p == physical && prot&mm.ProtExec != 0 {
			execMaps++
		}
	}

	if _, err := os.Stat("/etc/ld.so.cache"); err == nil {
		fd := h.must(nrOpenat, atFDCWDArg, h.str("/etc/ld.so.cache"), oRDONLY|oCLOEXEC)
		st := h.alloc(statSize)
		h.must(nrNewfstatat, fd, h.str(""), st, atEmptyPath)
		size := h.u64(st + 48)
		a := h.must(nrMmap, 0, size, protRead, mapPrivate, fd, 0)
		h.must(nrClose, fd)
		want, _ := os.ReadFile("/etc/ld.so.cache")
		if got := h.peek(a, len(want)); string(got) != string(want) {
			t.Error("ld.so.cache mapping differs from the file")
		}
	}

	fd := h.must(nrOpenat, atFDCWDArg, h.str(libc), oRDONLY|oCLOEXEC)
	hdr := h.alloc(832)
	if n := h.must(nrRead, fd, hdr, 832); n != 832 || string(h.peek(hdr, 4)) != "\x7fELF" {
		t.Fatalf("read ELF header: %d", n)
	}
	var loads []*elf.Prog
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p)
		}
	}
	first, last := loads[0], loads[len(loads)-1]
	span := mm.PageUp(last.Vaddr+last.Memsz) - mm.PageDown(first.Vaddr)
	prot := func(p *elf.Prog) uint64 {
		var r uint64
		if p.Flags&elf.PF_R != 0 {
			r |= protRead
		}
		if p.Flags&elf.PF_W != 0 {
			r |= protWrite
		}
		if p.Flags&elf.PF_X != 0 {
			r |= protExec
		}
		return r
	}
	base := h.must(nrMmap, 0, span, prot(first), mapPrivate|mapDenyWrite, fd, mm.PageDown(first.Off))
	for _, p := range loads[1:] {
		start := base + mm.PageDown(p.Vaddr)
		length := p.Off%mm.PageSize + p.Filesz
		h.must(nrMmap, start, length, prot(p), mapPrivate|mapFixed|mapDenyWrite, fd, mm.PageDown(p.Off))
		if p.Memsz > p.Filesz {
			// Zero the rest of the last file page, map anonymous pages for bss.
			fileEnd := base + p.Vaddr + p.Filesz
			pageEnd := mm.PageUp(fileEnd)
			h.poke(fileEnd, make([]byte, pageEnd-fileEnd))
			if memEnd := mm.PageUp(base + p.Vaddr + p.Memsz); memEnd > pageEnd {
				h.must(nrMmap, pageEnd, memEnd-pageEnd, prot(p), mapPrivAnon|mapFixed, negOne, 0)
			}
		}
	}
	h.must(nrClose, fd)
	for _, p := range loads {
		n := min(p.Filesz, 4096)
		if got := h.peek(base+p.Vaddr, int(n)); string(got) != string(raw[p.Off:p.Off+n]) {
			t.Errorf("segment at %#x differs from the file", p.Vaddr)
		}
	}
	if execMaps != 1 {
		t.Errorf("OnMapFile saw %d executable maps of libc", execMaps)
	}
	fd = h.must(nrOpen, h.str("/proc/self/maps"), oRDONLY)
	buf := h.alloc(16384)
	n := h.must(nrRead, fd, buf, 16384)
	maps := string(h.peek(buf, int(n)))
	if c := strings.Count(maps, physical); c < len(loads) {
		t.Errorf("maps has %d libc lines:\n%s", c, maps)
	}
	if !strings.Contains(maps, "r-xp") {
		t.Errorf("no executable mapping:\n%s", maps)
	}
	t.Logf("maps:\n%s", maps)
}
