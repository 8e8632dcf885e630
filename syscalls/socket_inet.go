// AF_INET and AF_INET6 sockets on the loopback network: ports, addresses,
// TCP connection and UDP datagrams.

package syscalls

import (
	"net/netip"
	"slices"
)

// overlaps reports whether two bound IP sockets' addresses meet.
func overlaps(a, b *socket, ip netip.Addr) bool {
	if a.family != b.family {
		v6 := a
		if b.family == afInet6 {
			v6 = b
		}
		if v6.v6only() {
			return false
		}
	}
	x, y := b.local.ip.Unmap(), ip.Unmap()
	if x.Is4() != y.Is4() {
		return b.local.ip.IsUnspecified() && !b.v6only() || ip.IsUnspecified() && !a.v6only()
	}
	return x.IsUnspecified() || y.IsUnspecified() || x == y
}

// bindPort binds s to a.ip and a.port (0: an ephemeral port), refusing
// one another socket holds unless both asked to share it.
func (k *Kernel) bindPort(s *socket, a sockAddr) Errno {
	udp := s.typ == sockDgram
	if a.port == 0 {
		p, e := k.net.ephemeral(udp)
		if e != 0 {
			return e
		}
		a.port = p
	}
	for _, o := range k.net.ports[portKey{udp, a.port}] {
		if !overlaps(s, o, a.ip) {
			continue
		}
		if s.boolOpt(solSocket, soReusePort) && o.boolOpt(solSocket, soReusePort) {
			continue
		}
		if s.boolOpt(solSocket, soReuseAddr) && o.boolOpt(solSocket, soReuseAddr) && o.state != ssListening {
			continue
		}
		return eADDRINUSE
	}
	s.local, s.bound = a, true
	key := portKey{udp, a.port}
	k.net.ports[key] = append(k.net.ports[key], s)
	return 0
}

// ephemeral returns the next free port of ip_local_port_range, in order.
func (n *netStack) ephemeral(udp bool) (uint16, Errno) {
	for range ephemeralHigh - ephemeralLow + 1 {
		p := n.nextPort
		n.nextPort++
		if n.nextPort > ephemeralHigh {
			n.nextPort = ephemeralLow
		}
		if len(n.ports[portKey{udp, p}]) == 0 {
			return p, 0
		}
	}
	return 0, eADDRINUSE
}

// autobindInet binds an unbound IP socket to the wildcard address and an
// ephemeral port (connect, listen, sendto).
func (k *Kernel) autobindInet(s *socket) Errno {
	if s.bound {
		return 0
	}
	return k.bindPort(s, s.unspecified())
}

// loopbackTarget is where a connection to ip goes: a wildcard means this
// machine, anything not on lo is unreachable.
func (s *socket) loopbackTarget(ip netip.Addr) (netip.Addr, Errno) {
	switch {
	case ip.IsUnspecified() && ip.Is4():
		return loopback4, 0
	case ip.IsUnspecified():
		return loopback6, 0
	case ip.Is4In6() && ip.Unmap().IsUnspecified():
		return netip.AddrFrom16(loopback4.As16()), 0
	case !ip.Unmap().IsLoopback():
		return ip, eNETUNREACH
	case s.family == afInet6 && ip.Is4In6() && s.v6only():
		return ip, eNETUNREACH
	}
	return ip, 0
}

// sourceIP is the address a socket bound to the wildcard sends from
// towards dst.
func (s *socket) sourceIP(dst netip.Addr) netip.Addr {
	if !s.local.ip.IsUnspecified() {
		return s.local.ip
	}
	switch {
	case dst.Is4():
		return loopback4
	case dst.Is4In6():
		return netip.AddrFrom16(loopback4.As16())
	}
	return loopback6
}

// findPort returns the socket bound to port that takes what is sent to
// ip (listening for TCP), or nil.
func (n *netStack) findPort(udp bool, ip netip.Addr, port uint16, from *socket) *socket {
	var wild *socket
	for _, o := range n.ports[portKey{udp, port}] {
		if o.closed || !udp && o.state != ssListening {
			continue
		}
		v4 := ip.Unmap().Is4()
		if o.family == afInet && !v4 || o.family == afInet6 && v4 && o.v6only() {
			continue
		}
		if udp && o.peer != nil && from != nil && o.remote.port != 0 && (o.remote.port != from.local.port) {
			continue // a connected UDP socket takes only its peer's datagrams
		}
		switch {
		case o.local.ip.Unmap() == ip.Unmap():
			return o
		case o.local.ip.IsUnspecified() && wild == nil:
			wild = o
		}
	}
	return wild
}

