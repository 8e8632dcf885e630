package syscalls

import (
	"fmt"
	"net/netip"
	"os"
	"path"
	"slices"

	"emuprof/trace"
)

// The socket system calls: socket, socketpair, bind, listen, accept,
// accept4, connect, shutdown, getsockname, getpeername, sendto, recvfrom,
// sendmsg, recvmsg, sendmmsg, recvmmsg (socket_opt.go: setsockopt,
// getsockopt; read, write, readv and writev of a socket come here too).

// send and recv flags.
const (
	msgOOB         = 0x1
	msgPeek        = 0x2
	msgDontRoute   = 0x4
	msgCtrunc      = 0x8
	msgTrunc       = 0x20
	msgDontWait    = 0x40
	msgEOR         = 0x80
	msgWaitAll     = 0x100
	msgConfirm     = 0x800
	msgErrQueue    = 0x2000
	msgNoSignal    = 0x4000
	msgMore        = 0x8000
	msgWaitForOne  = 0x10000
	msgCmsgCloexec = 0x40000000

	scmRights      = 1
	scmCredentials = 2
	solSocket      = 1
	scmMaxFD       = 253
	somaxconn      = 4096
	msghdrSize     = 56
	mmsghdrSize    = 64
)

// sockCtl is the control data of a send.
type sockCtl struct {
	rights []*openFile
	cred   *ucred
}

// sockOf returns the socket behind fd (EBADF, ENOTSOCK).
func (k *Kernel) sockOf(fd int) (*socket, *openFile, Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return nil, nil, e
	}
	s, isSock := f.ops.(*socket)
	if !isSock {
		return nil, nil, eNOTSOCK
	}
	return s, f, 0
}

// newSocket makes a socket of the calling process.
func (k *Kernel) newSocket(family, typ, proto int) *socket {
	s := &socket{net: k.net, ino: k.nextIno, family: family, typ: typ, proto: proto,
		cred: k.ucred(), sndbuf: sockBufDefault, rcvbuf: sockBufDefault}
	k.nextIno++
	if s.isInet() && s.stream() {
		s.sndbuf, s.rcvbuf = 16384, 131072 // net.ipv4.tcp_wmem, tcp_rmem
	}
	s.local = s.unspecified()
	return s
}

func (k *Kernel) ucred() ucred {
	return ucred{pid: uint32(k.cfg.Pid), uid: uint32(k.cfg.Uid), gid: uint32(k.cfg.Gid)}
}

// installSocket gives s a descriptor, with SOCK_NONBLOCK and SOCK_CLOEXEC
// from flags.
func (k *Kernel) installSocket(s *socket, flags uint32) (int, Errno) {
	f := newOpenFile(s, oRDWR|flags&oNONBLOCK, "")
	fd, e := k.install(f, 0, flags&oCLOEXEC != 0)
	if e != 0 {
		s.close(k)
	}
	return fd, e
}

// socketArgs checks socket(2)'s arguments the way Linux's __sock_create and
// the families' create functions do.
func (k *Kernel) socketArgs(domain, typ, proto int) (int, Errno) {
	if typ < 0 || typ >= 11 {
		return 0, eINVAL
	}
	switch domain {
	case afUnix:
		if proto != 0 && proto != afUnix {
			return 0, ePROTONOSUPPORT
		}
		switch typ {
		case sockStream, sockDgram, sockSeqpacket:
			return typ, 0
		case sockRaw:
			return sockDgram, 0
		}
		return 0, eSOCKTNOSUPPORT
	case afInet, afInet6:
		switch {
		case typ == sockStream && (proto == 0 || proto == ipprotoTCP):
			return typ, 0
		case typ == sockDgram && (proto == 0 || proto == ipprotoUDP):
			return typ, 0
		case typ == sockDgram && (proto == 1 || proto == 58): // ICMP echo: net.ipv4.ping_group_range "1 0"
			return 0, eACCES
		case typ == sockRaw:
			return 0, ePERM
		case typ == sockStream || typ == sockDgram:
			return 0, ePROTONOSUPPORT
		}
		return 0, eSOCKTNOSUPPORT
	case afNetlink:
		if typ != sockRaw && typ != sockDgram {
			return 0, eSOCKTNOSUPPORT
		}
		if proto != 0 { // NETLINK_ROUTE only
			return 0, ePROTONOSUPPORT
		}
		return typ, 0
	case 17: // AF_PACKET needs CAP_NET_RAW
		return 0, ePERM
	}
	return 0, eAFNOSUPPORT
}

func sysSocket(k *Kernel, c *Call) Outcome {
	domain, raw, proto := int(int32(c.Args[0])), uint32(c.Args[1]), int(int32(c.Args[2]))
	flags := raw &^ sockTypeMask
	if flags&^(oNONBLOCK|oCLOEXEC) != 0 {
		return fail(eINVAL)
	}
	typ, e := k.socketArgs(domain, int(raw&sockTypeMask), proto)
	if e != 0 {
		return fail(e)
	}
	if proto == 0 && (domain == afInet || domain == afInet6) {
		proto = map[int]int{sockStream: ipprotoTCP, sockDgram: ipprotoUDP}[typ]
	}
	s := k.newSocket(domain, typ, proto)
	return result(uint64FD(k.installSocket(s, flags)))
}

func uint64FD(fd int, e Errno) (uint64, Errno) { return uint64(fd), e }

