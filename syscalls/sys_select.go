package syscalls

// select and pselect6 over the readiness poll uses (sys_file.go): a
// descriptor is readable when poll would report POLLIN, POLLHUP or POLLERR,
// writable on POLLOUT or POLLERR, exceptional on POLLPRI, as in Linux's
// do_select. Like poll, it never waits: when nothing is ready it returns 0
// with a PollWait for the scheduler. pselect6's signal mask replaces the
// thread's while it waits (make -j waits for SIGCHLD that way). A call
// that waits and times out returns 0 with the sets as they were given.

const fdSetWords = 1024 / 64 // FD_SETSIZE bits

func sysSelect(k *Kernel, c *Call) Outcome {
	timeout := int64(-1)
	if c.Args[4] != 0 {
		var b [16]byte
		if e := k.copyIn(c.Args[4], b[:]); e != 0 {
			return fail(e)
		}
		sec, usec := int64(le.Uint64(b[:])), int64(le.Uint64(b[8:]))
		if sec < 0 || usec < 0 || usec >= 1e6 {
			return fail(eINVAL)
		}
		timeout = sec*1e9 + usec*1e3
	}
	out := k.selectFDs(c.Args[0], [3]uint64{c.Args[1], c.Args[2], c.Args[3]}, timeout)
	if c.Args[4] != 0 && out.Ret == 0 && out.Wait == nil {
		// The time left: none once the timeout passed.
		if e := k.copyOut(c.Args[4], make([]byte, 16)); e != 0 {
			return fail(e)
		}
	}
	return out
}

// timeoutArg reads the optional struct timespec timeout of pselect6 and
// ppoll at addr: -1 (wait forever) when addr is 0, EINVAL when it is not a
// valid time.
func (k *Kernel) timeoutArg(addr uint64) (int64, Errno) {
	if addr == 0 {
		return -1, 0
	}
	ts, e := k.getTimespec(addr)
	if e != 0 {
		return 0, e
	}
	if ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1e9 {
		return 0, eINVAL
	}
	return ts.ns(), 0
}

func sysPselect6(k *Kernel, c *Call) Outcome {
	timeout, e := k.timeoutArg(c.Args[4])
	if e != 0 {
		return fail(e)
	}
	var maskAddr uint64
	if c.Args[5] != 0 {
		var b [16]byte
		if e := k.copyIn(c.Args[5], b[:]); e != 0 {
			return fail(e)
		}
		addr, size := le.Uint64(b[:]), le.Uint64(b[8:])
		if e := k.epollSigmask(addr, size); e != 0 {
			return fail(e)
		}
		maskAddr = addr
	}
	return k.maskedWait(c, maskAddr, k.selectFDs(c.Args[0], [3]uint64{c.Args[1], c.Args[2], c.Args[3]}, timeout))
}

// selectFDs checks the descriptors of the three sets (read, write, except;
// 0: none) below nfds and rewrites the sets with the ready ones.
func (k *Kernel) selectFDs(nfdsArg uint64, sets [3]uint64, timeout int64) Outcome {
	nfds := int(int32(nfdsArg))
	if nfds < 0 {
		return fail(eINVAL)
	}
	if max := k.maxFDs(); nfds > max {
		nfds = max
	}
	nbytes := (nfds + 63) / 64 * 8
	var in, out [3][]byte
	for i, addr := range sets {
		if addr == 0 || nbytes == 0 {
			continue
		}
		in[i] = make([]byte, nbytes)
		if e := k.copyIn(addr, in[i]); e != 0 {
			return fail(e)
		}
		out[i] = make([]byte, nbytes)
	}
	isSet := func(b []byte, fd int) bool { return b != nil && b[fd/8]&(1<<(fd%8)) != 0 }
	wants := [3]uint16{pollIn | pollHup | pollErr, pollOut | pollErr, pollPri}
	n := 0
	for fd := 0; fd < nfds; fd++ {
		if !isSet(in[0], fd) && !isSet(in[1], fd) && !isSet(in[2], fd) {
			continue
		}
		f, e := k.file(fd)
		if e != 0 {
			return fail(eBADF)
		}
		if s, isSock := f.ops.(*socket); isSock {
			if at := s.update(k.now); at > k.now && (timeout < 0 || at-k.now < timeout) {
				timeout = at - k.now // what was sent later in virtual time arrives then
			}
		}
		rev := uint16(pollIn | pollOut) // files without poll are always ready
		if p, canPoll := f.ops.(pollOps); canPoll {
			rev = p.poll(pollIn | pollOut | pollPri | pollErr | pollHup)
		}
		for i := range 3 {
			if isSet(in[i], fd) && rev&wants[i] != 0 {
				out[i][fd/8] |= 1 << (fd % 8)
				n++
			}
		}
	}
	if n == 0 && timeout != 0 {
		// The call will be made again when something changes: keep the
		// sets. (At the timeout it returns 0 with the sets unchanged.)
		res := ok(0)
		res.Wait = &PollWait{Timeout: timeout}
		return res
	}
	for i, addr := range sets {
		if out[i] != nil {
			if e := k.copyOut(addr, out[i]); e != 0 {
				return fail(e)
			}
		}
	}
	return ok(uint64(n))
}
