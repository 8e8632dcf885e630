package syscalls

import (
	"fmt"
	"os"

	"emuprof/mm"
	"emuprof/trace"
)

// Reading and writing: read, write, pread64, pwrite64, readv, writev,
// preadv, pwritev, preadv2, pwritev2, sendfile, copy_file_range.
//
// Data the kernel stores into guest memory is reported as KernelWrite over
// exactly the bytes stored, and data it consumes as KernelRead over exactly
// the bytes written to the file (a short write reports only its prefix).

// fileRead reads into p from f at pos, or at (and advancing) the file
// position when pos is -1.
func (k *Kernel) fileRead(f *openFile, p []byte, pos int64) (int, Errno) {
	if !f.readable() {
		return 0, eBADF
	}
	if _, isDir := f.ops.(dirOps); isDir {
		return 0, eISDIR
	}
	n, e := k.fileReadAt(f, p, pos)
	if n > 0 {
		k.fileEvent(f, inAccess)
	}
	return n, e
}

func (k *Kernel) fileReadAt(f *openFile, p []byte, pos int64) (int, Errno) {
	if pos >= 0 {
		if !f.ops.seekable() {
			return 0, eSPIPE
		}
		return f.ops.read(k, p, pos)
	}
	if !f.ops.seekable() {
		return f.ops.read(k, p, 0)
	}
	off := f.pos()
	n, e := f.ops.read(k, p, off)
	f.setPos(off + int64(n))
	return n, e
}

// fileWrite writes p to f at pos, or at (and advancing) the file position
// when pos is -1. With O_APPEND every write goes to the end, as on Linux.
func (k *Kernel) fileWrite(f *openFile, p []byte, pos int64) (int, Errno) {
	if !f.writable() {
		return 0, eBADF
	}
	if _, isDir := f.ops.(dirOps); isDir {
		return 0, eISDIR
	}
	if pos >= 0 && !f.ops.seekable() {
		return 0, eSPIPE
	}
	if !f.ops.seekable() {
		return f.ops.write(k, p, 0)
	}
	off := pos
	if f.flags&oAPPEND != 0 {
		st, e := f.ops.stat(k)
		if e != 0 {
			return 0, e
		}
		off = st.size
	} else if pos < 0 {
		off = f.pos()
	}
	if _, isHost := f.ops.(*hostFile); isHost && len(p) > 0 {
		// RLIMIT_FSIZE (generic_write_check_limits): a write stops at the
		// limit; one that starts there fails, with SIGXFSZ.
		if lim := k.rlimits[rlimitFSize].cur; lim != rlimInfinity {
			if uint64(off) >= lim {
				k.sigxfsz = true
				return 0, eFBIG
			}
			p = p[:min(uint64(len(p)), lim-uint64(off))]
		}
		// The file system's limit (s_maxbytes).
		if off >= maxFileBytes {
			return 0, eFBIG
		}
		p = p[:min(int64(len(p)), maxFileBytes-off)]
	}
	n, e := f.ops.write(k, p, off)
	if pos < 0 {
		f.setPos(off + int64(n))
	}
	if n > 0 {
		k.fileEvent(f, inModify)
	}
	return n, e
}

// partial is the result of a transfer that stopped on error e after moving
// done bytes: Linux reports the bytes moved, and the error only if none were.
func partial(done uint64, e Errno) (uint64, Errno) {
	if done > 0 {
		return done, 0
	}
	return 0, e
}

// offsetAfter is the file offset done bytes into a transfer at pos (-1: the
// file position, which the transfer itself advances).
func offsetAfter(pos int64, done uint64) int64 {
	if pos < 0 {
		return pos
	}
	return pos + int64(done)
}

// recordOps is implemented by files that move one fixed-size record per
// read or write (eventfd, timerfd): a shorter count fails with EINVAL, and
// the record is consumed even when storing it faults.
type recordOps interface {
	recordSize() int
}

