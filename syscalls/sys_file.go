package syscalls

import (
	"errors"
	"fmt"
	"os"
	"path"
)

// Opening, closing and controlling file descriptors: open, openat, creat,
// close, close_range, dup, dup2, dup3, fcntl, ioctl, pipe, pipe2, lseek,
// poll, ppoll.

// descFlags are the open flags an open file description keeps.
const descFlags = oAccMode | oAPPEND | oNONBLOCK | oDSYNC | oASYNC | oDIRECT | oNOATIME | oSYNC |
	oPATH | oDIRECTORY | oNOFOLLOW

func sysOpen(k *Kernel, c *Call) Outcome {
	return k.openAt(atFDCWD, c.Args[0], uint32(c.Args[1]), uint32(c.Args[2]))
}

func sysOpenat(k *Kernel, c *Call) Outcome {
	return k.openAt(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), uint32(c.Args[3]))
}

func sysCreat(k *Kernel, c *Call) Outcome {
	return k.openAt(atFDCWD, c.Args[0], oCREAT|oWRONLY|oTRUNC, uint32(c.Args[1]))
}

func (k *Kernel) openAt(dirfd int, pathAddr uint64, flags, mode uint32) Outcome {
	// build_open_flags: O_TMPFILE needs O_DIRECTORY, no O_CREAT, and write
	// access; checked before the path is read.
	if flags&oTMPFILE != 0 && (flags&(oTMPFILE|oDIRECTORY|oCREAT) != oTMPFILE|oDIRECTORY ||
		flags&oAccMode != oWRONLY && flags&oAccMode != oRDWR) {
		return fail(eINVAL)
	}
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return fail(e)
	}
	if flags&oTMPFILE != 0 {
		return k.openTmpfile(dirfd, p, flags, mode)
	}
	follow := flags&oNOFOLLOW == 0 && flags&(oCREAT|oEXCL) != oCREAT|oEXCL
	l, e := k.lookup(dirfd, p, follow)
	if e != 0 {
		return fail(e)
	}
	existed := l.exists()
	f, e := k.openLoc(l, flags, mode)
	if e == errFIFOWait {
		return k.fifoWaitOutcome()
	}
	if e != 0 {
		return fail(e)
	}
	fd, e := k.install(f, 0, flags&oCLOEXEC != 0)
	if e != 0 {
		_ = f.ops.release()
		return fail(e)
	}
	if k.watched() {
		if !existed {
			k.fileEvent(f, inCreate)
		}
		k.fileEvent(f, inOpen)
		if existed && flags&oTRUNC != 0 && f.writable() {
			k.fileEvent(f, inModify)
		}
	}
	return ok(uint64(fd))
}

// hostOpenFlags converts the access mode to package os flags.
func hostOpenFlags(flags uint32) int {
	switch flags & oAccMode {
	case oWRONLY:
		return os.O_WRONLY
	case oRDWR, oAccMode: // 3: both permissions are checked
		return os.O_RDWR
	}
	return os.O_RDONLY
}

