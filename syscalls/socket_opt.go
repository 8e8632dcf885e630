package syscalls

import "maps"

// Socket options: setsockopt and getsockopt with Linux's answers. Options
// that change what the emulated network does (SO_REUSEADDR, SO_REUSEPORT,
// SO_PASSCRED, SO_SNDBUF, SO_RCVBUF, IPV6_V6ONLY) are honoured; the others
// are recorded and reported back, since loopback has no timing, loss or
// congestion for them to tune.

// Option names.
const (
	soDebug       = 1
	soReuseAddr   = 2
	soType        = 3
	soError       = 4
	soDontRoute   = 5
	soBroadcast   = 6
	soSndBuf      = 7
	soRcvBuf      = 8
	soKeepAlive   = 9
	soOOBInline   = 10
	soNoCheck     = 11
	soPriority    = 12
	soLinger      = 13
	soBSDCompat   = 14
	soReusePort   = 15
	soPassCred    = 16
	soPeerCred    = 17
	soRcvLowat    = 18
	soSndLowat    = 19
	soRcvTimeo    = 20
	soSndTimeo    = 21
	soBindToDev   = 25
	soTimestamp   = 29
	soAcceptConn  = 30
	soPassSec     = 34
	soTimestampNS = 35
	soSndBufForce = 32
	soRcvBufForce = 33
	soProtocol    = 38
	soDomain      = 39
	soRxqOvfl     = 40
	soPeekOff     = 42
	soBusyPoll    = 46
	soIncomingCPU = 49
	soZeroCopy    = 60
	soRcvTimeoNew = 66
	soSndTimeoNew = 67

	tcpNodelay     = 1
	tcpMaxseg      = 2
	tcpCork        = 3
	tcpKeepIdle    = 4
	tcpKeepIntvl   = 5
	tcpKeepCnt     = 6
	tcpSynCnt      = 7
	tcpLinger2     = 8
	tcpDeferAccept = 9
	tcpWindowClamp = 10
	tcpInfo        = 11
	tcpQuickAck    = 12
	tcpCongestion  = 13
	tcpUserTimeout = 18
	tcpFastOpen    = 23
	tcpNotSentLow  = 25

	ipTOS         = 1
	ipTTL         = 2
	ipRecvErr     = 11
	ipMTUDiscover = 10
	ipFreeBind    = 15
	ipBindNoPort  = 24
	ipRecvTOS     = 13
	ipPktInfo     = 8

	ipv6UnicastHops = 16
	ipv6MTUDiscover = 23
	ipv6RecvErr     = 25
	ipv6V6Only      = 26
	ipv6RecvPktInfo = 49
	ipv6TClass      = 67
)

func optKey(level, name int) uint64 { return uint64(uint32(level))<<32 | uint64(uint32(name)) }

// boolOpt reports whether an int option is set non-zero.
func (s *socket) boolOpt(level, name int) bool {
	v, set := s.opts[optKey(level, name)]
	return set && len(v) >= 4 && le.Uint32(v) != 0
}

func (s *socket) v6only() bool {
	return s.family == afInet6 && s.boolOpt(ipprotoIPv6, ipv6V6Only)
}

func cloneOpts(o map[uint64][]byte) map[uint64][]byte { return maps.Clone(o) }

// optKind is how an option's value is kept.
type optKind int

const (
	optNone optKind = iota // not an option of this socket (ENOPROTOOPT)
	optBool                // an int read back as 0 or 1
	optInt                 // an int read back as set
	optRaw                 // bytes of a fixed size
	optRO                  // read only: setting it is ENOPROTOOPT
)