// readToGuest reads up to count bytes of f into guest memory at addr. As
// on Linux, a buffer outside the user address space fails at once; a
// buffer that stops being writable part way gets the bytes that fit (the
// read is shortened to them), and one that is not writable at all fails
// with EFAULT when there is something to store.
func (k *Kernel) readToGuest(f *openFile, addr, count uint64, pos int64) (uint64, Errno) {
	if !f.readable() {
		return 0, eBADF
	}
	if !accessOK(addr, count) {
		return 0, eFAULT
	}
	count = min(count, maxRWCount)
	if count == 0 {
		_, e := k.fileRead(f, nil, pos)
		return 0, e
	}
	if _, isRecord := f.ops.(recordOps); !isRecord {
		fit := k.accessible(addr, count, true)
		if fit == 0 {
			return k.faultingRead(f, pos)
		}
		count = fit
	}
	var done uint64
	for done < count {
		buf := k.scratch(int(min(count-done, maxChunk)))
		p := offsetAfter(pos, done)
		n, e := k.fileRead(f, buf, p)
		if e == 0 && n > 0 {
			e = k.copyOut(addr+done, buf[:n])
		}
		if e != 0 {
			return partial(done, e)
		}
		done += uint64(n)
		if n < len(buf) || !fills(f.ops) {
			break
		}
	}
	return done, 0
}

// faultingRead is a read into memory the kernel may not store into: it
// fails as the read would (EISDIR, a pipe to wait for...), returns 0 when
// there is nothing to store (end of file, /dev/null, a pipe without
// writers), and otherwise fails with EFAULT, consuming nothing.
func (k *Kernel) faultingRead(f *openFile, pos int64) (uint64, Errno) {
	if _, e := k.fileRead(f, nil, pos); e != 0 {
		return 0, e
	}
	switch o := f.ops.(type) {
	case *pipeEnd:
		switch {
		case o.p.buffered() > 0:
		case o.p.writers == 0:
			return 0, 0
		default:
			return 0, eAGAIN
		}
	case *stream:
		if o.r == nil {
			return 0, 0
		}
		if !o.tty {
			if b, _ := o.input().Peek(1); len(b) == 0 {
				return 0, 0
			}
		}
	case *device:
		if o.kind == devNull {
			return 0, 0
		}
	case *hostFile, *memFile:
		st, e := f.ops.stat(k)
		if e != 0 {
			return 0, e
		}
		if pos < 0 {
			pos = f.pos()
		}
		if mf, isMem := f.ops.(*memFile); isMem {
			st.size = int64(len(mf.data))
		}
		if pos >= st.size {
			return 0, 0
		}
	}
	return 0, eFAULT
}

// fills reports whether a read of f returns all that was asked for, up to
// the end of the file: files, and the streams that are not terminals (see
// stream). Pipes and terminals return what they hold.
func fills(ops fileOps) bool {
	if s, isStream := ops.(*stream); isStream {
		return s.fills()
	}
	return ops.seekable()
}

