package guest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"emuprof/cpu"
	"emuprof/mm"
	"emuprof/sched"
	"emuprof/syscalls"
	"emuprof/trace"
)

// Processes: fork, vfork and clone without CLONE_THREAD create a process
// with its own engine (cpu.CPU from Config.NewCPU), a copy of the parent's
// memory, its own kernel (a copy of the descriptor table sharing the open
// files), scheduled with every other thread by the one scheduler. Pids are
// tids, allocated in order from --pid. The analyses follow the first
// process only; the trace digest covers every process.

// machine is what all the processes of a run share.
type machine struct {
	root    *Process
	cur     *sched.Thread // the thread whose registers are in its engine
	insns   uint64
	nextTid int
	// owner is the process of every thread (live or zombie).
	owner map[int]*Process
	// forks and forkBytes count the forks and the memory they copied.
	forks, forkBytes uint64
	// ttySid is the session that owns the terminal (the first
	// process's), fgPgrp the terminal's foreground group (pgrp.go).
	ttySid, fgPgrp int
	// warnings and unsupported are those of the processes that ended.
	warnings    []string
	unsupported []uint64
	sig         sigMachine // signal.go
	// hostFor is the deadline the loop last gave the host in real time,
	// hostWaited how long it has waited for it (--net host: pumpHost).
	hostFor    int64
	hostWaited time.Duration
}

const (
	wNOHANG   = 1
	wEXITED   = 4
	wNOWAIT   = 0x1000000
	pALL      = 0
	pPID      = 1
	pPIDFD    = 3
	sigCHLD   = 17
	cldEXITED = 1
	cldKILLED = 2

	// vforkKey marks the wait of a vfork parent (WaitJoin on the child).
	vforkKey = 1 << 32
)

// alive counts p's threads that have not exited.
func (p *Process) alive() int {
	n := 0
	for tid := range p.threads {
		if t := p.sched.Thread(tid); t != nil && t.State != sched.Exited {
			n++
		}
	}
	return n
}

// tids returns p's thread ids in order.
func (p *Process) tids() []int {
	ts := make([]int, 0, len(p.threads))
	for tid := range p.threads {
		ts = append(ts, tid)
	}
	slices.Sort(ts)
	return ts
}

// fork creates a child process of thread t (r: its registers at the
// syscall). A vfork parent waits until the child execs or exits.
func (p *Process) fork(t *sched.Thread, c *syscalls.Call, r *cpu.Regs, flags, sp, parentTid, childTid, tls uint64) (syscalls.Outcome, *Result) {
	if p.cfg.NewCPU == nil {
		return ret(syscalls.ENOSYS.Ret()), nil
	}
	pid := p.m.nextTid
	c2, syms, followed, err := p.newChildCPU(pid)
	if err != nil {
		return syscalls.Outcome{}, p.internal(fmt.Errorf("fork: starting an emulator: %w", err))
	}
	p.m.nextTid++
	var as *mm.AddressSpace
	var copied uint64
	borrowed := false
	if flags&cloneVfork != 0 && flags&cloneVM != 0 {
		as, borrowed, err = p.as.Vfork(c2)
	} else {
		as, copied, err = p.as.Fork(c2)
	}
	if err != nil {
		c2.Close()
		return syscalls.Outcome{}, p.internal(fmt.Errorf("fork: %w", err))
	}
	lazyTouch(c2, as)
	p.m.forks++
	p.m.forkBytes += copied
	cfg := p.cfg
	cfg.Analyses, cfg.TimeControl, cfg.Pid = followed, nil, pid
	if followed == nil {
		cfg.Needs = trace.Needs{}
	} else {
		cfg.Needs = p.m.root.cfg.Needs
	}
	q := &Process{cfg: cfg, cpu: c2, as: as, layout: p.layout, sched: p.sched, m: p.m,
		threads: map[int]*threadState{}, digest: p.digest, pid: pid, parent: p, forkParent: p.pid,
		pgid: p.pgid, sid: p.sid, name: p.name}
	q.syms = syms
	q.kernel = p.kernel.Fork(t.Tid, pid, as)
	q.bindKernel()
	q.model = newModel(cfg, c2, nil) // a child's engine has no speedups (session.otherEngines)
	c2.SetSink(q.deliver)
	c2.SetRDTSC(q.rdtsc)

	child := *r
	child.RAX = 0
	child.RCX, child.R11 = r.RIP, r.RFLAGS
	if sp != 0 {
		child.RSP = sp
	}
	if flags&cloneSettls != 0 {
		child.FSBase = tls
	}
	if err := c2.WriteRegs(&child); err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	ctx, err := c2.NewContext()
	if err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	if err := c2.Save(ctx); err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	q.threads[pid] = &threadState{ctx: ctx}
	if flags&cloneChildCleartid != 0 {
		q.kernel.SetClearChildTID(pid, childTid)
	}
	if flags&cloneChildSettid != 0 {
		_ = q.writeU32(childTid, uint32(pid))
	}
	if flags&cloneParentSettid != 0 {
		_ = p.writeU32(parentTid, uint32(pid))
	}
	p.children = append(p.children, q)
	p.m.owner[pid] = q
	p.sched.Spawn(pid, t)
	if p.digest != nil {
		p.hash(0xf02c, uint64(t.Tid), uint64(pid))
	}
	// A CLONE_VM child that got a copy gives its stores back (copyBack).
	q.sharedVM = flags&cloneVM != 0 && !borrowed
	q.borrows = borrowed
	if flags&cloneVfork != 0 {
		q.vforker = t
		p.sched.Block(t, sched.Wait{Kind: sched.WaitJoin, Addr: vforkKey | uint64(pid), What: fmt.Sprintf("vfork child %d", pid)})
		p.block(t, c)
		return syscalls.Outcome{Action: syscalls.Block}, nil
	}
	return ret(uint64(pid)), nil
}

