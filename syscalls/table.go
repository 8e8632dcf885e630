package syscalls

import "strconv"

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
	// Unsupported: not emulated; the call stops the run naming it (or
	// fails with ENOSYS under the FailENOSYS policy).
	Unsupported
)

// String returns "full", "partial", "refused" or "unsupported".
func (s Support) String() string {
	switch s {
	case Full:
		return "full"
	case Partial:
		return "partial"
	case Refused:
		return "refused"
	case Unsupported:
		return "unsupported"
	}
	return "support?"
}

// Entry describes one system call of the table.
type Entry struct {
	Nr      int
	Name    string
	Support Support
	// Note is the caveat of a Partial entry, why a call is Refused, or
	// what an Unsupported one does.
	Note string
	// Errno is what a Refused call returns.
	Errno Errno
}

// handler performs one system call.
type handler func(k *Kernel, c *Call) Outcome

type entry struct {
	Entry
	fn handler
	// direct: Do calls fn without the kernel's per-call bookkeeping
	// (perform). The runtime's calls (task.go) never had it; those that
	// the kernel completes itself ask for it.
	direct bool
}

// table is the system call table, indexed by number. It is built once, by
// init (handlers name calls through Name, which reads it), and never
// modified.
var table []entry

func init() { table = indexTable(declareTable()) }

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
// declared: every x86-64 system call, its name beside its number.
func declareTable() []entry {
	var t []entry
	add := func(nr int, name string, s Support, note string, fn handler, direct bool) {
		t = append(t, entry{Entry{Nr: nr, Name: name, Support: s, Note: note}, fn, direct})
	}
	full := func(nr int, name string, fn handler) { add(nr, name, Full, "", fn, false) }
	partial := func(nr int, name, note string, fn handler) { add(nr, name, Partial, note, fn, false) }
	fullTask := func(nr int, name string, fn handler) { add(nr, name, Full, "", fn, true) }
	partialTask := func(nr int, name, note string, fn handler) { add(nr, name, Partial, note, fn, true) }
	refuse := func(nr int, name string, e Errno, note string) {
		add(nr, name, Refused, "returns "+e.Error()+": "+note, nil, false)
		t[len(t)-1].Errno = e
	}
	unsupported := func(nr int, name string) {
		add(nr, name, Unsupported, "not emulated: stops the run naming it (--unsupported=enosys: fails with ENOSYS)", nil, false)
	}

	// Threads and processes: the handlers ask the runtime (Task: the
	// scheduler, the CPU's registers, the other processes; guest/).
	partialTask(56, "clone", "without CLONE_THREAD a process, with a copy of the memory even under CLONE_VM", byTask(sysClone))
	partialTask(435, "clone3", "without CLONE_THREAD a process, with a copy of the memory even under CLONE_VM", byTask(sysClone3))
	fullTask(57, "fork", byTask(sysFork)) // the memory is copied at the fork
	partialTask(58, "vfork", "the child gets a copy of the memory; the parent waits for its exec or exit", byTask(sysVfork))
	partialTask(61, "wait4", "no process groups: a group waits for any child; rusage is zero", byTask(sysWait4))
	partialTask(247, "waitid", "no process groups: a group waits for any child; WEXITED only; P_PIDFD too", byTask(sysWaitid))
	// pidfds (guest/pidfd.go, sys_pidfd.go).
	partialTask(434, "pidfd_open", "processes of the run", byTask(sysPidfdOpen))
	partialTask(424, "pidfd_send_signal", "as kill(2); a siginfo is checked, the signal is sent with kill's", byTask(sysPidfdSendSignal))
	// execve replaces the image in place: the runtime maps the new program
	// (see Kernel.ExecTarget and Kernel.Exec).
	partialTask(59, "execve", "#! scripts too; the SSE and x87 state are not reset", byTask(sysExecve))
	partialTask(322, "execveat", "#! scripts too; the SSE and x87 state are not reset", byTask(sysExecveat))
	fullTask(202, "futex", byTask(sysFutex)) // all operations, timeouts in virtual time, FIFO wake order

	// Files: open, close, descriptors (sys_file.go).
	full(2, "open", sysOpen)
	full(257, "openat", sysOpenat)
	full(85, "creat", sysCreat)
	full(3, "close", sysClose)
	full(436, "close_range", sysCloseRange)
	full(32, "dup", sysDup)
	full(33, "dup2", sysDup2)
	full(292, "dup3", sysDup3)
	partial(72, "fcntl", "record locks as Linux keeps them for one process (POSIX locks never conflict with each other, "+
		"OFD locks do; waits park the thread); F_SETOWN recorded, SIGIO never sent; "+
		"O_DIRECT on pipes, leases refused (EINVAL); seals on memfds only", sysFcntl)
	partial(16, "ioctl", "terminal requests on tty streams (settings are kept and reported back, the host terminal is "+
		"not switched); FIONREAD (stdin a pipe, socket or device: min(64 KiB, bytes until EOF)), "+
		"FIONBIO, FIOASYNC (O_ASYNC as fcntl sets it), FIOCLEX; others ENOTTY", sysIoctl)
	full(22, "pipe", sysPipe) // 64 KiB buffer; the runtime parks readers of empty and writers of full pipes (PipeWait)
	partial(293, "pipe2", "O_DIRECT (packet mode) refused (EINVAL)", sysPipe2)
	full(8, "lseek", sysLseek)
	partial(7, "poll", "waits (in virtual time) for pipe or socket activity or the timeout; files and std streams are always ready", sysPoll)
	partial(271, "ppoll", "as poll; the signal mask holds while the call waits", sysPpoll)
	partial(23, "select", "as poll (sys_select.go); a wait that times out leaves the sets as given", sysSelect)
	partial(270, "pselect6", "as select; the signal mask holds while the call waits", sysPselect6)

	// Event files (sys_event.go).
	full(213, "epoll_create", sysEpollCreate)
	full(291, "epoll_create1", sysEpollCreate1)
	partial(233, "epoll_ctl", "pipes, sockets, eventfds, timerfds, inotify instances, epoll instances, standard streams, terminals; Linux's ready-list "+
		"order; regular files EPERM", sysEpollCtl)
	full(232, "epoll_wait", sysEpollWait)   // waits park the thread; timeouts in virtual time
	full(281, "epoll_pwait", sysEpollPwait) // the signal mask holds while the call waits
	full(441, "epoll_pwait2", sysEpollPwait2)
	full(284, "eventfd", sysEventfd)
	full(290, "eventfd2", sysEventfd2)
	partial(283, "timerfd_create", "timers on the virtual clock; TFD_TIMER_CANCEL_ON_SET never cancels (the clock is never set)", sysTimerfdCreate)
	full(286, "timerfd_settime", sysTimerfdSettime)
	full(287, "timerfd_gettime", sysTimerfdGettime)

	// Reading and writing (sys_rw.go).
	const stdinNote = "stdin that is a pipe, socket or device: waits for count bytes or EOF, so input does not depend on host timing"
	partial(0, "read", stdinNote, sysRead)
	full(1, "write", sysWrite)
	full(17, "pread64", sysPread64)
	full(18, "pwrite64", sysPwrite64)
	partial(19, "readv", stdinNote, sysReadv)
	full(20, "writev", sysWritev)
	full(295, "preadv", sysPreadv)
	full(296, "pwritev", sysPwritev)
	partial(327, "preadv2", "RWF_NOWAIT honoured on pipes; RWF_HIPRI, RWF_DSYNC, RWF_SYNC are hints (unobservable)", sysPreadv2)
	partial(328, "pwritev2", "RWF_APPEND and RWF_NOWAIT (pipes) honoured; RWF_HIPRI, RWF_DSYNC, RWF_SYNC are hints (unobservable)", sysPwritev2)
	full(40, "sendfile", sysSendfile)
	// inotify (sys_inotify.go).
	const inotifyNote = "events for the changes the run's processes make (not the host's; stores to shared mappings are not " +
		"IN_MODIFY); no IN_Q_OVERFLOW, IN_UNMOUNT; a file unlinked while open gets IN_DELETE_SELF at the unlink"
	partial(253, "inotify_init", inotifyNote, sysInotifyInit)
	partial(294, "inotify_init1", inotifyNote, sysInotifyInit1)
	partial(254, "inotify_add_watch", inotifyNote, sysInotifyAddWatch)
	full(255, "inotify_rm_watch", sysInotifyRmWatch)
	// splice, tee, vmsplice (sys_splice.go).
	full(275, "splice", sysSplice)
	full(276, "tee", sysTee)
	full(278, "vmsplice", sysVmsplice)
	partial(319, "memfd_create", "an unlinked file in the run's /dev/shm; seals recorded, F_SEAL_SHRINK/GROW/WRITE enforced on write and ftruncate, "+
		"not on mappings", sysMemfdCreate)
	full(326, "copy_file_range", sysCopyFileRange)

	// Attributes (sys_stat.go).
	const timesNote = "times: the virtual clock's for what the guest did during the run, else the host's mtime " +
		"as atime, mtime and ctime (README: Files and time); reads leave atime (noatime)"
	partial(4, "stat", timesNote, sysStat)
	partial(5, "fstat", timesNote, sysFstat)
	partial(6, "lstat", timesNote, sysLstat)
	partial(262, "newfstatat", timesNote, sysNewfstatat)
	partial(332, "statx", "as stat; no birth time (STATX_BTIME); mask is always STATX_BASIC_STATS", sysStatx)
	full(21, "access", sysAccess)
	full(269, "faccessat", sysFaccessat)
	full(439, "faccessat2", sysFaccessat2)
	full(89, "readlink", sysReadlink)
	full(267, "readlinkat", sysReadlinkat)
	partial(137, "statfs", "fixed, plausible figures", sysStatfs)
	partial(138, "fstatfs", "fixed, plausible figures", sysFstatfs)

	// Name space (sys_fs.go).
	full(217, "getdents64", sysGetdents64)
	full(79, "getcwd", sysGetcwd)
	full(80, "chdir", sysChdir)
	full(81, "fchdir", sysFchdir)
	full(83, "mkdir", sysMkdir)
	full(258, "mkdirat", sysMkdirat)
	full(84, "rmdir", sysRmdir)
	full(87, "unlink", sysUnlink)
	full(263, "unlinkat", sysUnlinkat)
	full(82, "rename", sysRename)
	full(264, "renameat", sysRenameat)
	partial(316, "renameat2", "RENAME_EXCHANGE and RENAME_WHITEOUT are refused (EINVAL)", sysRenameat2)
	full(86, "link", sysLink)
	full(265, "linkat", sysLinkat)
	full(88, "symlink", sysSymlink)
	const mknodNote = "regular files and FIFOs (opened as in-kernel pipes shared by the guest's openers, with Linux's " +
		"open rules; never the host's FIFO); device nodes and sockets EPERM"
	partial(133, "mknod", mknodNote, sysMknod)
	partial(259, "mknodat", mknodNote, sysMknodat)
	full(266, "symlinkat", sysSymlinkat)
	const chmodNote = "applied to the host file, with Linux's owner rule for the guest's uid; " +
		"pipes, streams, /proc, /dev: EPERM"
	partial(90, "chmod", chmodNote, sysChmod)
	partial(91, "fchmod", chmodNote, sysFchmod)
	partial(268, "fchmodat", chmodNote, sysFchmodat)
	partial(452, "fchmodat2", chmodNote, sysFchmodat2)
	const chownNote = "Linux's rules for the guest's uid/gid (unprivileged: a no-op, or the group of " +
		"one's own file to one's gid; else EPERM); permitted changes reach the host file; " +
		"pipes, streams, /proc, /dev: EPERM on a change"
	partial(92, "chown", chownNote, sysChown)
	partial(93, "fchown", chownNote, sysFchown)
	partial(94, "lchown", chownNote, sysLchown)
	partial(260, "fchownat", chownNote, sysFchownat)
	full(76, "truncate", sysTruncate)
	full(77, "ftruncate", sysFtruncate)
	const syncNote = "no flush to the host's disk (only a machine crash could tell); EINVAL on pipes, streams, devices, /proc files"
	partial(74, "fsync", syncNote, sysFsync)
	partial(75, "fdatasync", syncNote, sysFsync)
	partial(306, "syncfs", "no flush to the host's disk (only a machine crash could tell)", sysFsync)
	partial(162, "sync", "no flush to the host's disk (only a machine crash could tell)", sysSync)
	full(95, "umask", sysUmask)
	partial(280, "utimensat", "explicit times also reach the host file, UTIME_NOW gives it the host's time; "+
		"a symlink's times are the guest's view only", sysUtimensat)
	partial(221, "fadvise64", "arguments checked (ESPIPE on pipes); the advice only tunes the page cache (unobservable)", sysFadvise64)
	partial(285, "fallocate", "collapse and insert range EOPNOTSUPP; host blocks are not reserved (st_blocks may say less)", sysFallocate)
	full(73, "flock", sysFlock) // locks of open file descriptions conflict; a blocking request parks the thread

	// Memory (sys_mm.go).
	full(12, "brk", sysBrk)
	partial(9, "mmap", "MAP_SHARED file mappings stay coherent with the file (file I/O, msync, munmap, exit sync them), but two of the same bytes see each other's stores only then (warned); MAP_PRIVATE ones are snapshots; pages past the end of the file are SIGBUS (a shared mapping follows the file's growth and truncation, a private one keeps the pages past the end it had when mapped); MAP_SHARED memory (anonymous, /dev/zero, file) is shared with the processes forked afterwards, except pages mremap moved", sysMmap)
	full(11, "munmap", sysMunmap)
	full(10, "mprotect", sysMprotect)
	// io_uring: refused, as in the unprivileged containers that disable
	// it (kernel.io_uring_disabled), so that programs use their
	// read/write/epoll paths, which emuprof sees as events.
	const ioUringNote = "io_uring is not emulated (as where kernel.io_uring_disabled is set); programs fall back to read, write and epoll"
	refuse(425, "io_uring_setup", eNOSYS, ioUringNote)
	refuse(426, "io_uring_enter", eNOSYS, ioUringNote)
	refuse(427, "io_uring_register", eNOSYS, ioUringNote)
	// Protection keys, as on a CPU without PKU (sys_pkey.go).
	full(330, "pkey_alloc", sysPkeyAlloc)
	full(331, "pkey_free", sysPkeyFree)
	full(329, "pkey_mprotect", sysPkeyMprotect)
	partial(25, "mremap", "MREMAP_DONTUNMAP refused; pages added to a private file mapping read as zeros (a shared one shows the file)", sysMremap)
	partial(28, "madvise", "MADV_DONTNEED drops private pages (anonymous: zeros; file: the file again); MADV_REMOVE "+
		"zeroes shared anonymous memory, EOPNOTSUPP on files; MADV_HWPOISON, MADV_SOFT_OFFLINE EINVAL (no memory failure handling); "+
		"paging hints accepted (unobservable); other advice EINVAL", sysMadviseAll)
	full(26, "msync", sysMsync)
	full(27, "mincore", sysMincore)
	// Memory is always resident: locking is only counted (RLIMIT_MEMLOCK).
	const mlockNote = "counted against RLIMIT_MEMLOCK; memory is always resident; MCL_FUTURE does not limit later mappings"
	full(149, "mlock", sysMemLock)
	full(150, "munlock", sysMemLock)
	partial(151, "mlockall", mlockNote, sysMemLock)
	full(152, "munlockall", sysMemLock)

	// Process, threads, limits (sys_process.go).
	full(60, "exit", sysExit)
	full(231, "exit_group", sysExitGroup)
	full(39, "getpid", sysGetpid)
	fullTask(110, "getppid", sysGetppidAny)
	full(186, "gettid", sysGettid)
	full(102, "getuid", sysGetuid)
	full(107, "geteuid", sysGeteuid)
	full(104, "getgid", sysGetgid)
	full(108, "getegid", sysGetegid)
	full(118, "getresuid", sysGetresuid)
	// Real, effective, saved and fs ids with Linux's rules and the
	// capability changes of leaving uid 0 (sys_ids.go); files are still
	// opened with emuprof's own host rights.
	const idNote = "Linux's rules (CAP_SETUID/CAP_SETGID: any id; else one of the process's own); files are still opened and created with emuprof's host rights"
	partial(105, "setuid", idNote+"; leaving uid 0 drops the capabilities (PR_SET_KEEPCAPS keeps the permitted set)", sysSetuid)
	partial(106, "setgid", idNote, sysSetgid)
	partial(113, "setreuid", idNote, sysSetreuid)
	partial(114, "setregid", idNote, sysSetregid)
	partial(117, "setresuid", idNote, sysSetresuid)
	partial(119, "setresgid", idNote, sysSetresgid)
	partial(122, "setfsuid", idNote, sysSetfsuid)
	partial(123, "setfsgid", idNote, sysSetfsgid)
	full(120, "getresgid", sysGetresgid)
	full(115, "getgroups", sysGetgroups)
	// Capabilities, groups, namespaces, I/O priority (sys_caps.go, sys_ioprio.go).
	partial(125, "capget", "root holds every capability (CAP_LAST_CAP 40), others none; other processes ESRCH", sysCapget)
	partial(126, "capset", "drops capabilities with Linux's rules; they still grant nothing emuprof does not already allow", sysCapset)
	full(116, "setgroups", sysSetgroups) // EPERM without CAP_SETGID
	partial(272, "unshare", "the sharing flags as Linux for one thread; any namespace EPERM (CLONE_NEWUSER too, as where unprivileged user namespaces are disabled)", sysUnshare)
	partial(251, "ioprio_set", "recorded and reported (ioprio_get); no I/O is reordered; other processes ESRCH", sysIoprioSet)
	partial(252, "ioprio_get", "this process's priority; other processes ESRCH", sysIoprioGet)
	fullTask(111, "getpgrp", sysGetpgrpAny)
	fullTask(121, "getpgid", sysGetpgidAny)
	fullTask(124, "getsid", sysGetsidAny)
	fullTask(109, "setpgid", sysSetpgidAny)
	fullTask(112, "setsid", sysSetsidAny)
	partial(238, "set_mempolicy", "one NUMA node; the policy is recorded and reported, memory is placed nowhere else", sysSetMempolicy)
	partial(239, "get_mempolicy", "one NUMA node", sysGetMempolicy)
	full(63, "uname", sysUname)
	full(218, "set_tid_address", sysSetTidAddress)
	full(273, "set_robust_list", sysSetRobustList)
	partial(158, "arch_prctl", "FS and GS bases; CPUID enabled with no CPUID faulting: ARCH_SET_CPUID is ENODEV, as on a CPU without it (Linux answers 0 on one that has it)", sysArchPrctl)
	partial(157, "prctl", "PR_SET_NAME, PR_GET_NAME, dumpable, pdeathsig (sent when the parent process exits, not its thread); "+
		"others, PR_SET_VMA included, EINVAL", sysPrctl)
	const rlimitNote = "Linux's checks; RLIMIT_NOFILE, RLIMIT_FSIZE (EFBIG, SIGXFSZ), RLIMIT_MEMLOCK, RLIMIT_AS and " +
		"RLIMIT_DATA are enforced, the others recorded only (RLIMIT_CPU, RLIMIT_STACK, RLIMIT_CORE...)"
	partial(302, "prlimit64", rlimitNote, sysPrlimit64)
	partial(97, "getrlimit", rlimitNote, sysGetrlimit)
	partial(160, "setrlimit", rlimitNote, sysSetrlimit)
	full(204, "sched_getaffinity", sysSchedGetaffinity)
	partial(203, "sched_setaffinity", "the mask is recorded (sched_getaffinity and getcpu see it); the scheduler's CPU model does not bind threads", sysSchedSetaffinity)
	full(24, "sched_yield", sysSchedYield)
	partial(145, "sched_getscheduler", "the policy recorded by sched_setscheduler; the scheduler is emuprof's own", sysSchedGetscheduler)
	partial(144, "sched_setscheduler", "SCHED_OTHER, BATCH and IDLE are recorded; real-time policies need root; none changes the schedule", sysSchedSetscheduler)
	full(146, "sched_get_priority_max", sysSchedGetPriorityMax)
	full(147, "sched_get_priority_min", sysSchedGetPriorityMin)
	partial(140, "getpriority", "this process's nice value (other processes: ESRCH)", sysGetpriority)
	partial(141, "setpriority", "the nice value is recorded and reported, and does not change the schedule", sysSetpriority)
	full(274, "get_robust_list", sysGetRobustList)
	partial(135, "personality", "the persona is recorded and reported; no flag changes behaviour", sysPersonality)
	partial(309, "getcpu", "the first CPU of the thread's affinity mask, node 0", sysGetcpu)
	partial(99, "sysinfo", "fixed memory figures, virtual uptime", sysSysinfo)
	partial(100, "times", "user time is the calling thread's virtual time", sysTimes)
	partial(98, "getrusage", "user time is the calling thread's virtual time; maxrss is the mapped size", sysGetrusage)
	full(318, "getrandom", sysGetrandom)
	refuse(334, "rseq", eNOSYS, "restartable sequences are not emulated")

	// Time (sys_time.go).
	full(228, "clock_gettime", sysClockGettime)
	partial(227, "clock_settime", "the virtual clock cannot be set: CLOCK_REALTIME says EPERM, as without CAP_SYS_TIME", sysClockSettime)
	full(229, "clock_getres", sysClockGetres)
	full(96, "gettimeofday", sysGettimeofday)
	full(201, "time", sysTime)
	full(35, "nanosleep", sysNanosleep)             // the runtime parks the thread until SleepWait.Until
	full(230, "clock_nanosleep", sysClockNanosleep) // in virtual time

	// Signals (sys_signal.go, signal.go, itimer.go; the runtime delivers
	// them to handlers at syscall returns and when a thread is switched
	// in, guest/signal.go).
	full(13, "rt_sigaction", sysRtSigaction)
	full(14, "rt_sigprocmask", sysRtSigprocmask)
	full(127, "rt_sigpending", sysRtSigpending)
	full(131, "sigaltstack", sysSigaltstack)
	fullTask(62, "kill", sysKillAny) // the runtime sends to other processes and groups
	fullTask(200, "tkill", sysTkillAny)
	fullTask(234, "tgkill", sysTgkillAny)
	fullTask(129, "rt_sigqueueinfo", sysRtSigqueueinfoAny)
	full(297, "rt_tgsigqueueinfo", sysRtTgsigqueueinfo)
	fullTask(15, "rt_sigreturn", byTask(sysRtSigreturn))
	fullTask(34, "pause", byTask(sysPause))
	fullTask(130, "rt_sigsuspend", byTask(sysRtSigsuspend))
	fullTask(128, "rt_sigtimedwait", byTask(sysRtSigtimedwait))
	full(219, "restart_syscall", sysRestartSyscall)
	fullTask(37, "alarm", timerCall(sysAlarm))         // on the virtual clock
	fullTask(38, "setitimer", timerCall(sysSetitimer)) // on the virtual clock and virtual CPU time
	full(36, "getitimer", sysGetitimer)
	// POSIX timers (sys_timer.go).
	partial(222, "timer_create", "on the virtual clock (CPU-time clocks: virtual CPU time); the alarm clocks EOPNOTSUPP (no RTC)", sysTimerCreate)
	fullTask(223, "timer_settime", timerCall(sysTimerSettime))
	full(224, "timer_gettime", sysTimerGettime)
	full(225, "timer_getoverrun", sysTimerGetoverrun)
	full(226, "timer_delete", sysTimerDelete)

	// Refused so that C libraries take their fallbacks.
	const xattrNote = "extended attributes are not supported"
	refuse(188, "setxattr", eOPNOTSUPP, xattrNote)
	refuse(189, "lsetxattr", eOPNOTSUPP, xattrNote)
	refuse(190, "fsetxattr", eOPNOTSUPP, xattrNote)
	refuse(191, "getxattr", eOPNOTSUPP, xattrNote)
	refuse(192, "lgetxattr", eOPNOTSUPP, xattrNote)
	refuse(193, "fgetxattr", eOPNOTSUPP, xattrNote)
	refuse(194, "listxattr", eOPNOTSUPP, xattrNote)
	refuse(195, "llistxattr", eOPNOTSUPP, xattrNote)
	refuse(196, "flistxattr", eOPNOTSUPP, xattrNote)
	refuse(197, "removexattr", eOPNOTSUPP, xattrNote)
	refuse(198, "lremovexattr", eOPNOTSUPP, xattrNote)
	refuse(199, "fremovexattr", eOPNOTSUPP, xattrNote)
	// Sockets (socket*.go): inside the run, between its processes; no host
	// socket is opened.
	const netNote = "the run's own network: AF_UNIX, and AF_INET/AF_INET6 on loopback only (--net host: TCP to and from host addresses too)"
	partial(41, "socket", "AF_UNIX stream, datagram and seqpacket; AF_INET/AF_INET6 TCP and UDP on lo (other addresses "+
		"ENETUNREACH); NETLINK_ROUTE answers link and address dumps for lo; raw and packet sockets EPERM", sysSocket)
	partial(53, "socketpair", "AF_UNIX only (others EOPNOTSUPP, as Linux)", sysSocketpair)
	partial(49, "bind", "path names are socket nodes in the file system, abstract names and autobind the run's; "+
		"IP: loopback or wildcard addresses, port 0 gives the next free port from 32768 in order", sysBind)
	partial(50, "listen", netNote+"; a full accept queue (more than the backlog waiting) drops a TCP SYN, sent again after 1, 2, 4… s of virtual time (ETIMEDOUT after 6 retries), and makes an AF_UNIX connect EAGAIN or wait for an accept", sysListen)
	full(43, "accept", sysAccept)
	full(288, "accept4", sysAccept4)
	partial(42, "connect", netNote+"; a connection is established at once (non-blocking TCP: EINPROGRESS, then writable); "+
		"a closed port is ECONNREFUSED, another host ENETUNREACH", sysConnect)
	full(48, "shutdown", sysShutdown)
	full(51, "getsockname", sysGetsockname)
	full(52, "getpeername", sysGetpeername)
	const sendNote = "blocking stream sends return when all is queued; MSG_OOB EOPNOTSUPP; data is readable " +
		"from the sender's virtual time on"
	partial(44, "sendto", sendNote, sysSendto)
	partial(46, "sendmsg", sendNote+"; SCM_RIGHTS and SCM_CREDENTIALS on AF_UNIX", sysSendmsg)
	partial(307, "sendmmsg", sendNote, sysSendmmsg)
	const recvNote = "MSG_PEEK, MSG_WAITALL, MSG_TRUNC, MSG_DONTWAIT; no urgent data (MSG_OOB EINVAL), empty error queue"
	partial(45, "recvfrom", recvNote, sysRecvfrom)
	partial(47, "recvmsg", recvNote+"; SO_PASSCRED credentials, SCM_RIGHTS descriptors (MSG_CTRUNC when they do not fit)", sysRecvmsg)
	partial(299, "recvmmsg", recvNote+"; the timeout is checked after each message, as Linux does (it does not bound a wait), with no kernel time passing inside the call", sysRecvmmsg)
	partial(54, "setsockopt", "options that change the emulated network (SO_REUSEADDR, SO_REUSEPORT, SO_PASSCRED, SO_SNDBUF, "+
		"SO_RCVBUF, IPV6_V6ONLY) are honoured; other known options are recorded and read back; unknown ENOPROTOOPT", sysSetsockopt)
	partial(55, "getsockopt", "Linux's defaults and answers (SO_ERROR, SO_TYPE, SO_PEERCRED, SO_ACCEPTCONN, TCP_MAXSEG...); "+
		"TCP_INFO has only the state", sysGetsockopt)

	// Not emulated: the run stops naming the call (--unsupported=enosys:
	// it fails with ENOSYS and the run's summary lists it).
	unsupported(29, "shmget")
	unsupported(30, "shmat")
	unsupported(31, "shmctl")
	unsupported(64, "semget")
	unsupported(65, "semop")
	unsupported(66, "semctl")
	unsupported(67, "shmdt")
	unsupported(68, "msgget")
	unsupported(69, "msgsnd")
	unsupported(70, "msgrcv")
	unsupported(71, "msgctl")
	unsupported(78, "getdents")
	unsupported(101, "ptrace")
	unsupported(103, "syslog")
	unsupported(132, "utime")
	unsupported(134, "uselib")
	unsupported(136, "ustat")
	unsupported(139, "sysfs")
	unsupported(142, "sched_setparam")
	unsupported(143, "sched_getparam")
	unsupported(148, "sched_rr_get_interval")
	unsupported(153, "vhangup")
	unsupported(154, "modify_ldt")
	unsupported(155, "pivot_root")
	unsupported(156, "_sysctl")
	unsupported(159, "adjtimex")
	unsupported(161, "chroot")
	unsupported(163, "acct")
	unsupported(164, "settimeofday")
	unsupported(165, "mount")
	unsupported(166, "umount2")
	unsupported(167, "swapon")
	unsupported(168, "swapoff")
	unsupported(169, "reboot")
	unsupported(170, "sethostname")
	unsupported(171, "setdomainname")
	unsupported(172, "iopl")
	unsupported(173, "ioperm")
	unsupported(174, "create_module")
	unsupported(175, "init_module")
	unsupported(176, "delete_module")
	unsupported(177, "get_kernel_syms")
	unsupported(178, "query_module")
	unsupported(179, "quotactl")
	unsupported(180, "nfsservctl")
	unsupported(181, "getpmsg")
	unsupported(182, "putpmsg")
	unsupported(183, "afs_syscall")
	unsupported(184, "tuxcall")
	unsupported(185, "security")
	unsupported(187, "readahead")
	unsupported(205, "set_thread_area")
	unsupported(206, "io_setup")
	unsupported(207, "io_destroy")
	unsupported(208, "io_getevents")
	unsupported(209, "io_submit")
	unsupported(210, "io_cancel")
	unsupported(211, "get_thread_area")
	unsupported(212, "lookup_dcookie")
	unsupported(214, "epoll_ctl_old")
	unsupported(215, "epoll_wait_old")
	unsupported(216, "remap_file_pages")
	unsupported(220, "semtimedop")
	unsupported(235, "utimes")
	unsupported(236, "vserver")
	unsupported(237, "mbind")
	unsupported(240, "mq_open")
	unsupported(241, "mq_unlink")
	unsupported(242, "mq_timedsend")
	unsupported(243, "mq_timedreceive")
	unsupported(244, "mq_notify")
	unsupported(245, "mq_getsetattr")
	unsupported(246, "kexec_load")
	unsupported(248, "add_key")
	unsupported(249, "request_key")
	unsupported(250, "keyctl")
	unsupported(256, "migrate_pages")
	unsupported(261, "futimesat")
	unsupported(277, "sync_file_range")
	unsupported(279, "move_pages")
	unsupported(282, "signalfd")
	unsupported(289, "signalfd4")
	unsupported(298, "perf_event_open")
	unsupported(300, "fanotify_init")
	unsupported(301, "fanotify_mark")
	unsupported(303, "name_to_handle_at")
	unsupported(304, "open_by_handle_at")
	unsupported(305, "clock_adjtime")
	unsupported(308, "setns")
	unsupported(310, "process_vm_readv")
	unsupported(311, "process_vm_writev")
	unsupported(312, "kcmp")
	unsupported(313, "finit_module")
	unsupported(314, "sched_setattr")
	unsupported(315, "sched_getattr")
	unsupported(317, "seccomp")
	unsupported(320, "kexec_file_load")
	unsupported(321, "bpf")
	unsupported(323, "userfaultfd")
	unsupported(324, "membarrier")
	unsupported(325, "mlock2")
	unsupported(333, "io_pgetevents")
	unsupported(335, "uretprobe")
	unsupported(336, "uprobe")
	unsupported(428, "open_tree")
	unsupported(429, "move_mount")
	unsupported(430, "fsopen")
	unsupported(431, "fsconfig")
	unsupported(432, "fsmount")
	unsupported(433, "fspick")
	unsupported(437, "openat2")
	unsupported(438, "pidfd_getfd")
	unsupported(440, "process_madvise")
	unsupported(442, "mount_setattr")
	unsupported(443, "quotactl_fd")
	unsupported(444, "landlock_create_ruleset")
	unsupported(445, "landlock_add_rule")
	unsupported(446, "landlock_restrict_self")
	unsupported(447, "memfd_secret")
	unsupported(448, "process_mrelease")
	unsupported(449, "futex_waitv")
	unsupported(450, "set_mempolicy_home_node")
	unsupported(451, "cachestat")
	unsupported(453, "map_shadow_stack")
	unsupported(454, "futex_wake")
	unsupported(455, "futex_wait")
	unsupported(456, "futex_requeue")
	unsupported(457, "statmount")
	unsupported(458, "listmount")
	unsupported(459, "lsm_get_self_attr")
	unsupported(460, "lsm_set_self_attr")
	unsupported(461, "lsm_list_modules")
	unsupported(462, "mseal")
	unsupported(463, "setxattrat")
	unsupported(464, "getxattrat")
	unsupported(465, "listxattrat")
	unsupported(466, "removexattrat")
	unsupported(467, "open_tree_attr")
	unsupported(468, "file_getattr")
	unsupported(469, "file_setattr")
	unsupported(470, "listns")
	return t
}

// Table returns every entry of the table, sorted by number.
func Table() []Entry {
	var out []Entry
	for _, e := range table {
		if e.Name != "" {
			out = append(out, e.Entry)
		}
	}
	return out
}

// Name returns the name of x86-64 system call nr ("timerfd_create" for
// 283), or "syscall_<nr>" for numbers Linux does not define.
func Name(nr uint64) string {
	if nr < uint64(len(table)) && table[nr].Name != "" {
		return table[nr].Name
	}
	return "syscall_" + strconv.FormatUint(nr, 10)
}
