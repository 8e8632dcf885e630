// Package syscalls emulates the Linux x86-64 system call interface for one
// guest process, in pure Go. Every system call is implemented here on top of
// portable Go APIs (files through package os, time from the guest's virtual
// clock, randomness from a seeded PRNG); none is passed through to the host
// kernel, so a run is deterministic and works on any host OS.
//
// The table (table.go) maps each system call number to its handler and its
// support level; handlers are grouped by family in sys_*.go files, in the
// manner of gVisor's pkg/sentry/syscalls/linux.
package syscalls

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"emuprof/defaults"
	"emuprof/mm"
	"emuprof/trace"
)

// UnsupportedPolicy says what happens when the guest makes a system call
// that is not in the table.
type UnsupportedPolicy int

const (
	// Stop stops the run with an *UnsupportedError.
	Stop UnsupportedPolicy = iota
	// FailENOSYS returns -ENOSYS to the guest and records the number
	// (see Kernel.Unsupported).
	FailENOSYS
)

// Config describes the emulated kernel for one process.
type Config struct {
	// Stdin, Stdout and Stderr back guest fds 0, 1 and 2. A nil Stdin reads
	// as empty; nil writers discard.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// StdinTTY, StdoutTTY and StderrTTY make the stream look like a
	// terminal (TCGETS and TIOCGWINSZ succeed, fstat says character
	// device); otherwise it looks like a pipe.
	StdinTTY, StdoutTTY, StderrTTY bool
	// StdinClosed starts the guest with fd 0 closed (see HostStdinClosed);
	// Stdin is then not read.
	StdinClosed bool
	// HostStd are the host files behind fds 0, 1 and 2 (nil: unknown). One
	// that is a regular file is given to the guest as that file, sharing
	// the host descriptor's position (stdio.go); Stdin, Stdout or Stderr
	// is then not used for that fd.
	HostStd [3]*os.File
	// Pid is the process id (default 1000); the parent's is Pid-1.
	Pid int
	// Uid and Gid are the guest's user and group ids (0 is root).
	Uid, Gid int
	// Seed seeds the PRNG behind getrandom and /dev/urandom.
	Seed uint64
	// Cwd is the guest's initial working directory, a host path inside
	// Sysroot (default: the root).
	Cwd string
	// Sysroot is the host directory that is the guest's "/" (default "/").
	Sysroot string
	// ExePath is the host path of the executable: /proc/self/exe leads to
	// it (shown as its guest path when it lies inside Sysroot). A relative
	// path is taken relative to Cwd.
	ExePath string
	// EpochNanos is CLOCK_REALTIME at virtual time 0, in ns since 1970.
	EpochNanos int64
	// Unsupported is the policy for system calls not in the table.
	Unsupported UnsupportedPolicy
	// CPUs is the number of CPUs the guest sees (default 8).
	CPUs int
	// Hostname is the uname nodename (default "emuprof").
	Hostname string
	// Overlay, when set, keeps the guest's file changes in a private
	// copy-on-write layer instead of the real file system (overlay.go);
	// the processes of one run share it.
	Overlay *Overlay
	// OnKernelAccess receives KindKernelRead and KindKernelWrite for every
	// range of guest memory the kernel loads from or stores into (nil:
	// none).
	OnKernelAccess func(kind trace.Kind, addr, size uint64)
	// HostNet connects TCP sockets to host addresses no guest listens on,
	// and listens on the host beside every guest TCP listener (--net
	// host, socket_host.go). Runs are then not reproducible.
	HostNet bool
}

// Call is one system call invocation.
type Call struct {
	Tid  int
	Nr   uint64
	Args [6]uint64
	// PC is the address of the syscall instruction.
	PC uint64
	// Now is the calling thread's virtual clock, in ns.
	Now int64
	// SP is the caller's stack pointer (sigaltstack).
	SP uint64
	// Task is the calling thread in the runtime (nil: a kernel without
	// one, which cannot create threads or processes).
	Task Task
}

// Action tells the runner what to do with the calling thread after a call.
type Action int

// Actions.
const (
	// Continue resumes the thread with Ret in rax.
	Continue Action = iota
	// Exit ends the calling thread with Status.
	Exit
	// ExitGroup ends the process with Status (and Signal if it was killed).
	ExitGroup
	// Block: the runtime parked the thread (a Task method); the result
	// comes when it wakes.
	Block
	// Ended: the runtime took the thread over (rt_sigreturn restored
	// its registers) or the run ends; the caller writes nothing back.
	Ended
)

