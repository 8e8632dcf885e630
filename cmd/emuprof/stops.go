package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"emuprof/guest"
)

// How emuprof can be stopped, and what it does then. Every way ends the
// guest where it is, writes the profiles (files first, marked partial), then
// the summaries, and exits like a shell reports a killed command:
//
//   - SIGINT (Ctrl-C): "interrupted", exit 130;
//   - SIGTERM (kill, timeout(1)): "terminated by SIGTERM", exit 143;
//   - SIGHUP (the terminal went away): "hung up (SIGHUP)", exit 129;
//   - a closed stdout (`emuprof trms ... | head`): the guest's writes fail
//     with EPIPE and it gets SIGPIPE, as on Linux; emuprof's own summary
//     stops quietly there.
//
// A second signal kills emuprof at once (the default action again).
// A guest blocked reading emuprof's stdin is woken by the signal.

// stopSignals are the signals that stop the guest and keep the profile.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopper turns the first stop signal into a closed channel.
type stopper struct {
	sigs      chan os.Signal
	interrupt chan struct{}
	got       atomic.Int32 // the signal number, once one arrived
}

// watchStops starts watching for stop signals; onStop runs (once) when the
// first arrives. Writes to a closed pipe fail with EPIPE from now on,
// instead of killing emuprof (Go's default for stdout and stderr).
func watchStops(onStop func()) *stopper {
	signal.Ignore(syscall.SIGPIPE)
	s := &stopper{sigs: make(chan os.Signal, 1), interrupt: make(chan struct{})}
	signal.Notify(s.sigs, stopSignals...)
	go func() {
		sig, ok := <-s.sigs
		if !ok {
			return
		}
		if n, isNum := sig.(syscall.Signal); isNum {
			s.got.Store(int32(n))
		}
		signal.Reset(stopSignals...) // a second one kills
		close(s.interrupt)
		onStop()
	}()
	return s
}

// stop stops watching.
func (s *stopper) stop() { signal.Stop(s.sigs) }

// adjust makes the result of a run stopped by a signal say which: the guest
// reports every stop as an interrupt (SIGINT).
func (s *stopper) adjust(res *guest.Result) {
	sig := int(s.got.Load())
	if res == nil || res.Signal != int(syscall.SIGINT) || res.Reason != "interrupted" || sig == int(syscall.SIGINT) || sig == 0 {
		return
	}
	res.Signal, res.ExitStatus = sig, 128+sig
	switch syscall.Signal(sig) {
	case syscall.SIGTERM:
		res.Reason = "terminated by SIGTERM"
	case syscall.SIGHUP:
		res.Reason = "hung up (SIGHUP)"
	default:
		res.Reason = "stopped by " + guest.SignalName(sig)
	}
}

// errInterrupted is what a read of the host's stdin returns once emuprof
// is stopped.
var errInterrupted = errors.New("interrupted")

// interruptibleReader reads r, but a Read waiting for r returns
// errInterrupted as soon as stop is closed (a read of os.Stdin cannot be
// cancelled: it goes on in the background, and what it returns is kept for
// the next Read).
type interruptibleReader struct {
	r       io.Reader
	stop    <-chan struct{}
	res     chan readResult
	pending bool   // a read of r is under way
	buf     []byte // what that read fills
	rest    []byte // bytes read but not yet returned
	err     error  // r's error, returned after rest
}

type readResult struct {
	n   int
	err error
}

func newInterruptibleReader(r io.Reader, stop <-chan struct{}) *interruptibleReader {
	return &interruptibleReader{r: r, stop: stop, res: make(chan readResult, 1)}
}

func (ir *interruptibleReader) Read(p []byte) (int, error) {
	if len(ir.rest) > 0 {
		n := copy(p, ir.rest)
		ir.rest = ir.rest[n:]
		return n, nil
	}
	if ir.err != nil {
		return 0, ir.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !ir.pending {
		select {
		case <-ir.stop:
			return 0, errInterrupted
		default:
		}
		if cap(ir.buf) < len(p) {
			ir.buf = make([]byte, len(p))
		}
		buf := ir.buf[:len(p)]
		ir.pending = true
		go func() {
			n, err := ir.r.Read(buf)
			ir.res <- readResult{n, err}
		}()
	}
	select {
	case r := <-ir.res:
		ir.pending = false
		n := copy(p, ir.buf[:r.n])
		ir.rest = ir.buf[n:r.n]
		if len(ir.rest) > 0 {
			ir.err = r.err
			return n, nil
		}
		return n, r.err
	case <-ir.stop:
		return 0, errInterrupted
	}
}

// quietStdout is emuprof's stdout for its own output (summaries): once a
// write fails because the reader went away (EPIPE: `emuprof ... | head`),
// the rest is dropped without an error, so the run still ends as it should.
type quietStdout struct {
	w      io.Writer
	closed bool
}

func (q *quietStdout) Write(p []byte) (int, error) {
	if q.closed {
		return len(p), nil
	}
	n, err := q.w.Write(p)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, errInterrupted)) {
		q.closed = true
		return len(p), nil
	}
	return n, err
}
