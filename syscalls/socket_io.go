// The calls that move data through a socket: read, write, readv, writev,
// sendto and recvfrom, with blocking and the guest's iovecs.

package syscalls

import (
	"fmt"

	"emuprof/trace"
)

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
	if t.restart.of(c) {
		return t.restart.done
	}
	return 0
}

// waitWithProgress asks to wait, remembering done.
func (k *Kernel) waitWithProgress(c *Call, fd int, s *socket, write bool, done uint64) Outcome {
	k.thread(c.Tid).restart.keep(c).done = done // sendmmsg's msgs and deadline stay
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

// bufSocket is the socket behind the fd of a sendto or recvfrom and the
// iovec of its one buffer.
func (k *Kernel) bufSocket(c *Call) (int, *socket, *openFile, []iovec, Errno) {
	fd := fdArg(c.Args[0])
	s, f, e := k.sockOf(fd)
	if e != 0 {
		return fd, nil, nil, nil, e
	}
	if !accessOK(c.Args[1], c.Args[2]) {
		return fd, nil, nil, nil, eFAULT
	}
	return fd, s, f, []iovec{{c.Args[1], min(c.Args[2], maxRWCount)}}, 0
}

func sysSendto(k *Kernel, c *Call) Outcome {
	fd, s, f, iov, e := k.bufSocket(c)
	if e != 0 {
		return fail(e)
	}
	var to []byte
	if c.Args[4] != 0 {
		if to, e = k.readSockaddr(c.Args[4], c.Args[5]); e != 0 {
			return fail(e)
		}
	}
	return k.sendIov(c, fd, s, f, iov, int(int32(c.Args[3])), to, nil)
}

func sysRecvfrom(k *Kernel, c *Call) Outcome {
	fd, s, f, iov, e := k.bufSocket(c)
	if e != 0 {
		return fail(e)
	}
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
