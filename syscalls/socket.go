package syscalls

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
)

// Sockets (socket*.go): AF_UNIX, AF_INET and AF_INET6 on loopback, and a
// minimal NETLINK_ROUTE that knows the one interface, lo. They live inside
// the run, between its processes: no host socket is ever opened. A socket is
// an open file whose receive queue holds what its peers sent; a full or
// empty queue makes the call fail with EAGAIN and ask to wait (PipeWait on
// the socket's inode), and every change wakes the socket's readers, writers
// and pollers, as a pipe's do, so a server and its clients run as
// deterministically as a shell pipeline.

// Address families, socket types and flags.
const (
	afUnspec  = 0
	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16

	sockStream    = 1
	sockDgram     = 2
	sockRaw       = 3
	sockSeqpacket = 5
	sockTypeMask  = 0xf

	ipprotoIP   = 0
	ipprotoTCP  = 6
	ipprotoUDP  = 17
	ipprotoIPv6 = 41

	// sockaddrMax is sizeof(struct sockaddr_storage).
	sockaddrMax = 128
	// unixPathMax is sizeof(sun_path).
	unixPathMax = 108

	// sockBufDefault is net.core.wmem_default and rmem_default.
	sockBufDefault = 212992
	// sockBufMax is net.core.wmem_max (setsockopt doubles up to twice it).
	sockBufMax = 212992
	// unixDgramQlen is net.unix.max_dgram_qlen: a datagram receiver with
	// more queued makes its senders wait.
	unixDgramQlen = 10
	// ephemeralLow and ephemeralHigh are net.ipv4.ip_local_port_range.
	ephemeralLow  = 32768
	ephemeralHigh = 60999
	// devSockFS is the device of socket inodes (0:8, sockfs).
	devSockFS = 8
	// pollRdHup is POLLRDHUP.
	pollRdHup = 0x2000
	// pollWrBand is POLLWRBAND.
	pollWrBand = 0x200
)

// Connection states.
const (
	ssUnconnected = iota
	ssListening
	ssConnected
	// ssClosed: a connection that ended (refused, reset, peer gone).
	ssClosed
)

// sockAddr is a socket address: a Unix name, or an IP address and port.
type sockAddr struct {
	family int
	// name is a Unix socket's sun_path as given: a file system path, or
	// an abstract name starting with NUL ("" and unnamed: no name).
	name string
	// key is what a bound Unix name is found by: the host path of a file
	// system name, the name itself for an abstract one.
	key  string
	ip   netip.Addr
	port uint16
	// pid is a netlink address's port id.
	pid uint32
}

// ucred is struct ucred.
type ucred struct{ pid, uid, gid uint32 }

// sockMsg is one send's worth of queued data, with what came with it.
type sockMsg struct {
	data   []byte
	off    int // bytes of a stream message already read
	from   sockAddr
	rights []*openFile
	cred   *ucred
	// at is the sender's virtual time: the message is readable from then
	// on. hidden says that a reader looked before then (it is woken when
	// the message becomes readable).
	at     int64
	hidden bool
}

// socket is an emulated socket.
type socket struct {
	net    *netStack
	ino    uint64
	family int
	typ    int
	proto  int
	state  int
	local  sockAddr
	bound  bool
	remote sockAddr
	// peer is the other end of a connection, or a datagram socket's
	// default destination.
	peer *socket
	// connecting says that a non-blocking TCP connect answered
	// EINPROGRESS: the next connect reports how it went.
	connecting bool
	// syn is a TCP connect whose SYN a full accept queue dropped: it is
	// sent again on Linux's schedule (socket_inet.go).
	syn *synRetry
	// hostLn is the host listener of a guest listener (--net host).
	hostLn   *hostListener
	backlog  int
	pending  []*socket // connections waiting for accept
	listener *socket   // the listener of a connection not yet accepted
	rx       []*sockMsg
	rxBytes  int
	// rcvShut and sndShut are Linux's RCV_SHUTDOWN and SEND_SHUTDOWN.
	rcvShut, sndShut bool
	// err is the pending error (SO_ERROR).
	err Errno
	// peerGone says that the peer of a connection closed; fin that a TCP
	// peer closed without a reset (reads then end before errors).
	peerGone, fin bool
	// nospace says that a send found the queue full (TCP wakes writers
	// only then).
	nospace bool
	// cred is the creator's (at listen and connect), peerCred the peer's
	// (SO_PEERCRED).
	cred, peerCred ucred
	hasPeerCred    bool
	opts           map[uint64][]byte // set options by level<<32|name
	sndbuf, rcvbuf int
	q              pollQueue
	closed         bool
	// nl is a netlink socket's port id.
	nl uint32
}