// writeFromGuest writes up to count bytes of guest memory at addr to f.
// As on Linux, a buffer outside the user address space fails at once, the
// devices that discard data (/dev/null, /dev/zero) never read it, and a
// buffer that stops being readable part way writes the bytes before.
func (k *Kernel) writeFromGuest(f *openFile, addr, count uint64, pos int64) (uint64, Errno) {
	if !f.writable() {
		return 0, eBADF
	}
	if !accessOK(addr, count) {
		return 0, eFAULT
	}
	count = min(count, maxRWCount)
	if count == 0 {
		_, e := k.fileWrite(f, nil, pos)
		return 0, e
	}
	if d, isDev := f.ops.(*device); isDev {
		switch d.kind {
		case devFull:
			return 0, eNOSPC
		case devNull, devZero:
			return count, 0
		}
	}
	if r, isRecord := f.ops.(recordOps); isRecord {
		buf := k.scratch(int(min(count, uint64(r.recordSize()))))
		if len(buf) == r.recordSize() {
			if e := k.readRaw(addr, buf); e != 0 {
				return 0, e
			}
		}
		n, e := k.fileWrite(f, buf, pos)
		k.emit(trace.KindKernelRead, addr, uint64(n))
		return uint64(n), e
	}
	fit := k.accessible(addr, count, false)
	if fit < count && isPipe(f) {
		// pipe_write copies a page of the buffer at a time and keeps
		// only whole pages: the fault drops the page it is in (EFAULT
		// when that is the first). As Linux for an empty pipe, and for
		// every write of less than a page (a non-empty pipe may take the
		// count's odd bytes first, into its last page).
		fit &^= mm.PageSize - 1
	}
	if fit == 0 {
		return 0, k.unreadableWrite(f, pos)
	}
	count = fit
	var done uint64
	for done < count {
		buf := k.scratch(int(min(count-done, maxChunk)))
		if e := k.readRaw(addr+done, buf); e != 0 {
			return partial(done, e)
		}
		p := offsetAfter(pos, done)
		n, e := k.fileWrite(f, buf, p)
		k.emit(trace.KindKernelRead, addr+done, uint64(n))
		done += uint64(n)
		if e != 0 {
			return partial(done, e)
		}
		if n < len(buf) {
			break
		}
	}
	return done, 0
}

// isPipe says whether f is a pipe to the guest: a pipe's end, a FIFO, or a
// standard stream that is not a terminal (fstat shows it as a pipe).
func isPipe(f *openFile) bool {
	switch o := f.ops.(type) {
	case *pipeEnd:
		return true
	case *stream:
		return !o.tty
	}
	return false
}

// pipeWait annotates a failed read or write on a blocking pipe, eventfd or
// timerfd.
func pipeWait(out Outcome, f *openFile, fd int, write bool) Outcome {
	if out.Ret == eAGAIN.Ret() && f.flags&oNONBLOCK == 0 {
		switch o := f.ops.(type) {
		case *pipeEnd:
			out.Wait = &PipeWait{Fd: fd, Write: write, Pipe: o.p.ino}
		case *eventFD:
			out.Wait = &PipeWait{Fd: fd, Write: write, Pipe: o.ino}
		case *timerFD:
			out.Wait = &ReadyWait{Object: o.ino, Until: o.deadline(), What: fmt.Sprintf("read timerfd %d", fd)}
		case *inotifyFD:
			out.Wait = &PipeWait{Fd: fd, Pipe: o.ino}
		}
	}
	return out
}

func sysRead(k *Kernel, c *Call) Outcome {
	if out, isSock := k.sockRW(c); isSock {
		return out
	}
	fd := fdArg(c.Args[0])
	f, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	return pipeWait(result(k.readToGuest(f, c.Args[1], c.Args[2], -1)), f, fd, false)
}

func sysWrite(k *Kernel, c *Call) Outcome {
	if out, isSock := k.sockRW(c); isSock {
		return out
	}
	fd := fdArg(c.Args[0])
	f, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	return k.sigpipe(c, pipeWait(result(k.writeFromGuest(f, c.Args[1], c.Args[2], -1)), f, fd, true))
}

// posArg validates an explicit file offset.
func posArg(a uint64) (int64, Errno) {
	if int64(a) < 0 {
		return 0, eINVAL
	}
	return int64(a), 0
}

func sysPread64(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	pos, e := posArg(c.Args[3])
	if e != 0 {
		return fail(e)
	}
	return result(k.readToGuest(f, c.Args[1], c.Args[2], pos))
}

func sysPwrite64(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	pos, e := posArg(c.Args[3])
	if e != 0 {
		return fail(e)
	}
	return result(k.writeFromGuest(f, c.Args[1], c.Args[2], pos))
}