// Outcome is the result of a system call.
type Outcome struct {
	// Ret is the value for rax (-errno as uint64 on failure).
	Ret    uint64
	Action Action
	// Status is the exit status for Exit and ExitGroup (128+Signal when
	// the process was killed by a signal).
	Status int
	// Signal is the signal that killed the process, for ExitGroup.
	Signal int
	// Err is a fatal error that stops the run.
	Err error
	// Wait, when non-nil, describes what the call would have waited for
	// (*SleepWait, *PipeWait, *PollWait, *ReadyWait). The call has already completed
	// without waiting; a scheduler may use it to advance or park the thread.
	Wait any
}

// SleepWait says that the thread asked to sleep until virtual time Until
// (on the calling thread's clock, in ns). The call returned 0 at once.
type SleepWait struct{ Until int64 }

// PipeWait says that a read or write on a blocking pipe returned -EAGAIN
// because the pipe was empty or full. Re-executing the call after
// Kernel.OnPipeEvent reports a change of the same Pipe emulates blocking.
type PipeWait struct {
	Fd    int
	Write bool
	// Pipe identifies the pipe (its inode number).
	Pipe uint64
}

// PollWait says that poll/ppoll found nothing ready and returned 0 at once;
// Timeout is the requested timeout in ns (-1: infinite).
type PollWait struct{ Timeout int64 }

// UnsupportedError stops a run on a system call the kernel does not
// implement.
type UnsupportedError struct {
	Nr   uint64
	Name string
	PC   uint64
}

// Error names the call and where it was made; the runner adds the symbol.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("unsupported syscall %d (%s) at %#x", e.Nr, e.Name, e.PC)
}

// MonotonicOffset is CLOCK_MONOTONIC (and CLOCK_BOOTTIME) at virtual time
// 0, in ns: the emulated machine booted one second before the program
// started.
const MonotonicOffset = 1_000_000_000

// threadState is what the kernel remembers per guest thread.
type threadState struct {
	sigmask       uint64
	altStack      [3]uint64 // sp, flags, size
	clearChildTID uint64
	robustList    uint64
	name          string
	pdeathsig     int    // PR_SET_PDEATHSIG
	affinity      []byte // sched_setaffinity's mask; nil: every CPU
	// restart is the call that asked to wait (ReadyWait) and its deadline,
	// kept while the runtime re-executes it.
	restart restartState
	// Signals (signal.go): the thread's own pending signals; the mask
	// rt_sigsuspend and the like replaced (restoreMask); the mask
	// rt_sigtimedwait replaced (waitingSet).
	pending     sigQueue
	savedMask   uint64
	restoreMask bool
	realBlocked uint64
	waitingSet  bool
	sigPending  bool // TIF_SIGPENDING: it looks at the process's signals
}

// ttySettings are the terminal's settings (TCSETS, TIOCSWINSZ); nil: the
// defaults.
type ttySettings struct{ termios, winsize []byte }

// restartState identifies a waiting call by its number and arguments.
type restartState struct {
	valid    bool
	nr       uint64
	args     [6]uint64
	deadline int64
	// done is what a socket send or receive completed in part before it
	// waited (socket_sys.go).
	done uint64
	// msgs is how many messages sendmmsg or recvmmsg completed before it
	// waited.
	msgs uint32
}

// of reports whether r is the state of call c: c is the re-execution of
// the call that waited.
func (r *restartState) of(c *Call) bool { return r.valid && r.nr == c.Nr && r.args == c.Args }

// keep returns r as the state of call c, started afresh unless it is c's
// already.
func (r *restartState) keep(c *Call) *restartState {
	if !r.of(c) {
		*r = restartState{valid: true, nr: c.Nr, args: c.Args, deadline: restartNoTimeout}
	}
	return r
}

type sigAction struct {
	handler, flags, restorer, mask uint64
}

type rlimit struct{ cur, max uint64 }

// fileTimes overrides the times of a host file that the guest created,
// wrote or touched, so that they come from the virtual clock.
type fileTimes struct{ atime, mtime, ctime int64 }

