package parallel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"emuprof/trace"
)

// A small model of package sched (which analyses must not import): threads
// with virtual clocks, picks in clock order (ties: least CPU work, then
// tid), slices of at most a quantum placed on the virtual CPU that lets
// them start earliest, futex-like locks with FIFO waiters, timed waits and
// sleeps whose deadlines compete in the pick. It writes the event stream
// the guest would, so the incremental sweep's watermark is tested against
// the scheduler's real ordering rules on random programs.

type simOp struct {
	kind int // opWork, opLock, opUnlock, opSleep, opSpawn
	fn   string
	n    uint32
	lock uint64
	d    int64 // sleep length, or timed lock timeout (0: none)
	kids []simOp
}

const (
	opWork = iota
	opLock
	opUnlock
	opSleep
	opSpawn
)

type simThread struct {
	tid          uint32
	clock, runNs int64
	state        int // 0 runnable, 1 blocked, 2 exited
	deadline     int64
	waitAddr     uint64
	waitKind     trace.WaitKind
	ops          []simOp
	pc           int
	left         uint32 // instructions left in the current work op (0: not started)
	inLock       bool   // inside pthread_mutex_lock (blocked or retrying)
	entered      bool   // its first block ran
}

type sim struct {
	s       *script
	rng     *rand.Rand
	cpuFree []int64
	threads []*simThread
	quantum uint32
	maxNs   int64 // under a time model: the most an instruction costs (0: 1 ns each)
	owner   map[uint64]uint32
	waiters map[uint64][]*simThread
	nextTid uint32
}

func (m *sim) cpuFor(t *simThread) int {
	fit, first := -1, 0
	for i, f := range m.cpuFree {
		if f <= t.clock && (fit < 0 || f > m.cpuFree[fit]) {
			fit = i
		}
		if f < m.cpuFree[first] {
			first = i
		}
	}
	if fit < 0 {
		return first
	}
	return fit
}

func (m *sim) pick() *simThread {
	var best *simThread
	var bestAt int64
	for _, t := range m.threads {
		var at int64
		switch {
		case t.state == 0:
			at = t.clock
		case t.state == 1 && t.deadline > 0:
			at = max(t.clock, t.deadline)
		default:
			continue
		}
		if best == nil || at < bestAt || at == bestAt && t.runNs < best.runNs {
			best, bestAt = t, at
		}
	}
	if best != nil && best.state == 1 { // timeout
		m.dequeue(best)
		m.resume(best, bestAt, 0)
	}
	return best
}

func (m *sim) alone(t *simThread) bool {
	for _, u := range m.threads {
		if u != t && (u.state == 0 || u.state == 1 && u.deadline > 0) {
			return false
		}
	}
	return true
}

func (m *sim) dequeue(t *simThread) {
	if t.waitKind != futex {
		return
	}
	q := m.waiters[t.waitAddr]
	for i, u := range q {
		if u == t {
			m.waiters[t.waitAddr] = append(q[:i:i], q[i+1:]...)
			return
		}
	}
}

func (m *sim) resume(t *simThread, at int64, waker uint32) {
	t.state = 0
	t.clock = max(t.clock, at)
	m.s.wake(t.tid, waker, t.clock, t.waitKind, t.waitAddr)
}

func (m *sim) block(t *simThread, kind trace.WaitKind, addr uint64, deadline int64) {
	t.state, t.waitKind, t.waitAddr, t.deadline = 1, kind, addr, deadline
	m.s.tr.SetClock(t.tid, t.clock)
	m.s.blockOn(t.tid, kind, addr)
	if kind == futex {
		m.waiters[addr] = append(m.waiters[addr], t)
	}
}

// slice runs t from the pick until a quantum ends or a system call.
func (m *sim) slice(t *simThread) {
	c := m.cpuFor(t)
	start := max(t.clock, m.cpuFree[c])
	budget := m.quantum
	if m.alone(t) {
		budget = ^uint32(0)
	}
	var insns uint32
	var ns int64
	m.s.tr.SetClock(t.tid, start)
	if !t.entered {
		m.s.enter(t.tid)
		t.entered = true
	}
	charge := func() {
		m.cpuFree[c] = start + ns
		t.runNs += ns
		t.clock = start + ns
	}
	for {
		if t.pc == len(t.ops) {
			charge()
			t.state = 2
			m.s.exit(t.tid)
			return
		}
		op := &t.ops[t.pc]
		switch op.kind {
		case opWork:
			if t.left == 0 {
				m.s.call(t.tid, op.fn)
				t.left = op.n
			}
			for t.left > 0 {
				b := min(uint32(1+m.rng.IntN(12)), t.left)
				if insns > 0 && insns+b > budget {
					charge()
					return
				}
				d := int64(b)
				if m.maxNs > 1 {
					d += m.rng.Int64N(int64(b)*(m.maxNs-1) + 1)
				}
				m.s.workNs(t.tid, b, d)
				insns += b
				ns += d
				t.left -= b
			}
			m.s.ret(t.tid)
			t.pc++
		case opLock:
			if !t.inLock {
				m.s.call(t.tid, "pthread_mutex_lock")
				t.inLock = true
			}
			if m.owner[op.lock] == 0 {
				m.owner[op.lock] = t.tid
				m.s.ret(t.tid)
				t.inLock = false
				t.pc++
				continue
			}
			charge()
			deadline := int64(0)
			if op.d > 0 {
				deadline = t.clock + op.d
			}
			m.block(t, futex, op.lock, deadline)
			return
		case opUnlock:
			m.owner[op.lock] = 0
			t.pc++
			if q := m.waiters[op.lock]; len(q) > 0 {
				m.s.call(t.tid, "pthread_mutex_unlock")
				charge()
				w := q[0]
				m.waiters[op.lock] = q[1:]
				m.resume(w, t.clock, t.tid)
				m.s.ret(t.tid)
				return
			}
		case opSleep:
			t.pc++
			charge()
			m.block(t, sleep, 0, t.clock+op.d)
			return
		case opSpawn:
			t.pc++
			charge()
			m.nextTid++
			k := &simThread{tid: m.nextTid, clock: t.clock, ops: op.kids}
			m.threads = append(m.threads, k)
			m.s.spawn(k.tid, t.tid, t.clock, fmt.Sprintf("thread%d", k.tid%3))
			return
		}
	}
}

