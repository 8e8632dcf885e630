package syscalls

import (
	"strings"
	"testing"
	"testing/iotest"
)

// Input that is not a terminal reads the same whatever pieces the host
// delivers it in: here one byte at a time.
func TestStdinReadsDoNotDependOnDelivery(t *testing.T) {
	h := newHarness(t, Config{Stdin: iotest.OneByteReader(strings.NewReader("hello, world"))})
	buf := h.alloc(64)
	if n := h.must(nrRead, 0, buf, 5); n != 5 || string(h.peek(buf, 5)) != "hello" {
		t.Fatalf("read = %d %q, want 5 \"hello\"", n, h.peek(buf, int(n)))
	}
	cnt := h.alloc(4)
	h.must(nrIoctl, 0, fionRead, cnt)
	if n := le.Uint32(h.peek(cnt, 4)); n != 7 {
		t.Errorf("FIONREAD = %d, want the 7 bytes until EOF", n)
	}
	iov := h.alloc(32)
	h.poke(iov, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, buf), 3), buf+3), 10))
	if n := h.must(nrReadv, 0, iov, 2); n != 7 || string(h.peek(buf, 7)) != ", world" {
		t.Errorf("readv = %d %q, want 7 \", world\"", n, h.peek(buf, int(n)))
	}
	if n := h.must(nrRead, 0, buf, 5); n != 0 {
		t.Errorf("read at EOF = %d", n)
	}
	h.must(nrIoctl, 0, fionRead, cnt)
	if n := le.Uint32(h.peek(cnt, 4)); n != 0 {
		t.Errorf("FIONREAD at EOF = %d", n)
	}
}

// A terminal delivers what was typed, as it comes.
func TestTerminalReadsWhatIsThere(t *testing.T) {
	h := newHarness(t, Config{Stdin: iotest.OneByteReader(strings.NewReader("ls\n")), StdinTTY: true})
	buf := h.alloc(64)
	if n := h.must(nrRead, 0, buf, 64); n != 1 {
		t.Errorf("read = %d, want what the terminal had (1)", n)
	}
}
