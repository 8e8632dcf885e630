package syscalls

import (
	"path/filepath"
	"strings"
	"testing"

	"emuprof/mm"
	"emuprof/trace"
)

// Guest pointers are checked the way Linux checks them: the kernel's
// stores need writable pages, its loads readable ones, and a transfer
// that runs into a page it may not touch moves the bytes before it.

const (
	nrGetrlimit    = 97
	nrSchedSetaffi = 203
	nrPipe         = 22
	nrTime         = 201
	nrGettimeofday = 96
)

// faultHarness maps, past the scratch memory, a read-only page, a
// PROT_NONE page, an executable (read-only) page, and a writable page
// followed by an unmapped one.
type faultHarness struct {
	*harness
	ro, none, text, edge uint64 // edge: 8 writable bytes, then nothing
}

func newFaultHarness(t *testing.T, cfg Config) *faultHarness {
	h := &faultHarness{harness: newHarness(t, cfg)}
	base := uint64(scratchBase + scratchSize + 0x10000)
	for _, m := range []struct {
		addr *uint64
		prot mm.Prot
	}{{&h.ro, mm.ProtRead}, {&h.none, mm.ProtNone}, {&h.text, mm.ProtRead | mm.ProtExec}, {&h.edge, mm.ProtRead | mm.ProtWrite}} {
		if err := h.as.MapFixed(base, mm.PageSize, m.prot, "", 0); err != nil {
			t.Fatal(err)
		}
		*m.addr = base
		base += 2 * mm.PageSize // a hole after each
	}
	h.edge += mm.PageSize - 8
	return h
}

func TestKernelStoresNeedWritablePages(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), strings.Repeat("0123456789", 10))
	h := newFaultHarness(t, Config{Cwd: dir})
	f := h.must(nrOpen, h.str("f"), oRDONLY)
	for name, addr := range map[string]uint64{"NULL": 0, "ro": h.ro, "none": h.none, "text": h.text,
		"hole": h.ro + mm.PageSize, "kernel": 0xffff888000000000, "noncanonical": 1 << 47} {
		before := string(h.peekAny(addr, 8))
		h.errno(eFAULT, nrRead, f, addr, 8)
		h.errno(eFAULT, nrStat, h.str("f"), addr)
		h.errno(eFAULT, nrClockGettime, clockMonotonic, addr)
		h.errno(eFAULT, nrUname, addr)
		h.errno(eFAULT, nrPipe, addr)
		h.errno(eFAULT, nrGetrlimit, rlimitNoFile, addr)
		if addr != 0 { // NULL asks for nothing
			h.errno(eFAULT, nrGettimeofday, addr, 0)
			h.errno(eFAULT, nrTime, addr)
		}
		h.errno(eFAULT, nrGetrandom, addr, 8, 0)
		if after := string(h.peekAny(addr, 8)); after != before {
			t.Errorf("%s: the kernel stored into it: %q -> %q", name, before, after)
		}
	}
	// The read that faulted consumed nothing.
	if off := h.must(nrLseek, f, 0, seekCur); off != 0 {
		t.Errorf("offset after faulting reads %d", off)
	}
	// A buffer that runs into a hole gets the bytes that fit, reported as
	// one kernel write of exactly those bytes.
	h.events = nil
	if n := h.must(nrRead, f, h.edge, 64); n != 8 || string(h.peek(h.edge, 8)) != "01234567" {
		t.Errorf("read into edge = %d, %q", n, h.peek(h.edge, 8))
	}
	if got := h.only(trace.KindKernelWrite); len(got) != 1 || got[0].addr != h.edge || got[0].size != 8 {
		t.Errorf("kernel writes %v", got)
	}
	if off := h.must(nrLseek, f, 0, seekCur); off != 8 {
		t.Errorf("offset after the partial read %d", off)
	}
	if n := h.must(nrGetrandom, h.edge, 64, 0); n != 8 {
		t.Errorf("getrandom into edge = %d", n)
	}
	// A structure that does not fit: its writable prefix is stored, as by
	// copy_to_user, and the call fails.
	h.errno(eFAULT, nrClockGettime, clockMonotonic, h.edge)
	// Huge counts fail before anything (access_ok); reading at end of file
	// into nothing is no fault.
	h.errno(eFAULT, nrRead, f, scratchBase, 0x7fffffffffffffff)
	h.errno(eFAULT, nrRead, f, scratchBase, negOne)
	h.must(nrLseek, f, 0, seekEnd)
	if n := h.must(nrRead, f, 0, 8); n != 0 {
		t.Errorf("read at EOF into NULL = %d", n)
	}
	// getrlimit and setrlimit take no NULL; prlimit64 does.
	h.errno(eFAULT, nrGetrlimit, rlimitNoFile, 0)
	h.errno(eINVAL, nrGetrlimit, 99, 0)
	h.errno(eFAULT, nrSetrlimit, rlimitNoFile, 0)
	h.must(nrPrlimit64, 0, rlimitNoFile, 0, 0)
	h.errno(eFAULT, nrSchedSetaffi, 0, 128, 0xdeadbeef)
}

