package syscalls

// splice, tee and vmsplice (fs/splice.c) between the in-kernel pipes and
// any file: data moves inside the kernel (no guest memory is touched,
// except by vmsplice, which is writev or readv on a pipe). A pipe that is
// empty or full blocks the call as read and write block (PipeWait),
// unless SPLICE_F_NONBLOCK or the pipe's O_NONBLOCK says not to.

const (
	spliceNonblock = 2
	spliceFlags    = 0xf // MOVE, NONBLOCK, MORE, GIFT
)

// pipeOf returns the pipe f is an end of (nil: not a pipe).
func pipeOf(f *openFile) *pipeEnd {
	pe, _ := f.ops.(*pipeEnd)
	return pe
}

// spliceWait is the outcome of a splice that must wait for pipe p.
func spliceWait(nonblock bool, fd int, write bool, p *pipe) Outcome {
	out := fail(eAGAIN)
	if !nonblock {
		out.Wait = &PipeWait{Fd: fd, Write: write, Pipe: p.ino}
	}
	return out
}

// spliceEnds loads and checks the descriptors of splice and tee: EBADF
// unless in reads and out writes.
func (k *Kernel) spliceEnds(inFd, outFd int) (in, out *openFile, e Errno) {
	if in, e = k.file(inFd); e != 0 {
		return nil, nil, e
	}
	if out, e = k.file(outFd); e != 0 {
		return nil, nil, e
	}
	if !in.readable() || !out.writable() {
		return nil, nil, eBADF
	}
	return in, out, 0
}

func sysSplice(k *Kernel, c *Call) Outcome {
	inFd, offIn, outFd, offOut := fdArg(c.Args[0]), c.Args[1], fdArg(c.Args[2]), c.Args[3]
	count, flags := min(c.Args[4], maxRWCount), c.Args[5]
	in, out, e := k.spliceEnds(inFd, outFd)
	if e != 0 {
		return fail(e)
	}
	ip, op := pipeOf(in), pipeOf(out)
	switch {
	case flags&^spliceFlags != 0:
		return fail(eINVAL)
	case ip == nil && op == nil:
		return fail(eINVAL)
	case ip != nil && offIn != 0, op != nil && offOut != 0:
		return fail(eSPIPE)
	case ip != nil && op != nil && ip.p == op.p:
		return fail(eINVAL)
	case op == nil && out.flags&oAPPEND != 0:
		return fail(eINVAL)
	}
	nonblock := flags&spliceNonblock != 0 || ip != nil && in.flags&oNONBLOCK != 0 || op != nil && out.flags&oNONBLOCK != 0
	inPos, e := k.offsetArg(offIn)
	if e != 0 {
		return fail(e)
	}
	outPos, e := k.offsetArg(offOut)
	if e != 0 {
		return fail(e)
	}
	if count == 0 {
		return ok(0)
	}
	if ip != nil && ip.p.buffered() == 0 {
		if ip.p.writers == 0 {
			return ok(0)
		}
		return spliceWait(nonblock, inFd, false, ip.p)
	}
	if op != nil {
		if op.p.readers == 0 {
			return k.sigpipe(c, fail(ePIPE))
		}
		space := op.p.capacity() - op.p.buffered()
		if space == 0 {
			return spliceWait(nonblock, outFd, true, op.p)
		}
		count = min(count, uint64(space))
	}
	var n int
	switch {
	case ip != nil && op != nil:
		buf := make([]byte, min(count, uint64(ip.p.buffered())))
		n, _ = ip.read(k, buf, 0)
		n, e = op.write(k, buf[:n], 0)
	case ip != nil:
		// The pipe's bytes leave it only as far as the file took them.
		buf := append([]byte(nil), ip.p.data[ip.p.start:ip.p.start+int(min(count, uint64(ip.p.buffered())))]...)
		n, e = k.fileWrite(out, buf, outPos)
		if n > 0 {
			_, _ = ip.read(k, make([]byte, n), 0)
		}
	default:
		buf := make([]byte, count)
		if n, e = k.fileRead(in, buf, inPos); n > 0 {
			_, _ = op.write(k, buf[:n], 0)
		}
	}
	if e != 0 && n == 0 {
		return k.sigpipe(c, fail(e))
	}
	for _, o := range [2]struct {
		addr uint64
		pos  int64
	}{{offIn, inPos}, {offOut, outPos}} {
		if o.addr != 0 {
			if e := k.putU64(o.addr, uint64(o.pos+int64(n))); e != 0 {
				return fail(e)
			}
		}
	}
	return ok(uint64(n))
}

// sysTee copies bytes from one pipe to another without taking them.
func sysTee(k *Kernel, c *Call) Outcome {
	inFd, outFd, count, flags := fdArg(c.Args[0]), fdArg(c.Args[1]), min(c.Args[2], maxRWCount), c.Args[3]
	in, out, e := k.spliceEnds(inFd, outFd)
	if e != 0 {
		return fail(e)
	}
	ip, op := pipeOf(in), pipeOf(out)
	if flags&^spliceFlags != 0 || ip == nil || op == nil || ip.p == op.p {
		return fail(eINVAL)
	}
	if count == 0 {
		return ok(0)
	}
	nonblock := flags&spliceNonblock != 0 || (in.flags|out.flags)&oNONBLOCK != 0
	if ip.p.buffered() == 0 {
		if ip.p.writers == 0 {
			return ok(0)
		}
		return spliceWait(nonblock, inFd, false, ip.p)
	}
	if op.p.readers == 0 {
		return k.sigpipe(c, fail(ePIPE))
	}
	space := op.p.capacity() - op.p.buffered()
	if space == 0 {
		return spliceWait(nonblock, outFd, true, op.p)
	}
	n := int(min(count, uint64(space), uint64(ip.p.buffered())))
	w, e := op.write(k, append([]byte(nil), ip.p.data[ip.p.start:ip.p.start+n]...), 0)
	if e != 0 {
		return fail(e)
	}
	return ok(uint64(w))
}

// sysVmsplice is writev to a pipe's write end, readv from its read end.
func sysVmsplice(k *Kernel, c *Call) Outcome {
	fd, flags := fdArg(c.Args[0]), c.Args[3]
	f, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	pe := pipeOf(f)
	if pe == nil {
		return fail(eBADF)
	}
	if flags&^spliceFlags != 0 {
		return fail(eINVAL)
	}
	var out Outcome
	if f.writable() {
		out = k.sigpipe(c, k.writev(fd, c.Args[1], c.Args[2], -1))
	} else {
		out = k.readv(fd, c.Args[1], c.Args[2], -1)
	}
	if flags&spliceNonblock != 0 {
		out.Wait = nil
	}
	return out
}
