// --net host: TCP connections between the run's processes and the host's
// network, through Go's net package. Opt-in, and not reproducible: what the
// host sends, and when, is outside the run.
//
// A host connection is an ordinary in-run connection whose far end is a
// proxy socket that no guest holds: the guest's socket, its queues,
// readiness in poll and epoll, and every recv and send flag work as
// between two guests. The runtime's loop moves bytes between each proxy
// and its host connection between slices (PumpHost), and waits for the
// host when every thread is blocked; goroutines only read and write the
// host connections, and hand over through channels.

package syscalls

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// hostNet is the run's bridge to the host's network.
type hostNet struct {
	news  chan struct{} // a host connection or listener has something (buffered 1)
	conns []*hostConn
	lns   []*hostListener
}

// hostConn is a host TCP connection behind proxy, the socket at the run's
// far end of a guest's connection; k is the kernel that made it.
type hostConn struct {
	k       *Kernel
	proxy   *socket
	conn    net.Conn
	in      chan []byte // bytes the host sent; closed at its end of file
	held    []byte      // received, waiting for room in the guest's queue
	out     chan []byte // bytes for the host; closed when the guest is done
	inDone  bool
	outDone bool
}

// hostListener accepts host connections for the guest listener l.
type hostListener struct {
	k   *Kernel
	l   *socket
	ln  net.Listener
	acc chan net.Conn
}

const (
	hostChunk       = 64 << 10
	hostDialTimeout = 10 * time.Second
)

func newHostNet() *hostNet { return &hostNet{news: make(chan struct{}, 1)} }

func (h *hostNet) signal() {
	select {
	case h.news <- struct{}{}:
	default:
	}
}

// dialErrno is Linux's errno for a failed dial or listen (the host's
// numbers differ on macOS).
func dialErrno(err error) Errno {
	for _, m := range []struct {
		host  syscall.Errno
		guest Errno
	}{
		{syscall.ECONNREFUSED, eCONNREFUSED}, {syscall.ENETUNREACH, eNETUNREACH},
		{syscall.EHOSTUNREACH, eHOSTUNREACH}, {syscall.EADDRINUSE, eADDRINUSE},
		{syscall.EADDRNOTAVAIL, eADDRNOTAVAIL}, {syscall.EACCES, eACCES}, {syscall.ETIMEDOUT, eTIMEDOUT},
	} {
		if errors.Is(err, m.host) {
			return m.guest
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return eTIMEDOUT
	}
	return eCONNREFUSED
}

// connectHost connects s to dst:port on the host.
func (k *Kernel) connectHost(s *socket, dst netip.Addr, port uint16, nonblock bool) Outcome {
	conn, err := net.DialTimeout("tcp", netip.AddrPortFrom(dst.Unmap(), port).String(), hostDialTimeout)
	if err != nil {
		s.remote = s.unspecified()
		return fail(dialErrno(err))
	}
	p := k.newSocket(s.family, s.typ, s.proto)
	p.local = sockAddr{family: s.family, ip: dst, port: port}
	p.remote = s.local
	s.remote = p.local
	s.peer, p.peer = p, s
	s.state, p.state = ssConnected, ssConnected
	k.net.host.add(k, p, conn)
	k.sockEvent(s, pollOut)
	if nonblock {
		s.connecting = true
		return fail(eINPROGRESS)
	}
	return ok(0)
}

// add starts moving bytes between proxy and conn.
func (h *hostNet) add(k *Kernel, proxy *socket, conn net.Conn) {
	c := &hostConn{k: k, proxy: proxy, conn: conn, in: make(chan []byte, 4), out: make(chan []byte, 64)}
	h.conns = append(h.conns, c)
	go func() {
		for {
			b := make([]byte, hostChunk)
			n, err := conn.Read(b)
			if n > 0 {
				c.in <- b[:n]
				h.signal()
			}
			if err != nil {
				close(c.in)
				h.signal()
				return
			}
		}
	}()
	go func() {
		for b := range c.out {
			if _, err := conn.Write(b); err != nil {
				break
			}
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		for range c.out {
		}
		h.signal()
	}()
}

// listenHost listens on the host at s's address for host clients of the
// guest listener s.
func (k *Kernel) listenHost(s *socket) Errno {
	ip := s.local.ip
	addr := netip.AddrPortFrom(ip.Unmap(), s.local.port).String()
	network := "tcp4"
	if s.family == afInet6 {
		network = "tcp"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return dialErrno(err)
	}
	h := k.net.host
	hl := &hostListener{k: k, l: s, ln: ln, acc: make(chan net.Conn)}
	s.hostLn = hl
	h.lns = append(h.lns, hl)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(hl.acc)
				h.signal()
				return
			}
			hl.acc <- c
			h.signal()
		}
	}()
	return 0
}