func sysSocketpair(k *Kernel, c *Call) Outcome {
	domain, raw, proto := int(int32(c.Args[0])), uint32(c.Args[1]), int(int32(c.Args[2]))
	flags := raw &^ sockTypeMask
	if flags&^(oNONBLOCK|oCLOEXEC) != 0 {
		return fail(eINVAL)
	}
	typ, e := k.socketArgs(domain, int(raw&sockTypeMask), proto)
	if e != 0 {
		return fail(e)
	}
	if domain != afUnix {
		return fail(eOPNOTSUPP)
	}
	a, b := k.newSocket(afUnix, typ, proto), k.newSocket(afUnix, typ, proto)
	a.peer, b.peer = b, a
	a.state, b.state = ssConnected, ssConnected
	if typ == sockDgram {
		a.state, b.state = ssUnconnected, ssUnconnected
	}
	a.peerCred, b.peerCred, a.hasPeerCred, b.hasPeerCred = b.cred, a.cred, true, true
	fa, e := k.installSocket(a, flags)
	if e != 0 {
		b.close(k)
		return fail(e)
	}
	fb, e := k.installSocket(b, flags)
	if e != 0 {
		_ = k.closeFD(fa)
		return fail(e)
	}
	var out [8]byte
	le.PutUint32(out[0:], uint32(fa))
	le.PutUint32(out[4:], uint32(fb))
	if e := k.copyOut(c.Args[3], out[:]); e != 0 {
		_ = k.closeFD(fa)
		_ = k.closeFD(fb)
		return fail(e)
	}
	return ok(0)
}

// ---------------------------------------------------------------------
// bind

func sysBind(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	b, e := k.readSockaddr(c.Args[1], c.Args[2])
	if e != 0 {
		return fail(e)
	}
	switch s.family {
	case afUnix:
		return fail(k.bindUnix(s, b))
	case afNetlink:
		return fail(k.bindNetlink(s, b))
	}
	a, e := s.parseInet(b)
	if e != 0 {
		return fail(e)
	}
	if a.family == 0 {
		return fail(eAFNOSUPPORT)
	}
	if s.bound {
		return fail(eINVAL)
	}
	if !localIP(a.ip) {
		return fail(eADDRNOTAVAIL)
	}
	if a.port != 0 && a.port < 1024 && k.cfg.Uid != 0 {
		return fail(eACCES) // net.ipv4.ip_unprivileged_port_start
	}
	return fail(k.bindPort(s, a))
}

// bindUnix binds a Unix name: an abstract one in the run's table, a path
// as a socket node in the file system (EADDRINUSE if the path exists).
func (k *Kernel) bindUnix(s *socket, b []byte) Errno {
	if len(b) == 2 && le.Uint16(b) == afUnix {
		if s.bound {
			return eINVAL
		}
		k.autobind(s)
		return 0
	}
	a, e := k.parseUnix(b)
	if e != 0 {
		return e
	}
	if s.bound {
		return eINVAL
	}
	if a.key != "" {
		if _, used := k.net.unix[a.key]; used {
			return eADDRINUSE
		}
	} else {
		l, e := k.lookup(atFDCWD, a.name, false)
		switch {
		case e != 0:
			return e
		case l.exists():
			return eADDRINUSE
		case l.syn != nil || !lastNormal(a.name):
			return eACCES
		}
		if e := k.ovCreate(l); e != 0 {
			return e
		}
		if err := mksock(l.host, 0o777&^k.umask); err != nil {
			return hostErrno(err)
		}
		_ = os.Chmod(l.host, goMode(0o777&^k.umask)|os.ModeSocket)
		k.stampPath(l.host, stampA|stampM|stampC)
		k.ovCreated(l, false, false)
		k.touch(k.hostPath(path.Dir(l.guest)))
		a.key = l.host
	}
	s.local, s.bound = a, true
	k.net.unix[a.key] = s
	return 0
}

// autobind gives an unbound Unix socket an abstract name of five hex
// digits, as Linux's unix_autobind (in order, not at random).
func (k *Kernel) autobind(s *socket) {
	for {
		name := fmt.Sprintf("\x00%05x", k.net.nextAuto&0xfffff)
		k.net.nextAuto++
		if _, used := k.net.unix[name]; !used {
			s.local, s.bound = sockAddr{family: afUnix, name: name, key: name}, true
			k.net.unix[name] = s
			return
		}
	}
}

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

// ---------------------------------------------------------------------
// listen, accept, connect

func sysListen(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if !s.connOriented() {
		return fail(eOPNOTSUPP)
	}
	if s.state != ssUnconnected && s.state != ssListening {
		return fail(eINVAL)
	}
	if s.family == afUnix && !s.bound {
		return fail(eINVAL)
	}
	if s.isInet() {
		if e := k.autobindInet(s); e != 0 {
			return fail(e)
		}
	}
	backlog := int(int32(c.Args[1]))
	if uint32(backlog) > somaxconn {
		backlog = somaxconn
	}
	s.backlog, s.state, s.cred = backlog, ssListening, k.ucred()
	return ok(0)
}

func sysAccept(k *Kernel, c *Call) Outcome { return k.accept(c, 0) }

func sysAccept4(k *Kernel, c *Call) Outcome { return k.accept(c, uint32(c.Args[3])) }

func (k *Kernel) accept(c *Call, flags uint32) Outcome {
	if flags&^(oNONBLOCK|oCLOEXEC) != 0 {
		return fail(eINVAL)
	}
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	if !s.connOriented() {
		return fail(eOPNOTSUPP)
	}
	if s.state != ssListening {
		return fail(eINVAL)
	}
	if len(s.pending) == 0 {
		return k.sockWait(fail(eAGAIN), f, fd, s, false, 0)
	}
	n := s.pending[0]
	s.pending = s.pending[1:]
	n.listener = nil
	nfd, e := k.installSocket(n, flags)
	if e != 0 {
		return fail(e)
	}
	if c.Args[1] != 0 {
		if e := k.writeSockaddr(n.remote, c.Args[1], c.Args[2]); e != 0 {
			return fail(e) // Linux keeps the descriptor: the connection is the guest's
		}
	}
	if n.peer != nil {
		k.sockEvent(n.peer, pollOut) // a client waiting for room in the backlog
	}
	return ok(uint64(nfd))
}

