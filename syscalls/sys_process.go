package syscalls

import (
	"errors"

	"emuprof/mm"
)

// The process and its threads: exit, exit_group, getpid, getppid, gettid,
// getuid, geteuid, getgid, getegid, getresuid, getresgid, getgroups,
// getpgrp, getpgid, getsid, uname, set_tid_address, set_robust_list,
// arch_prctl, prctl, prlimit64, getrlimit, setrlimit, sched_getaffinity,
// sched_setaffinity, sched_yield, getcpu, sysinfo, times, getrusage,
// getrandom.

func sysExit(_ *Kernel, c *Call) Outcome {
	return Outcome{Action: Exit, Status: int(c.Args[0] & 0xff)}
}

func sysExitGroup(_ *Kernel, c *Call) Outcome {
	return Outcome{Action: ExitGroup, Status: int(c.Args[0] & 0xff)}
}

func sysGetpid(k *Kernel, _ *Call) Outcome  { return ok(uint64(k.cfg.Pid)) }
func sysGetppid(k *Kernel, _ *Call) Outcome { return ok(uint64(k.cfg.Pid - 1)) }
func sysGettid(_ *Kernel, c *Call) Outcome  { return ok(uint64(c.Tid)) }
func sysGetuid(k *Kernel, _ *Call) Outcome  { return ok(uint64(k.uids.real)) }
func sysGetgid(k *Kernel, _ *Call) Outcome  { return ok(uint64(k.gids.real)) }
func sysGeteuid(k *Kernel, _ *Call) Outcome { return ok(uint64(k.uids.eff)) }
func sysGetegid(k *Kernel, _ *Call) Outcome { return ok(uint64(k.gids.eff)) }

