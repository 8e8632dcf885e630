package syscalls

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The kinds of open files: host regular files and directories, the
// Config's streams, emulated devices and files, and pipes.

// hostFile is an open host regular file.
type hostFile struct {
	f    *os.File
	host string      // "" for a standard stream (stdio.go)
	id   os.FileInfo // see identity
	keep bool        // f is the host's standard stream: not closed here
	// app: f was opened O_APPEND by the host (`>>`): writes go to its end
	// (os refuses WriteAt there). acc is the host's access mode (O_RDONLY,
	// O_WRONLY, O_RDWR) of a standard stream.
	app bool
	acc uint32
	// memfd: a memfd_create file (sys_memfd.go).
	memfd *memfdState
	// tmp: an unnamed O_TMPFILE file, host its /proc/self/fd path;
	// unlinkable: opened with O_EXCL, it may never get a name.
	tmp, unlinkable bool
}

func (h *hostFile) read(k *Kernel, p []byte, off int64) (int, Errno) {
	// Shared mappings hold the newest bytes of what they map.
	if err := k.syncFile(h, uint64(off), uint64(off)+uint64(len(p)), 0, 0); err != nil {
		return 0, hostErrno(err)
	}
	n, err := h.f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, hostErrno(err)
	}
	return n, 0
}

func (h *hostFile) write(k *Kernel, p []byte, off int64) (int, Errno) {
	if m := h.memfd; m != nil && m.seals&(sealWrite|sealFWrite|sealGrow) != 0 {
		if fi, err := h.f.Stat(); err == nil && (m.seals&(sealWrite|sealFWrite) != 0 ||
			off+int64(len(p)) > fi.Size()) {
			return 0, ePERM
		}
	}
	old := k.mappedSize(h)
	var n int
	var err error
	if h.app {
		n, err = h.f.Write(p)
	} else {
		n, err = h.f.WriteAt(p, off)
	}
	if n > 0 {
		k.stampFile(h.f, h.host, stampM|stampC) // by descriptor: the name may be gone
		if old >= 0 {
			k.fileWritten(h, off, p[:n], old)
		}
	}
	if err != nil && n == 0 {
		return 0, hostErrno(err)
	}
	return n, 0
}

func (h *hostFile) stat(k *Kernel) (statInfo, Errno) {
	fi, err := h.f.Stat()
	if err != nil {
		return statInfo{}, hostErrno(err)
	}
	return k.hostStat(fi, h.host), 0
}

func (h *hostFile) seekable() bool { return true }
func (h *hostFile) release() error {
	if h.keep {
		return nil
	}
	return h.f.Close()
}
func (h *hostFile) hostFile() (*os.File, string) { return h.f, h.host }
func (h *hostFile) poll(events uint16) uint16 {
	return events & (pollIn | pollOut | pollRdNm | pollWrNm)
}
func (h *hostDir) poll(events uint16) uint16 {
	return events & (pollIn | pollOut | pollRdNm | pollWrNm)
}
func (m *memFile) poll(events uint16) uint16  { return events & (pollIn | pollRdNm) }
func (d *device) poll(events uint16) uint16   { return events & (pollIn | pollOut | pollRdNm | pollWrNm) }
func (d *synthDir) poll(events uint16) uint16 { return events & (pollIn | pollRdNm) }

// hostDir is an open host directory (or any host file opened with O_PATH).
// It is path based: listing reads the directory again.
type hostDir struct {
	l loc
}

func (d *hostDir) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eISDIR }
func (d *hostDir) write(*Kernel, []byte, int64) (int, Errno) { return 0, eISDIR }
func (d *hostDir) seekable() bool                            { return true }
func (d *hostDir) release() error                            { return nil }
func (d *hostDir) location() loc                             { return d.l }

func (d *hostDir) stat(k *Kernel) (statInfo, Errno) {
	h := d.l.host
	if k.ov != nil {
		h = k.ov.hostPath(d.l.guest) // it may have been copied up since
	}
	fi, err := os.Lstat(h)
	if err != nil {
		return statInfo{}, hostErrno(err)
	}
	return k.hostStat(fi, h), 0
}

// hostEntry is a directory entry of a host directory: its name, host path
// and attributes.
type hostEntry struct {
	name, host string
	fi         fs.FileInfo
}

// entries lists the host directory at l, sorted by name (in an overlay:
// the entries the guest sees).
func (k *Kernel) entries(l loc) ([]hostEntry, Errno) {
	var out []hostEntry
	if k.ov != nil {
		names, err := k.ov.list(l.guest)
		if err != nil {
			return nil, hostErrno(err)
		}
		for _, n := range names {
			if h, fi, err := k.ov.lstat(path.Join(l.guest, n)); err == nil {
				out = append(out, hostEntry{n, h, fi})
			}
		}
		return out, 0
	}
	ents, err := os.ReadDir(l.host) // sorted by name
	if err != nil {
		return nil, hostErrno(err)
	}
	for _, de := range ents {
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, hostEntry{de.Name(), filepath.Join(l.host, de.Name()), fi})
	}
	return out, 0
}

