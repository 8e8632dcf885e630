package syscalls

import (
	"fmt"
	"slices"
)

// Support is how completely a system call is emulated.
type Support int

const (
	// Full: Linux semantics for everything a single-process guest can
	// observe.
	Full Support = iota
	// Partial: implemented with a caveat, stated in Entry.Note.
	Partial
	// Refused: deliberately fails with Entry.Errno, so that the guest
	// takes its fallback path.
	Refused
)

// String returns "full", "partial" or "refused".
func (s Support) String() string {
	switch s {
	case Full:
		return "full"
	case Partial:
		return "partial"
	case Refused:
		return "refused"
	}
	return "support?"
}

// Entry describes one system call of the table.
type Entry struct {
	Nr      int
	Name    string
	Support Support
	// Note is the caveat of a Partial entry, or why a call is Refused.
	Note string
	// Errno is what a Refused call returns.
	Errno Errno
}

// byRuntime stands for the calls the runtime performs before the kernel is
// asked; reaching it means a runtime without thread support.
func byRuntime(_ *Kernel, c *Call) Outcome {
	return fatal(c, fmt.Errorf("%s is performed by the runtime, not the kernel", Name(c.Nr)))
}

// handler performs one system call.
type handler func(k *Kernel, c *Call) Outcome

type entry struct {
	Entry
	fn handler
}

// table is the system call table, indexed by number. It is built once and
// never modified.
var table = indexTable(declareTable())

// indexTable indexes declared entries by number. A number declared twice
// would keep its last entry: TestTable checks that none is.
func indexTable(declared []entry) []entry {
	var t []entry
	for _, e := range declared {
		if e.Nr >= len(t) {
			t = append(t, make([]entry, e.Nr+1-len(t))...)
		}
		t[e.Nr] = e
	}
	return t
}

