package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"emuprof/emu"
	"emuprof/guest"
	"emuprof/internal/stophook"
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
// The signals are watched from the start of main to the last file written,
// and one that came earlier, from emuprof's first instruction on, is kept
// (emu.EarlyStop), so a stop at any moment has the same end: before the
// guest's first instruction the guest stops there (the profiles are
// written, empty and partial); after the guest ended the profiles are
// complete and written all the same. Later signals only say that emuprof is stopping: a kill
// between a temporary file and its rename would leave that file behind.
// A guest blocked reading emuprof's stdin is woken by the signal.

// stopSignals are the signals that stop the guest and keep the profile.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Stopper turns the first stop signal into a closed channel, and stops the
// engine that runs then.
type Stopper struct {
	sigs      chan os.Signal
	interrupt chan struct{} // closed at the first stop signal
	done      chan struct{} // closed when watch returned
	finished  chan struct{} // closed by Finish: the repeated stop ends
	got       atomic.Int32  // the first signal's number, once one arrived
	mu        sync.Mutex
	onStop    func() // stops the engine running now; nil between runs
	// reported: a run's result said the stop (adjust), so the exit
	// status is already the signal's.
	reported bool
}

// WatchStops starts watching for stop signals, for the whole of emuprof.
func WatchStops() *Stopper {
	s := &Stopper{sigs: make(chan os.Signal, len(stopSignals)), interrupt: make(chan struct{}), done: make(chan struct{}), finished: make(chan struct{})}
	signal.Notify(s.sigs, stopSignals...)
	go s.watch()
	// One that came before Notify (from emuprof's first instruction on)
	// stops emuprof all the same.
	if sig := emu.EarlyStop(); sig != 0 {
		_ = syscall.Kill(os.Getpid(), sig)
	}
	return s
}

func (s *Stopper) watch() {
	defer close(s.done)
	said := false
	for sig := range s.sigs {
		if s.got.Load() != 0 {
			if !said {
				fmt.Fprintln(os.Stderr, "emuprof: already stopping: writing the profiles")
				said = true
			}
			continue
		}
		n, _ := sig.(syscall.Signal)
		s.got.Store(int32(n))
		close(s.interrupt)
		go s.keepStopping()
	}
}

// keepStopping stops the engine that runs now, and again every
// stopRetry until Finish: Unicorn ignores a stop while no slice runs, so
// one that lands between the guest loop's look at the interrupt and the
// next slice's start is lost, and a thread running alone would then never
// return to the loop.
func (s *Stopper) keepStopping() {
	for {
		s.mu.Lock()
		if s.onStop != nil {
			s.onStop()
		}
		s.mu.Unlock()
		select {
		case <-s.finished:
			return
		case <-time.After(stopRetry):
		}
	}
}

// stopRetry is how often a stop is repeated; it bounds how late a stop
// that raced the engine's start takes effect.
const stopRetry = 20 * time.Millisecond

// during has stop (an engine's Stop: a thread alone may run without
// returning to the loop) called from the first stop signal on, repeatedly,
// until end is called (before the engine is closed).
func (s *Stopper) during(stop func()) (end func()) {
	s.mu.Lock()
	s.onStop = stop
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.onStop = nil
		s.mu.Unlock()
	}
}

// Finish stops watching and returns the first stop signal, 0 if none came:
// every signal sent before it was called is counted.
func (s *Stopper) Finish() syscall.Signal {
	close(s.finished)
	signal.Stop(s.sigs) // when it returns, nothing more is sent on sigs
	close(s.sigs)
	<-s.done
	return syscall.Signal(s.got.Load())
}

// Reported says whether a run's result said the stop, so that the exit
// status is already the signal's.
func (s *Stopper) Reported() bool { return s.reported }

// Interrupt is closed at the first stop signal.
func (s *Stopper) Interrupt() <-chan struct{} { return s.interrupt }

// raiseAt is stophook.At that returns once the stop took effect (the
// guest then stops at once, wherever it is).
func (s *Stopper) raiseAt(phase string) {
	if stophook.At(phase) {
		<-s.interrupt
	}
}

// firstWrite calls at before its first Write to w.
type firstWrite struct {
	w    io.Writer
	at   func()
	once sync.Once
}

func (fw *firstWrite) Write(p []byte) (int, error) {
	fw.once.Do(fw.at)
	return fw.w.Write(p)
}

// StopReason is what a stop by sig is reported as.
func StopReason(sig int) string {
	switch syscall.Signal(sig) {
	case syscall.SIGINT:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated by SIGTERM"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	}
	return "stopped by " + guest.SignalName(sig)
}

// adjust makes the result of a run stopped by a signal say which: the guest
// reports every stop as an interrupt (SIGINT).
func (s *Stopper) adjust(res *guest.Result) {
	sig := int(s.got.Load())
	if res == nil || res.Signal != int(syscall.SIGINT) || res.Reason != "interrupted" || sig == 0 {
		return
	}
	s.reported = true
	res.Signal, res.ExitStatus, res.Reason = sig, 128+sig, StopReason(sig)
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

// QuietWriter is emuprof's stdout for its own output (summaries): once a
// write fails because the reader went away (EPIPE: `emuprof ... | head`),
// the rest is dropped without an error, so the run still ends as it should.
type QuietWriter struct {
	w      io.Writer
	closed bool
}

// NewQuietWriter returns the QuietWriter of w.
func NewQuietWriter(w io.Writer) *QuietWriter { return &QuietWriter{w: w} }

func (q *QuietWriter) Write(p []byte) (int, error) {
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