// vectorTarget checks that fd is open for reading (or writing) and loads
// its iovec array: the common start of readv and writev.
func (k *Kernel) vectorTarget(fd int, iovAddr, cnt uint64, write bool) (*openFile, []iovec, Errno) {
	f, e := k.file(fd)
	if e != 0 {
		return nil, nil, e
	}
	if write && !f.writable() || !write && !f.readable() {
		return nil, nil, eBADF
	}
	iov, e := k.readIovecs(iovAddr, cnt)
	if e != 0 {
		return nil, nil, e
	}
	return f, iov, 0
}

// readv reads into the buffers of an iovec array. Files (and streams that
// fill reads) fill the buffers one after the other; pipes and terminals are
// read once and the data scattered.
func (k *Kernel) readv(fd int, iovAddr, cnt uint64, pos int64) Outcome {
	f, iov, e := k.vectorTarget(fd, iovAddr, cnt, false)
	if e != 0 {
		return fail(e)
	}
	var total uint64
	for _, v := range iov {
		total += v.len
	}
	if total == 0 {
		return result(k.readToGuest(f, 0, 0, pos))
	}
	var done uint64
	if fills(f.ops) {
		for _, v := range iov {
			n, e := k.readToGuest(f, v.base, v.len, offsetAfter(pos, done))
			if e != 0 {
				if done > 0 {
					break
				}
				return fail(e)
			}
			done += n
			if n < v.len {
				break
			}
		}
		return ok(done)
	}
	buf := k.scratch(int(min(total, maxChunk)))
	n, e := k.fileRead(f, buf, pos)
	if e != 0 {
		return pipeWait(fail(e), f, fd, false)
	}
	for _, v := range iov {
		if done == uint64(n) {
			break
		}
		m := min(v.len, uint64(n)-done)
		if e := k.copyOut(v.base, buf[done:done+m]); e != 0 {
			if done > 0 {
				break
			}
			return fail(e)
		}
		done += m
	}
	return ok(done)
}

// writev writes the buffers of an iovec array in order, stopping at a
// short write.
func (k *Kernel) writev(fd int, iovAddr, cnt uint64, pos int64) Outcome {
	f, iov, e := k.vectorTarget(fd, iovAddr, cnt, true)
	if e != 0 {
		return fail(e)
	}
	var total, done uint64
	for _, v := range iov {
		total += v.len
	}
	if total == 0 {
		return result(k.writeFromGuest(f, 0, 0, pos))
	}
	if isPipe(f) {
		// pipe_write fills a page at a time from the buffers in turn and
		// drops the page a fault stops (bytes of earlier buffers in it
		// too): whole pages of the readable prefix go, as writeFromGuest
		// does for one buffer.
		var fit uint64
		for _, v := range iov {
			n := k.accessible(v.base, v.len, false)
			fit += n
			if n < v.len {
				break
			}
		}
		if fit < total {
			fit &^= mm.PageSize - 1
			if fit == 0 {
				return pipeWait(fail(k.unreadableWrite(f, pos)), f, fd, true)
			}
			iov = clampIovecs(iov, fit)
		}
	}
	for _, v := range iov {
		if v.len == 0 {
			continue
		}
		p := offsetAfter(pos, done)
		n, e := k.writeFromGuest(f, v.base, v.len, p)
		if e != 0 {
			if done > 0 {
				break
			}
			return pipeWait(fail(e), f, fd, true)
		}
		done += n
		if n < v.len {
			break
		}
	}
	return ok(done)
}

func sysReadv(k *Kernel, c *Call) Outcome {
	if out, isSock := k.sockRW(c); isSock {
		return out
	}
	return k.readv(fdArg(c.Args[0]), c.Args[1], c.Args[2], -1)
}

func sysWritev(k *Kernel, c *Call) Outcome {
	if out, isSock := k.sockRW(c); isSock {
		return out
	}
	return k.sigpipe(c, k.writev(fdArg(c.Args[0]), c.Args[1], c.Args[2], -1))
}

func sysPreadv(k *Kernel, c *Call) Outcome {
	pos, e := posArg(c.Args[3])
	if e != 0 {
		return fail(e)
	}
	return k.readv(fdArg(c.Args[0]), c.Args[1], c.Args[2], pos)
}