func (d *hostDir) list(k *Kernel) ([]dirent, Errno) {
	ents, e := k.entries(d.l)
	if e != 0 {
		return nil, e
	}
	out := make([]dirent, 0, len(ents)+2)
	self, e := d.stat(k)
	if e != 0 {
		return nil, e
	}
	out = append(out, dirent{name: ".", ino: self.ino, typ: dtDir})
	parent := self.ino
	if d.l.guest != "/" {
		if pl, e := k.walk(path.Dir(d.l.guest), true); e == 0 {
			if st, e := k.statLoc(pl); e == 0 {
				parent = st.ino
			}
		}
	}
	out = append(out, dirent{name: "..", ino: parent, typ: dtDir})
	for _, de := range ents {
		if d.l.guest == "/" && isSynthPath("/"+de.name) {
			continue // shadowed by the emulated trees
		}
		st := k.hostStat(de.fi, de.host)
		out = append(out, dirent{name: de.name, ino: st.ino, typ: direntType(st.mode)})
	}
	if d.l.guest == "/" {
		for _, name := range []string{"dev", "proc", "sys"} {
			n := k.synthAt("/" + name)
			out = append(out, dirent{name: name, ino: pathIno(n.path), typ: dtDir})
		}
		slices.SortFunc(out[2:], func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	}
	return out, 0
}

// pathFile is a non-directory opened with O_PATH.
type pathFile struct {
	l loc
}

func (p *pathFile) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eBADF }
func (p *pathFile) write(*Kernel, []byte, int64) (int, Errno) { return 0, eBADF }
func (p *pathFile) seekable() bool                            { return false }
func (p *pathFile) release() error                            { return nil }
func (p *pathFile) stat(k *Kernel) (statInfo, Errno) {
	if p.l.syn != nil {
		return k.synthStat(p.l.syn)
	}
	fi, err := os.Lstat(p.l.host)
	if err != nil {
		return statInfo{}, hostErrno(err)
	}
	return k.hostStat(fi, p.l.host), 0
}

// synthDir is an open emulated directory.
type synthDir struct {
	n *synthNode
}

func (d *synthDir) read(*Kernel, []byte, int64) (int, Errno)  { return 0, eISDIR }
func (d *synthDir) write(*Kernel, []byte, int64) (int, Errno) { return 0, eISDIR }
func (d *synthDir) seekable() bool                            { return true }
func (d *synthDir) release() error                            { return nil }
func (d *synthDir) stat(k *Kernel) (statInfo, Errno)          { return k.synthStat(d.n) }
func (d *synthDir) list(k *Kernel) ([]dirent, Errno)          { return k.synthList(d.n), 0 }
func (d *synthDir) location() loc                             { return loc{guest: d.n.path, syn: d.n} }

// memFile is an emulated file whose contents were generated at open.
type memFile struct {
	n    *synthNode
	data []byte
}

func (m *memFile) read(_ *Kernel, p []byte, off int64) (int, Errno) {
	if off >= int64(len(m.data)) {
		return 0, 0
	}
	return copy(p, m.data[off:]), 0
}

func (m *memFile) write(*Kernel, []byte, int64) (int, Errno) { return 0, eACCES }
func (m *memFile) seekable() bool                            { return true }
func (m *memFile) release() error                            { return nil }
func (m *memFile) stat(k *Kernel) (statInfo, Errno)          { return k.synthStat(m.n) }

// devKind is an emulated character device.
type devKind int

const (
	devNone devKind = iota
	devNull
	devZero
	devFull
	devRandom
	devURandom
	devTTY
)

// devByName returns the device /dev/name.
func devByName(name string) devKind {
	switch name {
	case "null":
		return devNull
	case "zero":
		return devZero
	case "full":
		return devFull
	case "random":
		return devRandom
	case "urandom":
		return devURandom
	case "tty":
		return devTTY
	}
	return devNone
}

// rdev returns the device number.
func (d devKind) rdev() uint64 {
	switch d {
	case devNull:
		return makedev(1, 3)
	case devZero:
		return makedev(1, 5)
	case devFull:
		return makedev(1, 7)
	case devRandom:
		return makedev(1, 8)
	case devURandom:
		return makedev(1, 9)
	case devTTY:
		return makedev(5, 0)
	}
	return 0
}

// device is an open emulated device. /dev/tty reads the Config's stdin and
// writes its stdout.
type device struct {
	kind devKind
	n    *synthNode
	tty  *stream
}

func (d *device) read(k *Kernel, p []byte, off int64) (int, Errno) {
	switch d.kind {
	case devNull:
		return 0, 0
	case devZero, devFull:
		clear(p)
		return len(p), 0
	case devRandom, devURandom:
		k.Random(p)
		return len(p), 0
	case devTTY:
		return d.tty.read(k, p, off)
	}
	return 0, eINVAL
}

