package syscalls

import (
	"testing"

	"emuprof/trace"
)

const (
	nrSocketT       = 41
	nrConnectT      = 42
	nrAcceptT       = 43
	nrSendtoT       = 44
	nrRecvfromT     = 45
	nrBindT         = 49
	nrListenT       = 50
	nrSocketpairT   = 53
	nrGetsockname   = 51
	nrEpollCreate1T = 291
)

// What a process sends is readable from the sender's virtual time on: a
// reader whose clock is earlier finds nothing yet (EAGAIN, and a blocking
// one waits until then); poll says readable only then.
func TestSocketDataArrivesAtSendersTime(t *testing.T) {
	h := newHarness(t, Config{})
	sv := h.alloc(8)
	h.must(nrSocketpairT, afUnix, sockStream, 0, sv)
	a, b := uint64(le.Uint32(h.peek(sv, 4))), uint64(le.Uint32(h.peek(sv+4, 4)))
	msg := h.str("request")
	h.now = 1000
	if n := h.must(nrWrite, a, msg, 7); n != 7 {
		t.Fatalf("write = %d", n)
	}
	buf := h.alloc(16)
	h.now = 500
	out := h.call(nrRead, b, buf, 16)
	w, waits := out.Wait.(*ReadyWait)
	if int64(out.Ret) != -int64(eAGAIN) || !waits || w.Until != 1000 {
		t.Fatalf("read at 500 = %d, wait %+v: want EAGAIN, waiting until 1000", int64(out.Ret), out.Wait)
	}
	pfd := h.alloc(8)
	h.poke(pfd, []byte{byte(b), 0, 0, 0, pollIn, 0, 0, 0})
	if n := h.must(nrPoll, pfd, 1, 0); n != 0 {
		t.Errorf("poll at 500: %d ready, want 0", n)
	}
	h.now = 1000
	if n := h.must(nrPoll, pfd, 1, 0); n != 1 {
		t.Errorf("poll at 1000: %d ready, want 1", n)
	}
	h.events = nil
	if n := h.must(nrRead, b, buf, 16); n != 7 || string(h.peek(buf, 7)) != "request" {
		t.Fatalf("read at 1000 = %d %q", n, h.peek(buf, 7))
	}
	// The bytes received are the kernel's stores into the buffer.
	if kw := h.only(trace.KindKernelWrite); len(kw) != 1 || kw[0].addr != buf || kw[0].size != 7 {
		t.Errorf("KernelWrite reports %+v: want the 7 bytes at the buffer", kw)
	}
}

// A socket an epoll instance starts watching before what was sent to it
// has arrived (in virtual time) is reported once it has: the poll that
// found it missing asks to be woken (redis-server added a client's socket
// that way and missed its request).
func TestSocketEpollAddedBeforeArrival(t *testing.T) {
	h := newHarness(t, Config{})
	sv := h.alloc(8)
	h.must(nrSocketpairT, afUnix, sockStream, 0, sv)
	a, b := uint64(le.Uint32(h.peek(sv, 4))), uint64(le.Uint32(h.peek(sv+4, 4)))
	h.now = 1000
	h.must(nrWrite, a, h.str("x"), 1)
	h.now = 500
	ep := h.must(nrEpollCreate1T, 0)
	ev := h.alloc(12)
	h.poke(ev, []byte{pollIn, 0, 0, 0})
	h.must(nrEpollCtl, ep, epollCtlAdd, b, ev)
	out := h.alloc(120)
	h.now = 2000
	if n := h.must(nrEpollWait, ep, out, 10, 0); n != 1 {
		t.Errorf("epoll_wait at 2000: %d events, want the socket's", n)
	}
}

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