func TestKernelLoadsNeedReadablePages(t *testing.T) {
	dir := t.TempDir()
	h := newFaultHarness(t, Config{Cwd: dir})
	f := h.must(nrOpen, h.str("f"), oRDWR|oCREAT, 0o644)
	h.errno(eFAULT, nrWrite, f, h.none, 8)
	h.errno(eFAULT, nrWrite, f, 0, 8)
	h.errno(eFAULT, nrOpen, h.none, oRDONLY)
	h.errno(eFAULT, nrNanosleep, h.none, 0)
	// Read-only and executable pages are readable.
	if n := h.must(nrWrite, f, h.text, 16); n != 16 {
		t.Errorf("write from text = %d", n)
	}
	if n := h.must(nrWrite, f, h.ro, 16); n != 16 {
		t.Errorf("write from ro = %d", n)
	}
	// A buffer that runs into a hole writes what comes before it.
	h.poke(h.edge, []byte("abcdefgh"))
	if n := h.must(nrWrite, f, h.edge, 64); n != 8 {
		t.Errorf("write from edge = %d", n)
	}
	// The devices that discard data never read it; /dev/full says ENOSPC.
	null := h.must(nrOpen, h.str("/dev/null"), oWRONLY)
	full := h.must(nrOpen, h.str("/dev/full"), oWRONLY)
	h.events = nil
	if n := h.must(nrWrite, null, 0, 10); n != 10 {
		t.Errorf("write(/dev/null, NULL, 10) = %d", n)
	}
	if len(h.events) != 0 {
		t.Errorf("kernel accesses for /dev/null: %v", h.events)
	}
	h.errno(eFAULT, nrWrite, null, 0xffff888000000000, 10)
	h.errno(eNOSPC, nrWrite, full, 0, 10)
	// A pipe whose reader is gone says EPIPE before looking at the buffer.
	a := h.alloc(8)
	h.must(nrPipe2, a, oNONBLOCK)
	r, w := uint64(le.Uint32(h.peek(a, 4))), uint64(le.Uint32(h.peek(a+4, 4)))
	h.errno(eFAULT, nrWrite, w, 0, 8)
	h.errno(eAGAIN, nrRead, r, 0, 8) // empty: nothing to store yet
	h.must(nrClose, r)
	ign := h.alloc(32)
	h.poke(ign, []byte{sigIgn}) // SIGPIPE ignored: the write fails
	h.must(nrRtSigaction, sigPipe, ign, 0, 8)
	h.errno(ePIPE, nrWrite, w, 0, 8)
}

// peekAny reads guest memory whatever its protection ("" when unmapped).
func (h *harness) peekAny(addr uint64, n int) []byte {
	b := make([]byte, n)
	if h.mb.ReadMem(addr, b) != nil {
		return nil
	}
	return b
}
