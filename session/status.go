package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"emuprof/cpu"
	"emuprof/defaults"
	"emuprof/mm"
	"emuprof/trace"
)

// Live status (issue 14): while a guest runs for more than a second and
// stderr is a terminal, one line on stderr, redrawn four times a second,
// says how far it got: guest instructions and their rate, virtual time,
// threads, the phase, and the copies or shards an analysis has done. It is
// drawn by a ticker goroutine from counters the run updates once per run
// slice (a scheduling quantum or a syscall), never per event, and it
// changes nothing the guest sees: the guest's writes to a terminal first
// erase the line. Not on a terminal, or with --quiet, there is no line and
// no counting at all.

// Progresser is what an analysis instance implements to show its own work
// on the status line (P3 path copies, causal shards): what it counts
// ("copies"), how many are done of how many (total 0: unknown). It is
// called from the status goroutine, so it must read atomics or take a lock.
type Progresser interface {
	Progress() (what string, done, total int)
}

// Status is the status line of one run; a nil *Status (no
// terminal, --quiet) does nothing.
type Status struct {
	term      io.Writer // the terminal (stderr)
	width     int       // its columns (0: unknown): a longer line would wrap, and only its last row be erased
	nsPerInsn int64
	start     time.Time
	delay     time.Duration // before the line appears
	every     time.Duration // between redraws

	counting atomic.Bool               // an engine feeds the counters (CPU was called)
	insns    atomic.Uint64             // of every run: the first, and those an analysis makes after it
	run      atomic.Pointer[runCounts] // shown: of the run whose slice ended last
	next     atomic.Pointer[runCounts] // of the run the engines wrapped from now on are in
	phase    atomic.Pointer[string]
	// finishing: the analyses' Finish began when finishedAt instructions
	// had run (statusPhase).
	finishing  atomic.Bool
	finishedAt atomic.Uint64

	// live is the engine running a slice now (nil between slices), read
	// by the ticker under liveMu: a thread alone runs one slice until its
	// next syscall, which may take the whole run.
	liveMu sync.Mutex
	live   liveCounter

	mu      sync.Mutex // held while the line or a guest write goes to the terminal
	shown   bool       // a status line is on the terminal
	sources []Progresser
	halted  bool          // Stop was called and Start not since: draw nothing
	stopped chan struct{} // closed by Stop: the ticker Start started ends
	done    sync.WaitGroup
}

// runCounts are the figures of one guest run that the line shows: the
// run's own virtual time, threads and processes. Runs an analysis makes
// after the first (causal --exact, --validate) get theirs (beginRun); the
// line shows the figures of the run that ran last.
type runCounts struct {
	clock     atomic.Int64    // virtual ns: the latest end of a run slice
	threads   atomic.Int64    // threads seen so far
	processes atomic.Int64    // engines started: the first process and every one it created
	seen      map[uint32]bool // tids; only the guest's goroutine touches it
}

func newRunCounts() *runCounts { return &runCounts{seen: map[uint32]bool{}} }

// NewStatus returns the status line for a run whose stderr is
// stderr, timed by f: nil with --quiet or when stderr is not a terminal.
func NewStatus(stderr *os.File, f *Options, nsPerInsn int64) *Status {
	if f.Quiet || !IsTerminal(stderr) {
		return nil
	}
	s := NewStatusOn(stderr, nsPerInsn)
	s.delay, s.every = f.StatusDelay, f.StatusEvery
	if w, _, err := term.GetSize(int(stderr.Fd())); err == nil {
		s.width = w
	}
	return s
}

func NewStatusOn(w io.Writer, nsPerInsn int64) *Status {
	if nsPerInsn <= 0 {
		nsPerInsn = 1
	}
	s := &Status{term: w, nsPerInsn: nsPerInsn, delay: defaults.StatusDelay, every: defaults.StatusEvery}
	s.run.Store(newRunCounts())
	s.next.Store(s.run.Load())
	s.SetPhase("running")
	return s
}

// beginRun gives the engines wrapped from now on, those of a run an
// analysis makes (after the first, or during it when a followed process's
// analyses write), figures of their own, shown from the end of its first
// slice; its instructions add to the total. end makes the engines wrapped
// after it count in the previous run again.
func (s *Status) beginRun() (end func()) {
	if s == nil {
		return func() {}
	}
	prev := s.next.Swap(newRunCounts())
	return func() { s.next.Store(prev) }
}

// Watch adds the instances that report their own progress.
func (s *Status) Watch(insts ...any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range insts {
		if p, ok := i.(Progresser); ok {
			s.sources = append(s.sources, p)
		}
	}
}

// SetPhase names what emuprof is doing now ("running", "writing the
// profiles"...); it overrides "finishing the analyses".
func (s *Status) SetPhase(phase string) {
	if s != nil {
		s.phase.Store(&phase)
		s.finishing.Store(false)
	}
}