// declareTable returns the entries of the table in the order they are
// declared.
func declareTable() []entry {
	var t []entry
	add := func(nr int, s Support, note string, fn handler) {
		t = append(t, entry{Entry{Nr: nr, Name: Name(uint64(nr)), Support: s, Note: note}, fn})
	}
	full := func(nr int, fn handler) { add(nr, Full, "", fn) }
	partial := func(nr int, note string, fn handler) { add(nr, Partial, note, fn) }
	refuse := func(nr int, e Errno, note string) {
		add(nr, Refused, "returns "+e.Error()+": "+note, nil)
		t[len(t)-1].Errno = e
	}

	// Threads: clone and futex need the scheduler and the CPU's register
	// contexts, so the runtime (package guest) performs them; they are
	// listed here so that the table is the whole story for users.
	// Processes: fork, vfork, clone without CLONE_THREAD and the waits
	// are the runtime's too (guest/fork.go).
	partial(56, "without CLONE_THREAD a process, with a copy of the memory even under CLONE_VM", byRuntime)
	partial(435, "without CLONE_THREAD a process, with a copy of the memory even under CLONE_VM", byRuntime)
	full(57, byRuntime) // the memory is copied at the fork
	partial(58, "the child gets a copy of the memory; the parent waits for its exec or exit", byRuntime)
	partial(61, "no process groups: a group waits for any child; rusage is zero", byRuntime)
	partial(247, "no process groups: a group waits for any child; WEXITED only; P_PIDFD too", byRuntime)
	// pidfds (guest/pidfd.go, sys_pidfd.go).
	partial(434, "processes of the run", byRuntime)
	partial(424, "as kill(2); a siginfo is checked, the signal is sent with kill's", byRuntime)
	// execve replaces the image in place: the runtime maps the new program
	// (see Kernel.ExecTarget and Kernel.Exec).
	partial(59, "#! scripts too; the SSE and x87 state are not reset", byRuntime)
	partial(322, "#! scripts too; the SSE and x87 state are not reset", byRuntime)
	full(202, byRuntime) // all operations, timeouts in virtual time, FIFO wake order

	// Files: open, close, descriptors (sys_file.go).
	full(2, sysOpen)
	full(257, sysOpenat)
	full(85, sysCreat)
	full(3, sysClose)
	full(436, sysCloseRange)
	full(32, sysDup)
	full(33, sysDup2)
	full(292, sysDup3)
	partial(72, "record locks as Linux keeps them for one process (POSIX locks never conflict with each other, "+
		"OFD locks do; waits park the thread); F_SETOWN recorded, SIGIO never sent; "+
		"O_DIRECT on pipes, leases refused (EINVAL); seals on memfds only", sysFcntl)
	partial(16, "terminal requests on tty streams (settings are kept and reported back, the host terminal is "+
		"not switched); FIONREAD (stdin a pipe, socket or device: min(64 KiB, bytes until EOF)), "+
		"FIONBIO, FIOCLEX; others ENOTTY", sysIoctl)
	full(22, sysPipe) // 64 KiB buffer; the runtime parks readers of empty and writers of full pipes (PipeWait)
	partial(293, "O_DIRECT (packet mode) refused (EINVAL)", sysPipe2)
	full(8, sysLseek)
	partial(7, "waits (in virtual time) for pipe or socket activity or the timeout; files and std streams are always ready", sysPoll)
	partial(271, "as poll; the signal mask holds while the call waits", sysPpoll)
	partial(23, "as poll (sys_select.go); a wait that times out leaves the sets as given", sysSelect)
	partial(270, "as select; the signal mask holds while the call waits", sysPselect6)

	// Event files (sys_event.go).
	full(213, sysEpollCreate)
	full(291, sysEpollCreate1)
	partial(233, "pipes, sockets, eventfds, timerfds, inotify instances, epoll instances, standard streams, terminals; Linux's ready-list "+
		"order; regular files EPERM", sysEpollCtl)
	full(232, sysEpollWait)  // waits park the thread; timeouts in virtual time
	full(281, sysEpollPwait) // the signal mask holds while the call waits
	full(441, sysEpollPwait2)
	full(284, sysEventfd)
	full(290, sysEventfd2)
	partial(283, "timers on the virtual clock; TFD_TIMER_CANCEL_ON_SET never cancels (the clock is never set)", sysTimerfdCreate)
	full(286, sysTimerfdSettime)
	full(287, sysTimerfdGettime)

	// Reading and writing (sys_rw.go).
	const stdinNote = "stdin that is a pipe, socket or device: waits for count bytes or EOF, so input does not depend on host timing"
	partial(0, stdinNote, sysRead)
	full(1, sysWrite)
	full(17, sysPread64)
	full(18, sysPwrite64)
	partial(19, stdinNote, sysReadv)
	full(20, sysWritev)
	full(295, sysPreadv)
	full(296, sysPwritev)
	partial(327, "RWF_NOWAIT honoured on pipes; RWF_HIPRI, RWF_DSYNC, RWF_SYNC are hints (unobservable)", sysPreadv2)
	partial(328, "RWF_APPEND and RWF_NOWAIT (pipes) honoured; RWF_HIPRI, RWF_DSYNC, RWF_SYNC are hints (unobservable)", sysPwritev2)
	full(40, sysSendfile)
	// inotify (sys_inotify.go).
	const inotifyNote = "events for the changes the run's processes make (not the host's; stores to shared mappings are not " +
		"IN_MODIFY); no IN_Q_OVERFLOW, IN_UNMOUNT; a file unlinked while open gets IN_DELETE_SELF at the unlink"
	partial(253, inotifyNote, sysInotifyInit)
	partial(294, inotifyNote, sysInotifyInit1)
	partial(254, inotifyNote, sysInotifyAddWatch)
	full(255, sysInotifyRmWatch)
	// splice, tee, vmsplice (sys_splice.go).
	full(275, sysSplice)
	full(276, sysTee)
	full(278, sysVmsplice)
	partial(319, "an unlinked file in the run's /dev/shm; seals recorded, F_SEAL_SHRINK/GROW/WRITE enforced on write and ftruncate, "+
		"not on mappings", sysMemfdCreate)
	full(326, sysCopyFileRange)

	// Attributes (sys_stat.go).
	const timesNote = "times: the virtual clock's for what the guest did during the run, else the host's mtime " +
		"as atime, mtime and ctime (README: Files and time); reads leave atime (noatime)"
	partial(4, timesNote, sysStat)
	partial(5, timesNote, sysFstat)
	partial(6, timesNote, sysLstat)
	partial(262, timesNote, sysNewfstatat)
	partial(332, "as stat; no birth time (STATX_BTIME); mask is always STATX_BASIC_STATS", sysStatx)
	full(21, sysAccess)
	full(269, sysFaccessat)
	full(439, sysFaccessat2)
	full(89, sysReadlink)
	full(267, sysReadlinkat)
	partial(137, "fixed, plausible figures", sysStatfs)
	partial(138, "fixed, plausible figures", sysFstatfs)

	// Name space (sys_fs.go).
	full(217, sysGetdents64)
	full(79, sysGetcwd)
	full(80, sysChdir)
	full(81, sysFchdir)
	full(83, sysMkdir)
	full(258, sysMkdirat)
	full(84, sysRmdir)
	full(87, sysUnlink)
	full(263, sysUnlinkat)
	full(82, sysRename)
	full(264, sysRenameat)
	partial(316, "RENAME_EXCHANGE and RENAME_WHITEOUT are refused (EINVAL)", sysRenameat2)
	full(86, sysLink)
	full(265, sysLinkat)
	full(88, sysSymlink)
	const mknodNote = "regular files and FIFOs (opened as in-kernel pipes shared by the guest's openers, with Linux's " +
		"open rules; never the host's FIFO); device nodes and sockets EPERM"
	partial(133, mknodNote, sysMknod)
	partial(259, mknodNote, sysMknodat)
	full(266, sysSymlinkat)
	const chmodNote = "applied to the host file, with Linux's owner rule for the guest's uid; " +
		"pipes, streams, /proc, /dev: EPERM"
	partial(90, chmodNote, sysChmod)
	partial(91, chmodNote, sysFchmod)
	partial(268, chmodNote, sysFchmodat)
	partial(452, chmodNote, sysFchmodat2)
	const chownNote = "Linux's rules for the guest's uid/gid (unprivileged: a no-op, or the group of " +
		"one's own file to one's gid; else EPERM); permitted changes reach the host file; " +
		"pipes, streams, /proc, /dev: EPERM on a change"
	partial(92, chownNote, sysChown)
	partial(93, chownNote, sysFchown)
	partial(94, chownNote, sysLchown)
	partial(260, chownNote, sysFchownat)
	full(76, sysTruncate)
	full(77, sysFtruncate)
	const syncNote = "no flush to the host's disk (only a machine crash could tell); EINVAL on pipes, streams, devices, /proc files"
	partial(74, syncNote, sysFsync)
	partial(75, syncNote, sysFsync)
	partial(306, "no flush to the host's disk (only a machine crash could tell)", sysFsync)
	partial(162, "no flush to the host's disk (only a machine crash could tell)", sysSync)
	full(95, sysUmask)
	partial(280, "explicit times also reach the host file, UTIME_NOW gives it the host's time; "+
		"a symlink's times are the guest's view only", sysUtimensat)
	partial(221, "arguments checked (ESPIPE on pipes); the advice only tunes the page cache (unobservable)", sysFadvise64)
	partial(285, "collapse and insert range EOPNOTSUPP; host blocks are not reserved (st_blocks may say less)", sysFallocate)
	full(73, sysFlock) // locks of open file descriptions conflict; a blocking request parks the thread

	// Memory (sys_mm.go).
	full(12, sysBrk)
	partial(9, "MAP_SHARED file mappings stay coherent with the file (file I/O, msync, munmap, exit sync them), but two of the same bytes see each other's stores only then (warned); MAP_PRIVATE ones are snapshots; no SIGBUS past EOF; MAP_SHARED memory (anonymous, /dev/zero, file) is shared with the processes forked afterwards, except pages mremap moved", sysMmap)
	full(11, sysMunmap)
	full(10, sysMprotect)
	// io_uring: refused, as in the unprivileged containers that disable
	// it (kernel.io_uring_disabled), so that programs use their
	// read/write/epoll paths, which emuprof sees as events.
	for _, nr := range []int{425, 426, 427} {
		refuse(nr, eNOSYS, "io_uring is not emulated (as where kernel.io_uring_disabled is set); programs fall back to read, write and epoll")
	}
	// Protection keys, as on a CPU without PKU (sys_pkey.go).
	full(330, sysPkeyAlloc)
	full(331, sysPkeyFree)
	full(329, sysPkeyMprotect)
	partial(25, "MREMAP_DONTUNMAP refused; pages added to a private file mapping read as zeros (a shared one shows the file)", sysMremap)
	partial(28, "MADV_DONTNEED drops private pages (anonymous: zeros; file: the file again); MADV_REMOVE "+
		"zeroes shared anonymous memory, EOPNOTSUPP on files; MADV_HWPOISON, MADV_SOFT_OFFLINE EINVAL (no memory failure handling); "+
		"paging hints accepted (unobservable); other advice EINVAL", sysMadviseAll)
	full(26, sysMsync)
	full(27, sysMincore)
	// Memory is always resident: locking is only counted (RLIMIT_MEMLOCK).
	const mlockNote = "counted against RLIMIT_MEMLOCK; memory is always resident; MCL_FUTURE does not limit later mappings"
	full(149, sysMemLock)
	full(150, sysMemLock)
	partial(151, mlockNote, sysMemLock)
	full(152, sysMemLock)

	// Process, threads, limits (sys_process.go).
	full(60, sysExit)
	full(231, sysExitGroup)
	full(39, sysGetpid)
	full(110, sysGetppid)
	full(186, sysGettid)
	full(102, sysGetuid)
	full(107, sysGetuid)
	full(104, sysGetgid)
	full(108, sysGetgid)
	full(118, sysGetresuid)
	// The identity is fixed: setting an id to what it is succeeds, a
	// change is EPERM (sys_ids.go).
	partial(105, "the identity is fixed: a change is EPERM", sysSetuid)
	partial(106, "the identity is fixed: a change is EPERM", sysSetgid)
	partial(113, "the identity is fixed: a change is EPERM", sysSetreuid)
	partial(114, "the identity is fixed: a change is EPERM", sysSetregid)
	partial(117, "the identity is fixed: a change is EPERM", sysSetresuid)
	partial(119, "the identity is fixed: a change is EPERM", sysSetresgid)
	full(120, sysGetresgid)
	full(115, sysGetgroups)
	// Capabilities, groups, namespaces, I/O priority (sys_caps.go, sys_ioprio.go).
	partial(125, "root holds every capability (CAP_LAST_CAP 40), others none; other processes ESRCH", sysCapget)
	partial(126, "drops capabilities with Linux's rules; they still grant nothing emuprof does not already allow", sysCapset)
	full(116, sysSetgroups) // EPERM without CAP_SETGID
	partial(272, "the sharing flags as Linux for one thread; any namespace EPERM (CLONE_NEWUSER too, as where unprivileged user namespaces are disabled)", sysUnshare)
	partial(251, "recorded and reported (ioprio_get); no I/O is reordered; other processes ESRCH", sysIoprioSet)
	partial(252, "this process's priority; other processes ESRCH", sysIoprioGet)
	full(111, sysGetpgrp)
	full(121, sysGetpgid)
	full(124, sysGetpgid)
	full(109, sysSetpgid) // the process leads its session: EPERM
	full(112, sysSetsid)  // the process leads its group: EPERM
	partial(238, "one NUMA node; the policy is recorded and reported, memory is placed nowhere else", sysSetMempolicy)
	partial(239, "one NUMA node", sysGetMempolicy)
	full(63, sysUname)
	full(218, sysSetTidAddress)
	full(273, sysSetRobustList)
	partial(158, "ARCH_SET_FS and ARCH_GET_FS only", sysArchPrctl)
	partial(157, "PR_SET_NAME, PR_GET_NAME, dumpable, pdeathsig (sent when the parent process exits, not its thread); "+
		"others, PR_SET_VMA included, EINVAL", sysPrctl)
	const rlimitNote = "Linux's checks; RLIMIT_NOFILE, RLIMIT_FSIZE (EFBIG, SIGXFSZ), RLIMIT_MEMLOCK, RLIMIT_AS and " +
		"RLIMIT_DATA are enforced, the others recorded only (RLIMIT_CPU, RLIMIT_STACK, RLIMIT_CORE...)"
	partial(302, rlimitNote, sysPrlimit64)
	partial(97, rlimitNote, sysGetrlimit)
	partial(160, rlimitNote, sysSetrlimit)
	full(204, sysSchedGetaffinity)
	partial(203, "the mask is recorded (sched_getaffinity and getcpu see it); the scheduler's CPU model does not bind threads", sysSchedSetaffinity)
	full(24, sysSchedYield)
	partial(145, "the policy recorded by sched_setscheduler; the scheduler is emuprof's own", sysSchedGetscheduler)
	partial(144, "SCHED_OTHER, BATCH and IDLE are recorded; real-time policies need root; none changes the schedule", sysSchedSetscheduler)
	full(146, sysSchedGetPriorityMax)
	full(147, sysSchedGetPriorityMin)
	partial(140, "this process's nice value (other processes: ESRCH)", sysGetpriority)
	partial(141, "the nice value is recorded and reported, and does not change the schedule", sysSetpriority)
	full(274, sysGetRobustList)
	partial(135, "the persona is recorded and reported; no flag changes behaviour", sysPersonality)
	partial(309, "the first CPU of the thread's affinity mask, node 0", sysGetcpu)
	partial(99, "fixed memory figures, virtual uptime", sysSysinfo)
	partial(100, "user time is the calling thread's virtual time", sysTimes)
	partial(98, "user time is the calling thread's virtual time; maxrss is the mapped size", sysGetrusage)
	full(318, sysGetrandom)
	refuse(334, eNOSYS, "restartable sequences are not emulated")

	// Time (sys_time.go).
	full(228, sysClockGettime)
	partial(227, "the virtual clock cannot be set: CLOCK_REALTIME says EPERM, as without CAP_SYS_TIME", sysClockSettime)
	full(229, sysClockGetres)
	full(96, sysGettimeofday)
	full(201, sysTime)
	full(35, sysNanosleep)       // the runtime parks the thread until SleepWait.Until
	full(230, sysClockNanosleep) // in virtual time

	// Signals (sys_signal.go, signal.go, itimer.go; the runtime delivers
	// them to handlers at syscall returns and when a thread is switched
	// in, guest/signal.go).
	full(13, sysRtSigaction)
	full(14, sysRtSigprocmask)
	full(127, sysRtSigpending)
	full(131, sysSigaltstack)
	full(62, sysKill) // the runtime sends to other processes and groups
	full(200, sysTkill)
	full(234, sysTgkill)
	full(129, sysRtSigqueueinfo)
	full(297, sysRtTgsigqueueinfo)
	full(15, byRuntime)  // rt_sigreturn: the runtime restores the frame
	full(34, byRuntime)  // pause
	full(130, byRuntime) // rt_sigsuspend
	full(128, byRuntime) // rt_sigtimedwait
	full(219, sysRestartSyscall)
	full(37, sysAlarm)     // on the virtual clock
	full(38, sysSetitimer) // on the virtual clock and virtual CPU time
	full(36, sysGetitimer)
	// POSIX timers (sys_timer.go).
	partial(222, "on the virtual clock (CPU-time clocks: virtual CPU time); the alarm clocks EOPNOTSUPP (no RTC)", sysTimerCreate)
	full(223, sysTimerSettime)
	full(224, sysTimerGettime)
	full(225, sysTimerGetoverrun)
	full(226, sysTimerDelete)

	// Refused so that C libraries take their fallbacks.
	for _, nr := range []int{188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199} {
		refuse(nr, eOPNOTSUPP, "extended attributes are not supported")
	}
	// Sockets (socket*.go): inside the run, between its processes; no host
	// socket is opened.
	const netNote = "the run's own network: AF_UNIX, and AF_INET/AF_INET6 on loopback only"
	partial(41, "AF_UNIX stream, datagram and seqpacket; AF_INET/AF_INET6 TCP and UDP on lo (other addresses "+
		"ENETUNREACH); NETLINK_ROUTE answers link and address dumps for lo; raw and packet sockets EPERM", sysSocket)
	partial(53, "AF_UNIX only (others EOPNOTSUPP, as Linux)", sysSocketpair)
	partial(49, "path names are socket nodes in the file system, abstract names and autobind the run's; "+
		"IP: loopback or wildcard addresses, port 0 gives the next free port from 32768 in order", sysBind)
	partial(50, netNote+"; TCP's backlog is not enforced (a connection always waits for accept)", sysListen)
	full(43, sysAccept)
	full(288, sysAccept4)
	partial(42, netNote+"; a connection is established at once (non-blocking TCP: EINPROGRESS, then writable); "+
		"a closed port is ECONNREFUSED, another host ENETUNREACH", sysConnect)
	full(48, sysShutdown)
	full(51, sysGetsockname)
	full(52, sysGetpeername)
	const sendNote = "blocking stream sends return when all is queued; MSG_OOB EOPNOTSUPP; data is readable " +
		"from the sender's virtual time on"
	partial(44, sendNote, sysSendto)
	partial(46, sendNote+"; SCM_RIGHTS and SCM_CREDENTIALS on AF_UNIX", sysSendmsg)
	partial(307, sendNote, sysSendmmsg)
	const recvNote = "MSG_PEEK, MSG_WAITALL, MSG_TRUNC, MSG_DONTWAIT; no urgent data (MSG_OOB EINVAL), empty error queue"
	partial(45, recvNote, sysRecvfrom)
	partial(47, recvNote+"; SO_PASSCRED credentials, SCM_RIGHTS descriptors (MSG_CTRUNC when they do not fit)", sysRecvmsg)
	partial(299, recvNote+"; the timeout is not applied", sysRecvmmsg)
	partial(54, "options that change the emulated network (SO_REUSEADDR, SO_REUSEPORT, SO_PASSCRED, SO_SNDBUF, "+
		"SO_RCVBUF, IPV6_V6ONLY) are honoured; other known options are recorded and read back; unknown ENOPROTOOPT", sysSetsockopt)
	partial(55, "Linux's defaults and answers (SO_ERROR, SO_TYPE, SO_PEERCRED, SO_ACCEPTCONN, TCP_MAXSEG...); "+
		"TCP_INFO has only the state", sysGetsockopt)
	return t
}

// Table returns the implemented and refused system calls, sorted by number.
func Table() []Entry {
	var out []Entry
	for _, e := range table {
		if e.Name != "" {
			out = append(out, e.Entry)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.Nr - b.Nr })
	return out
}