// netStack is the network of a run: the names and ports bound by its
// processes (Fork shares it).
type netStack struct {
	unix     map[string]*socket
	ports    map[portKey][]*socket
	nextPort uint16
	nextAuto int
	// nlPorts are the netlink port ids in use.
	nlPorts map[uint32]bool
	// now is the virtual time of the call in progress (Kernel.Do sets
	// it): what is readable depends on it.
	now int64
	// host bridges TCP to the host's network (--net host; nil: none).
	host *hostNet
}

type portKey struct {
	udp  bool
	port uint16
}

func newNetStack() *netStack {
	return &netStack{unix: map[string]*socket{}, ports: map[portKey][]*socket{}, nextPort: ephemeralLow, nlPorts: map[uint32]bool{}}
}

// isInet reports whether s is an AF_INET or AF_INET6 socket.
func (s *socket) isInet() bool { return s.family == afInet || s.family == afInet6 }

// connOriented: stream and seqpacket sockets.
func (s *socket) connOriented() bool { return s.typ == sockStream || s.typ == sockSeqpacket }

// stream: byte streams (no message boundaries).
func (s *socket) stream() bool { return s.typ == sockStream }

func (s *socket) seekable() bool { return false }

func (s *socket) stat(k *Kernel) (statInfo, Errno) {
	st := statInfo{dev: devSockFS, ino: s.ino, nlink: 1, mode: sIFSOCK | 0o777, blksize: 4096,
		uid: uint32(k.cfg.Uid), gid: uint32(k.cfg.Gid)}
	st.atime, st.mtime, st.ctime = k.cfg.EpochNanos, k.cfg.EpochNanos, k.cfg.EpochNanos
	return st, 0
}

func (s *socket) queue() *pollQueue { return &s.q }

// read and write are read(2) and write(2) without flags; the handlers
// route sockets to sockRecvCall and sockSendCall, which these back.
func (s *socket) read(k *Kernel, p []byte, _ int64) (int, Errno) {
	r, e := k.sockRecv(s, len(p), 0)
	copy(p, r.data)
	k.dropRights(r.rights)
	return len(r.data), e
}

func (s *socket) write(k *Kernel, p []byte, _ int64) (int, Errno) {
	return k.sockSend(s, p, 0, nil, nil)
}

// release is done by closed, which needs the kernel.
func (s *socket) release() error { return nil }

// capacity is how many bytes s may have in flight to a peer.
func (s *socket) capacity(to *socket) int {
	if s.isInet() && s.stream() {
		return s.sndbuf + to.rcvbuf
	}
	return s.sndbuf
}

// recvFull reports whether the datagram queue of s is full.
func (s *socket) recvFull() bool {
	if s.family == afUnix {
		return len(s.rx) > unixDgramQlen
	}
	return s.rxBytes >= s.rcvbuf
}

// writable is Linux's unix_writable / sk_stream_is_writeable /
// sock_writeable.
func (s *socket) writable() bool {
	if s.state == ssListening {
		return false
	}
	if s.connOriented() {
		if s.peer == nil {
			return true
		}
		if s.isInet() {
			return s.capacity(s.peer)-s.peer.rxBytes >= s.sndbuf/3
		}
		return s.peer.rxBytes*4 <= s.sndbuf
	}
	if p := s.peer; s.family == afUnix && p != nil && p.peer != s && p.recvFull() {
		return false
	}
	return true
}

// poll is Linux's unix_poll, unix_dgram_poll, tcp_poll and datagram_poll.
func (s *socket) poll(events uint16) uint16 {
	if s.state == ssListening {
		if len(s.pending) > 0 {
			return events & (pollIn | pollRdNm)
		}
		return 0
	}
	if s.syn != nil {
		return 0 // TCP_SYN_SENT: tcp_poll reports nothing yet
	}
	var r uint16
	if s.err != 0 {
		r |= pollErr
	}
	if s.rcvShut && s.sndShut {
		r |= pollHup
	}
	if s.rcvShut {
		r |= pollRdHup | pollIn | pollRdNm
	}
	if s.readable() > 0 {
		r |= pollIn | pollRdNm
	}
	if s.connOriented() && (s.state == ssUnconnected || s.state == ssClosed) {
		r |= pollHup // TCP_CLOSE
	}
	tcp := s.isInet() && s.stream()
	switch {
	case tcp && s.sndShut:
		r |= pollOut | pollWrNm
	case tcp:
		if s.writable() {
			r |= pollOut | pollWrNm
		}
	case s.writable():
		r |= pollOut | pollWrNm | pollWrBand
	}
	return r & (events | pollErr | pollHup)
}

