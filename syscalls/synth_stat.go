package syscalls

import (
	"fmt"
	"path"

	"emuprof/mm"
)

// /proc/self/stat, /proc/self/statm and /proc/loadavg (fs/proc/array.c,
// loadavg.c), from the address space, the signal state and the virtual
// clock, as ps and top read them.

// memFigures are a process's memory sizes in bytes, by kind of mapping.
type memFigures struct{ size, rssAnon, rssFile, data, stk, exe, lib uint64 }

// memory sums the address space's mappings (memory is always resident).
func (k *Kernel) memory() memFigures {
	var m memFigures
	for _, v := range k.as.VMAs() {
		n := v.Size()
		m.size += n
		file := v.Name != "" && v.Name[0] == '/'
		switch {
		case v.Name == "[stack]":
			m.stk += n
		case v.Prot&mm.ProtWrite != 0 && !v.Shared:
			m.data += n
		}
		if v.Prot&mm.ProtExec != 0 && file {
			if v.Name == k.exeGuest {
				m.exe += n
			} else {
				m.lib += n
			}
		}
		if file {
			m.rssFile += n
		} else {
			m.rssAnon += n
		}
	}
	return m
}

// commName is the process's comm (the main thread's name).
func (k *Kernel) commName() string {
	name := path.Base(k.exeGuest)
	if t := k.threads[k.cfg.Pid]; t != nil && t.name != "" {
		name = t.name
	}
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// procStat renders /proc/PID/stat's 52 fields, the process in state
// (R for the one reading it). Times are virtual: utime is the reading thread's
// clock, as times(2) says; starttime counts from the emulated boot, one
// second before the run. Without the process tree, the process leads its
// group and session.
func (k *Kernel) procStat(state byte) []byte {
	m := k.memory()
	pgid, sid := k.tree().Group()
	threads := 1
	if k.Threads != nil {
		threads = k.Threads()
	}
	var blocked, pending uint64
	if t := k.threads[k.tid]; t != nil {
		blocked, pending = t.sigmask, t.pending.mask|k.sharedSigs.mask
	}
	var ign, cgt uint64
	for sig := 1; sig <= nSig; sig++ {
		switch k.sigactions[sig].handler {
		case sigDfl:
		case sigIgn:
			ign |= sigBit(sig)
		default:
			cgt |= sigBit(sig)
		}
	}
	tick := int64(1e9 / clkTck)
	rsslim := k.rlimits[rlimitRSS].cur
	var startCode, endCode, startStack uint64
	for _, v := range k.as.VMAs() {
		if v.Name == k.exeGuest && v.Prot&mm.ProtExec != 0 && startCode == 0 {
			startCode, endCode = v.Start, v.End
		}
		if v.Name == "[stack]" {
			startStack = v.End
		}
	}
	tty, tpgid := 0, -1
	if fg, e := k.tree().Foreground(); e == 0 && k.onTerminal() {
		tty, tpgid = 0x8800, fg // /dev/pts/0
	}
	return fmt.Appendf(nil, "%d (%s) %c %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d 0 %d %d %d %d "+
		"%d %d %d 0 0 %d %d %d %d 0 0 0 %d %d 0 %d 0 0 0 0 0 0 0 0 0 0 0\n",
		k.cfg.Pid, k.commName(), state, k.ppid(), pgid, sid, tty, tpgid, 0x400000, 0, 0, 0, 0,
		k.now/tick, 0, 0, 0, 20+k.nice, k.nice, threads,
		(MonotonicOffset+k.start)/tick, m.size, (m.rssAnon+m.rssFile)/mm.PageSize, rsslim,
		startCode, endCode, startStack,
		pending&^ign, blocked, ign, cgt, sigChld, k.firstCPU(), k.policy)
}

// procStatm renders /proc/self/statm: size, resident, shared, text, lib
// (0 since Linux 2.6), data and stack, dt (0), in pages.
func (k *Kernel) procStatm() []byte {
	m := k.memory()
	p := uint64(mm.PageSize)
	return fmt.Appendf(nil, "%d %d %d %d 0 %d 0\n", m.size/p, (m.rssAnon+m.rssFile)/p, m.rssFile/p,
		m.exe/p, (m.data+m.stk)/p)
}

// loadavg renders /proc/loadavg as Linux computes it (calc_load, every 5
// s of uptime from the emulated boot) with the process's live threads
// as the runnable tasks at every sample: the run's own load, never the
// host's.
func (k *Kernel) loadavg() []byte {
	const (
		fshift = 11
		fixed1 = 1 << fshift
		freq   = 5_000_000_000 // LOAD_FREQ: 5 s
	)
	threads := 1
	if k.Threads != nil {
		threads = k.Threads()
	}
	active := uint64(threads) * fixed1
	exps := [3]uint64{1884, 2014, 2037} // EXP_1, EXP_5, EXP_15
	var loads [3]uint64
	for n := (MonotonicOffset + k.now) / freq; n > 0; n-- {
		for i, e := range exps {
			l := loads[i]*e + active*(fixed1-e)
			if active >= l/fixed1 {
				l += fixed1 - 1
			}
			loads[i] = l / fixed1
		}
		if loads == [3]uint64{active, active, active} {
			break // converged: more samples change nothing
		}
	}
	var b []byte
	for _, l := range loads {
		l += fixed1 / 200 // LOAD_INT/LOAD_FRAC round to 0.01
		b = fmt.Appendf(b, "%d.%02d ", l>>fshift, (l&(fixed1-1))*100>>fshift)
	}
	last := k.cfg.Pid
	for tid := range k.threads {
		last = max(last, tid)
	}
	return fmt.Appendf(b, "1/%d %d\n", threads, last)
}

// tree is the process's place among the run's processes: the runtime's,
// or without one a process alone.
func (k *Kernel) tree() ProcessTree {
	if k.Tree == nil {
		return loneProcess{k.cfg.Pid}
	}
	return k.Tree
}

// loneProcess is the tree of a process without the runtime's: it leads
// its group and session, on no terminal.
type loneProcess struct{ pid int }

func (l loneProcess) Ppid() int                { return l.pid - 1 }
func (l loneProcess) Foreground() (int, Errno) { return 0, eNOTTY }
func (l loneProcess) SetForeground(int) Errno  { return eNOTTY }
func (l loneProcess) Group() (pgid, sid int)   { return l.pid, l.pid }

// onTerminal reports whether a standard stream is a terminal.
func (k *Kernel) onTerminal() bool {
	for fd := range min(3, len(k.fds)) {
		if f := k.fds[fd].f; f != nil {
			if t, ok := f.ops.(ttyOps); ok && t.isTTY() {
				return true
			}
		}
	}
	return false
}

// firstCPU is the first CPU of the calling thread's affinity mask.
func (k *Kernel) firstCPU() int {
	cpu := 0
	for m := k.affinity(k.tid); cpu < 8*len(m) && m[cpu/8]&(1<<(cpu%8)) == 0; cpu++ {
	}
	return cpu
}

func (l loneProcess) Pids() []int              { return []int{l.pid} }
func (l loneProcess) Peer(int) (*Kernel, byte) { return nil, 0 }

// peerNode is /proc/PID/... of another process of the run, q, in state:
// its stat, statm, status and comm, rendered from its kernel.
func peerNode(p, rest string, q *Kernel, state byte) *synthNode {
	of := func(f func() []byte) *synthNode {
		return fileNode(p, func(*Kernel) []byte { return f() })
	}
	switch rest {
	case "":
		return dirNode(p, "cmdline", "comm", "stat", "statm", "status")
	case "/cmdline":
		return of(func() []byte { return q.cmdline })
	case "/stat":
		return of(func() []byte { return q.procStat(state) })
	case "/statm":
		return of(q.procStatm)
	case "/status":
		return of(q.procStatus)
	case "/comm":
		return of(func() []byte { return []byte(q.commName() + "\n") })
	}
	return nil
}

// procSysStat renders /proc/stat: CPU times in ticks since the emulated
// boot (the reading thread's virtual time as user time on cpu0, the rest
// idle), the boot time (btime, what ps needs for start times) and the
// process counts.
func (k *Kernel) procSysStat() []byte {
	tick := int64(1e9 / clkTck)
	up := monotonic(k.now) / tick
	user := min(k.now/tick, up)
	var b []byte
	b = fmt.Appendf(b, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", user, up*int64(k.cfg.CPUs)-user)
	for i := range k.cfg.CPUs {
		u := int64(0)
		if i == 0 {
			u = user
		}
		b = fmt.Appendf(b, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, u, up-u)
	}
	pids := k.tree().Pids()
	return fmt.Appendf(b, "intr 0\nctxt 0\nbtime %d\nprocesses %d\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		(k.cfg.EpochNanos-MonotonicOffset)/1e9, len(pids))
}

// SetCmdline records the arguments the image was started with
// (/proc/PID/cmdline).
func (k *Kernel) SetCmdline(args []string) {
	var b []byte
	for _, a := range args {
		b = append(append(b, a...), 0)
	}
	k.cmdline = b
}
