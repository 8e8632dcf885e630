package syscalls

import (
	"bufio"
	"errors"
	"io"
	"syscall"
)

// stream is one of the Config's standard streams that is not a host
// regular file (those are given as files: stdio.go).
//
// Input that is not a terminal (a pipe, a FIFO, a socket, a device) is read deterministically: a read returns min(count, bytes until EOF),
// waiting for the host to deliver them, so that what the guest sees (and so
// its trace and profile) is a function of the bytes alone, never of how fast
// or in what pieces the host delivered them (Linux returns what the pipe
// holds at that instant). FIONREAD says
// min(64 KiB, bytes until EOF), poll says readable. A terminal is read a
// line at a time as the host's terminal delivers it: what the guest sees
// then depends on the typist.
type stream struct {
	r   io.Reader
	w   io.Writer
	tty bool
	ino uint64
	in  *bufio.Reader // r, buffered for FIONREAD (not for terminals)
}

// input returns the buffered reader of a stream that is not a terminal.
func (s *stream) input() *bufio.Reader {
	if s.in == nil {
		s.in = bufio.NewReaderSize(s.r, pipeBufSize)
	}
	return s.in
}

func (s *stream) read(_ *Kernel, p []byte, _ int64) (int, Errno) {
	if s.r == nil || len(p) == 0 {
		return 0, 0
	}
	if !s.tty {
		n, err := io.ReadFull(s.input(), p)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && n == 0 {
			return 0, eIO
		}
		return n, 0 // an error after some bytes is reported by the next read
	}
	for range 100 {
		n, err := s.r.Read(p)
		if n > 0 {
			return n, 0
		}
		if errors.Is(err, io.EOF) {
			return 0, 0
		}
		if err != nil {
			return 0, eIO
		}
	}
	return 0, 0
}

// fills reports whether reads return all that was asked for, up to EOF.
func (s *stream) fills() bool { return !s.tty }

// available is what FIONREAD says: what a pipe would hold if the writer had
// written all it will, up to the pipe's size. A terminal says 0.
func (s *stream) available() int {
	if s.r == nil || s.tty {
		return 0
	}
	b, _ := s.input().Peek(pipeBufSize)
	return len(b)
}

func (s *stream) write(_ *Kernel, p []byte, _ int64) (int, Errno) {
	if s.w == nil {
		return 0, eBADF
	}
	n, err := s.w.Write(p)
	if err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
			return n, ePIPE
		}
		if n == 0 {
			// The host's answer when it is one a write may give
			// (ENOSPC for /dev/full or a full disk, EFBIG, EDQUOT...).
			var en syscall.Errno
			if errors.As(err, &en) {
				return 0, hostErrno(err)
			}
			return 0, eIO
		}
	}
	return n, 0
}

func (s *stream) stat(k *Kernel) (statInfo, Errno) {
	st := statInfo{ino: s.ino, nlink: 1, blksize: 4096, uid: uint32(k.cfg.Uid), gid: uint32(k.cfg.Gid)}
	st.atime, st.mtime, st.ctime = k.cfg.EpochNanos, k.cfg.EpochNanos, k.cfg.EpochNanos
	if s.tty {
		st.dev, st.mode, st.rdev = devPTS, sIFCHR|0o620, makedev(136, 0)
	} else {
		st.dev, st.mode = devPipeFS, sIFIFO|0o600
	}
	return st, 0
}

// poll: always ready; a read waits for its bytes (see stream).
func (s *stream) poll(events uint16) uint16 {
	return events & (pollIn | pollOut | pollRdNm | pollWrNm)
}

func (s *stream) seekable() bool { return false }
func (s *stream) release() error { return nil }
func (s *stream) isTTY() bool    { return s.tty }