// Kernel is the emulated kernel of one guest process.
type Kernel struct {
	cfg  Config
	as   *mm.AddressSpace
	mem  mm.Backend
	root string   // cleaned Sysroot
	ov   *Overlay // Config.Overlay
	cwd  string   // guest path of the working directory
	// exeHost and exeGuest locate the executable ("" when unknown).
	exeHost, exeGuest string
	rng               *rand.ChaCha8

	fds        []fdSlot
	umask      uint32
	nextIno    uint64
	threads    map[int]*threadState
	sigactions [nSig + 1]sigAction
	sharedSigs sigQueue  // process-directed pending signals (signal.go)
	itimers    [3]itimer // ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF (itimer.go)
	// ptimers are timer_create's timers in id order, nextTimerID the id
	// of the next (sys_timer.go).
	ptimers     []*posixTimer
	nextTimerID int
	// caps are the capability sets, groups setgroups' list (nil: the
	// guest's gid alone), ioprio ioprio_set's value (sys_caps.go,
	// sys_ioprio.go); fork copies them.
	caps capSets
	// uids and gids are the process's ids, keepCaps PR_SET_KEEPCAPS
	// (sys_ids.go).
	uids, gids idSet
	keepCaps   bool
	groups     []uint32
	ioprio     uint32
	// start is the virtual time the process was forked (/proc stat).
	start int64
	// shm is the run's /dev/shm, shared by Fork (shm.go).
	shm *shmDir
	// memfds counts memfd_create calls (their host names).
	memfds int
	// inotify is the run's inotify instances, shared by Fork (sys_inotify.go).
	inotify *inotifyReg
	// cmdline is /proc/PID/cmdline: the arguments of the image, NUL-terminated.
	cmdline []byte
	rlimits [rlimNLimits]rlimit
	times   map[string]fileTimes
	unsup   []uint64
	buf     []byte
	hostUid int
	hostGid int

	// shared are the open files MAP_SHARED mappings refer to (shared.go),
	// in the order of their first mapping; syncBuf is their scratch space.
	shared  []*sharedFile
	syncBuf []byte
	// warnings are what could not be emulated exactly (Warnings).
	warnings []string

	// now is the virtual time of the call in progress (for file times).
	now int64

	// locks are the flock and record locks by file, one table for the
	// processes of a run (Fork shares it: locks.go).
	locks *lockTable
	// tty is the terminal's settings, one for the processes of a run (Fork
	// shares it): they belong to the terminal, as on Linux.
	tty *ttySettings
	// mlocked are the ranges mlock locked (sys_advice.go).
	mlocked []span
	// undumpable is PR_SET_DUMPABLE 0.
	undumpable bool
	// noNewPrivs is PR_SET_NO_NEW_PRIVS: inherited by fork, kept by exec.
	noNewPrivs bool
	// slack and subreaper are PR_SET_TIMERSLACK and PR_SET_CHILD_SUBREAPER.
	slack     int64
	subreaper bool
	// nice, policy and personality are setpriority's, sched_setscheduler's
	// and personality's (sys_prio.go): recorded, inherited by fork.
	nice, policy int
	personality  uint32
	// mempolicy is set_mempolicy's policy (sys_sched.go).
	mempolicy memPolicy
	// fifos are the pipes of the FIFO nodes open or waited for, by host
	// path, one table for the processes of a run (Fork shares it), so that
	// a FIFO opened by two processes is one pipe; fifoWait is the pipe an
	// open waits for (fifo.go).
	fifos map[string]*fifo
	// textBusy counts the files the run's processes execute, one registry
	// for the run (Fork shares it); text are this process's (textbusy.go).
	textBusy *textBusy
	text     []os.FileInfo
	fifoWait uint64
	// net is the network of the run's sockets (Fork shares it).
	net *netStack
	// tid is the thread making the call in progress.
	tid int
	// sigxfsz says that the call in progress exceeded RLIMIT_FSIZE: the
	// process gets SIGXFSZ when it returns.
	sigxfsz bool

	// OnMapFile is called after a file is mapped with mmap, with the host
	// path of the file (the runner loads ELF symbols for PROT_EXEC maps).
	OnMapFile func(hostPath string, addr, size, fileOff uint64, prot mm.Prot)
	// SetFS sets the FS base of thread tid (arch_prctl ARCH_SET_FS).
	SetFS func(tid int, base uint64)
	// GetFS returns the FS base of thread tid (arch_prctl ARCH_GET_FS).
	GetFS func(tid int) uint64
	// SetGS and GetGS are ARCH_SET_GS and ARCH_GET_GS's.
	SetGS func(tid int, base uint64)
	GetGS func(tid int) uint64
	// Threads returns the number of live threads of the process
	// (/proc/self/status; nil: 1).
	Threads func() int
	// Tree, when set, places the process among the guest's processes
	// (parent, terminal's foreground group: tree.go).
	Tree ProcessTree
	// OnPipeEvent is called when pipe (see PipeWait.Pipe) changes in a way
	// that may let a blocked reader or writer proceed: data was written or
	// read, or the last descriptor of one end was closed.
	OnPipeEvent func(pipe uint64)
	// OnSignal is called when a signal is sent to thread tid of the
	// process, which should take it now (the runtime interrupts its wait).
	OnSignal func(tid int)
	// OnLockEvent is called when a lock of the file LockWait.Lock names is
	// released, which may let a blocked lock request proceed.
	OnLockEvent func(lock uint64)
}