func sysConnect(k *Kernel, c *Call) Outcome {
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	b, e := k.readSockaddr(c.Args[1], c.Args[2])
	if e != 0 {
		return fail(e)
	}
	nonblock := f.flags&oNONBLOCK != 0
	switch s.family {
	case afUnix:
		if len(b) >= 2 && le.Uint16(b) == afUnspec && !s.connOriented() {
			s.peer = nil // dissolve the association
			return ok(0)
		}
		a, e := k.parseUnix(b)
		if e != 0 {
			return fail(e)
		}
		if !s.connOriented() {
			return fail(k.connectUnixDgram(s, a))
		}
		out := k.connectUnixStream(s, a)
		if out.Ret == eAGAIN.Ret() && !nonblock {
			return k.sockWait(out, f, fd, s, true, 0)
		}
		return out
	case afNetlink:
		return ok(0)
	}
	a, e := s.parseInet(b)
	if e != 0 {
		return fail(e)
	}
	if !s.stream() {
		return fail(k.connectUDP(s, a))
	}
	if a.family == 0 {
		return fail(eAFNOSUPPORT)
	}
	return k.connectTCP(s, a, nonblock)
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

func (k *Kernel) connectTCP(s *socket, a sockAddr, nonblock bool) Outcome {
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
	if e != 0 {
		return fail(e)
	}
	if a.port == 0 {
		return fail(eCONNREFUSED)
	}
	if e := k.autobindInet(s); e != 0 {
		return fail(e)
	}
	l := k.net.findPort(false, dst, a.port, nil)
	if s.family == afInet6 && dst.Is4() {
		dst = netip.AddrFrom16(dst.As16())
	}
	s.remote = sockAddr{family: s.family, ip: dst, port: a.port}
	if s.local.ip.IsUnspecified() {
		s.local.ip = s.sourceIP(dst)
	}
	if l == nil {
		if nonblock {
			s.connecting, s.err, s.state = true, eCONNREFUSED, ssClosed
			s.rcvShut, s.sndShut = true, true // tcp_done
			return fail(eINPROGRESS)
		}
		s.remote = s.unspecified()
		return fail(eCONNREFUSED)
	}
	n := k.newSocket(l.family, l.typ, l.proto)
	n.opts = cloneOpts(l.opts)
	n.local = sockAddr{family: l.family, ip: dst, port: a.port}
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
	if nonblock {
		s.connecting = true
		return fail(eINPROGRESS)
	}
	return ok(0)
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

// unixTarget finds the socket bound to name a.
func (k *Kernel) unixTarget(a sockAddr) (*socket, Errno) {
	if a.key != "" {
		t := k.net.unix[a.key]
		if t == nil || t.closed {
			return nil, eCONNREFUSED
		}
		return t, 0
	}
	l, e := k.lookup(atFDCWD, a.name, true)
	switch {
	case e != 0:
		return nil, e
	case !l.exists():
		return nil, eNOENT
	case l.syn != nil || l.fi.Mode()&os.ModeSocket == 0:
		return nil, eCONNREFUSED
	}
	t := k.net.unix[l.host]
	if t == nil || t.closed || t.local.key != l.host {
		return nil, eCONNREFUSED
	}
	return t, 0
}

func (k *Kernel) connectUnixDgram(s *socket, a sockAddr) Errno {
	t, e := k.unixTarget(a)
	if e != 0 {
		return e
	}
	if t.typ != s.typ {
		return ePROTOTYPE
	}
	s.peer, s.remote = t, t.local
	return 0
}

func (k *Kernel) connectUnixStream(s *socket, a sockAddr) Outcome {
	switch s.state {
	case ssConnected:
		return fail(eISCONN)
	case ssListening:
		return fail(eINVAL)
	}
	t, e := k.unixTarget(a)
	if e != 0 {
		return fail(e)
	}
	if t.typ != s.typ {
		return fail(ePROTOTYPE)
	}
	if t.state != ssListening {
		return fail(eCONNREFUSED)
	}
	if len(t.pending) > t.backlog {
		return fail(eAGAIN)
	}
	n := k.newSocket(afUnix, t.typ, t.proto)
	n.local = t.local
	n.bound = false // it shares the listener's name without holding it
	n.opts = cloneOpts(t.opts)
	n.remote = s.local
	s.remote = t.local
	k.linkConn(s, n, t)
	return ok(0)
}

// ---------------------------------------------------------------------
// shutdown, names

func sysShutdown(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	how := uint32(c.Args[1])
	if how > 2 {
		return fail(eINVAL)
	}
	rd, wr := how != 1, how != 0
	if s.isInet() {
		switch {
		case s.state == ssListening && rd:
			// A listener shut for reading stops listening: accept fails.
			k.resetPending(s)
			s.state = ssUnconnected
			k.sockEvent(s, 0)
			return ok(0)
		case s.state == ssListening:
			return ok(0)
		case s.state != ssConnected && !(s.stream() && s.peerGone):
			s.rcvShut, s.sndShut = s.rcvShut || rd, s.sndShut || wr
			return fail(eNOTCONN)
		}
	}
	s.rcvShut, s.sndShut = s.rcvShut || rd, s.sndShut || wr
	if p := s.peer; p != nil && p != s && s.connOriented() {
		switch {
		case s.isInet():
			if wr {
				p.rcvShut, p.fin = true, true
			}
		default:
			p.rcvShut, p.sndShut = p.rcvShut || wr, p.sndShut || rd
		}
		k.sockEvent(p, 0)
	}
	k.sockEvent(s, 0)
	return ok(0)
}

// resetPending resets the connections a listener has not accepted.
func (k *Kernel) resetPending(s *socket) {
	for _, n := range s.pending {
		n.listener, n.closed = nil, true
		if p := n.peer; p != nil {
			p.err, p.rcvShut, p.sndShut, p.state, p.peer = eCONNRESET, true, true, ssClosed, nil
			k.sockEvent(p, 0)
		}
		k.dropQueue(n)
	}
	s.pending = nil
}

func sysGetsockname(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	a := s.local
	if s.family == afUnix && !s.bound && s.local.name == "" {
		a = sockAddr{family: afUnix}
	}
	return fail(k.writeSockaddrArg(a, c.Args[1], c.Args[2]))
}

func sysGetpeername(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	switch {
	case s.family == afUnix && s.peer != nil && s.connOriented():
		return fail(k.writeSockaddrArg(s.remote, c.Args[1], c.Args[2]))
	case s.family == afUnix && s.peer != nil:
		return fail(k.writeSockaddrArg(s.peer.local, c.Args[1], c.Args[2]))
	case s.family == afUnix && s.peerGone:
		return fail(k.writeSockaddrArg(s.remote, c.Args[1], c.Args[2]))
	case s.isInet() && (s.state == ssConnected || s.peerGone && s.state != ssClosed):
		return fail(k.writeSockaddrArg(s.remote, c.Args[1], c.Args[2]))
	case s.family == afNetlink:
		return fail(k.writeSockaddrArg(sockAddr{family: afNetlink}, c.Args[1], c.Args[2]))
	}
	return fail(eNOTCONN)
}

// writeSockaddrArg is writeSockaddr for getsockname and getpeername, whose
// address pointer must be valid.
func (k *Kernel) writeSockaddrArg(a sockAddr, addr, lenAddr uint64) Errno {
	n, e := k.getU32(lenAddr)
	if e != 0 {
		return e
	}
	if int32(n) < 0 {
		return eINVAL
	}
	b := encodeAddr(a)
	if e := k.copyOut(addr, b[:min(int(n), len(b))]); e != 0 {
		return e
	}
	return k.putU32(lenAddr, uint32(len(b)))
}

// ---------------------------------------------------------------------
// Sending

// sockSend queues data from s, for its peer or for address to, and
// returns how much was taken: all of a datagram, as much of a stream as
// the peer's queue has room for (EAGAIN: none).
func (k *Kernel) sockSend(s *socket, data []byte, flags int, to []byte, ctl *sockCtl) (int, Errno) {
	if flags&msgOOB != 0 {
		return 0, eOPNOTSUPP
	}
	if s.family == afNetlink {
		return k.netlinkSend(s, data)
	}
	if s.connOriented() {
		return k.sendStream(s, data, to, ctl)
	}
	if s.family == afUnix {
		return k.sendUnixDgram(s, data, to, ctl)
	}
	return k.sendUDP(s, data, to, ctl)
}

func (k *Kernel) sendStream(s *socket, data []byte, to []byte, ctl *sockCtl) (int, Errno) {
	tcp := s.isInet()
	if !tcp && len(to) > 0 {
		if s.state == ssConnected {
			return 0, eISCONN
		}
		return 0, eOPNOTSUPP
	}
	if !tcp && s.typ == sockSeqpacket && s.state != ssConnected && !s.peerGone {
		return 0, eNOTCONN
	}
	if tcp && ctl != nil && (len(ctl.rights) > 0 || ctl.cred != nil) {
		return 0, eINVAL
	}
	if tcp && s.err != 0 {
		e := s.err
		s.err = 0
		return 0, e
	}
	if s.sndShut {
		return 0, ePIPE
	}
	p := s.peer
	if p == nil {
		switch {
		case s.peerGone && tcp:
			// The peer closed: these bytes are sent, and answered with a
			// reset, after which writes fail with EPIPE.
			s.err, s.sndShut, s.rcvShut, s.state = ePIPE, true, true, ssClosed
			k.sockEvent(s, 0)
			return len(data), 0
		case s.peerGone:
			return 0, ePIPE
		case tcp:
			return 0, ePIPE // not connected (sk_stream_wait_connect)
		}
		return 0, eNOTCONN
	}
	if p.rcvShut && !tcp {
		return 0, ePIPE
	}
	if len(data) == 0 && s.stream() {
		return 0, 0
	}
	space := s.capacity(p) - p.rxBytes
	if s.typ == sockSeqpacket {
		if len(data) > s.sndbuf-32 {
			return 0, eMSGSIZE
		}
		if p.rxBytes > 0 && space < len(data) {
			s.nospace = true
			return 0, eAGAIN
		}
		space = len(data)
	}
	if space <= 0 {
		s.nospace = true
		return 0, eAGAIN
	}
	n := min(space, len(data))
	if p.rcvShut { // TCP: the peer stopped reading; the data is dropped
		return n, 0
	}
	k.enqueue(p, &sockMsg{data: slices.Clone(data[:n]), from: s.local}, ctl, s.stream())
	return n, 0
}

// enqueue appends m (with ctl) to s's receive queue, merging stream data
// into the last message when neither carries control data.
func (k *Kernel) enqueue(s *socket, m *sockMsg, ctl *sockCtl, stream bool) {
	if ctl != nil {
		m.rights, m.cred = ctl.rights, ctl.cred
	}
	m.at = k.now
	if stream && m.rights == nil && m.cred == nil && len(s.rx) > 0 {
		last := s.rx[len(s.rx)-1]
		if last.rights == nil && last.cred == nil && last.from == m.from && last.at == m.at {
			last.data = append(last.data, m.data...)
			s.rxBytes += len(m.data)
			k.sockEvent(s, pollIn|pollRdNm)
			return
		}
	}
	s.rx = append(s.rx, m)
	s.rxBytes += len(m.data)
	k.sockEvent(s, pollIn|pollRdNm)
}

func (k *Kernel) sendUnixDgram(s *socket, data []byte, to []byte, ctl *sockCtl) (int, Errno) {
	var t *socket
	if len(to) > 0 {
		a, e := k.parseUnix(to)
		if e != 0 {
			return 0, e
		}
		if t, e = k.unixTarget(a); e != 0 {
			return 0, e
		}
	} else {
		if t = s.peer; t == nil {
			return 0, eNOTCONN
		}
		if t.closed {
			s.peer = nil
			return 0, eCONNREFUSED
		}
	}
	if t.typ != s.typ {
		return 0, ePROTOTYPE
	}
	if s.sndShut {
		return 0, ePIPE
	}
	if len(data) > s.sndbuf-32 {
		return 0, eMSGSIZE
	}
	if t.peer != nil && t.peer != s {
		return 0, ePERM // t receives only from its peer
	}
	if t.rcvShut {
		return 0, ePIPE
	}
	if t.peer != s && t.recvFull() || t.peer == s && t.rxBytes > 0 && t.rxBytes+len(data) > s.sndbuf {
		s.nospace = true
		return 0, eAGAIN
	}
	if s.boolOpt(solSocket, soPassCred) && !s.bound {
		k.autobind(s)
	}
	from := s.local
	if !s.bound {
		from = sockAddr{}
	}
	k.enqueue(t, &sockMsg{data: slices.Clone(data), from: from}, ctl, false)
	return len(data), 0
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

// ---------------------------------------------------------------------
// Receiving

// recvResult is what one receive took from a socket's queue.
type recvResult struct {
	data   []byte
	full   int // the datagram's length (MSG_TRUNC)
	from   sockAddr
	hasSrc bool
	rights []*openFile
	cred   *ucred
	trunc  bool
}

// sockRecv takes up to max bytes from s's queue (one datagram, or stream
// bytes up to a message carrying descriptors). Nothing queued: end of file
// after shutdown or the peer's close, the pending error, or EAGAIN.
func (k *Kernel) sockRecv(s *socket, max int, flags int) (recvResult, Errno) {
	var r recvResult
	if flags&msgErrQueue != 0 {
		return r, eAGAIN
	}
	if flags&msgOOB != 0 {
		return r, eINVAL
	}
	tcp := s.isInet() && s.stream()
	switch {
	case s.state == ssListening:
		if tcp {
			return r, eNOTCONN
		}
		return r, eINVAL
	case tcp && s.state == ssUnconnected && !s.peerGone:
		return r, eNOTCONN
	case s.family == afUnix && s.connOriented() && s.state == ssUnconnected && !s.peerGone:
		return r, eINVAL
	}
	if s.readable() == 0 {
		if len(s.rx) > 0 {
			return r, eAGAIN // not there yet: it was sent later in virtual time
		}
		switch {
		case tcp && s.fin:
			return r, 0
		case s.err != 0:
			e := s.err
			s.err = 0
			return r, e
		case s.rcvShut:
			return r, 0
		}
		return r, eAGAIN
	}
	if max == 0 && s.stream() {
		return r, 0
	}
	peek := flags&msgPeek != 0
	m := s.rx[0]
	r.from, r.hasSrc = m.from, m.from.family != 0
	if !s.stream() {
		r.full = len(m.data)
		n := min(max, len(m.data))
		r.data, r.trunc = m.data[:n], n < len(m.data)
		if !peek {
			r.rights, r.cred = m.rights, m.cred
			s.rx = s.rx[1:]
			s.rxBytes -= len(m.data)
			k.consumed(s)
		} else {
			r.cred = m.cred
		}
		return r, 0
	}
	// A stream: bytes of successive messages, stopping after one that
	// carried descriptors (unix_stream_read_generic).
	r.cred = m.cred
	for i := 0; i < s.readable() && len(r.data) < max; i++ {
		m := s.rx[i]
		if i > 0 && (m.rights != nil || m.cred != nil) {
			break
		}
		avail := m.data[m.off:]
		n := min(len(avail), max-len(r.data))
		r.data = append(r.data, avail[:n]...)
		if !peek && m.rights != nil {
			r.rights, m.rights = m.rights, nil
		}
		if r.rights != nil {
			break
		}
	}
	r.full = len(r.data)
	if !peek {
		left := len(r.data)
		for left > 0 {
			m := s.rx[0]
			n := min(left, len(m.data)-m.off)
			m.off += n
			left -= n
			if m.off == len(m.data) {
				s.rx = s.rx[1:]
			}
		}
		s.rxBytes -= len(r.data)
		k.consumed(s)
	}
	return r, 0
}

// consumed wakes the writers waiting for room in s's queue.
func (k *Kernel) consumed(s *socket) {
	if p := s.peer; p != nil && p != s {
		if !(p.isInet() && p.stream()) || p.nospace {
			p.nospace = false
			k.sockEvent(p, pollOut|pollWrNm)
		}
	}
	k.sockEvent(s, pollOut|pollWrNm) // datagram senders wait on the receiver
}

// ---------------------------------------------------------------------
// The calls that move data

// sockWait annotates a call on a blocking socket that found nothing to do:
// the runtime parks the thread until the socket changes and re-executes
// the call.
func (k *Kernel) sockWait(out Outcome, f *openFile, fd int, s *socket, write bool, flags int) Outcome {
	if out.Ret == eAGAIN.Ret() && f.flags&oNONBLOCK == 0 && flags&msgDontWait == 0 {
		out.Wait = s.wait(fd, write)
	}
	return out
}

// wait is what a thread blocked on s waits for: a change of s.
func (s *socket) wait(fd int, write bool) *ReadyWait {
	what := "read"
	switch {
	case s.state == ssListening:
		what = "accept"
	case write && s.state != ssConnected && s.connOriented():
		what = "connect"
	case write:
		what = "write"
	}
	w := &ReadyWait{Object: s.ino, What: fmt.Sprintf("%s socket:[%d] (fd %d)", what, s.ino, fd)}
	if n := s.readable(); !write && n < len(s.rx) {
		w.Until = s.rx[n].at // the next message arrives then
	}
	return w
}

// gather loads the bytes of iov after the first skip, up to limit; a
// buffer that cannot be read ends them (EFAULT if it is the first).
func (k *Kernel) gather(iov []iovec, skip, limit uint64) ([]byte, Errno) {
	var out []byte
	for _, v := range iov {
		if skip >= v.len {
			skip -= v.len
			continue
		}
		base, n := v.base+skip, min(v.len-skip, limit-uint64(len(out)))
		skip = 0
		if n == 0 {
			break
		}
		buf := make([]byte, n)
		if e := k.readRaw(base, buf); e != 0 {
			fit := k.accessible(base, n, false)
			if e2 := k.readRaw(base, buf[:fit]); e2 != 0 || fit == 0 {
				if len(out) == 0 {
					return nil, eFAULT
				}
				break
			}
			out = append(out, buf[:fit]...)
			break
		}
		out = append(out, buf...)
	}
	return out, 0
}

// reportRead reports the KernelRead of the n bytes of iov after skip.
func (k *Kernel) reportRead(iov []iovec, skip, n uint64) {
	for _, v := range iov {
		if n == 0 {
			return
		}
		if skip >= v.len {
			skip -= v.len
			continue
		}
		m := min(v.len-skip, n)
		k.emit(trace.KindKernelRead, v.base+skip, m)
		n -= m
		skip = 0
	}
}

// scatter stores p into iov after the first skip bytes (KernelWrite).
func (k *Kernel) scatter(iov []iovec, skip uint64, p []byte) (uint64, Errno) {
	var done uint64
	for _, v := range iov {
		if len(p) == 0 {
			break
		}
		if skip >= v.len {
			skip -= v.len
			continue
		}
		m := min(v.len-skip, uint64(len(p)))
		if e := k.copyOut(v.base+skip, p[:m]); e != 0 {
			return done, e
		}
		done += m
		p = p[m:]
		skip = 0
	}
	return done, 0
}

func iovTotal(iov []iovec) uint64 {
	var t uint64
	for _, v := range iov {
		t += v.len
	}
	return t
}

// progress is how much of the call in progress an earlier execution did
// before it had to wait (a blocking stream send or MSG_WAITALL receive
// that is completed in parts).
func (k *Kernel) progress(c *Call) uint64 {
	t := k.thread(c.Tid)
	if t.restart.valid && t.restart.nr == c.Nr && t.restart.args == c.Args {
		return t.restart.done
	}
	return 0
}

// waitWithProgress asks to wait, remembering done.
func (k *Kernel) waitWithProgress(c *Call, fd int, s *socket, write bool, done uint64) Outcome {
	k.thread(c.Tid).restart = restartState{valid: true, nr: c.Nr, args: c.Args, deadline: restartNoTimeout, done: done}
	return Outcome{Ret: eAGAIN.Ret(), Wait: s.wait(fd, write)}
}

// sendIov is a send of the buffers iov (write, writev, send, sendto,
// sendmsg): a blocking stream send returns when all is queued, waiting for
// room as often as needed.
func (k *Kernel) sendIov(c *Call, fd int, s *socket, f *openFile, iov []iovec, flags int, to []byte, ctl *sockCtl) Outcome {
	total := iovTotal(iov)
	done := k.progress(c)
	limit := total - done
	if s.stream() {
		limit = min(limit, maxChunk)
	}
	data, e := k.gather(iov, done, limit)
	if e != 0 {
		return fail(e)
	}
	if done > 0 {
		ctl = nil // it went with the first part
	}
	n, e := k.sockSend(s, data, flags, to, ctl)
	if e == 0 && ctl != nil && n == 0 && len(data) > 0 {
		e = eAGAIN
	}
	if ctl != nil && (e != 0 || n == 0) {
		k.dropRights(ctl.rights)
	}
	k.reportRead(iov, done, uint64(n))
	done += uint64(n)
	block := f.flags&oNONBLOCK == 0 && flags&msgDontWait == 0
	if block && s.stream() && (e == eAGAIN || e == 0 && done < total) {
		return k.waitWithProgress(c, fd, s, true, done)
	}
	if e == eAGAIN && block {
		return k.sockWait(fail(e), f, fd, s, true, flags)
	}
	if e != 0 && done == 0 || e != 0 && e != eAGAIN {
		if done > 0 && e != ePIPE {
			return ok(done)
		}
		out := fail(e)
		if e == ePIPE && flags&msgNoSignal == 0 {
			out = k.sigpipe(c, out)
		}
		if done > 0 {
			out.Ret = done
		}
		return out
	}
	return ok(done)
}

// recvIov is a receive into iov (read, readv, recv, recvfrom, recvmsg). It
// returns the result of the receive and how many bytes it stored.
func (k *Kernel) recvIov(c *Call, fd int, s *socket, f *openFile, iov []iovec, flags int) (recvResult, Outcome) {
	if flags&msgErrQueue != 0 {
		return recvResult{}, fail(eAGAIN) // the error queue is empty, and never waited for
	}
	total := iovTotal(iov)
	done := k.progress(c)
	r, e := k.sockRecv(s, int(min(total-done, maxChunk)), flags)
	block := f.flags&oNONBLOCK == 0 && flags&msgDontWait == 0
	if e == eAGAIN && done > 0 {
		e = 0
	}
	if e != 0 {
		if e == eAGAIN && block {
			return r, k.sockWait(fail(e), f, fd, s, false, flags)
		}
		return r, fail(e)
	}
	n, e := k.scatter(iov, done, r.data)
	if e != 0 && n == 0 && done == 0 {
		return r, fail(e)
	}
	done += n
	if flags&msgWaitAll != 0 && flags&msgPeek == 0 && s.stream() && block && done < total &&
		len(r.data) > 0 && r.rights == nil && !s.rcvShut && s.err == 0 {
		return r, k.waitWithProgress(c, fd, s, false, done)
	}
	if flags&msgTrunc != 0 && !s.stream() {
		return r, ok(uint64(r.full))
	}
	return r, ok(done)
}

// sockRW performs read, write, readv and writev on a socket; it reports
// false for any other file.
func (k *Kernel) sockRW(c *Call) (Outcome, bool) {
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return Outcome{}, false
	}
	var iov []iovec
	switch c.Nr {
	case sysnrRead, sysnrWrite:
		if !accessOK(c.Args[1], c.Args[2]) {
			return fail(eFAULT), true
		}
		iov = []iovec{{c.Args[1], min(c.Args[2], maxRWCount)}}
	default:
		if iov, e = k.readIovecs(c.Args[1], c.Args[2]); e != 0 {
			return fail(e), true
		}
	}
	if c.Nr == sysnrWrite || c.Nr == sysnrWritev {
		return k.sendIov(c, fd, s, f, iov, 0, nil, nil), true
	}
	r, out := k.recvIov(c, fd, s, f, iov, 0)
	k.installRights(r.rights, false, 0) // no room for them: closed
	return out, true
}

// System call numbers routed to sockets.
const (
	sysnrWrite  = 1
	sysnrRead   = 0
	sysnrWritev = 20
)

func sysSendto(k *Kernel, c *Call) Outcome {
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	if !accessOK(c.Args[1], c.Args[2]) {
		return fail(eFAULT)
	}
	var to []byte
	if c.Args[4] != 0 {
		if to, e = k.readSockaddr(c.Args[4], c.Args[5]); e != 0 {
			return fail(e)
		}
	}
	iov := []iovec{{c.Args[1], min(c.Args[2], maxRWCount)}}
	return k.sendIov(c, fd, s, f, iov, int(int32(c.Args[3])), to, nil)
}

func sysRecvfrom(k *Kernel, c *Call) Outcome {
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	if !accessOK(c.Args[1], c.Args[2]) {
		return fail(eFAULT)
	}
	iov := []iovec{{c.Args[1], min(c.Args[2], maxRWCount)}}
	r, out := k.recvIov(c, fd, s, f, iov, int(int32(c.Args[3])))
	k.installRights(r.rights, false, 0)
	if out.Wait != nil || int64(out.Ret) < 0 {
		return out
	}
	if c.Args[4] != 0 {
		a := sockAddr{}
		if r.hasSrc && !(s.isInet() && s.stream()) {
			a = r.from
		}
		if e := k.writeRecvAddr(a, c.Args[4], c.Args[5]); e != 0 {
			return fail(e)
		}
	}
	return out
}

// writeRecvAddr stores the source of a received message (length 0 when
// it has none).
func (k *Kernel) writeRecvAddr(a sockAddr, addr, lenAddr uint64) Errno {
	if a.family == 0 {
		if lenAddr == 0 {
			return 0
		}
		return k.putU32(lenAddr, 0)
	}
	return k.writeSockaddr(a, addr, lenAddr)
}

// msghdr is struct msghdr.
type msghdr struct {
	name       uint64
	namelen    uint32
	iov        uint64
	iovlen     uint64
	control    uint64
	controllen uint64
	flags      uint32
}

func (k *Kernel) readMsghdr(addr uint64) (msghdr, Errno) {
	var b [msghdrSize]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return msghdr{}, e
	}
	return msghdr{name: le.Uint64(b[0:]), namelen: le.Uint32(b[8:]), iov: le.Uint64(b[16:]),
		iovlen: le.Uint64(b[24:]), control: le.Uint64(b[32:]), controllen: le.Uint64(b[40:]), flags: le.Uint32(b[48:])}, 0
}

// readControl parses the control messages of a send (scm_send).
func (k *Kernel) readControl(s *socket, m msghdr) (*sockCtl, Errno) {
	if m.controllen == 0 {
		return nil, 0
	}
	if m.controllen > 1<<20 {
		return nil, eNOBUFS
	}
	b := make([]byte, m.controllen)
	if e := k.copyIn(m.control, b); e != 0 {
		return nil, e
	}
	ctl := &sockCtl{}
	for off := uint64(0); off+16 <= uint64(len(b)); {
		clen := le.Uint64(b[off:])
		level, typ := int32(le.Uint32(b[off+8:])), int32(le.Uint32(b[off+12:]))
		if clen < 16 || clen > uint64(len(b))-off {
			k.dropRights(ctl.rights)
			return nil, eINVAL
		}
		data := b[off+16 : off+clen]
		off += (clen + 7) &^ 7
		if level != solSocket {
			continue
		}
		if s.family != afUnix {
			k.dropRights(ctl.rights)
			return nil, eINVAL
		}
		switch typ {
		case scmRights:
			n := len(data) / 4
			if n == 0 || n+len(ctl.rights) > scmMaxFD {
				k.dropRights(ctl.rights)
				return nil, eINVAL
			}
			for i := range n {
				f, e := k.file(int(int32(le.Uint32(data[4*i:]))))
				if e != 0 {
					k.dropRights(ctl.rights)
					return nil, e
				}
				f.refs++
				ctl.rights = append(ctl.rights, f)
			}
		case scmCredentials:
			if len(data) != 12 {
				k.dropRights(ctl.rights)
				return nil, eINVAL
			}
			cr := ucred{le.Uint32(data), le.Uint32(data[4:]), le.Uint32(data[8:])}
			if me := k.ucred(); k.cfg.Uid != 0 && cr != me {
				k.dropRights(ctl.rights)
				return nil, ePERM
			}
			ctl.cred = &cr
		default:
			k.dropRights(ctl.rights)
			return nil, eINVAL
		}
	}
	return ctl, 0
}

func sysSendmsg(k *Kernel, c *Call) Outcome {
	return k.sendmsg(c, fdArg(c.Args[0]), c.Args[1], int(int32(c.Args[2])))
}

func (k *Kernel) sendmsg(c *Call, fd int, addr uint64, flags int) Outcome {
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	m, e := k.readMsghdr(addr)
	if e != 0 {
		return fail(e)
	}
	var to []byte
	if m.name != 0 && m.namelen != 0 {
		if to, e = k.readSockaddr(m.name, uint64(m.namelen)); e != 0 {
			return fail(e)
		}
	}
	iov, e := k.readIovecs(m.iov, m.iovlen)
	if e != 0 {
		return fail(e)
	}
	var ctl *sockCtl
	if k.progress(c) == 0 {
		if ctl, e = k.readControl(s, m); e != 0 {
			return fail(e)
		}
	}
	if ctl != nil && ctl.cred == nil && len(ctl.rights) == 0 {
		ctl = nil
	}
	return k.sendIov(c, fd, s, f, iov, flags, to, ctl)
}

func sysRecvmsg(k *Kernel, c *Call) Outcome {
	return k.recvmsg(c, fdArg(c.Args[0]), c.Args[1], int(int32(c.Args[2])))
}

func (k *Kernel) recvmsg(c *Call, fd int, addr uint64, flags int) Outcome {
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	m, e := k.readMsghdr(addr)
	if e != 0 {
		return fail(e)
	}
	iov, e := k.readIovecs(m.iov, m.iovlen)
	if e != 0 {
		return fail(e)
	}
	r, out := k.recvIov(c, fd, s, f, iov, flags)
	if out.Wait != nil || int64(out.Ret) < 0 {
		return out
	}
	var mflags uint32
	if r.trunc {
		mflags |= msgTrunc
	}
	// The source address.
	if m.name != 0 {
		a := sockAddr{}
		if r.hasSrc && !(s.isInet() && s.stream()) {
			a = r.from
		}
		b := encodeAddr(a)
		if a.family == 0 {
			b = nil
		}
		if e := k.copyOut(m.name, b[:min(len(b), int(m.namelen))]); e != 0 {
			k.installRights(r.rights, false, 0)
			return fail(e)
		}
		_ = k.putU32(addr+8, uint32(len(b)))
	} else {
		_ = k.putU32(addr+8, 0)
	}
	// Control messages: credentials (SO_PASSCRED), then descriptors.
	var ctl []byte
	room := int(min(m.controllen, 1<<20))
	put := func(typ int, data []byte) bool {
		if len(ctl)+16 > room {
			mflags |= msgCtrunc
			return false
		}
		clen := min(16+len(data), room-len(ctl))
		if clen < 16+len(data) {
			mflags |= msgCtrunc
		}
		h := make([]byte, 16, 16+len(data)+8)
		le.PutUint64(h, uint64(clen))
		le.PutUint32(h[8:], solSocket)
		le.PutUint32(h[12:], uint32(typ))
		h = append(h, data...)[:clen]
		if pad := (clen + 7) &^ 7; pad <= room-len(ctl) {
			h = append(h, make([]byte, pad-clen)...)
		}
		ctl = append(ctl, h...)
		return true
	}
	if s.family == afUnix && s.boolOpt(solSocket, soPassCred) {
		cr := r.cred
		if cr == nil {
			if p := s.peer; p != nil && p != s {
				cr = &p.cred
			} else {
				cr = &ucred{uid: 65534, gid: 65534}
			}
		}
		var b [12]byte
		le.PutUint32(b[0:], cr.pid)
		le.PutUint32(b[4:], cr.uid)
		le.PutUint32(b[8:], cr.gid)
		put(scmCredentials, b[:])
	}
	if len(r.rights) > 0 {
		fit := max(0, (room-len(ctl)-16)/4)
		fit = min(fit, len(r.rights))
		if fit < len(r.rights) {
			mflags |= msgCtrunc
		}
		fds := k.installRights(r.rights, flags&msgCmsgCloexec != 0, fit)
		if len(fds) > 0 {
			b := make([]byte, 4*len(fds))
			for i, fd := range fds {
				le.PutUint32(b[4*i:], uint32(fd))
			}
			put(scmRights, b)
		}
	}
	if len(ctl) > 0 {
		if e := k.copyOut(m.control, ctl); e != 0 {
			return fail(e)
		}
	}
	_ = k.putU64(addr+40, uint64(len(ctl)))
	_ = k.putU32(addr+48, mflags)
	return out
}

// installRights gives the first n received descriptors fds and closes the
// rest (no room, or the receiving call cannot take them).
func (k *Kernel) installRights(rights []*openFile, cloexec bool, n int) []int {
	var fds []int
	for i, f := range rights {
		if i < n {
			if fd, e := k.install(f, 0, cloexec); e == 0 {
				fds = append(fds, fd)
				continue
			}
		}
		_ = k.unref(f)
	}
	return fds
}

// sysSendmmsg sends the messages of an mmsghdr array, storing each one's
// length, until one fails (Linux returns the count sent, or the error if
// none was).
func sysSendmmsg(k *Kernel, c *Call) Outcome {
	return k.mmsg(c, true)
}

func sysRecvmmsg(k *Kernel, c *Call) Outcome {
	return k.mmsg(c, false)
}

func (k *Kernel) mmsg(c *Call, send bool) Outcome {
	fd := fdArg(c.Args[0])
	if _, _, e := k.sockOf(fd); e != 0 {
		return fail(e)
	}
	vlen := min(uint32(c.Args[2]), 1024) // UIO_MAXIOV
	flags := int(int32(c.Args[3]))
	var n uint64
	for i := range uint64(vlen) {
		hdr := c.Args[1] + i*mmsghdrSize
		sub := *c
		sub.Args = [6]uint64{c.Args[0], hdr, uint64(uint32(flags &^ msgWaitForOne))}
		var out Outcome
		if send {
			out = k.sendmsg(&sub, fd, hdr, flags)
		} else {
			out = k.recvmsg(&sub, fd, hdr, flags&^msgWaitForOne)
		}
		if out.Wait != nil || int64(out.Ret) < 0 {
			if n > 0 {
				return ok(n)
			}
			return out
		}
		if e := k.putU32(hdr+56, uint32(out.Ret)); e != 0 {
			return fail(e)
		}
		n++
		if !send && flags&msgWaitForOne != 0 {
			flags |= msgDontWait
		}
	}
	return ok(n)
}
