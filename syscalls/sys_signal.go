package syscalls

// Signals: rt_sigaction, rt_sigprocmask, rt_sigpending, sigaltstack, kill,
// tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo. Signals are queued
// (signal.go) and the runtime runs the handlers at its delivery points;
// the calls that wait for signals (rt_sigsuspend, pause,
// rt_sigtimedwait) and rt_sigreturn are the runtime's (guest/signal.go).

// sigBit is the mask bit of signal sig.
func sigBit(sig int) uint64 { return 1 << (sig - 1) }

// unblockable are SIGKILL and SIGSTOP.
const unblockable = 1<<(sigKill-1) | 1<<(sigStop-1)

// sigDefaultIgnored reports whether the default action of sig is to do
// nothing (stop signals included: nothing could continue the process).
func sigDefaultIgnored(sig int) bool {
	switch sig {
	case sigChld, sigCont, sigUrg, sigWinch, sigStop, sigTstp, sigTtin, sigTtou:
		return true
	}
	return false
}

func sysRtSigaction(k *Kernel, c *Call) Outcome {
	sig, actAddr, oldAddr := int(int32(c.Args[0])), c.Args[1], c.Args[2]
	if c.Args[3] != 8 || sig < 1 || sig > nSig || (actAddr != 0 && sigBit(sig)&unblockable != 0) {
		return fail(eINVAL)
	}
	var act sigAction
	if actAddr != 0 {
		b := make([]byte, 32)
		if e := k.copyIn(actAddr, b); e != 0 {
			return fail(e)
		}
		act = sigAction{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:]) &^ unblockable}
	}
	if oldAddr != 0 {
		o := k.sigactions[sig]
		b := make([]byte, 32)
		le.PutUint64(b, o.handler)
		le.PutUint64(b[8:], o.flags)
		le.PutUint64(b[16:], o.restorer)
		le.PutUint64(b[24:], o.mask)
		if e := k.copyOut(oldAddr, b); e != 0 {
			return fail(e)
		}
	}
	if actAddr != 0 {
		k.sigactions[sig] = act
		if act.handler == sigIgn || (act.handler == sigDfl && sigDefaultIgnored(sig)) {
			// POSIX: a pending signal set to be ignored is discarded.
			k.sharedSigs.drop(sigBit(sig))
			for _, t := range k.threads {
				t.pending.drop(sigBit(sig))
			}
		}
	}
	return ok(0)
}

func sysRtSigprocmask(k *Kernel, c *Call) Outcome {
	how, setAddr, oldAddr := c.Args[0], c.Args[1], c.Args[2]
	if c.Args[3] != 8 {
		return fail(eINVAL)
	}
	t := k.thread(c.Tid)
	var set uint64
	if setAddr != 0 {
		if how != sigBlock && how != sigUnblock && how != sigSetMask {
			return fail(eINVAL)
		}
		v, e := k.getU64(setAddr)
		if e != 0 {
			return fail(e)
		}
		set = v
	}
	if oldAddr != 0 {
		if e := k.putU64(oldAddr, t.sigmask); e != 0 {
			return fail(e)
		}
	}
	if setAddr == 0 {
		return ok(0)
	}
	switch how {
	case sigBlock:
		t.sigmask |= set
	case sigUnblock:
		t.sigmask &^= set
	case sigSetMask:
		t.sigmask = set
	}
	// Signals it unblocked are delivered when the call returns.
	t.sigmask &^= unblockable
	k.recalc(t)
	return ok(0)
}

func sysRtSigpending(k *Kernel, c *Call) Outcome {
	if c.Args[1] > 8 {
		return fail(eINVAL)
	}
	t := k.thread(c.Tid)
	b := make([]byte, 8)
	le.PutUint64(b, (t.pending.mask|k.sharedSigs.mask)&t.sigmask)
	return result(0, k.copyOut(c.Args[0], b[:c.Args[1]]))
}

// ssAutoDisarm is SS_AUTODISARM.
const ssAutoDisarm = 1 << 31

// onAltStack reports whether sp is on thread t's alternate stack
// (on_sig_stack; never with SS_AUTODISARM).
func onAltStack(t *threadState, sp uint64) bool {
	base, flags, size := t.altStack[0], t.altStack[1], t.altStack[2]
	return flags&ssAutoDisarm == 0 && sp > base && sp-base <= size
}

// altStackFlags is sas_ss_flags(sp).
func altStackFlags(t *threadState, sp uint64) uint64 {
	if t.altStack[2] == 0 {
		return ssDisable
	}
	if onAltStack(t, sp) {
		return ssOnStack
	}
	return 0
}

// AltStackFlags is sas_ss_flags for thread tid at stack pointer sp:
// SS_DISABLE, SS_ONSTACK or 0.
func (k *Kernel) AltStackFlags(tid int, sp uint64) uint64 { return altStackFlags(k.thread(tid), sp) }

// setAltStack is do_sigaltstack's change of the stack to ss (sp, flags,
// size), the caller's stack pointer being sp.
func (k *Kernel) setAltStack(tid int, sp uint64, ss [3]uint64) Errno {
	t := k.thread(tid)
	if onAltStack(t, sp) {
		return ePERM
	}
	mode := ss[1] &^ ssAutoDisarm
	if mode != ssDisable && mode != ssOnStack && mode != 0 {
		return eINVAL
	}
	if ss == t.altStack {
		return 0
	}
	if mode == ssDisable {
		ss[0], ss[2] = 0, 0
	} else if ss[2] < minSigStkSz {
		return eNOMEM
	}
	t.altStack = ss
	return 0
}

