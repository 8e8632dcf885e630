// AF_UNIX sockets: binding to a path or the abstract namespace, connecting,
// and sending datagrams to a named peer.

package syscalls

import (
	"fmt"
	"os"
	"path"
	"slices"
)

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

// connectUnixStream connects s to the listener named a; a full accept
// queue (unix_recvq_full: more than the backlog waiting) is EAGAIN, or a
// wait for an accept when s blocks.
func (k *Kernel) connectUnixStream(s *socket, fd int, a sockAddr, nonblock bool) Outcome {
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
		if nonblock {
			return fail(eAGAIN)
		}
		return Outcome{Ret: eAGAIN.Ret(), Wait: &ReadyWait{Object: t.ino, What: fmt.Sprintf("connect socket:[%d] (fd %d)", s.ino, fd)}}
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
