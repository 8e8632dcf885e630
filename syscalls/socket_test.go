package syscalls

import "testing"

const (
	nrSocketT     = 41
	nrConnectT    = 42
	nrAcceptT     = 43
	nrSendtoT     = 44
	nrRecvfromT   = 45
	nrBindT       = 49
	nrListenT     = 50
	nrSocketpairT = 53
	nrGetsockname = 51
)

// TCP on loopback: a port 0 bind takes the first ephemeral port, a
// connection waits for accept, a closed port refuses, and addresses
// outside the machine are unreachable.
func TestTCPLoopback(t *testing.T) {
	h := newHarness(t, Config{})
	l := h.must(nrSocketT, afInet, sockStream, 0)
	sa := h.alloc(16)
	h.poke(sa, []byte{afInet, 0, 0, 0, 127, 0, 0, 1})
	h.must(nrBindT, l, sa, 16)
	ln := h.alloc(4)
	h.poke(ln, []byte{16, 0, 0, 0})
	h.must(nrGetsockname, l, sa, ln)
	if port := uint16(h.peek(sa, 4)[2])<<8 | uint16(h.peek(sa, 4)[3]); port != ephemeralLow {
		t.Errorf("port 0 bound to %d, want %d", port, ephemeralLow)
	}
	c := h.must(nrSocketT, afInet, sockStream, 0)
	h.errno(eCONNREFUSED, nrConnectT, c, sa, 16) // not listening yet
	h.must(nrListenT, l, 8)
	h.must(nrConnectT, c, sa, 16)
	s := h.must(nrAcceptT, l, 0, 0)
	h.must(nrSendtoT, c, h.str("hi"), 2, 0, 0, 0)
	buf := h.alloc(8)
	if n := h.must(nrRecvfromT, s, buf, 8, 0, 0, 0); n != 2 {
		t.Errorf("recv = %d", n)
	}
	far := h.alloc(16)
	h.poke(far, []byte{afInet, 0, 0, 80, 192, 0, 2, 1})
	c2 := h.must(nrSocketT, afInet, sockStream, 0)
	h.errno(eNETUNREACH, nrConnectT, c2, far, 16)
	h.errno(eADDRNOTAVAIL, nrBindT, c2, far, 16)
}