func sysPwritev(k *Kernel, c *Call) Outcome {
	pos, e := posArg(c.Args[3])
	if e != 0 {
		return fail(e)
	}
	return k.writev(fdArg(c.Args[0]), c.Args[1], c.Args[2], pos)
}

// preadv2/pwritev2 flags. RWF_HIPRI, RWF_DSYNC and RWF_SYNC ask for
// polling or durability, which the guest cannot observe.
const (
	rwfNowait    = 0x8
	rwfAppend    = 0x10
	rwfSupported = 0x1f // RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND
)

// noWait drops the wait of a pipe transfer made with RWF_NOWAIT: it fails
// with EAGAIN instead of blocking.
func noWait(out Outcome, flags uint64) Outcome {
	if flags&rwfNowait != 0 {
		out.Wait = nil
	}
	return out
}

func sysPreadv2(k *Kernel, c *Call) Outcome {
	if c.Args[5]&^rwfSupported != 0 {
		return fail(eOPNOTSUPP)
	}
	pos := int64(c.Args[3])
	if pos < -1 {
		return fail(eINVAL)
	}
	return noWait(k.readv(fdArg(c.Args[0]), c.Args[1], c.Args[2], pos), c.Args[5])
}

func sysPwritev2(k *Kernel, c *Call) Outcome {
	flags := c.Args[5]
	if flags&^rwfSupported != 0 {
		return fail(eOPNOTSUPP)
	}
	pos := int64(c.Args[3])
	if pos < -1 {
		return fail(eINVAL)
	}
	fd := fdArg(c.Args[0])
	if f, e := k.file(fd); e == 0 && flags&rwfAppend != 0 && f.flags&oAPPEND == 0 {
		// RWF_APPEND is O_APPEND for this write: at the end of the file,
		// the position advanced only when pos is -1.
		f.flags |= oAPPEND
		defer func() { f.flags &^= oAPPEND }()
	}
	return k.sigpipe(c, noWait(k.writev(fd, c.Args[1], c.Args[2], pos), flags))
}

// copyFile moves up to count bytes from in to out inside the kernel.
// inPos and outPos are explicit offsets, or -1 for the file positions.
func (k *Kernel) copyFile(in *openFile, inPos int64, out *openFile, outPos int64, count uint64) (uint64, Errno) {
	count = min(count, maxRWCount)
	var done uint64
	for done < count {
		buf := make([]byte, min(count-done, maxChunk))
		ip := offsetAfter(inPos, done)
		n, e := k.fileRead(in, buf, ip)
		if e != 0 || n == 0 {
			return partial(done, e)
		}
		op := offsetAfter(outPos, done)
		w, e := k.fileWrite(out, buf[:n], op)
		if w < n && inPos < 0 {
			in.setPos(in.pos() - int64(n-w)) // give back what was not written
		}
		done += uint64(w)
		if e != 0 {
			return partial(done, e)
		}
		if w < len(buf) {
			break
		}
	}
	return done, 0
}

// offsetArg reads an optional loff_t* argument (-1 when null).
func (k *Kernel) offsetArg(addr uint64) (int64, Errno) {
	if addr == 0 {
		return -1, 0
	}
	v, e := k.getU64(addr)
	if e != 0 {
		return 0, e
	}
	if int64(v) < 0 {
		return 0, eINVAL
	}
	return int64(v), 0
}

func sysSendfile(k *Kernel, c *Call) Outcome {
	out, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	in, e := k.file(fdArg(c.Args[1]))
	if e != 0 {
		return fail(e)
	}
	if !in.readable() || !out.writable() {
		return fail(eBADF)
	}
	if !in.ops.seekable() {
		return fail(eINVAL)
	}
	pos, e := k.offsetArg(c.Args[2])
	if e != 0 {
		return fail(e)
	}
	n, e := k.copyFile(in, pos, out, -1, c.Args[3])
	if s, isSock := out.ops.(*socket); isSock && e == eAGAIN {
		return k.sockWait(fail(e), out, fdArg(c.Args[0]), s, true, 0) // a full socket: wait for room
	}
	if e != 0 {
		return k.sigpipe(c, fail(e))
	}
	if pos >= 0 {
		if e := k.putU64(c.Args[2], uint64(pos)+n); e != 0 {
			return fail(e)
		}
	}
	return ok(n)
}