// A SYN that finds the listener's accept queue full is dropped
// (tcp_conn_request: sk_acceptq_is_full, more than the backlog waiting)
// and sent again after TCP_TIMEOUT_INIT, the wait doubling each time;
// after net.ipv4.tcp_syn_retries (6) the connect fails with ETIMEDOUT.
const (
	synTimeoutInit = int64(1e9)
	synRetries     = 6
)

// synRetry is a connect waiting to send its SYN again: to port of dst,
// first sent at start, sent tries times since. k is the connecting
// process's kernel, which makes the server's end as at the first try.
type synRetry struct {
	k     *Kernel
	dst   netip.Addr
	port  uint16
	start int64
	tries int
}

// at is when the SYN is sent for the i-th time after the first (i =
// synRetries+1: when the connect gives up).
func (r *synRetry) at(i int) int64 { return r.start + synTimeoutInit*(1<<i-1) }

// retrySyn sends the SYN of s again for each retry due by now, as the
// retransmission timer would have: a listener with room takes it, none
// answers ECONNREFUSED, the last one failing ETIMEDOUT. It returns when
// the next retry is due (timerNoDeadline: none; the connect is over). The
// room is the listener's at now, which is the retry's time when a waiting
// connect or poller was woken for it.
func (s *socket) retrySyn(now int64) int64 {
	r := s.syn
	for r.tries <= synRetries && r.at(r.tries+1) <= now {
		r.tries++
		l := s.net.findPort(false, r.dst, r.port, nil)
		if r.tries <= synRetries && l != nil && len(l.pending) > l.backlog {
			continue
		}
		s.syn = nil
		switch {
		case r.tries > synRetries:
			s.tcpDone(eTIMEDOUT)
		case l == nil:
			s.tcpDone(eCONNREFUSED)
		default:
			r.k.establish(s, l, r.dst, r.port)
			return timerNoDeadline
		}
		s.remote = s.unspecified()
		r.k.sockEvent(s, pollOut|pollErr|pollHup)
		return timerNoDeadline
	}
	return r.at(r.tries + 1)
}

// tcpDone ends a connect that failed with e, as tcp_done: the error is
// pending and both directions are shut.
func (s *socket) tcpDone(e Errno) {
	s.err, s.state = e, ssClosed
	s.rcvShut, s.sndShut = true, true
}

func (k *Kernel) connectTCP(s *socket, fd int, a sockAddr, nonblock bool) Outcome {
	if s.syn != nil {
		if next := s.retrySyn(k.now); next != timerNoDeadline {
			if nonblock {
				return fail(eALREADY)
			}
			w := s.wait(fd, true)
			w.Until = next
			return Outcome{Ret: eAGAIN.Ret(), Wait: w}
		}
	}
	switch {
	case s.state == ssListening:
		return fail(eINVAL)
	case s.connecting:
		s.connecting = false
		if s.state == ssConnected {
			return ok(0)
		}
		e := s.err
		s.err, s.state = 0, ssUnconnected
		if e == 0 {
			e = eCONNREFUSED
		}
		return fail(e)
	case s.state == ssConnected || s.peerGone:
		return fail(eISCONN)
	}
	dst, e := s.loopbackTarget(a.ip)
	if e != 0 && !(e == eNETUNREACH && k.net.host != nil) {
		return fail(e)
	}
	if a.port == 0 {
		return fail(eCONNREFUSED)
	}
	if e := k.autobindInet(s); e != 0 {
		return fail(e)
	}
	l := k.net.findPort(false, dst, a.port, nil)
	if l == nil && k.net.host != nil {
		return k.connectHost(s, dst, a.port, nonblock)
	}
	if s.family == afInet6 && dst.Is4() {
		dst = netip.AddrFrom16(dst.As16())
	}
	s.remote = sockAddr{family: s.family, ip: dst, port: a.port}
	if s.local.ip.IsUnspecified() {
		s.local.ip = s.sourceIP(dst)
	}
	if l == nil {
		if nonblock {
			s.connecting = true
			s.tcpDone(eCONNREFUSED)
			return fail(eINPROGRESS)
		}
		s.remote = s.unspecified()
		return fail(eCONNREFUSED)
	}
	if len(l.pending) > l.backlog {
		// The SYN is dropped; the connect goes on with its retries
		// (blocking: re-executed when the next is due).
		s.syn = &synRetry{k: k, dst: dst, port: a.port, start: k.now}
		s.connecting = true
		if nonblock {
			return fail(eINPROGRESS)
		}
		return k.connectTCP(s, fd, a, false)
	}
	k.establish(s, l, dst, a.port)
	if nonblock {
		s.connecting = true
		return fail(eINPROGRESS)
	}
	return ok(0)
}