// HostLive reports whether a host connection or listener is open (--net
// host): something may still come from the host.
func (k *Kernel) HostLive() bool {
	h := k.net.host
	return h != nil && (len(h.conns) > 0 || len(h.lns) > 0)
}

// PumpHost moves what host connections and listeners have between them
// and the run (--net host; nothing otherwise), after waiting up to wait
// for the host to do something. It reports false when nothing can come
// from the host any more.
func (k *Kernel) PumpHost(wait time.Duration) bool {
	h := k.net.host
	if !k.HostLive() {
		return false
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-h.news:
		case <-t.C:
		}
		t.Stop()
	}
	saved, savedNet := k.now, k.net.now
	defer func() { k.now, k.net.now = saved, savedNet }()
	live := h.conns[:0]
	for _, c := range h.conns {
		if c.pump() {
			live = append(live, c)
		}
	}
	h.conns = live
	lns := h.lns[:0]
	for _, hl := range h.lns {
		if hl.pump(h) {
			lns = append(lns, hl)
		}
	}
	h.lns = lns
	return true
}

// pump moves bytes one way and the other; false when the connection is
// over both ways.
func (c *hostConn) pump() bool {
	k, p := c.k, c.proxy
	// The host's bytes are there at once, whatever the reader's clock.
	k.now, k.net.now = 0, 0
	for !c.inDone {
		if c.held == nil {
			select {
			case b, ok := <-c.in:
				if !ok {
					c.inDone = true
					if g := p.peer; g != nil {
						g.rcvShut, g.fin = true, true // the host's FIN
						k.sockEvent(g, 0)
					}
					continue
				}
				c.held = b
			default:
			}
		}
		if c.held == nil || p.peer == nil {
			break
		}
		n, e := k.sendStream(p, c.held, nil, nil)
		if e != 0 && e != eAGAIN {
			c.held, c.inDone = nil, true
			break
		}
		c.held = c.held[n:]
		if len(c.held) > 0 {
			break // the guest's queue is full: the rest waits
		}
		c.held = nil
	}
	// The guest's bytes go to the host, as far as the writer keeps up.
out:
	for !c.outDone && len(p.rx) > 0 {
		m := p.rx[0]
		b := append([]byte(nil), m.data[m.off:]...)
		select {
		case c.out <- b:
		default:
			break out
		}
		p.rx = p.rx[1:]
		p.rxBytes -= len(b)
		k.consumed(p)
	}
	if !c.outDone && len(p.rx) == 0 && (p.fin || p.peerGone || p.peer == nil) {
		c.outDone = true
		close(c.out)
	}
	if c.inDone && c.outDone {
		_ = c.conn.Close()
		return false
	}
	return true
}

// pump queues the host clients that arrived for the guest listener; false
// when the listener is closed.
func (hl *hostListener) pump(h *hostNet) bool {
	k, l := hl.k, hl.l
	for {
		select {
		case conn, ok := <-hl.acc:
			if !ok {
				return false
			}
			if l.closed || l.state != ssListening {
				_ = conn.Close()
				continue
			}
			p := k.newSocket(l.family, l.typ, l.proto)
			if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
				ip := ap.Addr()
				if l.family == afInet6 && ip.Is4() {
					ip = netip.AddrFrom16(ip.As16())
				}
				p.local = sockAddr{family: l.family, ip: ip, port: ap.Port()}
			}
			dst := l.local.ip
			if dst.IsUnspecified() {
				dst = p.local.ip
			}
			k.establish(p, l, dst, l.local.port)
			h.add(k, p, conn)
		default:
			return true
		}
	}
}

// closeHost stops listening on the host for s.
func (s *socket) closeHost() {
	if s.hostLn != nil {
		_ = s.hostLn.ln.Close()
		s.hostLn = nil
	}
}
