package syscalls

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

const (
	nrEpollWait      = 232
	nrEpollCtl       = 233
	nrEpollCreate    = 213
	nrEpollPwait     = 281
	nrEpollPwait2    = 441
	nrEpollCreate1   = 291
	nrEventfd        = 284
	nrEventfd2       = 290
	nrTimerfdSettime = 286
	nrTimerfdGettime = 287
	nrExecve         = 59
)

// epollEvent places a struct epoll_event in guest memory.
func (h *harness) epollEvent(events uint32, data uint64) uint64 {
	b := make([]byte, epollEventSize)
	le.PutUint32(b, events)
	le.PutUint64(b[4:], data)
	a := h.alloc(len(b))
	h.poke(a, b)
	return a
}

// wait runs epoll_wait and returns the events as "data:events" strings.
func (h *harness) wait(epfd uint64, max int, timeoutMs int64) ([]string, Outcome) {
	h.t.Helper()
	buf := h.alloc(max * epollEventSize)
	out := h.call(nrEpollWait, epfd, buf, uint64(max), uint64(timeoutMs))
	if int64(out.Ret) < 0 {
		h.t.Fatalf("epoll_wait: %v", Errno(-int64(out.Ret)))
	}
	var got []string
	for i := range int(out.Ret) {
		b := h.peek(buf+uint64(i)*epollEventSize, epollEventSize)
		got = append(got, fmt.Sprintf("%d:%#x", le.Uint64(b[4:]), le.Uint32(b)))
	}
	return got, out
}

func (h *harness) pipe() (r, w uint64) {
	h.t.Helper()
	a := h.alloc(8)
	h.must(nrPipe2, a, 0)
	b := h.peek(a, 8)
	return uint64(le.Uint32(b)), uint64(le.Uint32(b[4:]))
}