// New returns the kernel of a process whose memory is as, with fds 0, 1
// and 2 open on cfg's streams.
func New(cfg Config, as *mm.AddressSpace) *Kernel {
	if cfg.Pid <= 0 {
		cfg.Pid = defaults.Pid
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = defaults.CPUs
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "emuprof"
	}
	if cfg.Sysroot == "" {
		cfg.Sysroot = "/"
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	k := &Kernel{
		cfg:      cfg,
		as:       as,
		mem:      as.Backend(),
		root:     filepath.Clean(cfg.Sysroot),
		ov:       cfg.Overlay,
		cwd:      "/",
		umask:    0o022,
		nextIno:  100,
		caps:     initialCaps(cfg.Uid),
		uids:     sameSet(cfg.Uid),
		gids:     sameSet(cfg.Gid),
		hostUid:  os.Getuid(),
		hostGid:  os.Getgid(),
		threads:  make(map[int]*threadState),
		times:    make(map[string]fileTimes),
		fifos:    make(map[string]*fifo),
		tty:      &ttySettings{},
		locks:    &lockTable{files: map[string]*lockedFile{}},
		textBusy: &textBusy{},
		shm:      &shmDir{refs: 1},
		inotify:  &inotifyReg{},
		net:      newNetStack(),
	}
	if cfg.HostNet {
		k.net.host = newHostNet()
	}
	if cfg.Uid == k.hostUid {
		k.groups = hostGroups() // the supplementary groups of emuprof's user
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], cfg.Seed)
	copy(seed[8:], "emuprof getrandom")
	k.rng = rand.NewChaCha8(seed)
	if cfg.Cwd != "" {
		cwd := cfg.Cwd
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(k.root, cwd)
		}
		k.cwd = k.guestOfHost(filepath.Clean(cwd))
		if l, e := k.walk(k.cwd, true); e == 0 && l.isDir() {
			k.cwd = l.guest
		}
	}
	if cfg.ExePath != "" {
		k.exeHost = cfg.ExePath
		if !filepath.IsAbs(k.exeHost) {
			k.exeHost = filepath.Join(k.hostOf(k.cwd), k.exeHost)
		}
		k.exeHost = filepath.Clean(k.exeHost)
		k.exeGuest = k.guestOfHost(k.exeHost)
		if k.hostOf(k.exeGuest) != k.exeHost {
			k.exeGuest = filepath.ToSlash(k.exeHost) // outside the sysroot
		}
	}
	k.rlimits = defaultRlimits()
	k.fds = []fdSlot{
		{f: newOpenFile(&stream{r: cfg.Stdin, tty: cfg.StdinTTY, ino: 1}, oRDONLY, "")},
		{f: newOpenFile(&stream{w: cfg.Stdout, tty: cfg.StdoutTTY, ino: 2}, oWRONLY, "")},
		{f: newOpenFile(&stream{w: cfg.Stderr, tty: cfg.StderrTTY, ino: 3}, oWRONLY, "")},
	}
	for fd, hf := range cfg.HostStd {
		if f := stdFile(hf, fd); f != nil {
			f.guest = k.stdPath(hf)
			k.fds[fd] = fdSlot{f: f}
		}
	}
	if cfg.StdinClosed {
		k.fds[0] = fdSlot{}
	}
	return k
}

// guestOfHost converts a host path inside the sysroot to a guest path
// ("/" when it is outside).
func (k *Kernel) guestOfHost(host string) string {
	if d := k.shm.dir; d != "" && (host == d || strings.HasPrefix(host, d+string(filepath.Separator))) {
		return path.Clean(shmGuest + "/" + filepath.ToSlash(host[len(d):]))
	}
	if k.root == "/" || k.root == string(filepath.Separator) {
		return path.Clean(filepath.ToSlash(host))
	}
	rel, err := filepath.Rel(k.root, host)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "/"
	}
	return path.Clean("/" + filepath.ToSlash(rel))
}

// hostOf converts a resolved guest path to a host path.
func (k *Kernel) hostOf(guest string) string {
	return filepath.Join(k.root, filepath.FromSlash(guest))
}

// SetBrkStart sets the start of the program break.
func (k *Kernel) SetBrkStart(addr uint64) { k.as.SetBrk(addr) }

// Random fills p from the kernel's PRNG (the stream getrandom draws from),
// for example for AT_RANDOM.
func (k *Kernel) Random(p []byte) { _, _ = k.rng.Read(p) }