func sysSigaltstack(k *Kernel, c *Call) Outcome {
	t := k.thread(c.Tid)
	var ns [3]uint64
	if c.Args[0] != 0 {
		b := make([]byte, 24)
		if e := k.copyIn(c.Args[0], b); e != 0 {
			return fail(e)
		}
		ns = [3]uint64{le.Uint64(b), uint64(le.Uint32(b[8:])), le.Uint64(b[16:])}
	}
	old := t.altStack
	oldFlags := altStackFlags(t, c.SP) | old[1]&ssAutoDisarm
	if c.Args[0] != 0 {
		if e := k.setAltStack(c.Tid, c.SP, ns); e != 0 {
			return fail(e)
		}
	}
	if c.Args[1] != 0 {
		b := make([]byte, 24)
		le.PutUint64(b, old[0])
		le.PutUint32(b[8:], uint32(oldFlags))
		le.PutUint64(b[16:], old[2])
		if e := k.copyOut(c.Args[1], b); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

// signalArg validates a signal number (0 only checks the target).
func signalArg(a uint64) (int, Errno) {
	sig := int(int32(a))
	if sig < 0 || sig > nSig {
		return 0, eINVAL
	}
	return sig, 0
}

// sysKill sends a signal to the process itself (the runtime sends to the
// other processes and groups).
func sysKill(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	sig, e := signalArg(c.Args[1])
	if e != 0 {
		return fail(e)
	}
	if pid != k.cfg.Pid && pid != 0 && pid != -1 && pid != -k.cfg.Pid {
		return fail(eSRCH)
	}
	if sig == 0 {
		return ok(0)
	}
	// complete_signal prefers the task the pid names: the main thread.
	r := k.Send(k.cfg.Pid, KillInfo(sig, SIUser, k.cfg.Pid, k.uids.real), true)
	if r.Fatal {
		return Outcome{Action: ExitGroup, Status: 128 + sig, Signal: sig}
	}
	return ok(0)
}

// threadKill sends info to thread tid of the process.
func (k *Kernel) threadKill(c *Call, tid int, sigArg uint64, info *SigInfo) Outcome {
	sig, e := signalArg(sigArg)
	if e != 0 {
		return fail(e)
	}
	if tid <= 0 {
		return fail(eINVAL)
	}
	if k.threads[tid] == nil && tid != c.Tid {
		return fail(eSRCH)
	}
	if sig == 0 {
		return ok(0)
	}
	i := KillInfo(sig, SITkill, k.cfg.Pid, k.uids.real)
	if info != nil {
		i = *info
	}
	k.thread(tid)
	if r := k.Send(tid, i, false); r.Fatal {
		return Outcome{Action: ExitGroup, Status: 128 + sig, Signal: sig}
	}
	return ok(0)
}

func sysTkill(k *Kernel, c *Call) Outcome {
	return k.threadKill(c, int(int32(c.Args[0])), c.Args[1], nil)
}

func sysTgkill(k *Kernel, c *Call) Outcome {
	if tgid := int(int32(c.Args[0])); tgid <= 0 {
		return fail(eINVAL)
	} else if tgid != k.cfg.Pid {
		return fail(eSRCH)
	}
	return k.threadKill(c, int(int32(c.Args[1])), c.Args[2], nil)
}

// queuedInfo reads rt_sigqueueinfo's siginfo: a process may not pretend
// to be the kernel or kill(2) when it signals another (si_code ≥ 0 or
// SI_TKILL: EPERM).
func (k *Kernel) queuedInfo(c *Call, sig int, addr uint64, target int) (SigInfo, Errno) {
	var i SigInfo
	if e := k.copyIn(addr, i[:]); e != 0 {
		return i, e
	}
	code := int32(le.Uint32(i[8:]))
	if (code >= 0 || code == SITkill) && target != c.Tid {
		return i, ePERM
	}
	le.PutUint32(i[0:], uint32(sig))
	return i, 0
}

// QueuedInfo reads the siginfo rt_sigqueueinfo sends to another process
// (the runtime sends it): EPERM when it pretends to come from the kernel
// or kill(2).
func (k *Kernel) QueuedInfo(c *Call, sig int, addr uint64) (SigInfo, Errno) {
	return k.queuedInfo(c, sig, addr, -1)
}

func sysRtSigqueueinfo(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	sig, e := signalArg(c.Args[1])
	if e != 0 {
		return fail(e)
	}
	if pid != k.cfg.Pid {
		return fail(eSRCH)
	}
	info, e := k.queuedInfo(c, sig, c.Args[2], k.cfg.Pid)
	if e == ePERM && pid == k.cfg.Pid {
		e = 0 // to itself, any code
	}
	if e != 0 {
		return fail(e)
	}
	if sig == 0 {
		return ok(0)
	}
	if r := k.Send(c.Tid, info, true); r.Fatal {
		return Outcome{Action: ExitGroup, Status: 128 + sig, Signal: sig}
	}
	return ok(0)
}

func sysRtTgsigqueueinfo(k *Kernel, c *Call) Outcome {
	tgid, tid := int(int32(c.Args[0])), int(int32(c.Args[1]))
	if tgid <= 0 || tid <= 0 {
		return fail(eINVAL)
	}
	if tgid != k.cfg.Pid {
		return fail(eSRCH)
	}
	sig, e := signalArg(c.Args[2])
	if e != 0 {
		return fail(e)
	}
	info, e := k.queuedInfo(c, sig, c.Args[3], tid)
	if e == ePERM {
		e = 0 // to its own process, any code
	}
	if e != 0 {
		return fail(e)
	}
	return k.threadKill(c, tid, c.Args[2], &info)
}