// establish connects s to listener l (reached at dst:port): the server's
// end is made and queued for accept.
func (k *Kernel) establish(s, l *socket, dst netip.Addr, port uint16) {
	n := k.newSocket(l.family, l.typ, l.proto)
	n.opts = cloneOpts(l.opts)
	n.local = sockAddr{family: l.family, ip: dst, port: port}
	if l.family == afInet6 && dst.Is4() {
		n.local.ip = netip.AddrFrom16(dst.As16())
	} else if l.family == afInet {
		n.local.ip = dst.Unmap()
	}
	n.remote = s.local
	if l.family == afInet6 && s.family == afInet {
		n.remote.ip = netip.AddrFrom16(s.local.ip.As16())
		n.remote.family = afInet6
	}
	n.remote.family = l.family
	k.linkConn(s, n, l)
}

// linkConn connects client c to n, a new socket queued on listener l.
func (k *Kernel) linkConn(c, n, l *socket) {
	c.peer, n.peer = n, c
	c.state, n.state = ssConnected, ssConnected
	c.peerCred, c.hasPeerCred = l.cred, true
	n.peerCred, n.hasPeerCred = c.cred, true
	n.cred = l.cred
	n.listener = l
	l.pending = append(l.pending, n)
	k.sockEvent(l, pollIn)
	k.sockEvent(c, pollOut)
}

func (k *Kernel) connectUDP(s *socket, a sockAddr) Errno {
	if a.family == 0 {
		s.peer, s.remote = nil, sockAddr{}
		return 0
	}
	dst, e := s.loopbackTarget(a.ip)
	if e != 0 {
		return e
	}
	if e := k.autobindInet(s); e != 0 {
		return e
	}
	if s.family == afInet6 && dst.Is4() {
		dst = netip.AddrFrom16(dst.As16())
	}
	s.remote = sockAddr{family: s.family, ip: dst, port: a.port}
	s.peer = s // a marker: connected (the receiver is found at each send)
	s.state = ssConnected
	if s.local.ip.IsUnspecified() {
		// The socket stays bound to the wildcard; getsockname shows the
		// source address, as Linux's connected UDP sockets do.
		s.local.ip = s.sourceIP(dst)
	}
	return 0
}

func (k *Kernel) sendUDP(s *socket, data []byte, to []byte, ctl *sockCtl) (int, Errno) {
	if ctl != nil && (len(ctl.rights) > 0 || ctl.cred != nil) {
		return 0, eINVAL
	}
	var dst sockAddr
	if len(to) > 0 {
		a, e := s.parseInet(to)
		if e != 0 {
			return 0, e
		}
		if a.family == 0 {
			return 0, eAFNOSUPPORT
		}
		if a.port == 0 {
			return 0, eINVAL
		}
		dst = a
	} else {
		if s.state != ssConnected {
			return 0, eDESTADDRREQ
		}
		dst = s.remote
	}
	if s.err != 0 {
		e := s.err
		s.err = 0
		return 0, e
	}
	if s.sndShut {
		return 0, ePIPE
	}
	ip, e := s.loopbackTarget(dst.ip)
	if e != 0 {
		return 0, e
	}
	limit := 65507
	if s.family == afInet6 {
		limit = 65527
	}
	if len(data) > limit {
		return 0, eMSGSIZE
	}
	if e := k.autobindInet(s); e != 0 {
		return 0, e
	}
	from := s.local
	from.ip = s.sourceIP(ip)
	t := k.net.findPort(true, ip, dst.port, s)
	if t == nil {
		if len(to) == 0 {
			s.err = eCONNREFUSED // the ICMP port unreachable that comes back
			k.sockEvent(s, pollErr)
		}
		return len(data), 0
	}
	if t.rcvShut || t.recvFull() {
		return len(data), 0 // dropped, as a full UDP receive buffer drops
	}
	from.family = t.family
	if t.family == afInet6 && from.ip.Is4() {
		from.ip = netip.AddrFrom16(from.ip.As16())
	} else if t.family == afInet {
		from.ip = from.ip.Unmap()
	}
	k.enqueue(t, &sockMsg{data: slices.Clone(data), from: from}, nil, false)
	return len(data), 0
}