// ClearChildTID returns the address set with set_tid_address (or clone's
// CLONE_CHILD_CLEARTID) for thread tid, 0 if none.
func (k *Kernel) ClearChildTID(tid int) uint64 {
	if t := k.threads[tid]; t != nil {
		return t.clearChildTID
	}
	return 0
}

// SetClearChildTID records clone's CLONE_CHILD_CLEARTID address for a new
// thread (the runtime creates threads; the kernel keeps their state).
func (k *Kernel) SetClearChildTID(tid int, addr uint64) { k.thread(tid).clearChildTID = addr }

// thread returns the state of thread tid, creating it.
func (k *Kernel) thread(tid int) *threadState {
	t := k.threads[tid]
	if t == nil {
		t = &threadState{altStack: [3]uint64{0, ssDisable, 0}}
		k.threads[tid] = t
	}
	return t
}

// Unsupported returns the distinct unsupported system call numbers the
// guest made under FailENOSYS, sorted.
func (k *Kernel) Unsupported() []uint64 { return slices.Clone(k.unsup) }

// Close writes back the shared file mappings (the process is ending) and
// closes every host file the guest left open. The streams of Config are
// not closed.
func (k *Kernel) Close() error {
	k.dropText()
	first := k.syncAll()
	defer func() {
		if err := k.releaseShm(); err != nil {
			k.warn("/dev/shm: " + err.Error())
		}
	}()
	for fd := range k.fds {
		if k.fds[fd].f == nil {
			continue
		}
		if err := k.closeFD(fd); err != nil && first == nil {
			first = fmt.Errorf("syscalls: close fd %d: %w", fd, err)
		}
	}
	return first
}

// Do performs one system call.
func (k *Kernel) Do(c *Call) Outcome {
	var e *entry
	if c.Nr < uint64(len(table)) {
		e = &table[c.Nr]
	}
	if e != nil && e.direct {
		return e.fn(k, c)
	}
	k.begin(c)
	if e == nil || e.fn == nil && e.Support != Refused {
		name := Name(c.Nr)
		if k.cfg.Unsupported == FailENOSYS {
			if i, found := slices.BinarySearch(k.unsup, c.Nr); !found {
				k.unsup = slices.Insert(k.unsup, i, c.Nr)
			}
			return fail(eNOSYS)
		}
		return Outcome{Ret: eNOSYS.Ret(), Err: &UnsupportedError{Nr: c.Nr, Name: name, PC: c.PC}}
	}
	if e.Support == Refused {
		return fail(e.Errno)
	}
	return k.complete(c, e.fn)
}

// begin records the call in progress: its time and thread.
func (k *Kernel) begin(c *Call) {
	k.now, k.tid = c.Now, c.Tid
	k.net.now = c.Now
}

// perform runs fn as the kernel's own call c.
func (k *Kernel) perform(c *Call, fn handler) Outcome {
	k.begin(c)
	return k.complete(c, fn)
}

// complete runs fn and keeps the per-call state: the restart of a
// waiting call, RLIMIT_FSIZE's SIGXFSZ.
func (k *Kernel) complete(c *Call, fn handler) Outcome {
	if t := k.thread(c.Tid); t.restart.valid && !t.restart.of(c) {
		t.restart.valid = false
	}
	out := fn(k, c)
	if out.Wait == nil {
		if t := k.threads[c.Tid]; t != nil {
			t.restart.valid = false
		}
	}
	if k.sigxfsz {
		k.sigxfsz = false
		if sig := k.sendSelf(c, sigXfsz); sig.Action != Continue || sig.Err != nil {
			return sig
		}
	}
	return out
}

// ok returns a successful outcome.
func ok(v uint64) Outcome { return Outcome{Ret: v} }

// fail returns a failed outcome.
func fail(e Errno) Outcome { return Outcome{Ret: e.Ret()} }

// result returns v or the failure e.
func result(v uint64, e Errno) Outcome {
	if e != 0 {
		return fail(e)
	}
	return ok(v)
}

// fatal returns an outcome that stops the run.
func fatal(c *Call, err error) Outcome {
	return Outcome{Ret: eIO.Ret(), Err: fmt.Errorf("%s: %w", Name(c.Nr), err)}
}

// realtime returns CLOCK_REALTIME at virtual time now.
func (k *Kernel) realtime(now int64) int64 { return k.cfg.EpochNanos + now }

// monotonic returns CLOCK_MONOTONIC at virtual time now.
func monotonic(now int64) int64 { return MonotonicOffset + now }