// openLoc opens the file at l.
func (k *Kernel) openLoc(l loc, flags, mode uint32) (*openFile, Errno) {
	acc := flags & oAccMode
	keep := flags&descFlags | oLARGEFILE
	if flags&oPATH != 0 {
		keep = flags&(oPATH|oDIRECTORY|oNOFOLLOW) | oLARGEFILE
	}
	if l.syn != nil {
		return k.openSynth(l, flags, keep)
	}
	if !l.exists() {
		if flags&oCREAT == 0 {
			return nil, eNOENT
		}
		if flags&oDIRECTORY != 0 {
			return nil, eINVAL
		}
		if e := k.ovCreate(l); e != 0 {
			return nil, e
		}
		hf, err := os.OpenFile(l.host, hostOpenFlags(flags)|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, hostErrno(err)
		}
		// Set the mode exactly: the host's umask must not apply, the guest's does.
		_ = hf.Chmod(goMode(mode & 0o7777 &^ k.umask))
		k.ovCreated(l, false, false)
		k.stampFile(hf, l.host, stampA|stampM|stampC)
		k.touch(k.hostPath(path.Dir(l.guest)))
		return newOpenFile(&hostFile{f: hf, host: l.host}, keep, l.guest), 0
	}
	if l.isSymlink() {
		switch {
		case flags&oPATH != 0:
			return newOpenFile(&pathFile{l: l}, keep, l.guest), 0
		case flags&(oCREAT|oEXCL) == oCREAT|oEXCL:
			return nil, eEXIST
		}
		return nil, eLOOP
	}
	if flags&(oCREAT|oEXCL) == oCREAT|oEXCL {
		return nil, eEXIST
	}
	if flags&oPATH != 0 {
		if l.isDir() {
			return newOpenFile(&hostDir{l: l}, keep, l.guest), 0
		}
		if flags&oDIRECTORY != 0 {
			return nil, eNOTDIR
		}
		return newOpenFile(&pathFile{l: l}, keep, l.guest), 0
	}
	if flags&oNOATIME != 0 && k.uids.fs != 0 && k.hostStat(l.fi, l.host).uid != uint32(k.uids.fs) {
		return nil, ePERM // only the owner may (may_open)
	}
	if l.isDir() {
		if acc != oRDONLY || flags&oCREAT != 0 {
			return nil, eISDIR
		}
		if _, err := os.ReadDir(l.host); err != nil {
			return nil, hostErrno(err)
		}
		return newOpenFile(&hostDir{l: l}, keep, l.guest), 0
	}
	if flags&oDIRECTORY != 0 {
		return nil, eNOTDIR
	}
	if l.fi.Mode()&os.ModeNamedPipe != 0 {
		return k.openFIFO(l, flags, keep)
	}
	if !l.fi.Mode().IsRegular() {
		// Host sockets and devices outside the emulated /dev are not
		// opened: they would make the run depend on the host.
		return nil, eNXIO
	}
	if acc != oRDONLY || flags&oTRUNC != 0 {
		switch {
		case k.textBusy.busy(l.fi):
			return nil, eTXTBSY // a running program or interpreter
		case k.outsideRoot(l.host):
			return nil, eROFS
		}
	}
	if acc != oRDONLY {
		// Written: in an overlay, the upper copy is (its data is not
		// copied when it is truncated now).
		var e Errno
		if l, e = k.ovWrite(l, flags&oTRUNC == 0); e != 0 {
			return nil, e
		}
	}
	hflags := hostOpenFlags(flags)
	if flags&oTRUNC != 0 && acc != oRDONLY {
		hflags |= os.O_TRUNC
	}
	hf, err := os.OpenFile(l.host, hflags, 0)
	if err != nil {
		return nil, hostErrno(err)
	}
	if hflags&os.O_TRUNC != 0 {
		k.touch(l.host)
		k.fileResized(l.fi, l.fi.Size(), 0)
	}
	return newOpenFile(&hostFile{f: hf, host: l.host}, keep, l.guest), 0
}

// openSynth opens a file of the emulated trees.
func (k *Kernel) openSynth(l loc, flags, keep uint32) (*openFile, Errno) {
	n := l.syn
	acc := flags & oAccMode
	if flags&(oCREAT|oEXCL) == oCREAT|oEXCL {
		return nil, eEXIST
	}
	if flags&oPATH != 0 {
		if n.kind == synDir {
			return newOpenFile(&synthDir{n: n}, keep, l.guest), 0
		}
		if flags&oDIRECTORY != 0 {
			return nil, eNOTDIR
		}
		return newOpenFile(&pathFile{l: l}, keep, l.guest), 0
	}
	if flags&oDIRECTORY != 0 && n.kind != synDir {
		return nil, eNOTDIR
	}
	switch n.kind {
	case synFD:
		if h, isHost := n.fd.ops.(*hostFile); isHost && h.keep {
			return k.reopenStd(n.fd, flags, keep)
		}
		// Reopening a pathless file through /proc/self/fd shares its open
		// file description.
		n.fd.refs++
		return n.fd, 0
	case synDir:
		if acc != oRDONLY {
			return nil, eISDIR
		}
		return newOpenFile(&synthDir{n: n}, keep, l.guest), 0
	case synFile:
		if acc != oRDONLY {
			return nil, eACCES
		}
		return newOpenFile(&memFile{n: n, data: n.data(k)}, keep, l.guest), 0
	case synDev:
		d := &device{kind: n.dev, n: n}
		if n.dev == devTTY {
			if !k.cfg.StdinTTY && !k.cfg.StdoutTTY && !k.cfg.StderrTTY {
				return nil, eNXIO
			}
			d.tty = &stream{r: k.cfg.Stdin, w: k.cfg.Stdout, tty: true, ino: 4}
		}
		return newOpenFile(d, keep, l.guest), 0
	}
	return nil, eLOOP
}

