package syscalls

import (
	"testing"

	"emuprof/mm"
)

// TestSetIDs: keeping the ids succeeds, changing them is EPERM.
func TestSetIDs(t *testing.T) {
	h := newHarness(t, Config{Uid: 1000, Gid: 100})
	m1 := ^uint64(0)
	h.must(117, m1, 1000, m1) // setresuid(-1, 1000, -1)
	h.must(119, 100, 100, 100)
	h.must(105, 1000)
	h.must(113, m1, m1)
	h.errno(ePERM, 117, 0, 0, 0)
	h.errno(ePERM, 106, 0)
	h.errno(eINVAL, 105, m1)
}

// TestForkKernel: the child's descriptors share the open files; a pipe's
// write end must be closed in both processes before its reader sees end of
// file.
func TestForkKernel(t *testing.T) {
	h := newHarness(t, Config{Pid: 1000})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	r, w := int(h.u64(fds)&0xffffffff), int(h.u64(fds)>>32)
	child := h.k.Fork(1000, 1001, mm.New(mm.NewMemBackend()))
	if got := child.Do(&Call{Tid: 1001, Nr: 39}); got.Ret != 1001 {
		t.Errorf("child getpid %d", got.Ret)
	}
	h.must(3, uint64(w)) // the parent closes its write end
	f, e := child.file(w)
	if e != 0 || f.refs != 1 {
		t.Fatalf("child's write end: %v, refs %d", e, f.refs)
	}
	p := f.ops.(*pipeEnd).p
	if p.writers != 1 {
		t.Errorf("writers %d after the parent's close, want 1", p.writers)
	}
	if err := child.Close(); err != nil {
		t.Fatal(err)
	}
	if p.writers != 0 {
		t.Errorf("writers %d after the child's exit, want 0", p.writers)
	}
	_ = r
}

// The CPU affinity mask is inherited by a forked child and by a new
// thread, as Linux's fork and clone copy it; so is the name (PR_SET_NAME).
func TestAffinityInherited(t *testing.T) {
	h := newHarness(t, Config{Pid: 1000, CPUs: 8})
	mask := h.alloc(8)
	h.poke(mask, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	h.must(203, 0, 8, mask)           // sched_setaffinity(0, 8, {0})
	h.must(157, 15, h.str("renamed")) // prctl(PR_SET_NAME)
	h.k.NewThread(1000, 1002)
	child := h.k.Fork(1000, 1001, mm.New(mm.NewMemBackend()))
	for _, c := range []struct {
		k   *Kernel
		tid int
	}{{h.k, 1002}, {child, 1001}} {
		if got := c.k.affinity(c.tid); got[0] != 1 {
			t.Errorf("thread %d: affinity %#x, want 0x1", c.tid, got[0])
		}
		if got := c.k.thread(c.tid).name; got != "renamed" {
			t.Errorf("thread %d: name %q, want the creator's", c.tid, got)
		}
	}
}

// The terminal's settings belong to the terminal: what a child sets
// (stty -echo in a shell's child) its parent sees, as on Linux.
func TestForkSharesTerminal(t *testing.T) {
	h := newHarness(t, Config{Pid: 1000, StdinTTY: true})
	cmb := mm.NewMemBackend()
	cas := mm.New(cmb)
	buf := uint64(scratchBase)
	if err := cas.MapFixed(buf, 4096, mm.ProtRead|mm.ProtWrite, "", 0); err != nil {
		t.Fatal(err)
	}
	child := h.k.Fork(1000, 1001, cas)
	if got := child.Do(&Call{Tid: 1001, Nr: nrIoctl, Args: [6]uint64{0, tcGets, buf}}); got.Ret != 0 {
		t.Fatalf("child TCGETS: %#x", got.Ret)
	}
	b := make([]byte, 4)
	if err := cmb.ReadMem(buf+12, b); err != nil { // c_lflag
		t.Fatal(err)
	}
	b[0] ^= 0o10 // ECHO
	if err := cmb.WriteMem(buf+12, b); err != nil {
		t.Fatal(err)
	}
	if got := child.Do(&Call{Tid: 1001, Nr: nrIoctl, Args: [6]uint64{0, tcSets, buf}}); got.Ret != 0 {
		t.Fatalf("child TCSETS: %#x", got.Ret)
	}
	st := h.alloc(64)
	h.must(nrIoctl, 0, tcGets, st)
	if got := h.peek(st+12, 4); got[0] != b[0] {
		t.Errorf("parent's c_lflag %#x after the child's TCSETS, want %#x", got[0], b[0])
	}
}