func randomOps(rng *rand.Rand, depth int) []simOp {
	var ops []simOp
	for range 2 + rng.IntN(6) {
		switch r := rng.IntN(10); {
		case r < 4:
			ops = append(ops, simOp{kind: opWork, fn: fmt.Sprintf("f%d", rng.IntN(4)), n: uint32(1 + rng.IntN(120))})
		case r < 7:
			l := uint64(0x1000 + 8*rng.IntN(2))
			timeout := int64(0)
			if rng.IntN(4) == 0 {
				timeout = int64(1 + rng.IntN(60))
			}
			ops = append(ops, simOp{kind: opLock, lock: l, d: timeout},
				simOp{kind: opWork, fn: "crit", n: uint32(1 + rng.IntN(40))}, simOp{kind: opUnlock, lock: l})
		case r < 8:
			ops = append(ops, simOp{kind: opSleep, d: int64(1 + rng.IntN(80))})
		default:
			if depth < 2 {
				ops = append(ops, simOp{kind: opSpawn, kids: randomOps(rng, depth+1)})
			}
		}
	}
	return ops
}

// simulate returns the stream of a random program on n CPUs.
func simulate(seed uint64, n int, quantum uint32) *script {
	return simulateTimed(seed, n, quantum, 0)
}

// simulateTimed is simulate under a time model: an instruction costs 1 to
// maxNs ns.
func simulateTimed(seed uint64, n int, quantum uint32, maxNs int64) *script {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &sim{s: newScript(), rng: rng, cpuFree: make([]int64, n), quantum: quantum, maxNs: maxNs,
		owner: map[uint64]uint32{}, waiters: map[uint64][]*simThread{}, nextTid: 1}
	main := &simThread{tid: 1, ops: randomOps(rng, 0)}
	m.threads = []*simThread{main}
	m.s.spawn(1, 0, 0, "main")
	for steps := 0; steps < 100000; steps++ {
		t := m.pick()
		if t == nil {
			break // everything exited (or a deadlock: threads stay blocked)
		}
		m.slice(t)
	}
	return m.s
}

// On random programs scheduled like package sched does, the incremental
// sweep (fed event by event) never sees an interval arrive behind its
// watermark, gives the same profile as sweeping at the end, and the
// invariants hold.
func TestRandomSchedules(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		n := []int{1, 2, 3, 4, 8}[seed%5]
		q := uint32(10 + seed%4*15)
		s := simulate(seed, n, q)
		t.Run(fmt.Sprintf("seed%d-cpus%d", seed, n), func(t *testing.T) {
			r := s.runAll(t, Config{CPUs: n, Quantum: uint64(q)})
			if r.Total.Work == 0 {
				t.Error("no work")
			}
			s.runAll(t, Config{CPUs: n, Quantum: uint64(q), IdleBase: "threads"})
		})
	}
}

// Under a time model (instructions of 1 to 50 ns, Block events' Size in
// ns), the watermark counted in instructions (runWindow) lets nothing
// arrive behind it and gives the profile of sweeping at the end (it fails
// with a quarter of runWindow's span).
func TestRandomSchedulesTimed(t *testing.T) {
	const maxNs = 50
	for seed := uint64(1); seed <= 200; seed++ {
		n := []int{1, 2, 3, 4, 8}[seed%5]
		q := uint32(10 + seed%4*15)
		s := simulateTimed(seed, n, q, maxNs)
		t.Run(fmt.Sprintf("seed%d-cpus%d", seed, n), func(t *testing.T) {
			cfg := Config{CPUs: n, Quantum: uint64(q), MaxInsnNs: maxNs}
			r := s.runAll(t, cfg)
			if r.Total.Work == 0 {
				t.Error("no work")
			}
			s.runAll(t, Config{CPUs: n, Quantum: uint64(q), MaxInsnNs: maxNs, IdleBase: "threads"})
			s.runSweeps(t, cfg, true, seed)
		})
	}
}