func sysClose(k *Kernel, c *Call) Outcome {
	fd := fdArg(c.Args[0])
	if _, e := k.file(fd); e != 0 {
		return fail(e)
	}
	if err := k.closeFD(fd); err != nil {
		return fail(hostErrno(err))
	}
	return ok(0)
}

func sysCloseRange(k *Kernel, c *Call) Outcome {
	first, last, flags := uint32(c.Args[0]), uint32(c.Args[1]), c.Args[2]
	if flags&^(closeRangeUnshare|closeRangeCloexec) != 0 || first > last {
		return fail(eINVAL)
	}
	for fd := int(first); fd < len(k.fds) && uint32(fd) <= last; fd++ {
		if k.fds[fd].f == nil {
			continue
		}
		if flags&closeRangeCloexec != 0 {
			k.fds[fd].cloexec = true
		} else {
			_ = k.closeFD(fd)
		}
	}
	return ok(0)
}

func sysDup(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	return k.dupTo(f, 0, false)
}

// dupTo installs another reference to f at the lowest free fd >= min.
func (k *Kernel) dupTo(f *openFile, min int, cloexec bool) Outcome {
	f.refs++
	fd, e := k.install(f, min, cloexec)
	if e != 0 {
		f.refs--
		return fail(e)
	}
	return ok(uint64(fd))
}

func sysDup2(k *Kernel, c *Call) Outcome {
	oldfd, newfd := fdArg(c.Args[0]), fdArg(c.Args[1])
	f, e := k.file(oldfd)
	if e != 0 {
		return fail(e)
	}
	if oldfd == newfd {
		return ok(uint64(newfd))
	}
	return k.dup3(f, newfd, false)
}

func sysDup3(k *Kernel, c *Call) Outcome {
	oldfd, newfd, flags := fdArg(c.Args[0]), fdArg(c.Args[1]), uint32(c.Args[2])
	if flags&^oCLOEXEC != 0 {
		return fail(eINVAL)
	}
	f, e := k.file(oldfd)
	if e != 0 {
		return fail(e)
	}
	if oldfd == newfd {
		return fail(eINVAL)
	}
	return k.dup3(f, newfd, flags&oCLOEXEC != 0)
}

func (k *Kernel) dup3(f *openFile, newfd int, cloexec bool) Outcome {
	if newfd < 0 || newfd >= k.maxFDs() {
		return fail(eBADF)
	}
	f.refs++
	k.installAt(newfd, f, cloexec)
	return ok(uint64(newfd))
}

func sysFcntl(k *Kernel, c *Call) Outcome {
	fd, cmd, arg := fdArg(c.Args[0]), int(int32(c.Args[1])), c.Args[2]
	f, e := k.file(fd)
	if e != 0 {
		return fail(e)
	}
	switch cmd {
	case fDupFD, fDupFDCloexec:
		if int64(arg) < 0 || arg >= uint64(k.maxFDs()) {
			return fail(eINVAL)
		}
		return k.dupTo(f, int(arg), cmd == fDupFDCloexec)
	case fGetFD:
		if k.fds[fd].cloexec {
			return ok(fdCloexec)
		}
		return ok(0)
	case fSetFD:
		k.fds[fd].cloexec = arg&fdCloexec != 0
		return ok(0)
	case fGetFL:
		return ok(uint64(f.flags))
	case fSetFL:
		if f.flags&oPATH != 0 {
			return fail(eBADF)
		}
		nf := uint32(arg) & oSetFLMask
		if _, isPipe := f.ops.(*pipeEnd); isPipe && nf&oDIRECT != 0 {
			return fail(eINVAL) // packet mode is not emulated
		}
		if nf&oNOATIME != 0 && f.flags&oNOATIME == 0 {
			if e := k.mayNoAtime(f); e != 0 {
				return fail(e)
			}
		}
		f.flags = f.flags&^oSetFLMask | nf
		return ok(0)
	case fGetLK, fOFDGetLK, fSetLK, fSetLKW, fOFDSetLK, fOFDSetLKW:
		return k.recordLock(f, cmd, arg)
	case fGetOwn:
		return ok(uint64(int64(f.owner)))
	case fSetOwn:
		// The owner is recorded; SIGIO and SIGURG are never sent (no
		// asynchronous signals).
		who := int32(arg)
		if id := max(who, -who); id != 0 && int(id) != k.cfg.Pid && (who < 0 || k.threads[int(id)] == nil) {
			return fail(eSRCH)
		}
		f.owner = who
		return ok(0)
	case fGetPipeSize, fSetPipeSize:
		pe, isPipe := f.ops.(*pipeEnd)
		if !isPipe {
			return fail(eBADF)
		}
		if cmd == fSetPipeSize {
			return k.setPipeSize(pe.p, arg)
		}
		return ok(uint64(pe.p.capacity()))
	case fGetLease:
		return ok(fUnlck)
	case fAddSeals, fGetSeals:
		return fcntlSeals(f, cmd, arg)
	}
	return fail(eINVAL)
}