// readable is how many messages of the queue have arrived by now: those
// sent at or before the reader's virtual time, in queue order.
func (s *socket) readable() int {
	for i, m := range s.rx {
		if m.at > s.net.now {
			m.hidden = true // whoever looked is woken when it arrives (update)
			return i
		}
	}
	return len(s.rx)
}

// update is what a poller does at virtual time now: wake the watchers of
// messages that were looked at before they arrived and have now, and
// return when the next one arrives (timerNoDeadline: none).
func (s *socket) update(now int64) int64 {
	if s.syn != nil {
		if next := s.retrySyn(now); next != timerNoDeadline {
			return next
		}
	}
	wake, next := false, int64(timerNoDeadline)
	for _, m := range s.rx {
		if m.at > now {
			m.hidden, next = true, m.at
			break
		}
		if m.hidden {
			m.hidden, wake = false, true
		}
	}
	if wake {
		s.q.wake(pollIn | pollRdNm)
	}
	return next
}

// sockEvent tells the waiters on s that it changed with poll events key
// (0: any).
func (k *Kernel) sockEvent(s *socket, key uint32) {
	if s == nil {
		return
	}
	s.q.wake(key)
	k.readyEvent(s.ino)
}

// close is the last close of s: a connection's peer sees end of file (and
// a reset when data was left unread), unaccepted connections are reset,
// the name or port is freed and descriptors in flight are dropped.
func (s *socket) close(k *Kernel) {
	s.closed = true
	s.closeHost()
	s.unbind()
	for _, c := range s.pending {
		c.listener = nil
		c.closed = true
		if p := c.peer; p != nil {
			p.err, p.rcvShut, p.sndShut, p.state = eCONNRESET, true, true, ssClosed
			p.peer = nil
			k.sockEvent(p, 0)
		}
		k.dropQueue(c)
	}
	s.pending = nil
	if p := s.peer; p != nil && s.connOriented() && p.peer == s {
		unread := len(s.rx) > 0
		p.peer, p.peerGone = nil, true
		switch {
		case s.isInet() && unread: // RST
			p.err, p.rcvShut, p.sndShut, p.state = eCONNRESET, true, true, ssClosed
		case s.isInet(): // FIN
			p.rcvShut, p.fin = true, true
		default:
			p.rcvShut, p.sndShut = true, true
			if unread {
				p.err = eCONNRESET
			}
		}
		k.sockEvent(p, 0)
	}
	s.peer = nil
	k.dropQueue(s)
}

// dropQueue empties s's receive queue, closing the descriptors in flight.
func (k *Kernel) dropQueue(s *socket) {
	for _, m := range s.rx {
		k.dropRights(m.rights)
	}
	s.rx, s.rxBytes = nil, 0
}

// dropRights drops in-flight references to open files.
func (k *Kernel) dropRights(fs []*openFile) {
	for _, f := range fs {
		_ = k.unref(f)
	}
}

// unbind frees the name or port of s.
func (s *socket) unbind() {
	n := s.net
	if !s.bound || n == nil {
		return
	}
	switch {
	case s.family == afUnix:
		if n.unix[s.local.key] == s {
			delete(n.unix, s.local.key)
		}
	case s.isInet():
		key := portKey{udp: s.typ == sockDgram, port: s.local.port}
		n.ports[key] = slices.DeleteFunc(n.ports[key], func(x *socket) bool { return x == s })
		if len(n.ports[key]) == 0 {
			delete(n.ports, key)
		}
	}
}

// ---------------------------------------------------------------------
// Addresses

// loopback4 and loopback6 are 127.0.0.1 and ::1.
var (
	loopback4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	loopback6 = netip.IPv6Loopback()
)

// local reports whether ip is an address of this machine (lo's, or a
// wildcard).
func localIP(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsUnspecified()
}

