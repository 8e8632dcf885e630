package guest

import (
	"encoding/binary"
	"fmt"

	"emuprof/cpu"
	"emuprof/sched"
	"emuprof/syscalls"
)

// Threads and futexes (syscalls/task.go's Clone and Futex): they need the
// scheduler and the CPU's register contexts, so the runtime performs them;
// the kernel keeps the per-thread state (set_tid_address, signal masks).

// Linux ABI values.
const (
	cloneVM            = 0x100
	cloneVfork         = 0x4000
	cloneThread        = 0x10000
	cloneSettls        = 0x80000
	cloneParentSettid  = 0x100000
	cloneChildCleartid = 0x200000
	cloneChildSettid   = 0x1000000

	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexWaitRequeuePI = 11
	futexLockPI2       = 13
	futexPrivate       = 128
	futexClockRealtime = 256
)

func ret(v uint64) syscalls.Outcome { return syscalls.Outcome{Ret: v} }

// cloneFlagsErrno is copy_process's check of the flag combinations, for
// clone and clone3: 0 or the errno Linux gives before creating anything.
func cloneFlagsErrno(flags uint64) syscalls.Errno {
	const (
		cloneFS       = 0x200
		cloneSighand  = 0x800
		clonePidfd    = 0x1000
		cloneNewns    = 0x20000
		cloneDetached = 0x400000
		cloneNewuser  = 0x10000000
		cloneNewpid   = 0x20000000
	)
	switch {
	case flags&(cloneNewns|cloneFS) == cloneNewns|cloneFS,
		flags&(cloneNewuser|cloneFS) == cloneNewuser|cloneFS,
		flags&cloneThread != 0 && flags&cloneSighand == 0,
		flags&cloneSighand != 0 && flags&cloneVM == 0,
		flags&cloneThread != 0 && flags&(cloneNewuser|cloneNewpid) != 0,
		flags&clonePidfd != 0 && flags&cloneDetached != 0:
		return syscalls.EINVAL
	}
	return 0
}

// clone creates a thread sharing the address space, or without
// CLONE_THREAD a process (fork.go: with a copy of the memory, even with
// CLONE_VM, which posix_spawn uses with CLONE_VFORK). CLONE_PIDFD stores
// the parent's new pidfd of the child at pidfdAt.
func (p *Process) clone(t *sched.Thread, c *syscalls.Call, r *cpu.Regs, flags, sp, parentTid, childTid, tls, pidfdAt uint64) (syscalls.Outcome, *Result) {
	if e := cloneFlagsErrno(flags); e != 0 {
		return ret(e.Ret()), nil
	}
	if flags&0x1000 != 0 { // CLONE_PIDFD
		// put_user of the pidfd: the page must be writable by the
		// guest (the engine's own writes ignore protections).
		if !p.kernel.Accessible(pidfdAt, 4, true) || p.writeU32(pidfdAt, ^uint32(0)) != nil {
			return ret(syscalls.EFAULT.Ret()), nil
		}
		pid := p.m.nextTid
		out, end := p.clone(t, c, r, flags&^0x1000, sp, parentTid, childTid, tls, 0)
		if end == nil && (out.Action == syscalls.Block || out.Ret == uint64(pid)) {
			// A child process has no copy of it: its descriptors were
			// copied first. (With CLONE_THREAD, a thread's pidfd.)
			fd, e := p.kernel.OpenPidFD(pid, false, p.m.exitState(pid))
			if e != 0 {
				fd = -1
			}
			_ = p.writeU32(pidfdAt, uint32(fd))
		}
		return out, end
	}
	if flags&cloneThread == 0 {
		return p.fork(t, c, r, flags, sp, parentTid, childTid, tls)
	}
	if flags&cloneVM == 0 || flags&cloneVfork != 0 {
		return ret(syscalls.EINVAL.Ret()), nil // threads share the memory
	}
	tid := p.m.nextTid
	p.m.nextTid++
	child := *r
	child.RAX = 0
	child.RCX, child.R11 = r.RIP, r.RFLAGS
	if sp != 0 {
		child.RSP = sp
	}
	if flags&cloneSettls != 0 {
		child.FSBase = tls
	}
	ctx, err := p.cpu.NewContext()
	if err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	if err := p.cpu.WriteRegs(&child); err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	if err := p.cpu.Save(ctx); err != nil {
		return syscalls.Outcome{}, p.internal(err)
	}
	ts := &threadState{ctx: ctx}
	if flags&cloneChildCleartid != 0 {
		p.kernel.SetClearChildTID(tid, childTid)
	}
	p.threads[tid] = ts
	p.m.owner[tid] = p
	p.kernel.NewThread(t.Tid, tid)
	if flags&cloneParentSettid != 0 {
		_ = p.writeU32(parentTid, uint32(tid))
	}
	if flags&cloneChildSettid != 0 {
		_ = p.writeU32(childTid, uint32(tid))
	}
	p.sched.Spawn(tid, t) // reports ThreadStart
	return ret(uint64(tid)), nil
}