// pipeMaxSize is /proc/sys/fs/pipe-max-size: the largest F_SETPIPE_SZ
// without CAP_SYS_RESOURCE.
const pipeMaxSize = 1 << 20

// setPipeSize is F_SETPIPE_SZ: Linux's rounding (round_pipe_size) and checks
// (pipe_set_size).
func (k *Kernel) setPipeSize(p *pipe, arg uint64) Outcome {
	size := uint64(uint32(arg))
	switch {
	case size > 1<<31:
		return fail(eINVAL)
	case size < 4096:
		size = 4096
	default:
		for size&(size-1) != 0 {
			size += size & -size // up to a power of two
		}
	}
	if size > pipeMaxSize && k.uids.eff != 0 {
		return fail(ePERM)
	}
	if p.buffered() > int(size) {
		return fail(eBUSY)
	}
	p.size = int(size)
	k.pipeEvent(p) // writers may fit now
	return ok(size)
}

// mayNoAtime is Linux's check for O_NOATIME: only the owner, or root.
func (k *Kernel) mayNoAtime(f *openFile) Errno {
	st, e := f.ops.stat(k)
	if e != 0 {
		return e
	}
	if k.uids.fs != 0 && st.uid != uint32(k.uids.fs) {
		return ePERM
	}
	return 0
}

// Terminal settings reported by TCGETS: a cooked 38400-baud 8-bit line.
func termios() []byte {
	b := make([]byte, 36)
	le.PutUint32(b[0:], 0x500)   // c_iflag: ICRNL | IXON
	le.PutUint32(b[4:], 0x5)     // c_oflag: OPOST | ONLCR
	le.PutUint32(b[8:], 0xbf)    // c_cflag: B38400 | CS8 | CREAD
	le.PutUint32(b[12:], 0x8a3b) // c_lflag: ISIG ICANON ECHO ECHOE ECHOK ECHOCTL ECHOKE IEXTEN
	cc := []byte{3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 0, 18, 15, 23, 22}
	copy(b[17:], cc) // c_line at 16, c_cc from 17
	return b
}

// Window size reported by TIOCGWINSZ.
const (
	ttyRows = 24
	ttyCols = 80
)

func sysIoctl(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	req, arg := uint32(c.Args[1]), c.Args[2]
	switch req {
	case fioClex, fionClex:
		k.fds[fdArg(c.Args[0])].cloexec = req == fioClex
		return ok(0)
	case fionBIO, fioASYNC:
		v, e := k.getU32(arg)
		if e != 0 {
			return fail(e)
		}
		flag := uint32(oNONBLOCK)
		if req == fioASYNC {
			flag = oASYNC // as fcntl's F_SETFL: recorded, SIGIO never sent
		}
		if v != 0 {
			f.flags |= flag
		} else {
			f.flags &^= flag
		}
		return ok(0)
	case fionRead:
		var n int64
		switch o := f.ops.(type) {
		case *pipeEnd:
			n = int64(o.p.buffered())
		case *inotifyFD:
			n = int64(o.pending())
		case *stream:
			n = int64(o.available())
		case *hostFile, *memFile:
			st, e := f.ops.stat(k)
			if e != 0 {
				return fail(e)
			}
			if o, isMem := o.(*memFile); isMem {
				st.size = int64(len(o.data))
			}
			n = max(st.size-f.pos(), 0)
		case *hostDir, *synthDir:
			return fail(eNOTTY)
		case *socket:
			return k.sockIoctl(o, req, arg)
		}
		return result(0, k.putU32(arg, uint32(n)))
	}
	if s, isSock := f.ops.(*socket); isSock {
		return k.sockIoctl(s, req, arg)
	}
	tty, isTTY := f.ops.(ttyOps)
	if !isTTY || !tty.isTTY() {
		return fail(eNOTTY)
	}
	// The settings are the guest's view of its terminal: they are kept and
	// reported back, but the host terminal is not switched (it stays in its
	// own mode: line editing, echo), and a flush cannot take back what it
	// has delivered.
	switch req {
	case tcGets:
		if k.tty.termios == nil {
			k.tty.termios = termios()
		}
		return result(0, k.copyOut(arg, k.tty.termios))
	case tcSets, tcSetsW, tcSetsF:
		b := make([]byte, len(termios()))
		if e := k.copyIn(arg, b); e != 0 {
			return fail(e)
		}
		k.tty.termios = b
		return ok(0)
	case tcFlsh:
		if arg > 2 { // TCIFLUSH, TCOFLUSH, TCIOFLUSH
			return fail(eINVAL)
		}
		return ok(0)
	case tiocGWinSz:
		if k.tty.winsize == nil {
			k.tty.winsize = make([]byte, 8)
			le.PutUint16(k.tty.winsize[0:], ttyRows)
			le.PutUint16(k.tty.winsize[2:], ttyCols)
		}
		return result(0, k.copyOut(arg, k.tty.winsize))
	case tiocSWinSz:
		b := make([]byte, 8)
		if e := k.copyIn(arg, b); e != 0 {
			return fail(e)
		}
		k.tty.winsize = b
		return ok(0)
	case tiocGPGRP:
		return k.tcgetpgrp(arg)
	case tiocSPGRP:
		return k.tcsetpgrp(arg)
	}
	return fail(eNOTTY)
}