func (k *Kernel) putIDs(c *Call, ids idSet) Outcome {
	for i, id := range []int{ids.real, ids.eff, ids.saved} {
		if e := k.putU32(c.Args[i], uint32(id)); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

func sysGetresuid(k *Kernel, c *Call) Outcome { return k.putIDs(c, k.uids) }
func sysGetresgid(k *Kernel, c *Call) Outcome { return k.putIDs(c, k.gids) }

func sysGetgroups(k *Kernel, c *Call) Outcome {
	size := int(int32(c.Args[0]))
	switch {
	case size < 0:
		return fail(eINVAL)
	}
	groups := k.groups
	if groups == nil {
		groups = []uint32{uint32(k.cfg.Gid)}
	}
	switch {
	case size == 0:
		return ok(uint64(len(groups)))
	case size < len(groups):
		return fail(eINVAL)
	}
	b := make([]byte, 4*len(groups))
	for i, g := range groups {
		le.PutUint32(b[4*i:], g)
	}
	return result(uint64(len(groups)), k.copyOut(c.Args[1], b))
}

// sysGetpgrp: the process leads its own process group.
func sysGetpgrp(k *Kernel, _ *Call) Outcome { return ok(uint64(k.cfg.Pid)) }

// sysGetpgid serves getpgid and getsid: the process leads its own group
// and session.
func sysGetpgid(k *Kernel, c *Call) Outcome {
	if pid := int(int32(c.Args[0])); pid != 0 && pid != k.cfg.Pid {
		return fail(eSRCH)
	}
	return ok(uint64(k.cfg.Pid))
}

func sysUname(k *Kernel, c *Call) Outcome {
	b := make([]byte, 6*65)
	for i, s := range []string{"Linux", k.cfg.Hostname, kernelRelease,
		"#1 SMP PREEMPT_DYNAMIC emuprof", "x86_64", "(none)"} {
		copy(b[65*i:65*i+64], s)
	}
	return result(0, k.copyOut(c.Args[0], b))
}

func sysSetTidAddress(k *Kernel, c *Call) Outcome {
	k.thread(c.Tid).clearChildTID = c.Args[0]
	return ok(uint64(c.Tid))
}

func sysSetRobustList(k *Kernel, c *Call) Outcome {
	if c.Args[1] != 24 {
		return fail(eINVAL)
	}
	k.thread(c.Tid).robustList = c.Args[0]
	return ok(0)
}

func sysArchPrctl(k *Kernel, c *Call) Outcome {
	switch c.Args[0] {
	case archSetFS:
		if k.SetFS == nil {
			return fatal(c, errors.New("ARCH_SET_FS: no SetFS hook"))
		}
		if c.Args[1] >= mm.TaskSize {
			return fail(ePERM)
		}
		k.SetFS(c.Tid, c.Args[1])
		return ok(0)
	case archGetFS:
		if k.GetFS == nil {
			return fatal(c, errors.New("ARCH_GET_FS: no GetFS hook"))
		}
		return result(0, k.putU64(c.Args[1], k.GetFS(c.Tid)))
	case archSetGS:
		if k.SetGS == nil {
			return fatal(c, errors.New("ARCH_SET_GS: no SetGS hook"))
		}
		if c.Args[1] >= mm.TaskSize {
			return fail(ePERM)
		}
		k.SetGS(c.Tid, c.Args[1])
		return ok(0)
	case archGetGS:
		if k.GetGS == nil {
			return fatal(c, errors.New("ARCH_GET_GS: no GetGS hook"))
		}
		return result(0, k.putU64(c.Args[1], k.GetGS(c.Tid)))
	case archGetCPUID:
		return ok(1) // the CPUID instruction is enabled
	case archSetCPUID:
		return fail(eNODEV) // the virtual CPU has no CPUID faulting
	}
	return fail(eINVAL)
}

func sysPrctl(k *Kernel, c *Call) Outcome {
	switch c.Args[0] {
	case prSetName:
		b := make([]byte, 16)
		if e := k.readRaw(c.Args[1], b); e != 0 {
			// The name may end before an unmapped page.
			s, e := k.readString(c.Args[1], 1<<12, eFAULT)
			if e != 0 {
				return fail(e)
			}
			b = []byte(s)
		}
		n := 0
		for n < 15 && n < len(b) && b[n] != 0 {
			n++
		}
		k.thread(c.Tid).name = string(b[:n])
		return ok(0)
	case prGetName:
		b := make([]byte, 16)
		copy(b[:15], k.thread(c.Tid).name)
		return result(0, k.copyOut(c.Args[1], b))
	case prGetDumpable:
		if k.undumpable {
			return ok(0)
		}
		return ok(1)
	case prSetDumpable:
		if c.Args[1] > 1 { // SUID_DUMP_USER or SUID_DUMP_DISABLE
			return fail(eINVAL)
		}
		k.undumpable = c.Args[1] == 0
		return ok(0)
	case prSetPDeathSig:
		// Recorded; the parent is not emulated, so it never dies first.
		if c.Args[1] > nSig {
			return fail(eINVAL)
		}
		k.thread(c.Tid).pdeathsig = int(c.Args[1])
		return ok(0)
	case prGetPDeathSig:
		return result(0, k.putU32(c.Args[1], uint32(k.thread(c.Tid).pdeathsig)))
	}
	return k.prctlQuery(c)
}

// prctl options that report a process's default state (or set what only
// restricts it), as an unprivileged process without special settings sees
// them on x86-64.
const (
	prGetKeepCaps        = 7
	prSetKeepCaps        = 8
	prGetTiming          = 13
	prSetTimerSlack      = 29
	prSetChildSubreaper  = 36
	prCapBSetRead        = 23
	prGetTSC             = 25
	prGetSecureBits      = 27
	prGetTimerSlack      = 30
	prMCEKillGet         = 34
	prGetChildSubreaper  = 37
	prSetNoNewPrivs      = 38
	prGetNoNewPrivs      = 39
	prGetTHPDisable      = 42
	prCapAmbient         = 47
	prGetSpeculationCtrl = 52
	capLastCap           = 40 // CAP_CHECKPOINT_RESTORE
)

// timerSlack is PR_GET_TIMERSLACK's answer: the default 50 µs unless set.
func (k *Kernel) timerSlack() int64 {
	if k.slack == 0 {
		return 50_000
	}
	return k.slack
}

func (k *Kernel) prctlQuery(c *Call) Outcome {
	a := c.Args
	restZero := func(from int) bool { // the unused arguments must be 0
		for i := from; i < 5; i++ {
			if a[i] != 0 {
				return false
			}
		}
		return true
	}
	switch a[0] {
	case prGetKeepCaps:
		if k.keepCaps {
			return ok(1)
		}
		return ok(0)
	case prSetKeepCaps:
		if a[1] > 1 {
			return fail(eINVAL)
		}
		k.keepCaps = a[1] == 1
		return ok(0)
	case prGetSecureBits:
		return ok(0)
	case prGetTiming:
		return ok(0) // PR_TIMING_STATISTICAL
	case prGetTimerSlack:
		return ok(uint64(k.timerSlack()))
	case prSetTimerSlack:
		k.slack = int64(a[1]) // 0: back to the default
		return ok(0)
	case prSetChildSubreaper:
		k.subreaper = a[1] != 0 // recorded: orphans are reaped by emuprof anyway
		return ok(0)
	case prCapBSetRead:
		if a[1] > capLastCap {
			return fail(eINVAL)
		}
		return ok(1)
	case prGetTSC:
		return result(0, k.putU32(a[1], 1)) // PR_TSC_ENABLE
	case prGetChildSubreaper:
		v := uint32(0)
		if k.subreaper {
			v = 1
		}
		return result(0, k.putU32(a[1], v))
	case prMCEKillGet:
		if !restZero(1) {
			return fail(eINVAL)
		}
		return ok(2) // PR_MCE_KILL_DEFAULT
	case prGetTHPDisable:
		if !restZero(1) {
			return fail(eINVAL)
		}
		return ok(0)
	case prGetNoNewPrivs:
		if !restZero(1) {
			return fail(eINVAL)
		}
		if k.noNewPrivs {
			return ok(1)
		}
		return ok(0)
	case prSetNoNewPrivs:
		if a[1] != 1 || !restZero(2) {
			return fail(eINVAL)
		}
		k.noNewPrivs = true // kept across fork and exec, never cleared
		return ok(0)
	case prCapAmbient:
		switch a[1] {
		case 1: // PR_CAP_AMBIENT_IS_SET
			if a[2] > capLastCap || !restZero(3) {
				return fail(eINVAL)
			}
			return ok(0)
		case 4: // PR_CAP_AMBIENT_CLEAR_ALL
			if !restZero(2) {
				return fail(eINVAL)
			}
			return ok(0)
		}
		return fail(eINVAL)
	case prGetSpeculationCtrl:
		if a[1] > 2 { // store bypass, indirect branch, L1D flush
			return fail(eNODEV)
		}
		return ok(0) // PR_SPEC_NOT_AFFECTED: the virtual CPU has none
	}
	// PR_SET_VMA (naming anonymous memory) fails as on a kernel without
	// CONFIG_ANON_VMA_NAME: the names would not show in /proc/self/maps.
	return fail(eINVAL)
}

// defaultRlimits are the limits of a login shell on a typical distribution.
func defaultRlimits() [rlimNLimits]rlimit {
	var r [rlimNLimits]rlimit
	for i := range r {
		r[i] = rlimit{rlimInfinity, rlimInfinity}
	}
	r[rlimitStack] = rlimit{8 << 20, rlimInfinity}
	r[rlimitCore] = rlimit{0, rlimInfinity}
	r[rlimitNProc] = rlimit{63000, 63000}
	r[rlimitNoFile] = rlimit{1024, 524288}
	r[rlimitMemLock] = rlimit{8 << 20, 8 << 20}
	r[rlimitSigPending] = rlimit{63000, 63000}
	r[rlimitMsgQueue] = rlimit{819200, 819200}
	r[rlimitNice] = rlimit{0, 0}
	r[rlimitRTPrio] = rlimit{0, 0}
	return r
}

// nrOpenMax is /proc/sys/fs/nr_open: the highest RLIMIT_NOFILE.
const nrOpenMax = 1 << 20

// getRlimit loads a struct rlimit (EFAULT first, as Linux copies it in
// before looking at anything else).
func (k *Kernel) getRlimit(addr uint64) (*rlimit, Errno) {
	var b [16]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return nil, e
	}
	return &rlimit{le.Uint64(b[:]), le.Uint64(b[8:])}, 0
}

// prlimit gets and sets a resource limit, with Linux's checks
// (do_prlimit): only root raises a hard limit, RLIMIT_NOFILE stops at
// nr_open. Limits are recorded and reported back; RLIMIT_NOFILE,
// RLIMIT_MEMLOCK, RLIMIT_FSIZE, RLIMIT_AS and RLIMIT_DATA are enforced.
// It sets resource res to nl (nil: unchanged) and then stores the old
// limits at oldAddr (0: not asked), so a new limit is kept even when
// storing the old one faults.
func (k *Kernel) prlimit(res uint64, nl *rlimit, oldAddr uint64) Outcome {
	if res >= rlimNLimits {
		return fail(eINVAL)
	}
	if nl != nil {
		switch {
		case nl.cur > nl.max:
			return fail(eINVAL)
		case res == rlimitNoFile && nl.max > nrOpenMax:
			return fail(ePERM)
		case nl.max > k.rlimits[res].max && k.uids.eff != 0:
			return fail(ePERM)
		}
	}
	old := k.rlimits[res]
	if nl != nil {
		k.rlimits[res] = *nl
	}
	if oldAddr != 0 {
		b := make([]byte, 16)
		le.PutUint64(b, old.cur)
		le.PutUint64(b[8:], old.max)
		if e := k.copyOut(oldAddr, b); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

// vmAllows is may_expand_vm: the address space may grow by extra bytes, of
// which data are private writable ones, within RLIMIT_AS and RLIMIT_DATA
// (which counts private writable memory, the heap included).
func (k *Kernel) vmAllows(extra, data uint64) bool {
	as, dl := k.rlimits[rlimitAS].cur, k.rlimits[rlimitData].cur
	if as == rlimInfinity && (dl == rlimInfinity || data == 0) {
		return true
	}
	var total, dataVM uint64
	for _, v := range k.as.VMAs() {
		total += v.Size()
		if v.Prot&mm.ProtWrite != 0 && !v.Shared && v.Name != "[stack]" {
			dataVM += v.Size()
		}
	}
	return (as == rlimInfinity || total+extra <= as) && (data == 0 || dl == rlimInfinity || dataVM+data <= dl)
}

// vmLimited reports whether RLIMIT_AS or RLIMIT_DATA is set (vmAllows
// has something to check).
func (k *Kernel) vmLimited() bool {
	return k.rlimits[rlimitAS].cur != rlimInfinity || k.rlimits[rlimitData].cur != rlimInfinity
}

// dataGrowth is how much of a growth by grow bytes RLIMIT_DATA counts.
func dataGrowth(grow, prot uint64, shared bool) uint64 {
	if prot&protWrite == 0 || shared {
		return 0
	}
	return grow
}

// mappedIn is how many bytes of [addr, addr+size) are mapped.
func (k *Kernel) mappedIn(addr, size uint64) uint64 {
	var n uint64
	for _, v := range k.as.VMAs() {
		if lo, hi := max(v.Start, addr), min(v.End, addr+size); lo < hi {
			n += hi - lo
		}
	}
	return n
}

// fsizeAllows checks a file's growth from old to size bytes against
// RLIMIT_FSIZE (inode_newsize_ok): beyond it, EFBIG with SIGXFSZ.
func (k *Kernel) fsizeAllows(old, size int64) Errno {
	if size <= old {
		return 0
	}
	if lim := k.rlimits[rlimitFSize].cur; lim != rlimInfinity && uint64(size) > lim {
		k.sigxfsz = true
		return eFBIG
	}
	if size > maxFileBytes {
		return eFBIG // past the file system's s_maxbytes
	}
	return 0
}

func sysPrlimit64(k *Kernel, c *Call) Outcome {
	var nl *rlimit
	if c.Args[2] != 0 {
		var e Errno
		if nl, e = k.getRlimit(c.Args[2]); e != 0 {
			return fail(e)
		}
	}
	if pid := int(int32(c.Args[0])); pid != 0 && pid != k.cfg.Pid {
		return fail(eSRCH)
	}
	return k.prlimit(uint64(uint32(c.Args[1])), nl, c.Args[3])
}

// sysGetrlimit stores the limits; a null pointer faults (only prlimit64
// takes null for "not asked").
func sysGetrlimit(k *Kernel, c *Call) Outcome {
	if uint32(c.Args[0]) >= rlimNLimits {
		return fail(eINVAL)
	}
	if c.Args[1] == 0 {
		return fail(eFAULT)
	}
	return k.prlimit(uint64(uint32(c.Args[0])), nil, c.Args[1])
}

func sysSetrlimit(k *Kernel, c *Call) Outcome {
	nl, e := k.getRlimit(c.Args[1])
	if e != 0 {
		return fail(e)
	}
	return k.prlimit(uint64(uint32(c.Args[0])), nl, 0)
}

func sysSchedGetaffinity(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	if pid != 0 && pid != k.cfg.Pid && pid != c.Tid {
		return fail(eSRCH)
	}
	size := k.cpuMaskSize()
	if c.Args[1] < size || c.Args[1]%8 != 0 {
		return fail(eINVAL)
	}
	tid := c.Tid
	if pid == k.cfg.Pid {
		tid = pid
	}
	return result(size, k.copyOut(c.Args[2], k.affinity(tid)))
}

// cpuMaskSize is the kernel's cpumask size in bytes (nr_cpu_ids bits,
// rounded to longs): what sched_getaffinity returns.
func (k *Kernel) cpuMaskSize() uint64 { return uint64((k.cfg.CPUs + 63) / 64 * 8) }

// sysSchedSetaffinity records the mask (the online CPUs it names) for
// sched_getaffinity and getcpu; the scheduler does not bind threads to
// CPUs (its CPU model has none).
func sysSchedSetaffinity(k *Kernel, c *Call) Outcome {
	pid := int(int32(c.Args[0]))
	if pid != 0 && pid != k.cfg.Pid && pid != c.Tid {
		return fail(eSRCH)
	}
	b := make([]byte, min(c.Args[1], k.cpuMaskSize()))
	if e := k.copyIn(c.Args[2], b); e != 0 {
		return fail(e)
	}
	mask := make([]byte, k.cpuMaskSize())
	any := false
	for i := range k.cfg.CPUs {
		if i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0 {
			mask[i/8] |= 1 << (i % 8)
			any = true
		}
	}
	if !any {
		return fail(eINVAL)
	}
	tid := c.Tid
	if pid == k.cfg.Pid {
		tid = pid
	}
	k.thread(tid).affinity = mask
	return ok(0)
}

// affinity returns thread tid's CPU mask.
func (k *Kernel) affinity(tid int) []byte {
	if t := k.threads[tid]; t != nil && t.affinity != nil {
		return t.affinity
	}
	b := make([]byte, k.cpuMaskSize())
	for i := range k.cfg.CPUs {
		b[i/8] |= 1 << (i % 8)
	}
	return b
}

func sysSchedYield(*Kernel, *Call) Outcome { return ok(0) }

// sysGetcpu says the first CPU the thread may run on, node 0.
func sysGetcpu(k *Kernel, c *Call) Outcome {
	cpu := 0
	for m := k.affinity(c.Tid); m[cpu/8]&(1<<(cpu%8)) == 0; cpu++ {
	}
	for _, v := range []struct{ addr, val uint64 }{{c.Args[0], uint64(cpu)}, {c.Args[1], 0}} {
		if v.addr != 0 {
			if e := k.putU32(v.addr, uint32(v.val)); e != 0 {
				return fail(e)
			}
		}
	}
	return ok(0)
}

func sysSysinfo(k *Kernel, c *Call) Outcome {
	b := make([]byte, 112)
	le.PutUint64(b[0:], uint64(monotonic(c.Now)/1e9)) // uptime
	le.PutUint64(b[32:], memTotal)                    // totalram
	le.PutUint64(b[40:], memFree)                     // freeram
	le.PutUint16(b[80:], 1)                           // procs
	le.PutUint32(b[104:], 1)                          // mem_unit
	return result(0, k.copyOut(c.Args[0], b))
}

func sysTimes(k *Kernel, c *Call) Outcome {
	if c.Args[0] != 0 {
		b := make([]byte, 32)
		le.PutUint64(b[0:], uint64(c.Now/(1e9/clkTck))) // tms_utime
		if e := k.copyOut(c.Args[0], b); e != 0 {
			return fail(e)
		}
	}
	return ok(uint64(monotonic(c.Now) / (1e9 / clkTck)))
}

func sysGetrusage(k *Kernel, c *Call) Outcome {
	who := int(int32(c.Args[0]))
	if who != rusageSelf && who != rusageChildren && who != rusageThread {
		return fail(eINVAL)
	}
	b := make([]byte, 144)
	if who != rusageChildren {
		ut := nsToTimespec(c.Now)
		le.PutUint64(b[0:], uint64(ut.sec))
		le.PutUint64(b[8:], uint64(ut.nsec/1000))
		var rss uint64
		for _, v := range k.as.VMAs() {
			rss += v.Size()
		}
		le.PutUint64(b[32:], rss>>10) // ru_maxrss in KiB
	}
	return result(0, k.copyOut(c.Args[1], b))
}

// maxRandom bounds one getrandom call, as Linux does.
const maxRandom = 33554431

func sysGetrandom(k *Kernel, c *Call) Outcome {
	flags := c.Args[2]
	if flags&^(grndNonBlock|grndRandom|grndInsecure) != 0 ||
		flags&(grndRandom|grndInsecure) == grndRandom|grndInsecure {
		return fail(eINVAL)
	}
	n := min(c.Args[1], maxRandom)
	if n > 0 {
		// The bytes that fit, or EFAULT if none do.
		if n = k.accessible(c.Args[0], n, true); n == 0 {
			return fail(eFAULT)
		}
	}
	var done uint64
	for done < n {
		buf := k.scratch(int(min(n-done, maxChunk)))
		k.Random(buf)
		if e := k.copyOut(c.Args[0]+done, buf); e != 0 {
			if done > 0 {
				break
			}
			return fail(e)
		}
		done += uint64(len(buf))
	}
	return ok(done)
}