// copyRangeOverlaps refuses a copy within one file whose source and
// destination overlap (generic_copy_file_checks: EINVAL).
func (k *Kernel) copyRangeOverlaps(in *openFile, inPos int64, out *openFile, outPos int64, count uint64) Errno {
	hi, _ := in.ops.(hostOps)
	ho, _ := out.ops.(hostOps)
	fi, _ := hi.hostFile()
	fo, _ := ho.hostFile()
	si, err1 := fi.Stat()
	so, err2 := fo.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(si, so) {
		return 0
	}
	if inPos < 0 {
		inPos = in.off
	}
	if outPos < 0 {
		outPos = out.off
	}
	// What is past the end of the source is not copied (nor overlaps).
	n := min(int64(min(count, maxRWCount)), si.Size()-inPos)
	if outPos+n > inPos && outPos < inPos+n {
		return eINVAL
	}
	return 0
}

func sysCopyFileRange(k *Kernel, c *Call) Outcome {
	if c.Args[5] != 0 {
		return fail(eINVAL)
	}
	in, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	out, e := k.file(fdArg(c.Args[2]))
	if e != 0 {
		return fail(e)
	}
	// generic_file_rw_checks: directories first, then the modes.
	_, inDir := in.ops.(*hostDir)
	_, outDir := out.ops.(*hostDir)
	if inDir || outDir {
		return fail(eISDIR)
	}
	if !in.readable() || !out.writable() || out.flags&oAPPEND != 0 {
		return fail(eBADF)
	}
	_, inHost := in.ops.(hostOps)
	_, outHost := out.ops.(hostOps)
	if !inHost || !outHost {
		return fail(eINVAL)
	}
	inPos, e := k.offsetArg(c.Args[1])
	if e == eINVAL {
		e = eOVERFLOW // a negative offset (generic_copy_file_checks)
	}
	if e != 0 {
		return fail(e)
	}
	outPos, e := k.offsetArg(c.Args[3])
	if e == eINVAL {
		e = eOVERFLOW
	}
	if e != 0 {
		return fail(e)
	}
	if e := k.copyRangeOverlaps(in, inPos, out, outPos, c.Args[4]); e != 0 {
		return fail(e)
	}
	n, e := k.copyFile(in, inPos, out, outPos, c.Args[4])
	if e != 0 {
		return fail(e)
	}
	if inPos >= 0 {
		if e := k.putU64(c.Args[1], uint64(inPos)+n); e != 0 {
			return fail(e)
		}
	}
	if outPos >= 0 {
		if e := k.putU64(c.Args[3], uint64(outPos)+n); e != 0 {
			return fail(e)
		}
	}
	return ok(n)
}

// clampIovecs returns the buffers of iov cut to their first n bytes.
func clampIovecs(iov []iovec, n uint64) []iovec {
	var out []iovec
	for _, v := range iov {
		if n == 0 {
			break
		}
		v.len = min(v.len, n)
		n -= v.len
		out = append(out, v)
	}
	return out
}

// unreadableWrite is the error of a write none of whose bytes can be
// taken from the guest: the one it would fail with anyway (EPIPE, a full
// pipe to wait for), else EFAULT.
func (k *Kernel) unreadableWrite(f *openFile, pos int64) Errno {
	if _, e := k.fileWrite(f, nil, pos); e != 0 {
		return e
	}
	if pe, isPipe := f.ops.(*pipeEnd); isPipe && pe.p.buffered() >= pe.p.capacity() {
		return eAGAIN
	}
	return eFAULT
}