// exitThread ends t: CLONE_CHILD_CLEARTID store and futex wake, as Linux does.
func (p *Process) exitThread(t *sched.Thread, status int) *Result {
	if addr := p.kernel.ClearChildTID(t.Tid); addr != 0 {
		if p.writeU32(addr, 0) == nil {
			p.sched.FutexWake(t, addr, 1, ^uint32(0))
		}
	}
	t.ExitStatus = status
	p.sched.Exit(t) // reports ThreadExit
	p.kernel.ExitThread(t.Tid)
	if p.alive() == 0 {
		p.exited, p.exitStatus = true, status
		p.processExit((status & 0xff) << 8)
	}
	return nil
}

// exitGroup ends every thread left (exit_group): each reports its
// ThreadExit, in tid order, at its own clock, so that the stream has an exit
// for every start. There are no CLONE_CHILD_CLEARTID wakes: nobody is left
// to wake.
func (p *Process) exitGroup(status int) {
	for _, tid := range p.tids() {
		if t := p.sched.Thread(tid); t != nil && t.State != sched.Exited {
			t.ExitStatus = status
			p.sched.Exit(t)
		}
	}
}

// futex performs the futex operations with Linux's checks, in its order:
// the timeout (EFAULT, EINVAL), the operation's own arguments, the words'
// addresses (EINVAL unless aligned, EFAULT outside user space or, for a
// shared futex, on a page that is not accessible), then the words' values
// (EFAULT unless readable; FUTEX_WAKE_OP's second word must be writable).
func (p *Process) futex(t *sched.Thread, c *syscalls.Call) syscalls.Outcome {
	a := c.Args
	addr, op, val := a[0], int(a[1]), uint32(a[2])
	cmd := op &^ (futexPrivate | futexClockRealtime)
	private := op&futexPrivate != 0
	if op&futexClockRealtime != 0 && cmd != futexWaitBitset && cmd != futexWaitRequeuePI && cmd != futexLockPI2 {
		return ret(syscalls.ENOSYS.Ret())
	}
	key := func(addr uint64) uint64 {
		if e := p.kernel.FutexKey(addr, private); e != 0 {
			return e.Ret()
		}
		return 0
	}
	load := func(addr uint64) (uint32, uint64) {
		if !p.kernel.Accessible(addr, 4, false) {
			return 0, syscalls.EFAULT.Ret()
		}
		v, err := p.readU32(addr)
		if err != nil {
			return 0, syscalls.EFAULT.Ret()
		}
		return v, 0
	}
	switch cmd {
	case futexWait, futexWaitBitset:
		deadline := sched.NoDeadline
		if a[3] != 0 {
			ts, e := p.futexTimeout(a[3])
			if e != 0 {
				return ret(e)
			}
			if cmd == futexWait {
				deadline = c.Now + ts // relative
			} else {
				deadline = p.absDeadline(ts, op&futexClockRealtime != 0)
			}
		}
		bitset := ^uint32(0)
		if cmd == futexWaitBitset {
			bitset = uint32(a[5])
			if bitset == 0 {
				return ret(syscalls.EINVAL.Ret())
			}
		}
		if e := key(addr); e != 0 {
			return ret(e)
		}
		cur, e := load(addr)
		if e != 0 {
			return ret(e)
		}
		if cur != val {
			return ret(syscalls.EAGAIN.Ret())
		}
		p.sched.FutexWait(t, addr, bitset, deadline)
		p.block(t, c)
		return syscalls.Outcome{Action: syscalls.Block}
	case futexWake, futexWakeBitset:
		bitset := ^uint32(0)
		if cmd == futexWakeBitset {
			bitset = uint32(a[5])
			if bitset == 0 {
				return ret(syscalls.EINVAL.Ret())
			}
		}
		if e := key(addr); e != 0 {
			return ret(e)
		}
		return ret(uint64(p.sched.FutexWake(t, addr, int(val), bitset)))
	case futexRequeue, futexCmpRequeue:
		if int32(val) < 0 || int32(a[3]) < 0 {
			return ret(syscalls.EINVAL.Ret())
		}
		if e := key(addr); e != 0 {
			return ret(e)
		}
		if e := key(a[4]); e != 0 {
			return ret(e)
		}
		if cmd == futexCmpRequeue {
			cur, e := load(addr)
			if e != 0 {
				return ret(e)
			}
			if cur != uint32(a[5]) {
				return ret(syscalls.EAGAIN.Ret())
			}
		}
		return ret(uint64(p.sched.FutexRequeue(t, addr, int(val), a[4], int(uint32(a[3])))))
	case futexWakeOp:
		if e := key(addr); e != 0 {
			return ret(e)
		}
		if e := key(a[4]); e != 0 {
			return ret(e)
		}
		if !p.kernel.Accessible(a[4], 4, true) {
			return ret(syscalls.EFAULT.Ret())
		}
		return p.futexWakeOp(t, addr, int(val), int(uint32(a[3])), a[4], uint32(a[5]))
	}
	return ret(syscalls.ENOSYS.Ret())
}

