package syscalls

import "fmt"

// Signals: rt_sigaction, rt_sigprocmask, rt_sigpending, sigaltstack, kill,
// tkill, tgkill. Dispositions, masks and alternate stacks are recorded, and
// a signal a process sends itself takes its default action (abort() and
// raise() terminate the process); running a guest signal handler is not
// supported and stops the run.

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

// deliver applies signal sig, sent by the process to itself.
func (k *Kernel) deliver(c *Call, sig int) Outcome {
	act := k.sigactions[sig]
	if sigBit(sig)&unblockable == 0 {
		if act.handler == sigIgn {
			return ok(0)
		}
		if k.thread(c.Tid).sigmask&sigBit(sig) != 0 {
			k.pending |= sigBit(sig)
			return ok(0)
		}
		if act.handler != sigDfl {
			return fatal(c, fmt.Errorf("signal %d has a handler at %#x: signal delivery is not supported",
				sig, act.handler))
		}
	}
	if sigDefaultIgnored(sig) {
		return ok(0)
	}
	return Outcome{Action: ExitGroup, Status: 128 + sig, Signal: sig}
}

// deliverPending delivers the lowest pending signal the thread no longer
// blocks, if any.
func (k *Kernel) deliverPending(c *Call) Outcome {
	ready := k.pending &^ k.thread(c.Tid).sigmask
	for sig := 1; sig <= nSig; sig++ {
		if ready&sigBit(sig) != 0 {
			k.pending &^= sigBit(sig)
			return k.deliver(c, sig)
		}
	}
	return ok(0)
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
			k.pending &^= sigBit(sig)
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
	t.sigmask &^= unblockable
	return k.deliverPending(c)
}

func sysRtSigpending(k *Kernel, c *Call) Outcome {
	if c.Args[1] > 8 {
		return fail(eINVAL)
	}
	b := make([]byte, 8)
	le.PutUint64(b, k.pending)
	return result(0, k.copyOut(c.Args[0], b[:c.Args[1]]))
}

// ssAutoDisarm is SS_AUTODISARM.
const ssAutoDisarm = 1 << 31

func sysSigaltstack(k *Kernel, c *Call) Outcome {
	t := k.thread(c.Tid)
	var ns [3]uint64
	if c.Args[0] != 0 {
		b := make([]byte, 24)
		if e := k.copyIn(c.Args[0], b); e != 0 {
			return fail(e)
		}
		ns = [3]uint64{le.Uint64(b), uint64(le.Uint32(b[8:])), le.Uint64(b[16:])}
		if ns[1]&^(ssDisable|ssAutoDisarm) != 0 {
			return fail(eINVAL)
		}
		if ns[1]&ssDisable == 0 && ns[2] < minSigStkSz {
			return fail(eNOMEM)
		}
	}
	if c.Args[1] != 0 {
		b := make([]byte, 24)
		le.PutUint64(b, t.altStack[0])
		le.PutUint32(b[8:], uint32(t.altStack[1]))
		le.PutUint64(b[16:], t.altStack[2])
		if e := k.copyOut(c.Args[1], b); e != 0 {
			return fail(e)
		}
	}
	if c.Args[0] != 0 {
		if ns[1]&ssDisable != 0 {
			ns = [3]uint64{0, ssDisable, 0}
		}
		t.altStack = ns
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
	return k.deliver(c, sig)
}

func (k *Kernel) threadKill(c *Call, tid int, sigArg uint64) Outcome {
	sig, e := signalArg(sigArg)
	if e != 0 {
		return fail(e)
	}
	if tid <= 0 {
		return fail(eINVAL)
	}
	if tid != c.Tid && tid != k.cfg.Pid && k.threads[tid] == nil {
		return fail(eSRCH)
	}
	if sig == 0 {
		return ok(0)
	}
	return k.deliver(&Call{Tid: tid, Nr: c.Nr, PC: c.PC, Now: c.Now}, sig)
}

func sysTkill(k *Kernel, c *Call) Outcome {
	return k.threadKill(c, int(int32(c.Args[0])), c.Args[1])
}

func sysTgkill(k *Kernel, c *Call) Outcome {
	if tgid := int(int32(c.Args[0])); tgid <= 0 {
		return fail(eINVAL)
	} else if tgid != k.cfg.Pid {
		return fail(eSRCH)
	}
	return k.threadKill(c, int(int32(c.Args[1])), c.Args[2])
}