// Start starts the ticker: the line appears once a second has gone by
// since the first Start, and is redrawn until Stop. After a Stop, Start
// starts it again (the analyses' write phase, after messages on stderr).
func (s *Status) Start() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped != nil && !s.halted {
		return // running
	}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.halted = false
	stopped := make(chan struct{})
	s.stopped = stopped
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		delay := time.NewTimer(max(0, s.delay-time.Since(s.start)))
		defer delay.Stop()
		select {
		case <-delay.C:
		case <-stopped:
			return
		}
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			s.draw()
			select {
			case <-tick.C:
			case <-stopped:
				return
			}
		}
	}()
}

// Stop stops the ticker and erases the line; the terminal is the
// caller's again. Stop may be called more than once.
func (s *Status) Stop() {
	s.pause()
}

// pause is Stop, and reports whether the ticker was running.
func (s *Status) pause() (running bool) {
	if s == nil {
		return false
	}
	s.mu.Lock()
	running = s.stopped != nil && !s.halted
	if running {
		close(s.stopped)
	}
	s.halted = true
	s.mu.Unlock()
	s.done.Wait()
	s.mu.Lock()
	s.erase()
	s.mu.Unlock()
	return running
}

// Pause stops the line for messages on stderr; the returned function
// starts it again if it was running.
func (s *Status) Pause() (resume func()) {
	if !s.pause() {
		return func() {}
	}
	return s.Start
}

// draw writes the status line over the previous one.
func (s *Status) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.halted {
		return
	}
	line := s.line(time.Since(s.start))
	if r := []rune(line); s.width > 1 && len(r) >= s.width {
		line = string(r[:s.width-1])
	}
	io.WriteString(s.term, "\r\x1b[K"+line)
	s.shown = true
}

// erase removes the line (s.mu held).
func (s *Status) erase() {
	if s.shown {
		io.WriteString(s.term, "\r\x1b[K")
		s.shown = false
	}
}

// liveCounter is an engine whose running slice can be read from another
// goroutine (emu.Engine.Live).
type liveCounter interface {
	Live() (insns uint64, now int64)
}

// counts returns the instructions run and the virtual time reached, with
// the running slice's progress.
func (s *Status) counts() (uint64, int64) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	n, clock := s.insns.Load(), s.run.Load().clock.Load()
	if s.live != nil {
		i, now := s.live.Live()
		n += i
		clock = max(clock, now)
	}
	return n, clock
}

// line is the status text after elapsed host time.
func (s *Status) line(elapsed time.Duration) string {
	// The units done are read before the instructions, so that a line
	// never shows a unit (a causal --exact run) done without its
	// instructions counted.
	var src strings.Builder
	s.writeSources(&src)
	n, clock := s.counts()
	var b strings.Builder
	if !s.counting.Load() { // work in other processes (--copies): the phase, time and counters
		fmt.Fprintf(&b, "emuprof: %s, %s%s", *s.phase.Load(), elapsed.Round(time.Second), src.String())
		return b.String()
	}
	fmt.Fprintf(&b, "emuprof: %s instructions", metric(float64(n)))
	if sec := elapsed.Seconds(); sec > 0 {
		fmt.Fprintf(&b, " (%s/s)", metric(float64(n)/sec))
	}
	phase := *s.phase.Load()
	if s.finishing.Load() && s.finishedAt.Load() == s.insns.Load() {
		phase = "finishing the analyses"
	}
	run := s.run.Load()
	fmt.Fprintf(&b, ", virtual %s, %s", time.Duration(clock).Round(time.Microsecond), Plural(run.threads.Load(), "thread"))
	if p := run.processes.Load(); p > 1 {
		fmt.Fprintf(&b, " in %d processes", p)
	}
	fmt.Fprintf(&b, ", %s%s", phase, src.String())
	return b.String()
}

// writeSources writes the analyses' and counters' progress.
func (s *Status) writeSources(b *strings.Builder) {
	for _, p := range s.sources {
		what, done, total := p.Progress()
		if what == "" {
			continue
		}
		if total > 0 {
			fmt.Fprintf(b, ", %s %d/%d", what, done, total)
		} else {
			fmt.Fprintf(b, ", %s %d", what, done)
		}
	}
}