// optSpec says how socket s takes option (level, name): its kind, its
// default and, for raw options, its size.
func (s *socket) optSpec(level, name int) (optKind, []byte) {
	i := func(v uint32) []byte {
		b := make([]byte, 4)
		le.PutUint32(b, v)
		return b
	}
	tcp := s.isInet() && s.stream()
	switch level {
	case solSocket:
		switch name {
		case soDebug, soReuseAddr, soDontRoute, soBroadcast, soKeepAlive, soOOBInline, soNoCheck,
			soReusePort, soPassCred, soTimestamp, soTimestampNS, soRxqOvfl, soZeroCopy, soPassSec:
			return optBool, i(0)
		case soPriority, soBusyPoll, soBSDCompat:
			return optInt, i(0)
		case soRcvLowat, soSndLowat:
			return optInt, i(1)
		case soIncomingCPU:
			return optInt, i(0)
		case soPeekOff:
			if s.family != afUnix {
				return optNone, nil
			}
			return optInt, i(0xffffffff)
		case soLinger:
			return optRaw, make([]byte, 8)
		case soRcvTimeo, soSndTimeo, soRcvTimeoNew, soSndTimeoNew:
			return optRaw, make([]byte, 16)
		case soType, soError, soAcceptConn, soProtocol, soDomain, soPeerCred, soSndBuf, soRcvBuf,
			soSndBufForce, soRcvBufForce, soBindToDev:
			return optRO, nil // computed
		}
	case ipprotoTCP:
		if !tcp {
			return optNone, nil
		}
		switch name {
		case tcpNodelay, tcpCork, tcpQuickAck:
			return optBool, i(map[int]uint32{tcpQuickAck: 1}[name])
		case tcpKeepIdle:
			return optInt, i(7200)
		case tcpKeepIntvl:
			return optInt, i(75)
		case tcpKeepCnt:
			return optInt, i(9)
		case tcpSynCnt:
			return optInt, i(6)
		case tcpLinger2:
			return optInt, i(60)
		case tcpDeferAccept, tcpWindowClamp, tcpUserTimeout, tcpFastOpen:
			return optInt, i(0)
		case tcpNotSentLow:
			return optInt, i(0xffffffff)
		case tcpMaxseg, tcpInfo, tcpCongestion:
			return optRO, nil
		}
	case ipprotoIP:
		if !s.isInet() {
			return optNone, nil
		}
		switch name {
		case ipTOS:
			return optInt, i(0)
		case ipTTL:
			return optInt, i(64)
		case ipRecvErr, ipFreeBind, ipBindNoPort, ipRecvTOS, ipPktInfo:
			return optBool, i(0)
		case ipMTUDiscover:
			return optInt, i(map[bool]uint32{true: 1, false: 0}[tcp]) // IP_PMTUDISC_WANT for TCP
		}
	case ipprotoIPv6:
		if s.family != afInet6 {
			return optNone, nil
		}
		switch name {
		case ipv6V6Only, ipv6RecvErr, ipv6RecvPktInfo:
			return optBool, i(0)
		case ipv6UnicastHops:
			return optInt, i(64)
		case ipv6MTUDiscover:
			return optInt, i(map[bool]uint32{true: 1, false: 0}[tcp])
		case ipv6TClass:
			return optInt, i(0)
		}
	}
	return optNone, nil
}

func sysSetsockopt(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	level, name, addr, n := int(int32(c.Args[1])), int(int32(c.Args[2])), c.Args[3], int(int32(c.Args[4]))
	if n < 0 {
		return fail(eINVAL)
	}
	if s.family == afNetlink {
		return ok(0) // NETLINK_ADD_MEMBERSHIP, SO_RCVBUF...: nothing to tune
	}
	switch {
	case level == solSocket && (name == soSndBuf || name == soRcvBuf || name == soSndBufForce || name == soRcvBufForce):
		v, e := k.intOpt(addr, n)
		if e != 0 {
			return fail(e)
		}
		if (name == soSndBufForce || name == soRcvBufForce) && k.uids.eff != 0 {
			return fail(ePERM)
		}
		v = min(max(v, 0), sockBufMax)
		if name == soSndBuf || name == soSndBufForce {
			s.sndbuf = max(2*v, 4608) // SOCK_MIN_SNDBUF
		} else {
			s.rcvbuf = max(2*v, 2304) // SOCK_MIN_RCVBUF
		}
		return ok(0)
	case level == solSocket && name == soBindToDev:
		b := make([]byte, min(n, 16))
		if e := k.copyIn(addr, b); e != 0 {
			return fail(e)
		}
		if dev := cString(b); dev != "" && dev != "lo" {
			return fail(eNODEV)
		}
		return ok(0)
	case level == ipprotoIPv6 && name == ipv6V6Only && s.bound:
		return fail(eINVAL)
	}
	kind, def := s.optSpec(level, name)
	switch kind {
	case optNone, optRO:
		return fail(eNOPROTOOPT)
	case optRaw:
		if n < len(def) {
			return fail(eINVAL)
		}
		b := make([]byte, len(def))
		if e := k.copyIn(addr, b); e != 0 {
			return fail(e)
		}
		s.setOpt(level, name, b)
		return ok(0)
	}
	v, e := k.intOpt(addr, n)
	if e != 0 {
		return fail(e)
	}
	if kind == optBool && v != 0 {
		v = 1
	}
	b := make([]byte, 4)
	le.PutUint32(b, uint32(v))
	s.setOpt(level, name, b)
	return ok(0)
}

func (s *socket) setOpt(level, name int, b []byte) {
	if s.opts == nil {
		s.opts = map[uint64][]byte{}
	}
	s.opts[optKey(level, name)] = b
}