// bindKernel connects the kernel's callbacks to p.
func (p *Process) bindKernel() {
	p.kernel.OnMapFile = p.onMapFile
	p.kernel.OnPipeEvent = p.pipeChanged
	p.kernel.OnLockEvent = p.lockReleased
	p.kernel.Threads = p.alive
	p.kernel.Tree = tree{p}
	p.bindSignals()
	// arch_prctl: the FS base lives in the registers of the syscall in
	// progress, which the run loop writes back after the call.
	p.kernel.SetFS = func(_ int, base uint64) { p.sysRegs.FSBase = base }
	p.kernel.GetFS = func(int) uint64 { return p.sysRegs.FSBase }
	p.kernel.SetGS = func(_ int, base uint64) { p.sysRegs.GSBase = base }
	p.kernel.GetGS = func(int) uint64 { return p.sysRegs.GSBase }
}

// releaseVfork lets the parent a vfork suspended go on (the child exec'd or
// exited).
func (p *Process) releaseVfork() {
	if p.vforker != nil {
		p.sched.Wake(p.vforker, p.m.cur, int64(p.pid))
		p.vforker = nil
	}
}

// processExit ends process p, whose threads have all exited, with wait
// status ws: its descriptors close (pipe readers see end of file), its
// children become orphans, its parent may reap it.
func (p *Process) processExit(ws int) {
	p.wstatus = ws
	if p != p.m.root {
		partial := ""
		if ws&0x7f != 0 {
			partial = fmt.Sprintf("process %d killed by %s", p.pid, SignalName(ws&0x7f))
		}
		p.endImage(partial)
	}
	p.cpu.Drain()
	if p.sharedVM && p.parent != nil {
		p.copyBack()
	}
	if err := p.kernel.Close(); err != nil {
		p.m.warnings = append(p.m.warnings, err.Error())
	}
	p.releaseVfork()
	p.notifyOrphans() // PR_SET_PDEATHSIG (signal.go)
	for _, c := range p.children {
		c.parent = nil
		if c.zombie {
			c.reap()
		}
	}
	p.children = nil
	if p == p.m.root {
		return // the run's outcome; Run collects the rest
	}
	p.m.warnings = append(p.m.warnings, p.kernel.Warnings()...)
	p.m.unsupported = append(p.m.unsupported, p.kernel.Unsupported()...)
	p.zombie = true
	defer p.pidfdsChanged()
	if p.parent == nil {
		p.reap()
		return
	}
	par := p.parent
	if p.notifyParent() { // SIGCHLD; ignored, no zombie is left
		p.reap()
	}
	p.sched.WakeAll(p.m.cur, sched.WaitJoin, uint64(par.pid))
}

// reap forgets the exited process p (waited for, or an orphan).
func (p *Process) reap() {
	defer p.pidfdsChanged()
	if par := p.parent; par != nil {
		par.children = slices.DeleteFunc(par.children, func(c *Process) bool { return c == p })
	}
	p.zombie = false
	for tid := range p.threads {
		delete(p.m.owner, tid)
	}
	p.cpu.Close()
}

// killed ends process p as if killed by sig (a crash of a process that is
// not the first: the first one's ends the run).
func (p *Process) killed(sig int) {
	for _, tid := range p.tids() {
		if t := p.sched.Thread(tid); t != nil && t.State != sched.Exited {
			t.ExitStatus = 128 + sig
			p.sched.Exit(t)
		}
	}
	p.exited, p.exitStatus = true, 128+sig
	p.processExit(sig & 0x7f)
}

// getppid: the parent's pid; an orphan's parent is init.
func (p *Process) getppid() uint64 {
	switch {
	case p.parent != nil:
		return uint64(p.parent.pid)
	case p == p.m.root:
		return uint64(p.pid - 1)
	}
	return 1
}

// waitable returns p's children that a wait for pid selects (-1, 0 and
// process groups: any child; there are no process groups yet).
func (p *Process) waitable(pid int64) []*Process {
	var out []*Process
	for _, c := range p.children {
		if pid <= 0 || int64(c.pid) == pid {
			out = append(out, c)
		}
	}
	return out
}

