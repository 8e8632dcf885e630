package session

import "io"

// interruptibleWriter writes to w, but a Write waiting for w (a full pipe
// whose reader does not read) returns errInterrupted as soon as stop is
// closed, so that Ctrl-C stops a guest blocked writing its output and the
// profile is written (a write to a pipe cannot be cancelled: it goes on in
// the background, and the guest's later writes fail at once). Writes are
// done one at a time by a goroutine started on the first one; the bytes
// are copied, since the caller's buffer is not used after a Write returns.
type interruptibleWriter struct {
	w    io.Writer
	stop <-chan struct{}
	req  chan []byte
	res  chan writeResult
	buf  []byte
	busy bool // the goroutine is still writing an abandoned buffer
}

type writeResult struct {
	n   int
	err error
}

func newInterruptibleWriter(w io.Writer, stop <-chan struct{}) *interruptibleWriter {
	return &interruptibleWriter{w: w, stop: stop}
}

func (iw *interruptibleWriter) Write(p []byte) (int, error) {
	select {
	case <-iw.stop:
		return 0, errInterrupted
	default:
	}
	if iw.busy {
		return 0, errInterrupted
	}
	if iw.req == nil {
		iw.req, iw.res = make(chan []byte), make(chan writeResult, 1)
		go func() {
			for b := range iw.req {
				n, err := iw.w.Write(b)
				iw.res <- writeResult{n, err}
			}
		}()
	}
	iw.buf = append(iw.buf[:0], p...)
	iw.req <- iw.buf
	select {
	case r := <-iw.res:
		return r.n, r.err
	case <-iw.stop:
		iw.busy, iw.buf = true, nil // the goroutine keeps the old buffer
		return 0, errInterrupted
	}
}