// intOpt loads an int option value (a shorter one is EINVAL).
func (k *Kernel) intOpt(addr uint64, n int) (int, Errno) {
	if n < 4 {
		return 0, eINVAL
	}
	v, e := k.getU32(addr)
	return int(int32(v)), e
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func sysGetsockopt(k *Kernel, c *Call) Outcome {
	s, _, e := k.sockOf(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	level, name, addr, lenAddr := int(int32(c.Args[1])), int(int32(c.Args[2])), c.Args[3], c.Args[4]
	n32, e := k.getU32(lenAddr)
	if e != 0 {
		return fail(e)
	}
	n := int(int32(n32))
	if n < 0 {
		return fail(eINVAL)
	}
	v, e := k.optValue(s, level, name)
	if e != 0 {
		return fail(e)
	}
	m := min(n, len(v))
	if e := k.copyOut(addr, v[:m]); e != 0 {
		return fail(e)
	}
	return fail(k.putU32(lenAddr, uint32(m)))
}

// optValue is the value getsockopt reports.
func (k *Kernel) optValue(s *socket, level, name int) ([]byte, Errno) {
	i := func(v int) []byte {
		b := make([]byte, 4)
		le.PutUint32(b, uint32(v))
		return b
	}
	if s.family == afNetlink && level == solSocket {
		switch name {
		case soType:
			return i(s.typ), 0
		case soProtocol:
			return i(0), 0
		case soDomain:
			return i(afNetlink), 0
		case soSndBuf, soRcvBuf:
			return i(sockBufDefault), 0
		}
	}
	if level == solSocket {
		switch name {
		case soType:
			return i(s.typ), 0
		case soProtocol:
			return i(s.proto), 0
		case soDomain:
			return i(s.family), 0
		case soError:
			if s.syn != nil {
				s.retrySyn(k.now)
			}
			e := s.err
			s.err = 0
			if s.connecting && s.state == ssClosed {
				e = eCONNREFUSED
			}
			return i(int(e)), 0
		case soAcceptConn:
			return i(map[bool]int{true: 1}[s.state == ssListening]), 0
		case soSndBuf, soSndBufForce:
			return i(s.sndbuf), 0
		case soRcvBuf, soRcvBufForce:
			return i(s.rcvbuf), 0
		case soBindToDev:
			return nil, 0
		case soPeerCred:
			if s.family != afUnix {
				return nil, eNOPROTOOPT
			}
			cr := ucred{pid: 0, uid: 65534, gid: 65534} // no peer: the overflow ids
			if s.hasPeerCred {
				cr = s.peerCred
			}
			b := make([]byte, 12)
			le.PutUint32(b, cr.pid)
			le.PutUint32(b[4:], cr.uid)
			le.PutUint32(b[8:], cr.gid)
			return b, 0
		}
	}
	if level == ipprotoTCP && s.isInet() && s.stream() {
		switch name {
		case tcpMaxseg:
			if s.state == ssConnected {
				return i(65483), 0 // lo's MTU 65536 less the headers and timestamps
			}
			return i(536), 0
		case tcpCongestion:
			return []byte("cubic\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 0
		case tcpInfo:
			b := make([]byte, 104)
			b[0] = map[int]byte{ssConnected: 1, ssListening: 10}[s.state] // TCP_ESTABLISHED, TCP_LISTEN
			if b[0] == 0 {
				b[0] = 7 // TCP_CLOSE
			}
			return b, 0
		}
	}
	kind, def := s.optSpec(level, name)
	if kind == optNone || kind == optRO {
		return nil, eNOPROTOOPT
	}
	if v, set := s.opts[optKey(level, name)]; set {
		return v, 0
	}
	return def, 0
}

// ioctl requests of sockets.
const (
	siocOutq     = 0x5411 // TIOCOUTQ
	siocGIfName  = 0x8910
	siocGIfConf  = 0x8912
	siocGIfFlags = 0x8913
	siocGIfIndex = 0x8933
	siocGIfMTU   = 0x8921
)

// sockIoctl answers FIONREAD (SIOCINQ), SIOCOUTQ and the interface
// queries for lo; other requests ENOTTY, as on Linux.
func (k *Kernel) sockIoctl(s *socket, req uint32, arg uint64) Outcome {
	switch req {
	case fionRead:
		if s.state == ssListening {
			return fail(eINVAL)
		}
		n := 0
		for _, m := range s.rx[:s.readable()] {
			n += len(m.data) - m.off
			if !s.stream() {
				break // the next datagram's size
			}
		}
		return result(0, k.putU32(arg, uint32(n)))
	case siocOutq:
		if s.state == ssListening {
			return fail(eINVAL)
		}
		n := 0
		if p := s.peer; p != nil && p != s && s.connOriented() {
			n = p.rxBytes
		}
		return result(0, k.putU32(arg, uint32(n)))
	case siocGIfIndex, siocGIfFlags, siocGIfMTU, siocGIfName:
		var ifr [40]byte
		if e := k.copyIn(arg, ifr[:]); e != 0 {
			return fail(e)
		}
		if req == siocGIfName {
			if int32(le.Uint32(ifr[16:])) != loIndex {
				return fail(eNODEV)
			}
			copy(ifr[:16], "lo\x00")
			return fail(k.copyOut(arg, ifr[:]))
		}
		if cString(ifr[:16]) != "lo" {
			return fail(eNODEV)
		}
		switch req {
		case siocGIfIndex:
			le.PutUint32(ifr[16:], loIndex)
		case siocGIfFlags:
			le.PutUint16(ifr[16:], 0x49) // IFF_UP|IFF_LOOPBACK|IFF_RUNNING
		case siocGIfMTU:
			le.PutUint32(ifr[16:], 65536)
		}
		return fail(k.copyOut(arg, ifr[:]))
	}
	return fail(eNOTTY)
}