// wait4 reaps a zombie child or parks t until one exits.
func (p *Process) wait4(t *sched.Thread, c *syscalls.Call) syscalls.Outcome {
	pid, statusAddr, options, rusage := int64(int32(c.Args[0])), c.Args[1], c.Args[2], c.Args[3]
	// kernel_wait4: WNOHANG, WUNTRACED, WCONTINUED, __WNOTHREAD, __WALL, __WCLONE.
	if uint32(options)&^(1|2|8|0x20000000|0x40000000|0x80000000) != 0 {
		return ret(syscalls.EINVAL.Ret())
	}
	cands := p.waitable(pid)
	if len(cands) == 0 {
		return ret(syscalls.ECHILD.Ret())
	}
	for _, ch := range cands {
		if !ch.zombie {
			continue
		}
		if statusAddr != 0 {
			if p.writeU32(statusAddr, uint32(ch.wstatus)) != nil {
				return ret(syscalls.EFAULT.Ret())
			}
		}
		if rusage != 0 {
			if p.cpu.WriteMem(rusage, make([]byte, 144)) != nil {
				return ret(syscalls.EFAULT.Ret())
			}
		}
		ch.reap()
		return ret(uint64(ch.pid))
	}
	if options&wNOHANG != 0 {
		return ret(0)
	}
	p.parkWait(t, c, "wait4")
	return syscalls.Outcome{Action: syscalls.Block}
}

// waitid: wait4 with a siginfo_t.
func (p *Process) waitid(t *sched.Thread, c *syscalls.Call) syscalls.Outcome {
	idtype, id, infop, options := int(c.Args[0]), int64(int32(c.Args[1])), c.Args[2], c.Args[3]
	if options&wEXITED == 0 {
		return ret(syscalls.EINVAL.Ret())
	}
	pid := int64(-1)
	nonblock := false
	switch idtype {
	case pALL:
	case pPID:
		if id <= 0 {
			return ret(syscalls.EINVAL.Ret())
		}
		pid = id
	case 2: // P_PGID
	case pPIDFD:
		if id < 0 {
			return ret(syscalls.EINVAL.Ret())
		}
		fdPid, nb, e := p.kernel.PidFD(int(id))
		if e != 0 {
			return ret(e.Ret())
		}
		pid, nonblock = int64(fdPid), nb
	default:
		return ret(syscalls.EINVAL.Ret())
	}
	cands := p.waitable(pid)
	if len(cands) == 0 {
		return ret(syscalls.ECHILD.Ret())
	}
	for _, ch := range cands {
		if !ch.zombie {
			continue
		}
		if infop != 0 {
			info := make([]byte, 128)
			binary.LittleEndian.PutUint32(info[0:], sigCHLD)
			code, status := cldEXITED, ch.wstatus>>8&0xff
			if ch.wstatus&0x7f != 0 {
				code, status = cldKILLED, ch.wstatus&0x7f
			}
			binary.LittleEndian.PutUint32(info[8:], uint32(code))
			binary.LittleEndian.PutUint32(info[16:], uint32(ch.pid))
			binary.LittleEndian.PutUint32(info[20:], uint32(p.cfg.Uid))
			binary.LittleEndian.PutUint32(info[24:], uint32(status))
			if p.cpu.WriteMem(infop, info) != nil {
				return ret(syscalls.EFAULT.Ret())
			}
		}
		if options&wNOWAIT == 0 {
			ch.reap()
		}
		return ret(0)
	}
	if options&wNOHANG != 0 {
		if infop != 0 && p.cpu.WriteMem(infop, make([]byte, 128)) != nil {
			return ret(syscalls.EFAULT.Ret())
		}
		return ret(0)
	}
	if nonblock {
		return ret(syscalls.EAGAIN.Ret()) // a non-blocking pidfd's child still runs
	}
	p.parkWait(t, c, "waitid")
	return syscalls.Outcome{Action: syscalls.Block}
}

// parkWait parks t until a child of p exits; the call is then re-executed.
func (p *Process) parkWait(t *sched.Thread, c *syscalls.Call, what string) {
	p.sched.Block(t, sched.Wait{Kind: sched.WaitJoin, Addr: uint64(p.pid), Restart: true, What: what + " for a child"})
	p.block(t, c)
}

// copyBack gives the parent what a CLONE_VM child that exits without
// exec'ing stored in the memory they would have shared: posix_spawn's
// child reports a failed exec that way (its errno, in the parent's
// memory). The parent was suspended (vfork) meanwhile, so the child's
// writable memory is the shared memory's content.
func (p *Process) copyBack() {
	par := p.parent
	buf := make([]byte, 1<<20)
	for _, v := range p.as.VMAs() {
		if v.Prot&mm.ProtWrite == 0 || !par.as.Mapped(v.Start, v.Size()) {
			continue
		}
		for a := v.Start; a < v.End; a += uint64(len(buf)) {
			b := buf[:min(uint64(len(buf)), v.End-a)]
			if p.as.Backend().ReadMem(a, b) != nil || par.as.Backend().WriteMem(a, b) != nil {
				break
			}
		}
	}
}
