package syscalls

import (
	"bytes"
	"testing"

	"emuprof/mm"
	"emuprof/trace"
)

// Guest scratch memory used by tests.
const (
	scratchBase = 0x10000000
	scratchSize = 0x100000
)

// access is one KernelRead/KernelWrite report.
type access struct {
	kind       trace.Kind
	addr, size uint64
}

// harness runs system calls against a Kernel over an in-memory guest.
type harness struct {
	t      *testing.T
	k      *Kernel
	mb     *mm.MemBackend
	as     *mm.AddressSpace
	stdout bytes.Buffer
	stderr bytes.Buffer
	events []access
	next   uint64
	now    int64
	fs     uint64
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, mb: mm.NewMemBackend(), next: scratchBase}
	h.as = mm.New(h.mb)
	if err := h.as.MapFixed(scratchBase, scratchSize, mm.ProtRead|mm.ProtWrite, "", 0); err != nil {
		t.Fatal(err)
	}
	if cfg.Stdout == nil {
		cfg.Stdout = &h.stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = &h.stderr
	}
	cfg.OnKernelAccess = func(kind trace.Kind, addr, size uint64) {
		h.events = append(h.events, access{kind, addr, size})
	}
	h.k = New(cfg, h.as)
	h.k.SetFS = func(_ int, base uint64) { h.fs = base }
	h.k.GetFS = func(int) uint64 { return h.fs }
	t.Cleanup(func() {
		if err := h.k.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// call performs system call nr as thread 1000.
func (h *harness) call(nr uint64, args ...uint64) Outcome {
	h.t.Helper()
	c := &Call{Tid: 1000, Nr: nr, PC: 0x401000, Now: h.now}
	copy(c.Args[:], args)
	out := h.k.Do(c)
	if out.Err != nil {
		h.t.Fatalf("%s: fatal: %v", Name(nr), out.Err)
	}
	return out
}

// ret performs a call and returns rax as a signed value.
func (h *harness) ret(nr uint64, args ...uint64) int64 {
	h.t.Helper()
	return int64(h.call(nr, args...).Ret)
}

// must performs a call that has to succeed.
func (h *harness) must(nr uint64, args ...uint64) uint64 {
	h.t.Helper()
	r := h.ret(nr, args...)
	if r < 0 && r > -4096 {
		h.t.Fatalf("%s(%#x) = %v", Name(nr), args, Errno(-r))
	}
	return uint64(r)
}

// errno performs a call that has to fail with want.
func (h *harness) errno(want Errno, nr uint64, args ...uint64) {
	h.t.Helper()
	if r := h.ret(nr, args...); r != -int64(want) {
		h.t.Fatalf("%s(%#x) = %d, want %v", Name(nr), args, r, want)
	}
}

// alloc returns n bytes of zeroed scratch memory, 16-aligned.
func (h *harness) alloc(n int) uint64 {
	a := h.next
	h.next += (uint64(n) + 15) &^ 15
	if h.next > scratchBase+scratchSize {
		h.t.Fatal("scratch memory exhausted")
	}
	return a
}

// str places a NUL-terminated string in guest memory.
func (h *harness) str(s string) uint64 {
	a := h.alloc(len(s) + 1)
	h.poke(a, append([]byte(s), 0))
	return a
}

func (h *harness) poke(addr uint64, p []byte) {
	h.t.Helper()
	if err := h.mb.WriteMem(addr, p); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) peek(addr uint64, n int) []byte {
	h.t.Helper()
	b := make([]byte, n)
	if err := h.mb.ReadMem(addr, b); err != nil {
		h.t.Fatal(err)
	}
	return b
}

func (h *harness) u64(addr uint64) uint64 { return le.Uint64(h.peek(addr, 8)) }

// kernelWrites returns the KernelWrite reports since the last reset.
func (h *harness) only(kind trace.Kind) []access {
	var out []access
	for _, e := range h.events {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// System call numbers used by the tests.
const (
	nrRead           = 0
	nrWrite          = 1
	nrOpen           = 2
	nrClose          = 3
	nrStat           = 4
	nrFstat          = 5
	nrLstat          = 6
	nrPoll           = 7
	nrLseek          = 8
	nrMmap           = 9
	nrMprotect       = 10
	nrMunmap         = 11
	nrBrk            = 12
	nrRtSigprocmask  = 14
	nrIoctl          = 16
	nrPread64        = 17
	nrReadv          = 19
	nrWritev         = 20
	nrAccess         = 21
	nrMremap         = 25
	nrMadvise        = 28
	nrDup2           = 33
	nrNanosleep      = 35
	nrGetpid         = 39
	nrKill           = 62
	nrUname          = 63
	nrFcntl          = 72
	nrFtruncate      = 77
	nrGetcwd         = 79
	nrChdir          = 80
	nrRename         = 82
	nrMkdir          = 83
	nrRmdir          = 84
	nrUnlink         = 87
	nrSymlink        = 88
	nrReadlink       = 89
	nrReadlinkat     = 267
	nrGetuid         = 102
	nrSigaltstack    = 131
	nrArchPrctl      = 158
	nrLgetxattr      = 192
	nrSchedGetaffin  = 204
	nrGetdents64     = 217
	nrClockGettime   = 228
	nrExitGroup      = 231
	nrOpenat         = 257
	nrNewfstatat     = 262
	nrUtimensat      = 280
	nrPipe2          = 293
	nrPrlimit64      = 302
	nrGetrandom      = 318
	nrStatx          = 332
	nrRseq           = 334
	nrTimerfdCreate  = 283
	nrKeyctl         = 250
	atFDCWDArg       = uint64(0xffffffffffffff9c) // AT_FDCWD as a register value
	protRW           = protRead | protWrite
	mapPrivAnon      = mapPrivate | mapAnonymous
	negOne           = ^uint64(0)
	clockRealtimeArg = clockRealtime
)