// encodeAddr returns the sockaddr of a.
func encodeAddr(a sockAddr) []byte {
	switch a.family {
	case afUnix:
		b := make([]byte, 2, 2+len(a.name)+1)
		le.PutUint16(b, afUnix)
		b = append(b, a.name...)
		if a.name != "" && a.name[0] != 0 {
			b = append(b, 0) // Linux counts the NUL of a path name
		}
		return b
	case afInet:
		b := make([]byte, 16)
		le.PutUint16(b, afInet)
		binary.BigEndian.PutUint16(b[2:], a.port)
		ip := a.ip.Unmap().As4()
		copy(b[4:], ip[:])
		return b
	case afInet6:
		b := make([]byte, 28)
		le.PutUint16(b, afInet6)
		binary.BigEndian.PutUint16(b[2:], a.port)
		ip := a.ip.As16()
		copy(b[8:], ip[:])
		return b
	case afNetlink:
		b := make([]byte, 12)
		le.PutUint16(b, afNetlink)
		le.PutUint32(b[4:], a.pid)
		return b
	}
	return []byte{0, 0}
}

// unspecified is the address of a socket that has none yet.
func (s *socket) unspecified() sockAddr {
	switch s.family {
	case afInet:
		return sockAddr{family: afInet, ip: netip.IPv4Unspecified()}
	case afInet6:
		return sockAddr{family: afInet6, ip: netip.IPv6Unspecified()}
	case afNetlink:
		return sockAddr{family: afNetlink, pid: s.nl}
	}
	return sockAddr{family: s.family}
}

// readSockaddr loads a sockaddr argument (Linux's move_addr_to_kernel).
func (k *Kernel) readSockaddr(addr, n uint64) ([]byte, Errno) {
	if int32(n) < 0 || n > sockaddrMax {
		return nil, eINVAL
	}
	b := make([]byte, n)
	if n == 0 {
		return b, 0
	}
	if e := k.copyIn(addr, b); e != 0 {
		return nil, e
	}
	return b, 0
}

// writeSockaddr stores a into the buffer at addr whose length is at
// lenAddr, truncating, and stores the full length (move_addr_to_user).
func (k *Kernel) writeSockaddr(a sockAddr, addr, lenAddr uint64) Errno {
	if addr == 0 || lenAddr == 0 {
		return 0
	}
	return k.writeSockaddrArg(a, addr, lenAddr)
}

// parseInet decodes an AF_INET or AF_INET6 sockaddr for socket s. A v6
// socket takes v4-mapped addresses; AF_UNSPEC is returned as family 0.
func (s *socket) parseInet(b []byte) (sockAddr, Errno) {
	if len(b) < 2 {
		return sockAddr{}, eINVAL
	}
	fam := int(le.Uint16(b))
	if fam == afUnspec {
		return sockAddr{}, 0
	}
	switch s.family {
	case afInet:
		if len(b) < 16 {
			return sockAddr{}, eINVAL
		}
		if fam != afInet {
			return sockAddr{}, eAFNOSUPPORT
		}
		return sockAddr{family: afInet, port: binary.BigEndian.Uint16(b[2:]), ip: netip.AddrFrom4([4]byte(b[4:8]))}, 0
	default:
		if len(b) < 24 {
			return sockAddr{}, eINVAL
		}
		if fam != afInet6 {
			return sockAddr{}, eAFNOSUPPORT
		}
		return sockAddr{family: afInet6, port: binary.BigEndian.Uint16(b[2:]), ip: netip.AddrFrom16([16]byte(b[8:24]))}, 0
	}
}

// parseUnix decodes a sockaddr_un (unix_validate_addr, unix_mkname): a
// path name ends at its first NUL; an abstract name is all the bytes.
func (k *Kernel) parseUnix(b []byte) (sockAddr, Errno) {
	if len(b) <= 2 || len(b) > 2+unixPathMax || le.Uint16(b) != afUnix {
		return sockAddr{}, eINVAL
	}
	p := b[2:]
	if p[0] == 0 {
		return sockAddr{family: afUnix, name: string(p), key: string(p)}, 0
	}
	if i := slices.Index(p, 0); i >= 0 {
		p = p[:i]
	}
	return sockAddr{family: afUnix, name: string(p)}, 0
}

// String shows an address the way messages name it.
func (a sockAddr) String() string {
	switch a.family {
	case afUnix:
		if a.name != "" && a.name[0] == 0 {
			return "@" + a.name[1:]
		}
		return a.name
	case afInet, afInet6:
		return netip.AddrPortFrom(a.ip, a.port).String()
	}
	return fmt.Sprintf("family %d", a.family)
}