func TestEventfd(t *testing.T) {
	h := newHarness(t, Config{})
	h.errno(eINVAL, nrEventfd2, 0, 0x10)
	fd := h.must(nrEventfd2, 5, oCLOEXEC)
	buf := h.alloc(8)
	h.errno(eINVAL, nrRead, fd, buf, 7)
	if n := h.must(nrRead, fd, buf, 100); n != 8 || h.u64(buf) != 5 {
		t.Fatalf("read %d, value %d", n, h.u64(buf))
	}
	// Empty and blocking: EAGAIN with a wait on the eventfd.
	out := h.call(nrRead, fd, buf, 8)
	if w, isPipe := out.Wait.(*PipeWait); out.Ret != eAGAIN.Ret() || !isPipe || w.Write {
		t.Fatalf("empty read: %+v", out)
	}
	h.poke(buf, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	h.errno(eINVAL, nrWrite, fd, buf, 8)
	h.errno(eINVAL, nrWrite, fd, buf, 4)
	h.poke(buf, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	h.must(nrWrite, fd, buf, 8)
	h.poke(buf, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	if out := h.call(nrWrite, fd, buf, 8); out.Ret != eAGAIN.Ret() || out.Wait == nil {
		t.Fatalf("overflowing write: %+v", out)
	}
	// Semaphore mode counts down by one; non-blocking says EAGAIN alone.
	sem := h.must(nrEventfd2, 2, efdSemaphore|oNONBLOCK)
	for want := range []int{1, 1} {
		if h.must(nrRead, sem, buf, 8); h.u64(buf) != 1 {
			t.Fatalf("semaphore read %d: %d", want, h.u64(buf))
		}
	}
	if out := h.call(nrRead, sem, buf, 8); out.Ret != eAGAIN.Ret() || out.Wait != nil {
		t.Fatalf("non-blocking empty read: %+v", out)
	}
	h.errno(eSPIPE, nrPread64, sem, buf, 8, 0)
	h.errno(eFAULT, nrRead, fd, 0, 8) // the value is consumed, as on Linux
	h.errno(eFAULT, nrWrite, fd, 0, 8)
	// fcntl and /proc/self/fd see an anonymous file.
	if fl := h.must(nrFcntl, sem, fGetFL); fl != oRDWR|oNONBLOCK {
		t.Errorf("F_GETFL %#o", fl)
	}
	link := h.alloc(64)
	n := h.must(nrReadlink, h.str(fmt.Sprintf("/proc/self/fd/%d", sem)), link, 64)
	if got := string(h.peek(link, int(n))); got != "anon_inode:[eventfd]" {
		t.Errorf("link %q", got)
	}
}

func TestEpollErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir})
	h.errno(eINVAL, nrEpollCreate, 0)
	h.errno(eINVAL, nrEpollCreate1, 1)
	ep := h.must(nrEpollCreate1, oCLOEXEC)
	ev := h.epollEvent(pollIn, 7)
	file := h.must(nrOpen, h.str("f"), oRDONLY)
	r, _ := h.pipe()
	h.errno(ePERM, nrEpollCtl, ep, epollCtlAdd, file, ev)
	h.errno(eFAULT, nrEpollCtl, ep, epollCtlAdd, r, 0)
	h.errno(eBADF, nrEpollCtl, 99, epollCtlAdd, r, ev)
	h.errno(eBADF, nrEpollCtl, ep, epollCtlAdd, 99, ev)
	h.errno(eINVAL, nrEpollCtl, r, epollCtlAdd, r, ev)
	h.errno(eINVAL, nrEpollCtl, ep, epollCtlAdd, ep, ev)
	h.errno(eINVAL, nrEpollCtl, ep, 9, r, ev)
	h.errno(eNOENT, nrEpollCtl, ep, epollCtlMod, r, ev)
	h.errno(eNOENT, nrEpollCtl, ep, epollCtlDel, r, 0)
	h.must(nrEpollCtl, ep, epollCtlAdd, r, ev)
	h.errno(eEXIST, nrEpollCtl, ep, epollCtlAdd, r, ev)
	h.errno(eINVAL, nrEpollCtl, ep, epollCtlAdd, r, h.epollEvent(pollIn|epollExclusive|epollRdHup, 0))
	// Epoll in epoll, but no loops.
	ep2 := h.must(nrEpollCreate, 1)
	h.must(nrEpollCtl, ep2, epollCtlAdd, ep, ev)
	h.errno(eLOOP, nrEpollCtl, ep, epollCtlAdd, ep2, ev)
	buf := h.alloc(64)
	h.errno(eINVAL, nrEpollWait, ep, buf, 0, 0)
	h.errno(eINVAL, nrEpollWait, r, buf, 1, 0)
	h.errno(eBADF, nrEpollWait, 99, buf, 1, 0)
	h.errno(eFAULT, nrEpollWait, ep, 0x7ffffffff000-12, 2, 0)
	h.errno(eINVAL, nrEpollWait, ep, buf, epollMaxEvents+1, 0)
	h.errno(eINVAL, nrEpollPwait, ep, buf, 1, 0, buf, 4)
	h.errno(eFAULT, nrEpollPwait, ep, buf, 1, 0, 8, 8)
	ts := h.alloc(16)
	h.poke(ts+8, []byte{0, 0x94, 0x35, 0x77}) // 2e9 ns
	h.errno(eINVAL, nrEpollPwait2, ep, buf, 1, ts, 0, 0)
}