func sysPipe(k *Kernel, c *Call) Outcome { return k.pipe2(c.Args[0], 0) }

func sysPipe2(k *Kernel, c *Call) Outcome { return k.pipe2(c.Args[0], uint32(c.Args[1])) }

func (k *Kernel) pipe2(addr uint64, flags uint32) Outcome {
	// O_DIRECT (packet mode) is refused, as by Linux before 3.4.
	if flags&^(oCLOEXEC|oNONBLOCK) != 0 {
		return fail(eINVAL)
	}
	p := &pipe{readers: 1, writers: 1, ino: k.nextIno}
	k.nextIno++
	st := flags&oNONBLOCK | oLARGEFILE
	r := newOpenFile(&pipeEnd{p: p}, oRDONLY|st, "")
	w := newOpenFile(&pipeEnd{p: p, writing: true}, oWRONLY|st, "")
	cloexec := flags&oCLOEXEC != 0
	rfd, e := k.install(r, 0, cloexec)
	if e != 0 {
		return fail(e)
	}
	wfd, e := k.install(w, 0, cloexec)
	if e != 0 {
		_ = k.closeFD(rfd)
		return fail(e)
	}
	var b [8]byte
	le.PutUint32(b[0:], uint32(rfd))
	le.PutUint32(b[4:], uint32(wfd))
	if e := k.copyOut(addr, b[:]); e != 0 {
		_ = k.closeFD(rfd)
		_ = k.closeFD(wfd)
		return fail(e)
	}
	return ok(0)
}

// maxFileBytes is the largest size of a host file, the same on every host:
// ext4's with 4 KiB blocks (16 TiB - 4 KiB), the usual Linux root file
// system. lseek past it fails with EINVAL, writes and truncates with EFBIG.
const maxFileBytes = 0xffffffff000

func sysLseek(k *Kernel, c *Call) Outcome {
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	if f.flags&oPATH != 0 {
		return fail(eBADF)
	}
	if !f.ops.seekable() {
		return fail(eSPIPE)
	}
	off, whence := int64(c.Args[1]), uint32(c.Args[2])
	if _, isDev := f.ops.(*device); isDev {
		// null_lseek, noop_llseek: the position stays 0.
		if whence > seekEnd {
			return fail(eINVAL)
		}
		return ok(0)
	}
	var n int64
	switch whence {
	case seekSet:
		n = off
	case seekCur:
		n = f.pos() + off
	case seekEnd, seekData, seekHole:
		st, e := f.ops.stat(k)
		if e != 0 {
			return fail(e)
		}
		if m, isMem := f.ops.(*memFile); isMem {
			st.size = int64(len(m.data))
		}
		switch whence {
		case seekEnd:
			n = st.size + off
		case seekData:
			if off < 0 || off >= st.size {
				return fail(eNXIO)
			}
			n = off
		default:
			if off < 0 || off >= st.size {
				return fail(eNXIO)
			}
			n = st.size
		}
	default:
		return fail(eINVAL)
	}
	if n < 0 {
		return fail(eINVAL)
	}
	if _, isHost := f.ops.(*hostFile); isHost && n > maxFileBytes {
		return fail(eINVAL)
	}
	if n == 0 {
		f.dents = nil // rewinddir: list again
	}
	f.setPos(n)
	return ok(uint64(n))
}

