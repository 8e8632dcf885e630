// Socket queues: sending into a peer's queue and receiving from one's own,
// for every family.

package syscalls

import "slices"

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