// Plural is "1 thread", "3 threads".
func Plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// metric writes v with an SI prefix: 950, 12.3 k, 4.56 M, 7.89 G.
func metric(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2f G", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Writer returns w for the guest's output: when w is the terminal the
// status line is on, every write first erases the line (under the lock,
// so the line never cuts a write in two). Bytes and results are w's own.
func (s *Status) Writer(w io.Writer, isTerm bool) io.Writer {
	if s == nil || !isTerm {
		return w
	}
	return &statusGuard{s: s, w: w}
}

type statusGuard struct {
	s *Status
	w io.Writer
}

func (g *statusGuard) Write(b []byte) (int, error) {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	g.s.erase()
	return g.w.Write(b)
}

// CPU returns c, the engine of one process, counting for the status
// line: instructions and virtual time at the end of every run slice (and,
// from the engine, during it), threads as they are switched to. Every
// process's engine is to be wrapped (the first one's, and its children's,
// followed or not): the line counts processes by their engines.
func (s *Status) CPU(c cpu.CPU) cpu.CPU {
	if s == nil {
		return c
	}
	s.counting.Store(true)
	run := s.next.Load()
	run.processes.Add(1)
	return &meteredCPU{CPU: c, s: s, run: run}
}

// meteredCPU is a CPU whose run slices feed the status line. It only
// reads what the slices return: the guest runs exactly as without it.
type meteredCPU struct {
	cpu.CPU
	s     *Status
	run   *runCounts // of the run this engine is in
	start int64      // virtual ns at the start of the next slice
}

// SetTouch passes the address space's first-touch backing to the engine
// (guest.lazyTouch asks for it by this method, outside cpu.CPU): without
// it, MAP_NORESERVE memory would fault on a terminal only.
func (c *meteredCPU) SetTouch(f func(addr, size uint64) bool) {
	if t, ok := c.CPU.(interface {
		SetTouch(func(addr, size uint64) bool)
	}); ok {
		t.SetTouch(f)
	}
}

// Unwrap returns the engine, for an engine sharing memory with this one
// (emu.Engine.SharePages).
func (c *meteredCPU) Unwrap() mm.Backend { return c.CPU }

// MapSharedPages and SharePages pass the engine's shared memory on
// (mm.PageSharer): without them, MAP_SHARED memory would be copied by a
// fork, not shared.
func (c *meteredCPU) MapSharedPages(addr, size uint64, prot mm.Prot) error {
	if s, ok := c.CPU.(mm.PageSharer); ok {
		return s.MapSharedPages(addr, size, prot)
	}
	return c.CPU.MapPages(addr, size, prot)
}

func (c *meteredCPU) SharePages(addr, size uint64, prot mm.Prot, from mm.Backend) error {
	s, ok := c.CPU.(mm.PageSharer)
	if !ok {
		return fmt.Errorf("sharing %#x+%#x: the engine cannot share memory", addr, size)
	}
	return s.SharePages(addr, size, prot, from)
}

// ForkPages passes the engine's copy-on-write fork on (mm.PageForker):
// without it, a fork would copy the parent's memory.
func (c *meteredCPU) ForkPages(from mm.Backend, rs []mm.Range) (uint64, error) {
	if f, ok := c.CPU.(mm.PageForker); ok {
		return f.ForkPages(from, rs)
	}
	return 0, fmt.Errorf("fork: the engine cannot copy on write: %w", errors.ErrUnsupported)
}

// Resident passes the engine's answer on (mm.PageResident): a fork reads
// only the pages written.
func (c *meteredCPU) Resident(addr, size uint64) ([]bool, error) {
	if r, ok := c.CPU.(mm.PageResident); ok {
		return r.Resident(addr, size)
	}
	return nil, fmt.Errorf("resident %#x+%#x: unknown", addr, size)
}

func (c *meteredCPU) SetClock(ns int64) {
	c.start = ns
	c.CPU.SetClock(ns)
}

func (c *meteredCPU) SetTid(tid uint32) {
	if r := c.run; !r.seen[tid] {
		r.seen[tid] = true
		r.threads.Store(int64(len(r.seen)))
	}
	c.CPU.SetTid(tid)
}

func (c *meteredCPU) Run(pc, budget uint64) cpu.Stop {
	lc, _ := c.CPU.(liveCounter)
	if lc != nil {
		c.s.liveMu.Lock()
		c.s.live = lc
		c.s.liveMu.Unlock()
	}
	st := c.CPU.Run(pc, budget)
	c.s.liveMu.Lock()
	c.s.live = nil
	c.s.insns.Add(st.Insns)
	if c.s.run.Load() != c.run {
		c.s.run.Store(c.run)
	}
	if end := c.start + int64(st.Insns)*c.s.nsPerInsn; end > c.run.clock.Load() {
		c.run.clock.Store(end)
	}
	c.s.liveMu.Unlock()
	return st
}

// statusPhase is an analysis with nothing to analyse, listed before the
// others: its Finish, called first when the guest has ended, says that
// the analyses are finishing (a P3 or causal run may take a while there),
// unless the guest runs on (a followed process exec'd: its analyses
// finished, the new image's start).
type statusPhase struct{ s *Status }

func (statusPhase) Events([]trace.Event) {}

func (p statusPhase) Finish() {
	p.s.finishedAt.Store(p.s.insns.Load())
	p.s.finishing.Store(true)
}

// Counter is a count of work units done beside the run (P3 path copies,
// causal shards) for the status line: the code that runs them calls Done
// as each ends; the status goroutine reads it.
type Counter struct {
	what        string
	done, total atomic.Int64
}

// Counter returns a counter of total units named what ("copies") shown on
// the status line; on a nil status it still counts, and shows nothing.
func (s *Status) Counter(what string, total int) *Counter {
	c := &Counter{what: what}
	c.total.Store(int64(total))
	s.Watch(c)
	return c
}

// Done counts one unit done.
func (c *Counter) Done() { c.done.Add(1) }

// Progress implements Progresser.
func (c *Counter) Progress() (string, int, int) {
	return c.what, int(c.done.Load()), int(c.total.Load())
}