func TestEpollReadyOrder(t *testing.T) {
	h := newHarness(t, Config{})
	ep := h.must(nrEpollCreate1, 0)
	r1, w1 := h.pipe()
	r2, w2 := h.pipe()
	efd := h.must(nrEventfd2, 0, 0)
	h.must(nrEpollCtl, ep, epollCtlAdd, r1, h.epollEvent(pollIn, 1))
	h.must(nrEpollCtl, ep, epollCtlAdd, r2, h.epollEvent(pollIn, 2))
	h.must(nrEpollCtl, ep, epollCtlAdd, efd, h.epollEvent(pollIn|epollET, 3))
	h.must(nrEpollCtl, ep, epollCtlAdd, w1, h.epollEvent(pollOut|epollOneShot, 4))
	if got, _ := h.wait(ep, 8, 0); !slices.Equal(got, []string{"4:0x4"}) {
		t.Fatalf("first wait %v", got)
	}
	data := h.str("abc")
	// Ready in the order of the writes, not of registration.
	h.must(nrWrite, w2, data, 1)
	h.must(nrWrite, w1, data, 1)
	one := h.alloc(8)
	h.poke(one, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	h.must(nrWrite, efd, one, 8)
	if got, _ := h.wait(ep, 8, 0); !slices.Equal(got, []string{"2:0x1", "1:0x1", "3:0x1"}) {
		t.Fatalf("after writes %v", got)
	}
	// Level-triggered items come back, round robin under maxevents; the
	// edge-triggered eventfd does not until it is written again; the
	// one-shot write end never (until EPOLL_CTL_MOD).
	for i, want := range [][]string{{"2:0x1"}, {"1:0x1"}, {"2:0x1"}} {
		if got, _ := h.wait(ep, 1, 0); !slices.Equal(got, want) {
			t.Fatalf("round %d: %v, want %v", i, got, want)
		}
	}
	h.must(nrWrite, efd, one, 8)
	if got, _ := h.wait(ep, 8, 0); !slices.Equal(got, []string{"1:0x1", "2:0x1", "3:0x1"}) {
		t.Fatalf("after eventfd write %v", got)
	}
	h.must(nrEpollCtl, ep, epollCtlMod, w1, h.epollEvent(pollOut, 5))
	// The writer side closing gives POLLHUP with the data.
	h.must(nrClose, w2)
	if got, _ := h.wait(ep, 8, 0); !slices.Equal(got, []string{"1:0x1", "2:0x11", "5:0x4"}) {
		t.Fatalf("after close %v", got)
	}
	// Closing the last descriptor of a file removes its item; a dup keeps it.
	dup := h.must(nrDup, r1)
	h.must(nrClose, r1)
	h.must(nrClose, r2)
	if got, _ := h.wait(ep, 8, 0); !slices.Equal(got, []string{"1:0x1", "5:0x4"}) {
		t.Fatalf("after closing r1 (dup %d) and r2: %v", dup, got)
	}
	// The epoll fd itself polls readable when something is ready.
	pfd := h.alloc(8)
	b := make([]byte, 8)
	le.PutUint32(b, uint32(ep))
	le.PutUint16(b[4:], pollIn)
	h.poke(pfd, b)
	if n := h.must(nrPoll, pfd, 1, 0); n != 1 {
		t.Errorf("poll on epoll fd = %d", n)
	}
}

func TestEpollWaitTimeout(t *testing.T) {
	h := newHarness(t, Config{})
	ep := h.must(nrEpollCreate1, 0)
	r, w := h.pipe()
	h.must(nrEpollCtl, ep, epollCtlAdd, r, h.epollEvent(pollIn, 1))
	h.now = 1000
	_, out := h.wait(ep, 4, 5)
	rw, isReady := out.Wait.(*ReadyWait)
	if !isReady || rw.Until != 1000+5e6 || rw.Object != 0 {
		t.Fatalf("wait: %+v", out)
	}
	// Re-executed (same arguments) after a wake: the same deadline.
	buf := h.alloc(48)
	h.now = 2e6
	out = h.call(nrEpollWait, ep, buf, 4, 5)
	if rw := out.Wait.(*ReadyWait); rw.Until != 2e6+5e6 {
		t.Fatalf("first call deadline %d", rw.Until)
	}
	h.now = 3e6
	if rw := h.call(nrEpollWait, ep, buf, 4, 5).Wait.(*ReadyWait); rw.Until != 7e6 {
		t.Fatalf("re-executed deadline %d", rw.Until)
	}
	h.now = 7e6
	if out := h.call(nrEpollWait, ep, buf, 4, 5); out.Ret != 0 || out.Wait != nil {
		t.Fatalf("at the deadline: %+v", out)
	}
	// Data arriving ends the wait; infinite timeouts have no deadline.
	if rw := h.call(nrEpollWait, ep, buf, 4, negOne).Wait.(*ReadyWait); rw.Until > 0 {
		t.Fatalf("infinite wait %+v", rw)
	}
	h.must(nrWrite, w, h.str("x"), 1)
	if n := h.must(nrEpollWait, ep, buf, 4, negOne); n != 1 {
		t.Fatalf("after write: %d", n)
	}
}

func TestTimerfd(t *testing.T) {
	h := newHarness(t, Config{EpochNanos: 1_700_000_000e9})
	h.errno(eINVAL, nrTimerfdCreate, 99, 0)
	h.errno(eINVAL, nrTimerfdCreate, clockMonotonic, 1)
	tfd := h.must(nrTimerfdCreate, clockMonotonic, 0)
	spec := func(intv, val int64) uint64 {
		a := h.alloc(32)
		b := make([]byte, 32)
		le.PutUint64(b, uint64(intv/1e9))
		le.PutUint64(b[8:], uint64(intv%1e9))
		le.PutUint64(b[16:], uint64(val/1e9))
		le.PutUint64(b[24:], uint64(val%1e9))
		h.poke(a, b)
		return a
	}
	old := h.alloc(32)
	h.errno(eFAULT, nrTimerfdSettime, tfd, 0, 0, 0)
	h.errno(eINVAL, nrTimerfdSettime, tfd, 4, spec(0, 1), 0)
	h.errno(eINVAL, nrTimerfdSettime, 0, 0, spec(0, 1), 0)
	bad := spec(0, 0)
	h.poke(bad+24, []byte{0, 0xca, 0x9a, 0x3b}) // 1e9 ns
	h.errno(eINVAL, nrTimerfdSettime, tfd, 0, bad, 0)
	buf := h.alloc(8)
	// Disarmed: a read waits with no deadline.
	out := h.call(nrRead, tfd, buf, 8)
	if rw, isReady := out.Wait.(*ReadyWait); out.Ret != eAGAIN.Ret() || !isReady || rw.Until > 0 {
		t.Fatalf("disarmed read %+v", out)
	}
	h.now = 1000
	h.must(nrTimerfdSettime, tfd, 0, spec(1e6, 1e6), 0)
	out = h.call(nrRead, tfd, buf, 8)
	if rw := out.Wait.(*ReadyWait); rw.Until != 1000+1e6 {
		t.Fatalf("armed read waits until %d", rw.Until)
	}
	h.now = 1000 + 2.5e6
	if h.must(nrRead, tfd, buf, 8); h.u64(buf) != 2 {
		t.Fatalf("ticks %d", h.u64(buf))
	}
	h.must(nrTimerfdGettime, tfd, old)
	if b := h.peek(old, 32); le.Uint64(b[8:]) != 1e6 || le.Uint64(b[24:]) != 0.5e6 {
		t.Errorf("gettime interval %d value %d", le.Uint64(b[8:]), le.Uint64(b[24:]))
	}
	// Absolute on CLOCK_REALTIME; the old setting is returned.
	rt := h.must(nrTimerfdCreate, clockRealtime, oNONBLOCK)
	h.must(nrTimerfdSettime, rt, tfdTimerAbstime, spec(0, 1_700_000_000e9+5e6), old)
	if b := h.peek(old, 32); le.Uint64(b[16:]) != 0 || le.Uint64(b[24:]) != 0 {
		t.Errorf("old setting of a new timer %x", b)
	}
	h.errno(eAGAIN, nrRead, rt, buf, 8)
	// epoll_wait sleeps until the first timer of its set expires.
	ep := h.must(nrEpollCreate1, 0)
	h.must(nrEpollCtl, ep, epollCtlAdd, rt, h.epollEvent(pollIn, 9))
	_, out = h.wait(ep, 2, -1)
	if rw := out.Wait.(*ReadyWait); rw.Until != 5e6 {
		t.Fatalf("epoll_wait with a timer: %+v", rw)
	}
	h.now = 5e6
	if got, _ := h.wait(ep, 2, -1); !slices.Equal(got, []string{"9:0x1"}) {
		t.Fatalf("expired timer: %v", got)
	}
	if h.must(nrRead, rt, buf, 8); h.u64(buf) != 1 {
		t.Errorf("one-shot ticks %d", h.u64(buf))
	}
	if got, out := h.wait(ep, 2, 0); len(got) != 0 || out.Wait != nil {
		t.Errorf("after read: %v", got)
	}
}

const (
	nrMknod   = 133
	nrMknodat = 259
)

func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, Config{Cwd: dir})
	h.errno(ePERM, nrMknod, h.str("dev"), sIFCHR|0o600, 0x0103)
	h.errno(ePERM, nrMknod, h.str("dir"), sIFDIR|0o700, 0)
	h.errno(eINVAL, nrMknod, h.str("bad"), 0o130000|0o600, 0)
	h.must(nrMknod, h.str("reg"), 0o640, 0)
	h.must(nrMknodat, atFDCWDArg, h.str("fifo"), sIFIFO|0o666, 0)
	h.errno(eEXIST, nrMknod, h.str("fifo"), sIFIFO|0o600, 0)
	st := h.alloc(144)
	h.must(nrStat, h.str("fifo"), st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode != sIFIFO|0o644 { // umask 022
		t.Errorf("fifo mode %#o", mode)
	}
	h.must(nrStat, h.str("reg"), st)
	if mode := le.Uint32(h.peek(st+24, 4)); mode != sIFREG|0o640 {
		t.Errorf("regular file mode %#o", mode)
	}
	// Without a reader, a non-blocking writer gets ENXIO; a non-blocking
	// reader opens at once.
	fifo := h.str("fifo")
	h.errno(eNXIO, nrOpen, fifo, oWRONLY|oNONBLOCK)
	r := h.must(nrOpen, fifo, oRDONLY|oNONBLOCK)
	w := h.must(nrOpen, fifo, oWRONLY)
	h.must(nrWrite, w, h.str("hello"), 5)
	buf := h.alloc(16)
	if n := h.must(nrRead, r, buf, 16); n != 5 || string(h.peek(buf, 5)) != "hello" {
		t.Fatalf("read %d %q", n, h.peek(buf, 5))
	}
	h.must(nrClose, r)
	h.must(nrClose, w)
	// A blocking reader waits for a writer, which another thread brings.
	out := h.k.Do(&Call{Tid: 1, Nr: nrOpen, Args: [6]uint64{fifo, oRDONLY}})
	rw, waits := out.Wait.(*ReadyWait)
	if !waits || rw.Object == 0 {
		t.Fatalf("blocking open for reading: %+v", out)
	}
	w = h.must(nrOpen, fifo, oWRONLY) // the waiting reader counts
	out = h.k.Do(&Call{Tid: 1, Nr: nrOpen, Args: [6]uint64{fifo, oRDONLY}})
	if out.Wait != nil || int64(out.Ret) < 0 {
		t.Fatalf("re-executed open: %+v", out)
	}
	h.must(nrWrite, w, h.str("x"), 1)
	if n := h.must(nrRead, out.Ret, buf, 16); n != 1 {
		t.Errorf("read %d", n)
	}
	// O_RDWR never waits, and is its own writer.
	both := h.must(nrOpen, fifo, oRDWR)
	h.must(nrWrite, both, h.str("yz"), 2)
	if n := h.must(nrRead, both, buf, 16); n != 2 {
		t.Errorf("O_RDWR read %d", n)
	}
}