// futexTimeout loads a futex timeout: EFAULT unless readable, EINVAL
// unless a valid timespec.
func (p *Process) futexTimeout(addr uint64) (int64, uint64) {
	if !p.kernel.Accessible(addr, 16, false) {
		return 0, syscalls.EFAULT.Ret()
	}
	var b [16]byte
	if err := p.cpu.ReadMem(addr, b[:]); err != nil {
		return 0, syscalls.EFAULT.Ret()
	}
	sec, nsec := int64(binary.LittleEndian.Uint64(b[:])), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return 0, syscalls.EINVAL.Ret()
	}
	return sec*1e9 + nsec, 0
}

// futexWakeOp: atomically *uaddr2 = op(old, oparg), wake val on uaddr, and
// wake val2 on uaddr2 if cmp(old, cmparg) (futex(2)).
func (p *Process) futexWakeOp(t *sched.Thread, addr uint64, n, n2 int, addr2 uint64, enc uint32) syscalls.Outcome {
	op, cmp := (enc>>28)&0xf, (enc>>24)&0xf
	oparg, cmparg := int32(enc<<8)>>20, int32(enc<<20)>>20
	if op&8 != 0 {
		oparg = 1 << uint(oparg&31)
		op &= 7
	}
	old, err := p.readU32(addr2)
	if err != nil {
		return ret(syscalls.EFAULT.Ret())
	}
	var nv uint32
	switch op {
	case 0:
		nv = uint32(oparg)
	case 1:
		nv = old + uint32(oparg)
	case 2:
		nv = old | uint32(oparg)
	case 3:
		nv = old &^ uint32(oparg)
	case 4:
		nv = old ^ uint32(oparg)
	default:
		return ret(syscalls.ENOSYS.Ret())
	}
	if err := p.writeU32(addr2, nv); err != nil {
		return ret(syscalls.EFAULT.Ret())
	}
	woken := p.sched.FutexWake(t, addr, n, ^uint32(0))
	o, c := int32(old), cmparg
	var hit bool
	switch cmp {
	case 0:
		hit = o == c
	case 1:
		hit = o != c
	case 2:
		hit = o < c
	case 3:
		hit = o <= c
	case 4:
		hit = o > c
	case 5:
		hit = o >= c
	default:
		return ret(syscalls.ENOSYS.Ret())
	}
	if hit {
		woken += p.sched.FutexWake(t, addr2, n2, ^uint32(0))
	}
	return ret(uint64(woken))
}

