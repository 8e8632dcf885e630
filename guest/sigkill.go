// Signals between processes: kill, tkill and rt_sigqueueinfo to another
// process, fatal signals and their latency, and SIGCHLD to a parent.

package guest

import (
	"maps"
	"math"
	"slices"

	"emuprof/sched"
	"emuprof/syscalls"
)

// killedBySignal ends process p, whose default action for sig is death,
// whatever thread is running.
func (p *Process) killedBySignal(sig int) {
	if p == p.m.root {
		p.exitGroup(128 + sig)
		p.exited, p.exitStatus = true, 128+sig
		p.processExit(sig & 0x7f)
		return
	}
	p.killed(sig)
}

// sendTo sends sig from thread t of p to process q (kill(2)): its
// handler runs, or its default action kills it.
func (p *Process) sendTo(t *sched.Thread, q *Process, sig int) {
	if sig == 0 || q.exited {
		return
	}
	pid, uid := p.kernel.Identity()
	res := q.kernel.Send(q.pid, syscalls.KillInfo(sig, syscalls.SIUser, pid, uid), true)
	if p.digest != nil {
		p.hash(0x6b11, uint64(q.pid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
}

// threadKillTo is tkill or tgkill to thread tid of another process q.
func (p *Process) threadKillTo(t *sched.Thread, q *Process, tid, sig int) syscalls.Outcome {
	if sig < 0 || sig > 64 {
		return ret(syscalls.EINVAL.Ret())
	}
	if th := p.sched.Thread(tid); th == nil || th.State == sched.Exited || q.exited {
		return ret(syscalls.ESRCH.Ret())
	}
	if sig == 0 {
		return ret(0)
	}
	pid, uid := p.kernel.Identity()
	res := q.kernel.Send(tid, syscalls.KillInfo(sig, syscalls.SITkill, pid, uid), false)
	if p.digest != nil {
		p.hash(0x6b13, uint64(tid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
	return ret(0)
}

// sigqueueTo is rt_sigqueueinfo to another process pid.
func (p *Process) sigqueueTo(t *sched.Thread, c *syscalls.Call, pid int) syscalls.Outcome {
	sig := int(int32(c.Args[1]))
	if sig < 0 || sig > 64 {
		return ret(syscalls.EINVAL.Ret())
	}
	info, e := p.kernel.QueuedInfo(c, sig, c.Args[2])
	if e != 0 {
		return ret(e.Ret())
	}
	q := p.m.owner[pid]
	if q == nil || q.pid != pid {
		return ret(syscalls.ESRCH.Ret())
	}
	if sig == 0 || q.exited {
		return ret(0)
	}
	res := q.kernel.Send(q.pid, info, true)
	if p.digest != nil {
		p.hash(0x6b12, uint64(q.pid), uint64(sig))
	}
	if res.Fatal {
		p.doom(q, sig, t.Clock+killLatency)
	}
	return ret(0)
}

// killLatency is the virtual time a fatal signal takes to kill another
// process. On Linux the target dies in its own context: its threads wake
// with SIGKILL pending and exit when they next run, on another CPU, tens
// of microseconds later; meanwhile the sender goes on (a shell's `kill
// $!; wait $!` is in wait before its child is gone, and reports the
// death). Killing the target within kill(2) would have its parent see
// the death, and SIGCHLD, the instant kill returns.
const killLatency = 50_000 // ns

// doom makes process q die of sig when one of its threads next runs, not
// before virtual time at.
func (p *Process) doom(q *Process, sig int, at int64) {
	s := &p.m.sig
	if s.dying == nil {
		s.dying = map[*Process]int{}
	}
	if _, ok := s.dying[q]; ok || q.exited {
		return
	}
	s.dying[q] = sig
	for _, tid := range q.tids() {
		th := p.sched.Thread(tid)
		switch {
		case th == nil || th.State == sched.Exited:
		case th.State == sched.Blocked:
			p.sched.Interrupt(th, nil, at)
		case th.Clock < at:
			p.sched.Delay(th, at-th.Clock)
		}
	}
}

// dies ends p if a fatal signal from another process doomed it; it
// reports whether it did.
func (p *Process) dies() bool {
	sig, ok := p.m.sig.dying[p]
	if !ok {
		return false
	}
	delete(p.m.sig.dying, p)
	if !p.exited {
		p.killedBySignal(sig)
	}
	return true
}

// killOthers is kill(2)'s part for other processes (kill_something_info):
// to a process, to the caller's process group (0), to every process but
// init and the caller (-1), or to group -pid. self says that the caller's
// process is a target too: the kernel sends it its signal last
// (syscalls.Task.Kill), so that its death by it comes after the others
// have theirs.
func (p *Process) killOthers(t *sched.Thread, pid, sig int) (out syscalls.Outcome, self bool) {
	if pid > 0 {
		q := p.m.owner[pid]
		if q == nil || q.pid != pid {
			return ret(syscalls.ESRCH.Ret()), false
		}
		p.sendTo(t, q, sig)
		return ret(0), false
	}
	var targets []*Process
	switch {
	case pid == 0:
		targets = p.inGroup(p.pgid)
	case pid == -1:
		for _, tid := range slices.Sorted(maps.Keys(p.m.owner)) {
			if q := p.m.owner[tid]; q.pid == tid && tid > 1 && q != p {
				targets = append(targets, q)
			}
		}
	case pid == math.MinInt32:
		return ret(syscalls.ESRCH.Ret()), false // -INT_MIN overflows
	default:
		targets = p.inGroup(-pid)
	}
	if len(targets) == 0 {
		return ret(syscalls.ESRCH.Ret()), false
	}
	for _, q := range targets {
		if q == p {
			self = true
		} else {
			p.sendTo(t, q, sig)
		}
	}
	return ret(0), self
}

// notifyOrphans sends the children of the exiting process p that asked
// for it (prctl PR_SET_PDEATHSIG) their signal, from p (as
// forget_original_parent does when their parent thread exits; emuprof
// knows the parent process, not the thread).
func (p *Process) notifyOrphans() {
	at := p.sched.Now()
	if c := p.m.cur; c != nil {
		at = c.Clock
	}
	_, uid := p.kernel.Identity()
	for _, c := range p.children {
		if c.exited || c.zombie {
			continue
		}
		for _, tid := range c.tids() {
			sig := c.kernel.PdeathSig(tid)
			if sig <= 0 || sig > 64 || !c.kernel.ThreadAlive(tid) {
				continue
			}
			if c.kernel.Send(tid, syscalls.KillInfo(sig, syscalls.SIUser, p.pid, uid), true).Fatal {
				p.doom(c, sig, at+killLatency)
			}
		}
	}
}

// notifyParent sends SIGCHLD to the parent of the exited process p
// (do_notify_parent) and reports whether p is reaped at once: its parent
// ignores SIGCHLD or set SA_NOCLDWAIT.
func (p *Process) notifyParent() (autoreap bool) {
	par := p.parent
	if par == nil || par.exited {
		return false
	}
	code, status := syscalls.CldExited, p.wstatus>>8&0xff
	if sig := p.wstatus & 0x7f; sig != 0 {
		code, status = syscalls.CldKilled, sig
		if p.wstatus&0x80 != 0 {
			code = syscalls.CldDumped
		}
	}
	var ticks int64
	for tid := range p.threads {
		if th := p.sched.Thread(tid); th != nil {
			ticks += th.RunNs / 10_000_000 // clock_t at 100 Hz
		}
	}
	_, uid := p.kernel.Identity()
	act := par.kernel.Action(17)
	if act.Handler == syscalls.SigIgn || act.Flags&syscalls.SANoCldWait != 0 {
		autoreap = true
	}
	if act.Handler != syscalls.SigIgn {
		par.kernel.Send(par.pid, syscalls.ChildInfo(code, p.pid, uid, status, ticks, 0), true)
	}
	return autoreap
}
