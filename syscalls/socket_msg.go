// Message calls: sendmsg, recvmsg, sendmmsg and recvmmsg, with control
// messages (SCM_RIGHTS, SCM_CREDENTIALS).

package syscalls

import "math"

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
			if me := k.ucred(); k.uids.eff != 0 && cr != me {
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

// msgSocket is the socket behind fd and the msghdr at addr of a sendmsg or
// recvmsg.
func (k *Kernel) msgSocket(fd int, addr uint64) (*socket, *openFile, msghdr, Errno) {
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return nil, nil, msghdr{}, e
	}
	m, e := k.readMsghdr(addr)
	return s, f, m, e
}

func sysSendmsg(k *Kernel, c *Call) Outcome {
	return k.sendmsg(c, fdArg(c.Args[0]), c.Args[1], int(int32(c.Args[2])))
}

func (k *Kernel) sendmsg(c *Call, fd int, addr uint64, flags int) Outcome {
	s, f, m, e := k.msgSocket(fd, addr)
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
	s, f, m, e := k.msgSocket(fd, addr)
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
// The numbers of sendmmsg and recvmmsg, whose interrupted waits return the
// messages done (PartialResult).
const (
	nrSendmmsg = 307
	nrRecvmmsg = 299
)

func sysSendmmsg(k *Kernel, c *Call) Outcome {
	return k.mmsg(c, true)
}

func sysRecvmmsg(k *Kernel, c *Call) Outcome {
	return k.mmsg(c, false)
}

// mmsg is sendmmsg and recvmmsg, as Linux's __sys_sendmmsg and
// do_recvmmsg: one sendmsg or recvmsg per header, each header's msg_len
// set as it completes; a blocking socket waits for every message (the
// restart state keeps how many are done across the waits), MSG_WAITFORONE
// turns on MSG_DONTWAIT after the first. recvmmsg's timeout is checked
// only after each message, as Linux does (recvmmsg(2), BUGS: it does not
// bound a wait for one), and what is left of it is stored back when some
// messages were received.
func (k *Kernel) mmsg(c *Call, send bool) Outcome {
	fd := fdArg(c.Args[0])
	s, _, e := k.sockOf(fd)
	if e != 0 {
		return fail(e)
	}
	vlen := min(uint32(c.Args[2]), 1024) // UIO_MAXIOV
	flags := int(int32(c.Args[3]))
	t := k.thread(c.Tid)
	again := t.restart.of(c)
	timeoutAddr := c.Args[4]
	if send {
		timeoutAddr = 0
	}
	deadline := int64(restartNoTimeout)
	switch {
	case again:
		deadline = t.restart.deadline
	case timeoutAddr != 0:
		ts, e := k.getTimespec(timeoutAddr)
		if e != 0 {
			return fail(eFAULT)
		}
		if !validTimespec(ts) {
			return fail(eINVAL)
		}
		// Linux's end time of a zero timeout is in the past: one message.
		deadline = c.Now + min(ts.ns(), math.MaxInt64-c.Now)
	}
	var n uint32
	if again {
		n = t.restart.msgs
	} else if !send && s.err != 0 && int32(c.Args[3])&msgErrQueue == 0 {
		e, s.err = s.err, 0 // sock_error
		return fail(e)
	}
	for n < vlen {
		hdr := c.Args[1] + uint64(n)*mmsghdrSize
		f := flags &^ msgWaitForOne
		if n > 0 && flags&msgWaitForOne != 0 {
			f |= msgDontWait
		}
		var out Outcome
		if send {
			out = k.sendmsg(c, fd, hdr, f)
		} else {
			out = k.recvmsg(c, fd, hdr, f)
		}
		if out.Wait != nil {
			// The message in part (restart.done, set by a stream send) and
			// the ones before are kept for the re-execution.
			r := t.restart.keep(c)
			r.msgs, r.deadline = n, deadline
			return out
		}
		if int64(out.Ret) < 0 {
			if n > 0 {
				break
			}
			return out
		}
		if e := k.putU32(hdr+56, uint32(out.Ret)); e != 0 {
			if n > 0 {
				break
			}
			return fail(e)
		}
		n++
		t.restart.done = 0 // the next message starts from its first byte
		if deadline != restartNoTimeout && deadline <= c.Now {
			break
		}
	}
	if deadline != restartNoTimeout && n > 0 {
		if e := k.putTimespec(timeoutAddr, nsToTimespec(max(deadline-c.Now, 0))); e != 0 {
			return fail(e)
		}
	}
	return ok(uint64(n))
}
