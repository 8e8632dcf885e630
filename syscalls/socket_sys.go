package syscalls

// The socket system calls common to every family: socket, socketpair,
// bind, listen, accept, accept4, connect, shutdown, getsockname and
// getpeername. What each family adds is in socket_afunix.go, socket_inet.go
// and socket_netlink.go; the calls that move data are in socket_io.go (read,
// write, readv and writev of a socket, sendto, recvfrom) and socket_msg.go
// (sendmsg, recvmsg, sendmmsg, recvmmsg), over the queues of
// socket_queue.go; setsockopt and getsockopt are in socket_opt.go.

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
	return ucred{pid: uint32(k.cfg.Pid), uid: uint32(k.uids.eff), gid: uint32(k.gids.eff)}
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
	if a.port != 0 && a.port < 1024 && k.uids.eff != 0 {
		return fail(eACCES) // net.ipv4.ip_unprivileged_port_start
	}
	return fail(k.bindPort(s, a))
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
	if k.net.host != nil && s.isInet() && s.state != ssListening {
		if e := k.listenHost(s); e != 0 {
			return fail(e)
		}
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
	k.readyEvent(s.ino) // an AF_UNIX connect waiting for room (unix_accept's peer_wait)
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
		return k.connectUnixStream(s, fd, a, nonblock)
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
	return k.connectTCP(s, fd, a, nonblock)
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
