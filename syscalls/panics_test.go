package syscalls

import (
	"syscall"
	"testing"
)

// dup2 and dup3 onto the highest open descriptor: closing it shrinks the
// table, which then has to grow back (it indexed past the end: a Go panic).
func TestDup2OntoHighestFD(t *testing.T) {
	h := newHarness(t, Config{})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	r, w := uint64(le.Uint32(h.peek(fds, 4))), uint64(le.Uint32(h.peek(fds+4, 4)))
	if got := h.must(nrDup2, r, w); got != w {
		t.Fatalf("dup2(%d, %d) = %d", r, w, got)
	}
	if got := h.must(292, w, r, oCLOEXEC); got != r { // dup3 back onto the (now highest) read end
		t.Fatalf("dup3 = %d", got)
	}
	if got := h.must(nrDup2, 1, r); got != r {
		t.Fatalf("dup2(1, %d) = %d", r, got)
	}
	buf := h.str("x")
	if n := h.must(1, r, buf, 1); n != 1 { // write: r is stdout now
		t.Fatalf("write = %d", n)
	}
	if h.stdout.String() != "x" {
		t.Errorf("stdout %q", h.stdout.String())
	}
}

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

// epipeWriter is a host stream whose reader went away.
type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// A write to a pipe without readers, or to a host stdout whose reader went
// away (`emuprof ... | head`), raises SIGPIPE like Linux: by default the
// process dies of it (exit 141); ignored, the write fails with EPIPE.
func TestWriteEPIPERaisesSIGPIPE(t *testing.T) {
	h := newHarness(t, Config{Stdout: epipeWriter{}})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	r, w := uint64(le.Uint32(h.peek(fds, 4))), uint64(le.Uint32(h.peek(fds+4, 4)))
	h.must(3, r) // close the read end
	buf := h.str("data")
	iov := h.alloc(16)
	h.poke(iov, append(le.AppendUint64(nil, buf), le.AppendUint64(nil, 4)...))
	for _, tc := range []struct {
		name string
		nr   uint64
		args []uint64
	}{
		{"write to a pipe", 1, []uint64{w, buf, 4}},
		{"writev to a pipe", 20, []uint64{w, iov, 1}},
		{"write to stdout", 1, []uint64{1, buf, 4}},
	} {
		out := h.call(tc.nr, tc.args...)
		if out.Action != ExitGroup || out.Signal != sigPipe || out.Status != 128+sigPipe {
			t.Errorf("%s: %+v, want death by SIGPIPE", tc.name, out)
		}
	}
	act := h.alloc(32)
	h.poke(act, le.AppendUint64(nil, sigIgn))
	h.must(13, sigPipe, act, 0, 8) // rt_sigaction(SIGPIPE, SIG_IGN)
	h.errno(ePIPE, 1, w, buf, 4)
	h.errno(ePIPE, 1, 1, buf, 4)
}