// parks turns the kernel's "would block" answers into parking the thread:
// a sleep until its deadline, a read of an empty pipe (or a write to a full
// one) until the pipe changes, a lock request that conflicts until a lock of
// the file is released, a poll with nothing ready until a pipe changes or
// its timeout. Pipe, lock and poll calls are re-executed on wake.
func (p *Process) parks(t *sched.Thread, c *syscalls.Call, out syscalls.Outcome) bool {
	var w sched.Wait
	switch wt := out.Wait.(type) {
	case *syscalls.SleepWait:
		if wt.Until <= c.Now {
			return false
		}
		w = sched.Wait{Kind: sched.WaitSleep, Deadline: wt.Until, What: fmt.Sprintf("sleep until %d ns", wt.Until)}
	case *syscalls.PipeWait:
		w = sched.Wait{Kind: sched.WaitPipeRead, Addr: wt.Pipe, Restart: true, What: fmt.Sprintf("read pipe:[%d]", wt.Pipe)}
		if wt.Write {
			w.Kind, w.What = sched.WaitPipeWrite, fmt.Sprintf("write pipe:[%d]", wt.Pipe)
		}
	case *syscalls.LockWait:
		w = sched.Wait{Kind: sched.WaitOther, Addr: wt.Lock, Restart: true, What: wt.What}
	case *syscalls.ReadyWait:
		if wt.Until > 0 && wt.Until <= c.Now {
			return false
		}
		w = sched.Wait{Kind: sched.WaitPoll, Restart: true, Deadline: sched.NoDeadline, What: wt.What}
		if wt.Object != 0 {
			w.Kind, w.Addr = sched.WaitPipeRead, wt.Object
		}
		if wt.Until > 0 {
			w.Deadline = wt.Until
		}
		p.sched.Block(t, w)
		p.block(t, c)
		// The kernel decides what the deadline means: re-execute the call
		// then too.
		p.threads[t.Tid].retry = true
		return true
	case *syscalls.PollWait:
		if wt.Timeout == 0 {
			return false
		}
		w = sched.Wait{Kind: sched.WaitPoll, Restart: true, Deadline: sched.NoDeadline, What: "poll"}
		if wt.Timeout > 0 {
			w.Deadline = c.Now + wt.Timeout
		}
	default:
		return false
	}
	p.sched.Block(t, w)
	p.block(t, c)
	return true
}

// pipeChanged wakes the threads waiting for pipe to change.
func (p *Process) pipeChanged(pipe uint64) {
	p.sched.WakeAll(p.m.cur, sched.WaitPipeRead, pipe)
	p.sched.WakeAll(p.m.cur, sched.WaitPipeWrite, pipe)
	p.sched.WakeAll(p.m.cur, sched.WaitPoll, 0)
}

// lockReleased wakes the threads waiting for a lock of the file lock.
func (p *Process) lockReleased(lock uint64) {
	p.sched.WakeAll(p.m.cur, sched.WaitOther, lock)
}

// absDeadline converts an absolute guest time to virtual ns.
func (p *Process) absDeadline(ns int64, realtime bool) int64 {
	if realtime {
		return ns - p.cfg.EpochNanos
	}
	return ns - syscalls.MonotonicOffset
}

// block records that t is parked inside syscall c. Its Wait says whether the
// syscall is re-executed on wake (pipes) or returns the wake result (futex).
func (p *Process) block(t *sched.Thread, c *syscalls.Call) {
	ts := p.threads[t.Tid]
	ts.blocked, ts.nr, ts.retry = true, c.Nr, false
	ts.sig.args, ts.sig.interrupted = c.Args, false
}

// resumeBlocked delivers the result of the syscall t was parked in.
func (p *Process) resumeBlocked(t *sched.Thread, ts *threadState) error {
	if !ts.blocked {
		return nil
	}
	ts.blocked, t.Woken = false, false
	var r cpu.Regs
	if err := p.cpu.ReadRegs(&r); err != nil {
		return err
	}
	if done, reblock := p.resumeSignalled(t, ts, &r); reblock {
		// Interrupted for a signal it no longer takes: it waits on.
		p.sched.Block(t, t.Wait)
		ts.blocked = true
		return nil
	} else if done {
		ts.retry = false
	} else if t.Wait.Restart || ts.retry || ts.sig.retried {
		ts.retry = false
		r.RIP -= 2 // re-execute the syscall instruction
		r.RAX = ts.nr
	} else {
		r.RAX = uint64(t.WakeResult)
		p.recordSyscall(t, ts.nr, r.RAX)
	}
	return p.cpu.WriteRegs(&r)
}

func (p *Process) readU32(addr uint64) (uint32, error) {
	var b [4]byte
	if err := p.cpu.ReadMem(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func (p *Process) writeU32(addr uint64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return p.cpu.WriteMem(addr, b[:])
}
