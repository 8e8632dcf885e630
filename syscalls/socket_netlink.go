package syscalls

import "slices"

// A minimal NETLINK_ROUTE: the machine has one interface, lo, with
// 127.0.0.1/8 and ::1/128, which is what glibc's getaddrinfo
// (AI_ADDRCONFIG), if_nameindex and getifaddrs ask for. Dumps of links and
// addresses are answered; other dumps are empty, other requests fail with
// EOPNOTSUPP in an NLMSG_ERROR.

const (
	nlmsgError  = 2
	nlmsgDone   = 3
	rtmNewLink  = 16
	rtmGetLink  = 18
	rtmNewAddr  = 20
	rtmGetAddr  = 22
	nlmFRequest = 0x1
	nlmFMulti   = 0x2
	nlmFAck     = 0x4
	nlmFDump    = 0x300
	loIndex     = 1
)

// bindNetlink binds a netlink socket to a port id (0: the process id,
// then Linux's negative ids from -4096 down, in order).
func (k *Kernel) bindNetlink(s *socket, b []byte) Errno {
	if len(b) < 12 {
		return eINVAL
	}
	if le.Uint16(b) != afNetlink {
		return eINVAL
	}
	pid := le.Uint32(b[4:])
	if s.nl != 0 {
		if pid != 0 && pid != s.nl {
			return eINVAL
		}
		return 0
	}
	if pid == 0 {
		k.nlAutobind(s)
		return 0
	}
	if k.net.nlPorts[pid] {
		return eADDRINUSE
	}
	s.nl, k.net.nlPorts[pid] = pid, true
	s.local = s.unspecified()
	return 0
}

func (k *Kernel) nlAutobind(s *socket) {
	if s.nl != 0 {
		return
	}
	pid := uint32(k.cfg.Pid)
	for next := uint32(0xfffff000); k.net.nlPorts[pid]; next-- {
		pid = next
	}
	s.nl, k.net.nlPorts[pid] = pid, true
	s.local = s.unspecified()
}

// nlAttr appends a route attribute.
func nlAttr(b []byte, typ uint16, data []byte) []byte {
	n := 4 + len(data)
	var h [4]byte
	le.PutUint16(h[0:], uint16(n))
	le.PutUint16(h[2:], typ)
	b = append(append(b, h[:]...), data...)
	return append(b, make([]byte, (4-n%4)%4)...)
}

// nlMsg returns a netlink message of type typ with body.
func nlMsg(typ, flags uint16, seq, pid uint32, body []byte) []byte {
	b := make([]byte, 16, 16+len(body))
	le.PutUint32(b[0:], uint32(16+len(body)))
	le.PutUint16(b[4:], typ)
	le.PutUint16(b[6:], flags)
	le.PutUint32(b[8:], seq)
	le.PutUint32(b[12:], pid)
	return append(b, body...)
}

func u32b(v uint32) []byte { b := make([]byte, 4); le.PutUint32(b, v); return b }

// loLink is lo's RTM_NEWLINK body.
func loLink() []byte {
	b := make([]byte, 16)
	le.PutUint16(b[2:], 772) // ARPHRD_LOOPBACK
	le.PutUint32(b[4:], loIndex)
	le.PutUint32(b[8:], 0x10049)       // IFF_UP|IFF_LOOPBACK|IFF_RUNNING|IFF_LOWER_UP
	b = nlAttr(b, 3, []byte("lo\x00")) // IFLA_IFNAME
	b = nlAttr(b, 13, u32b(1000))      // IFLA_TXQLEN
	b = nlAttr(b, 16, []byte{0})       // IFLA_OPERSTATE: unknown
	b = nlAttr(b, 17, []byte{0})       // IFLA_LINKMODE
	b = nlAttr(b, 4, u32b(65536))      // IFLA_MTU
	b = nlAttr(b, 1, make([]byte, 6))  // IFLA_ADDRESS
	b = nlAttr(b, 2, make([]byte, 6))  // IFLA_BROADCAST
	return b
}

// loAddrs are lo's RTM_NEWADDR bodies for family (0: both).
func loAddrs(family byte) [][]byte {
	var out [][]byte
	cache := make([]byte, 16)
	le.PutUint32(cache[0:], 0xffffffff)
	le.PutUint32(cache[4:], 0xffffffff)
	if family == 0 || family == afInet {
		b := []byte{afInet, 8, 0x80, 254, loIndex, 0, 0, 0} // /8, IFA_F_PERMANENT, RT_SCOPE_HOST
		ip := []byte{127, 0, 0, 1}
		b = nlAttr(b, 1, ip) // IFA_ADDRESS
		b = nlAttr(b, 2, ip) // IFA_LOCAL
		b = nlAttr(b, 3, []byte("lo\x00"))
		b = nlAttr(b, 8, u32b(0x80)) // IFA_FLAGS
		b = nlAttr(b, 6, cache)      // IFA_CACHEINFO
		out = append(out, b)
	}
	if family == 0 || family == afInet6 {
		b := []byte{afInet6, 128, 0x80, 254, loIndex, 0, 0, 0}
		ip := make([]byte, 16)
		ip[15] = 1
		b = nlAttr(b, 1, ip)
		b = nlAttr(b, 6, cache)
		b = nlAttr(b, 8, u32b(0x80))
		out = append(out, b)
	}
	return out
}

// netlinkSend answers the requests in data, queueing the replies on s.
func (k *Kernel) netlinkSend(s *socket, data []byte) (int, Errno) {
	k.nlAutobind(s)
	var reply []byte
	for off := 0; off+16 <= len(data); {
		n := int(le.Uint32(data[off:]))
		if n < 16 || off+n > len(data) {
			break
		}
		typ, flags, seq := le.Uint16(data[off+4:]), le.Uint16(data[off+6:]), le.Uint32(data[off+8:])
		body := data[off+16 : off+n]
		req := data[off : off+n]
		off += (n + 3) &^ 3
		if flags&nlmFRequest == 0 {
			continue
		}
		dump := flags&nlmFDump == nlmFDump
		switch {
		case typ == rtmGetLink && dump:
			reply = append(reply, nlMsg(rtmNewLink, nlmFMulti, seq, s.nl, loLink())...)
		case typ == rtmGetAddr && dump:
			var fam byte
			if len(body) > 0 {
				fam = body[0]
			}
			for _, a := range loAddrs(fam) {
				reply = append(reply, nlMsg(rtmNewAddr, nlmFMulti, seq, s.nl, a)...)
			}
		case dump && typ >= 16 && typ < 128 && typ%4 == 2: // RTM_GET*: nothing more to list
		default:
			e := make([]byte, 4)
			code := -int32(eOPNOTSUPP)
			le.PutUint32(e, uint32(code))
			reply = append(reply, nlMsg(nlmsgError, 0, seq, s.nl, append(e, req[:16]...))...)
			continue
		}
		reply = append(reply, nlMsg(nlmsgDone, nlmFMulti, seq, s.nl, make([]byte, 4))...)
		if flags&nlmFAck != 0 && !dump {
			reply = append(reply, nlMsg(nlmsgError, 0, seq, s.nl, append(make([]byte, 4), req[:16]...))...)
		}
	}
	if len(reply) > 0 {
		k.enqueue(s, &sockMsg{data: slices.Clone(reply), from: sockAddr{family: afNetlink}}, nil, false)
	}
	return len(data), 0
}