func sysPoll(k *Kernel, c *Call) Outcome {
	timeout := int64(int32(c.Args[2]))
	if timeout >= 0 {
		timeout *= 1e6
	}
	return k.poll(c, c.Args[0], c.Args[1], timeout)
}

func sysPpoll(k *Kernel, c *Call) Outcome {
	timeout, e := k.timeoutArg(c.Args[2])
	if e != 0 {
		return fail(e)
	}
	if e := k.epollSigmask(c.Args[3], c.Args[4]); e != 0 {
		return fail(e)
	}
	return k.maskedWait(c, c.Args[3], k.poll(c, c.Args[0], c.Args[1], timeout))
}

// poll reports the readiness of an array of struct pollfd. Regular files,
// directories, devices and streams are always ready; pipes, event files
// and timers follow their state. When nothing is ready it asks to wait
// (ReadyWait) until something changes, a timerfd it polls expires, or its
// timeout, when the re-executed call returns 0.
func (k *Kernel) poll(c *Call, addr, nfds uint64, timeout int64) Outcome {
	if nfds > uint64(k.maxFDs()) {
		return fail(eINVAL)
	}
	b := make([]byte, 8*nfds)
	if e := k.copyIn(addr, b); e != 0 {
		return fail(e)
	}
	n := 0
	timer := int64(timerNoDeadline)
	for i := range int(nfds) {
		ent := b[8*i:]
		fd, events := int32(le.Uint32(ent)), le.Uint16(ent[4:])
		var rev uint16
		if fd >= 0 {
			f, e := k.file(int(fd))
			switch {
			case e != 0:
				rev = pollNval
			case f.flags&oPATH != 0:
				rev = pollNval
			default:
				timer = earliest(timer, k.timersOf(f, c.Now))
				if p, canPoll := f.ops.(pollOps); canPoll {
					rev = p.poll(events | pollErr | pollHup)
				}
			}
		}
		le.PutUint16(ent[6:], rev)
		if rev != 0 {
			n++
		}
	}
	if n == 0 {
		if out, waits := k.waitReady(c, timeout, timer, "poll"); waits {
			return out
		}
	}
	if e := k.copyOut(addr, b); e != 0 {
		return fail(e)
	}
	return ok(uint64(n))
}

// errNoTmpfile: the host has no O_TMPFILE (hostTmpfile); the guest gets
// EOPNOTSUPP, as from a Linux file system without it.
var errNoTmpfile = errors.New("no O_TMPFILE on this host")

// openTmpfile is open with O_TMPFILE: an unnamed regular file in the
// directory p, which linkat may name later (unless O_EXCL). It is a host
// O_TMPFILE file in the host directory; under an overlay, or on a host
// without O_TMPFILE, the answer is EOPNOTSUPP, as from a Linux file system
// without it (programs then fall back to a named file).
func (k *Kernel) openTmpfile(dirfd int, p string, flags, mode uint32) Outcome {
	l, e := k.lookup(dirfd, p, true)
	switch {
	case e != 0:
		return fail(e)
	case !l.exists():
		return fail(eNOENT)
	case !l.isDir():
		return fail(eNOTDIR)
	case l.syn != nil || k.ov != nil:
		return fail(eOPNOTSUPP)
	}
	hf, host, err := hostTmpfile(l.host, flags&oEXCL != 0)
	if err != nil {
		if errors.Is(err, errNoTmpfile) {
			return fail(eOPNOTSUPP)
		}
		return fail(hostErrno(err))
	}
	_ = hf.Chmod(goMode(mode & 0o7777 &^ k.umask))
	k.stampFile(hf, host, stampA|stampM|stampC)
	var ino uint64
	if fi, err := hf.Stat(); err == nil {
		if id, ok := hostIDs(fi); ok {
			ino = id.ino
		}
	}
	name := path.Join(l.guest, fmt.Sprintf("#%d (deleted)", ino))
	keep := flags&(descFlags|oTMPFILE) | oLARGEFILE // F_GETFL shows O_TMPFILE, as Linux's f_flags keep it
	f := newOpenFile(&hostFile{f: hf, host: host, tmp: true, unlinkable: flags&oEXCL != 0}, keep, name)
	fd, e := k.install(f, 0, flags&oCLOEXEC != 0)
	if e != 0 {
		_ = f.ops.release()
		return fail(e)
	}
	return ok(uint64(fd))
}