func (d *device) write(k *Kernel, p []byte, off int64) (int, Errno) {
	switch d.kind {
	case devFull:
		return 0, eNOSPC
	case devTTY:
		return d.tty.write(k, p, off)
	}
	return len(p), 0
}

func (d *device) stat(k *Kernel) (statInfo, Errno) { return k.synthStat(d.n) }
func (d *device) seekable() bool                   { return d.kind != devTTY }
func (d *device) release() error                   { return nil }
func (d *device) isTTY() bool                      { return d.kind == devTTY }

// pipe is an in-kernel pipe buffer.
type pipe struct {
	data             []byte
	start            int
	readers, writers int
	ino              uint64
	size             int // capacity set with F_SETPIPE_SZ (0: pipeBufSize)
	// rdq and wrq are the epoll items watching the read and write ends.
	rdq, wrq pollQueue
}

func (p *pipe) buffered() int { return len(p.data) - p.start }

// capacity is how many bytes the pipe holds.
func (p *pipe) capacity() int {
	if p.size == 0 {
		return pipeBufSize
	}
	return p.size
}

// pipeEnd is the read or the write end of a pipe.
type pipeEnd struct {
	p       *pipe
	writing bool
	// both: a FIFO opened O_RDWR, which reads and writes.
	both bool
	// fifo is the FIFO node the end was opened at (nil: pipe(2)).
	fifo *fifoNode
}

func (e *pipeEnd) read(k *Kernel, b []byte, _ int64) (int, Errno) {
	p := e.p
	if len(b) == 0 {
		return 0, 0
	}
	if p.buffered() == 0 {
		if p.writers == 0 {
			return 0, 0
		}
		return 0, eAGAIN
	}
	wasFull := p.buffered() >= p.capacity()
	n := copy(b, p.data[p.start:])
	p.start += n
	if wasFull {
		p.wrq.wake(pollOut | pollWrNm)
	}
	k.pipeEvent(p)
	if p.start == len(p.data) {
		p.data, p.start = p.data[:0], 0
	}
	return n, 0
}

func (e *pipeEnd) write(k *Kernel, b []byte, _ int64) (int, Errno) {
	p := e.p
	if p.readers == 0 {
		return 0, ePIPE
	}
	if len(b) == 0 {
		return 0, 0
	}
	space := p.capacity() - p.buffered()
	if space == 0 || (len(b) <= pipeAtomic && space < len(b)) {
		return 0, eAGAIN
	}
	if p.start > 0 {
		p.data = append(p.data[:0], p.data[p.start:]...)
		p.start = 0
	}
	n := min(space, len(b))
	p.data = append(p.data, b[:n]...)
	p.rdq.wake(pollIn | pollRdNm)
	k.pipeEvent(p)
	return n, 0
}

func (e *pipeEnd) stat(k *Kernel) (statInfo, Errno) {
	if e.fifo != nil {
		return e.fifo.st, 0
	}
	st := statInfo{dev: devPipeFS, ino: e.p.ino, nlink: 1, mode: sIFIFO | 0o600, blksize: 4096,
		uid: uint32(k.cfg.Uid), gid: uint32(k.cfg.Gid)}
	st.atime, st.mtime, st.ctime = k.cfg.EpochNanos, k.cfg.EpochNanos, k.cfg.EpochNanos
	return st, 0
}

func (e *pipeEnd) seekable() bool { return false }

// queue is where the epoll items watching this end wait.
func (e *pipeEnd) queue() *pollQueue {
	if e.writing {
		return &e.p.wrq
	}
	return &e.p.rdq
}

func (e *pipeEnd) release() error {
	if e.writing || e.both {
		e.p.writers--
	}
	if !e.writing || e.both {
		e.p.readers--
	}
	if e.fifo != nil {
		e.fifo.release()
	}
	return nil
}

func (e *pipeEnd) poll(events uint16) uint16 {
	p := e.p
	var r uint16
	if e.both {
		r = (&pipeEnd{p: p}).poll(events) | (&pipeEnd{p: p, writing: true}).poll(events)
		return r &^ (pollHup | pollErr) // it is its own reader and writer
	}
	if e.writing {
		if p.buffered() < p.capacity() {
			r |= events & (pollOut | pollWrNm)
		}
		if p.readers == 0 {
			r |= pollErr
		}
		return r
	}
	if p.buffered() > 0 {
		r |= events & (pollIn | pollRdNm)
	}
	if p.writers == 0 {
		r |= pollHup
	}
	return r
}

// pipeEvent reports a change of pipe p.
func (k *Kernel) pipeEvent(p *pipe) {
	if k.OnPipeEvent != nil {
		k.OnPipeEvent(p.ino)
	}
}
