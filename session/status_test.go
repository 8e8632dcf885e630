package session

import (
	"bytes"
	"emuprof/cpu"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// The guest's writes to the terminal erase the status line first, whole;
// counters feed the line; nothing is drawn before the delay.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	s := NewStatusOn(&term, 2)
	s.counting.Store(true) // as if an engine were wrapped
	c := s.Counter("copies", 8)
	c.Done()
	c.Done()
	s.insns.Store(2_500_000)
	s.run.Load().clock.Store(5_000_000)
	s.run.Load().threads.Store(3)
	got := s.line(2 * time.Second)
	want := "emuprof: 2.50 M instructions (1.25 M/s), virtual 5ms, 3 threads, running, copies 2/8"
	if got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	s.draw()
	w := s.Writer(&term, true)
	w.Write([]byte("guest output\n"))
	w.Write([]byte("more\n"))
	got = term.String()
	if !strings.HasPrefix(got, "\r\x1b[Kemuprof: 2.50 M instructions (") || !strings.HasSuffix(got, ", copies 2/8\r\x1b[Kguest output\nmore\n") {
		t.Errorf("terminal %q: want the line, erased once, then the guest's writes", got)
	}
	if w := s.Writer(&term, false); w != io.Writer(&term) {
		t.Error("a writer that is not the terminal was wrapped")
	}
	var nilStatus *Status
	nilStatus.Start()
	nilStatus.SetPhase("x")
	nilStatus.Stop()
	if nilStatus.Counter("shards", 2) == nil {
		t.Error("no counter without a status line")
	}
}

// A line longer than the terminal is cut to its width: a wrapped line
// would leave rows that "\r\x1b[K" does not erase.
func TestStatusLineWidth(t *testing.T) {
	var term bytes.Buffer
	s := NewStatusOn(&term, 1)
	s.counting.Store(true)
	s.width = 30
	s.draw()
	if got := strings.TrimPrefix(term.String(), "\r\x1b[K"); len([]rune(got)) != 29 || !strings.HasPrefix(got, "emuprof: 0 instructions") {
		t.Errorf("drew %q, want the first 29 columns", got)
	}
}

// Work in other processes (paths --copies): no engine feeds the line, so
// it says the phase, the time and the copies done, not zero instructions.
func TestStatusLineCopies(t *testing.T) {
	var term bytes.Buffer
	s := NewStatusOn(&term, 1)
	s.SetPhase("running 4 copies of the program")
	c := s.Counter("copies done", 4)
	c.Done()
	if got, want := s.line(3*time.Second), "emuprof: running 4 copies of the program, 3s, copies done 1/4"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// fakeCPU runs n instructions per slice.
type fakeCPU struct {
	cpu.CPU
	n uint64
}

func (fakeCPU) SetClock(int64)                   {}
func (fakeCPU) SetTid(uint32)                    {}
func (c fakeCPU) Run(pc, budget uint64) cpu.Stop { return cpu.Stop{Insns: c.n} }

// Runs an analysis makes after the first (beginRun) add their instructions
// to the total; the line shows the virtual time, threads and processes of
// the run whose slice ended last; engines wrapped after end count in the
// first run again.
func TestStatusRuns(t *testing.T) {
	s := NewStatusOn(io.Discard, 1000)
	c1 := s.CPU(fakeCPU{n: 1000})
	c1.SetTid(1000)
	c1.SetClock(0)
	c1.Run(0, 0)
	first := "emuprof: 1.0 k instructions (1.0 k/s), virtual 1ms, 1 thread, running"
	if got := s.line(time.Second); got != first {
		t.Errorf("line %q, want %q", got, first)
	}
	end := s.beginRun()
	c2 := s.CPU(fakeCPU{n: 300})
	c3 := s.CPU(fakeCPU{n: 200})
	if got := s.line(time.Second); got != first {
		t.Errorf("a run that ran no slice yet: line %q, want the first run's %q", got, first)
	}
	c2.SetTid(1000)
	c2.SetClock(0)
	c2.Run(0, 0)
	c3.SetTid(1001)
	c3.SetClock(0)
	c3.Run(0, 0)
	s.SetPhase("writing the profiles")
	if got, want := s.line(time.Second), "emuprof: 1.5 k instructions (1.5 k/s), virtual 300µs, 2 threads in 2 processes, writing the profiles"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	end()
	c4 := s.CPU(fakeCPU{n: 1})
	c4.SetClock(2_000_000)
	c4.Run(0, 0)
	if got, want := s.line(time.Second), "emuprof: 1.5 k instructions (1.5 k/s), virtual 2.001ms, 1 thread in 2 processes, writing the profiles"; got != want {
		t.Errorf("after end: line %q, want %q", got, want)
	}
}

// syncBuffer is a terminal the ticker writes to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Stop erases the line; Start after it draws again at once once the
// first second has gone by; Pause's resume starts only a line that ran.
func TestStatusRestart(t *testing.T) {
	var term syncBuffer
	s := NewStatusOn(&term, 1)
	s.every = time.Millisecond
	s.start = time.Now().Add(-time.Minute)
	wait := func(what string, n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); strings.Count(term.String(), "emuprof: ") < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no line drawn: %q", what, term.String())
			}
		}
	}
	s.Start()
	wait("Start", 1)
	resume := s.Pause()
	got := term.String()
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("Pause did not erase the line: %q", got)
	}
	time.Sleep(20 * s.every)
	if term.String() != got {
		t.Errorf("drawn while paused: %q", term.String())
	}
	s.SetPhase("writing the profiles")
	resume()
	wait("resume", strings.Count(got, "emuprof: ")+1) // a line after those drawn before the pause
	s.Stop()
	if got := term.String(); !strings.Contains(got, "\r\x1b[Kemuprof: writing the profiles, ") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("terminal %q: want the line of the new phase, erased", got)
	}
	got = term.String()
	s.Pause()() // stopped: Pause's resume does not start it
	time.Sleep(20 * s.every)
	if term.String() != got {
		t.Errorf("a stopped line was started again: %q", term.String())
	}
}