// poll waits like epoll_wait: its deadline is the first execution's, and
// a timerfd it polls ends the wait when it expires.
func TestPollWaits(t *testing.T) {
	h := newHarness(t, Config{})
	tfd := h.must(nrTimerfdCreate, clockMonotonic, 0)
	pfd := h.alloc(8)
	b := make([]byte, 8)
	le.PutUint32(b, uint32(tfd))
	le.PutUint16(b[4:], pollIn)
	h.poke(pfd, b)
	h.now = 1000
	out := h.call(nrPoll, pfd, 1, 5) // 5 ms
	if rw, ok := out.Wait.(*ReadyWait); !ok || rw.Until != 1000+5e6 {
		t.Fatalf("poll: %+v", out)
	}
	h.now = 2e6 // woken, made again: the same deadline
	if rw := h.call(nrPoll, pfd, 1, 5).Wait.(*ReadyWait); rw.Until != 1000+5e6 {
		t.Fatalf("again: until %d", rw.Until)
	}
	h.now = 5e6 + 1000
	if out := h.call(nrPoll, pfd, 1, 5); out.Ret != 0 || out.Wait != nil {
		t.Fatalf("at the deadline: %+v", out)
	}
	// Armed for 3 ms: an infinite poll waits until then.
	spec := h.alloc(32)
	h.poke(spec+16, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0xc6, 0x2d, 0}) // 3e6 ns
	h.must(nrTimerfdSettime, tfd, 0, spec, 0)
	if rw := h.call(nrPoll, pfd, 1, negOne).Wait.(*ReadyWait); rw.Until != h.now+3e6 {
		t.Fatalf("poll on a timer waits until %d", rw.Until)
	}
	h.now += 3e6
	if n := h.must(nrPoll, pfd, 1, negOne); n != 1 || le.Uint16(h.peek(pfd+6, 2)) != pollIn {
		t.Fatalf("expired timer: %d", n)
	}
}
