// signals: signal delivery to handlers, compared line by line with a
// native run. Each step prints one line; nothing printed depends on
// addresses or timing (times are checked against bounds, addresses against
// the program's own labels).
//
// Steps: raise/kill/tgkill/sigqueue with SA_SIGINFO (si_code, si_pid),
// sa_mask and SA_NODEFER, SA_RESETHAND, blocked and pending signals,
// nested frames, real-time queueing, ucontext fix-ups of SIGSEGV (RIP and a
// register), siglongjmp out of SIGSEGV/SIGFPE/SIGILL, SIGTRAP, the FPU and
// SSE state across a handler (saved, reset in the handler, restored,
// modified through uc_mcontext.fpregs), sigaltstack with SA_ONSTACK and a
// stack overflow caught on it, signals to another thread (EINTR and
// SA_RESTART on a pipe read), alarm/setitimer/getitimer, pause,
// sigsuspend, sigtimedwait/sigwaitinfo/sigwait, nanosleep interrupted
// (EINTR and the time left), ppoll and epoll_pwait with a mask, select EINTR
// under SA_RESTART, SIGPIPE with a
// handler, SIGCHLD (handler, siginfo, SIG_IGN auto-reaping), kill to a child
// with a handler, wait4 interrupted, kill(0) and kill(-pgid), PR_SET_PDEATHSIG.
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t hits, lastsig, lastcode, lastpidok, order[8], norder;
static volatile int lastval;

static void on(int sig, void (*fn)(int, siginfo_t *, void *), int flags, const int *mask)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (; mask && *mask; mask++)
		sigaddset(&sa.sa_mask, *mask);
	if (sigaction(sig, &sa, NULL) != 0)
		perror("sigaction");
}

static void dfl(int sig) { signal(sig, SIG_DFL); }

static int blocked(int sig)
{
	sigset_t s;
	sigprocmask(SIG_BLOCK, NULL, &s);
	return sigismember(&s, sig);
}

static volatile int in_blocked_self, in_blocked_other;
static void h_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits++;
	lastsig = sig;
	lastcode = si->si_code;
	lastpidok = si->si_pid == getpid() && si->si_uid == getuid();
	lastval = si->si_value.sival_int;
	if (norder < 8)
		order[norder++] = sig;
	in_blocked_self = blocked(sig);
	in_blocked_other = blocked(SIGUSR2);
}

static void step_basic(void)
{
	int m[] = {SIGUSR2, 0};
	on(SIGUSR1, h_info, 0, m);
	hits = 0;
	raise(SIGUSR1);
	printf("raise: hits %d sig %d code %d pid %d self-blocked %d mask-blocked %d after %d\n", hits, lastsig,
	       lastcode, lastpidok, in_blocked_self, in_blocked_other, blocked(SIGUSR1));
	kill(getpid(), SIGUSR1);
	printf("kill: hits %d code %d pid %d\n", hits, lastcode, lastpidok);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1);
	printf("tgkill: hits %d code %d\n", hits, lastcode);
	union sigval v = {.sival_int = 77};
	sigqueue(getpid(), SIGUSR1, v);
	printf("sigqueue: hits %d code %d value %d\n", hits, lastcode, lastval);
	on(SIGUSR1, h_info, SA_NODEFER, NULL);
	raise(SIGUSR1);
	printf("SA_NODEFER: self-blocked %d\n", in_blocked_self);
	on(SIGUSR1, h_info, SA_RESETHAND, NULL);
	raise(SIGUSR1);
	struct sigaction old;
	sigaction(SIGUSR1, NULL, &old);
	printf("SA_RESETHAND: hits %d now default %d\n", hits, old.sa_handler == SIG_DFL);
}

static void step_pending(void)
{
	on(SIGUSR1, h_info, 0, NULL);
	on(SIGUSR2, h_info, 0, NULL);
	sigset_t s, old, p;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, &old);
	hits = 0;
	norder = 0;
	raise(SIGUSR2);
	raise(SIGUSR1);
	raise(SIGUSR1);
	sigpending(&p);
	printf("pending: hits %d usr1 %d usr2 %d\n", hits, sigismember(&p, SIGUSR1), sigismember(&p, SIGUSR2));
	sigprocmask(SIG_SETMASK, &old, NULL);
	// Both frames are built on the way out of sigprocmask, SIGUSR1's
	// first: SIGUSR2's handler, on top, runs first.
	printf("unblocked: hits %d order %d %d\n", hits, order[0], order[1]);
	// Real-time signals queue, in order, with their values.
	int rt = SIGRTMIN + 1;
	on(rt, h_info, 0, NULL);
	sigemptyset(&s);
	sigaddset(&s, rt);
	sigprocmask(SIG_BLOCK, &s, &old);
	hits = 0;
	for (int i = 1; i <= 3; i++) {
		union sigval v = {.sival_int = i * 10};
		sigqueue(getpid(), rt, v);
	}
	int vals = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	vals = lastval;
	printf("rt queue: hits %d last value %d\n", hits, vals);
}

// Fix-up: a load from a bad address at label fault_insn; the handler sets
// rax and moves RIP past it.
extern char fault_insn[], fault_next[], div_insn[], ud2_insn[], int3_next[];
static volatile uintptr_t seen_addr, seen_rip, seen_trapno, seen_err, seen_cr2;
static volatile int seen_code;

static void h_fixup(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	seen_addr = (uintptr_t)si->si_addr;
	seen_code = si->si_code;
	seen_rip = uc->uc_mcontext.gregs[REG_RIP];
	seen_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	seen_err = uc->uc_mcontext.gregs[REG_ERR];
	seen_cr2 = uc->uc_mcontext.gregs[REG_CR2];
	uc->uc_mcontext.gregs[REG_RAX] = 4242;
	uc->uc_mcontext.gregs[REG_RIP] = (uintptr_t)fault_next;
	(void)sig;
}

__attribute__((noinline)) static long load(volatile long *p)
{
	long v;
	__asm__ volatile("fault_insn: movq (%1), %0\nfault_next:" : "=a"(v) : "r"(p) : "memory");
	return v;
}

static sigjmp_buf jb;
static void h_jump(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	seen_addr = (uintptr_t)si->si_addr;
	seen_code = si->si_code;
	seen_rip = uc->uc_mcontext.gregs[REG_RIP];
	seen_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	siglongjmp(jb, sig);
}

__attribute__((noinline)) static void step_faults(void)
{
	on(SIGSEGV, h_fixup, 0, NULL);
	long v = load((long *)16);
	printf("SIGSEGV fix-up: value %ld addr %d code %d rip-at-insn %d trapno %ld err %ld cr2 %d\n", v,
	       seen_addr == 16, seen_code, seen_rip == (uintptr_t)fault_insn, (long)seen_trapno, (long)seen_err,
	       seen_cr2 == 16);
	long *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v = load(page + 3);
	printf("SIGSEGV PROT_NONE: value %ld addr %d code %d err %ld\n", v, seen_addr == (uintptr_t)(page + 3),
	       seen_code, (long)seen_err);
	on(SIGSEGV, h_jump, 0, NULL);
	mprotect(page, 4096, PROT_READ);
	int s = sigsetjmp(jb, 1);
	if (s == 0) {
		*(volatile long *)page = 1;
		printf("write to a read-only page did not fault\n");
	} else {
		printf("siglongjmp from %d: code %d addr %d segv-blocked %d\n", s, seen_code, seen_addr == (uintptr_t)page,
		       blocked(SIGSEGV));
	}
	on(SIGFPE, h_jump, 0, NULL);
	s = sigsetjmp(jb, 1);
	if (s == 0) {
		volatile int zero = 0, r;
		int num = 7;
		__asm__ volatile("cltd\ndiv_insn: idivl %2" : "=a"(r) : "a"(num), "r"(zero) : "edx");
		printf("division by zero did not fault: %d\n", r);
	} else {
		printf("SIGFPE: sig %d code %d addr %d rip %d trapno %ld\n", s, seen_code,
		       seen_addr == (uintptr_t)div_insn, seen_rip == (uintptr_t)div_insn, (long)seen_trapno);
	}
	on(SIGILL, h_jump, 0, NULL);
	s = sigsetjmp(jb, 1);
	if (s == 0) {
		__asm__ volatile("ud2_insn: ud2");
	} else {
		printf("SIGILL: sig %d code %d addr %d trapno %ld\n", s, seen_code, seen_addr == (uintptr_t)ud2_insn,
		       (long)seen_trapno);
	}
	dfl(SIGSEGV);
	dfl(SIGFPE);
	dfl(SIGILL);
	munmap(page, 4096);
}

static void h_trap(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	seen_rip = uc->uc_mcontext.gregs[REG_RIP];
	seen_code = si->si_code;
	seen_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	(void)sig;
}

__attribute__((noinline)) static void step_trap(void)
{
	on(SIGTRAP, h_trap, 0, NULL);
	__asm__ volatile("int3\nint3_next:" ::: "memory");
	printf("SIGTRAP: rip after int3 %d code %d trapno %ld\n", seen_rip == (uintptr_t)int3_next, seen_code,
	       (long)seen_trapno);
	dfl(SIGTRAP);
}

// FPU and SSE state: values live in xmm registers and the x87 stack
// across a raw kill; the handler clobbers them and sees the initial state.
static volatile unsigned seen_mxcsr, seen_fcw, frame_mxcsr;
static volatile double seen_xmm0;
static void h_fpu(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	unsigned m;
	unsigned short cw;
	__asm__ volatile("stmxcsr %0\nfnstcw %1" : "=m"(m), "=m"(cw));
	seen_mxcsr = m;
	seen_fcw = cw;
	frame_mxcsr = uc->uc_mcontext.fpregs->mxcsr;
	memcpy((void *)&seen_xmm0, &uc->uc_mcontext.fpregs->_xmm[0], 8);
	// Clobber every xmm register and the rounding mode.
	__asm__ volatile("pxor %%xmm0,%%xmm0\npxor %%xmm1,%%xmm1\npxor %%xmm7,%%xmm7\npxor %%xmm15,%%xmm15\n"
			 "fldpi\nfldpi\n" ::: "xmm0", "xmm1", "xmm7", "xmm15", "st");
	fesetround(FE_UPWARD);
	if (sig == SIGUSR2) {
		// Change xmm1 in the frame: sigreturn loads it.
		double nv = 6.25;
		memcpy(&uc->uc_mcontext.fpregs->_xmm[1], &nv, 8);
	}
	(void)si;
}

static void step_fpu(void)
{
	on(SIGUSR1, h_fpu, 0, NULL);
	on(SIGUSR2, h_fpu, 0, NULL);
	double in[4] = {1.5, 2.25, 3.125, 4.0625}, out[4];
	long pid = getpid();
	fesetround(FE_TOWARDZERO);
	__asm__ volatile("movsd 0(%2), %%xmm0\nmovsd 8(%2), %%xmm1\nmovsd 16(%2), %%xmm7\nmovsd 24(%2), %%xmm15\n"
			 "mov $62, %%eax\nmov %3, %%rdi\nmov $10, %%esi\nsyscall\n"
			 "movsd %%xmm0, 0(%1)\nmovsd %%xmm1, 8(%1)\nmovsd %%xmm7, 16(%1)\nmovsd %%xmm15, 24(%1)\n"
			 : "=m"(out)
			 : "r"(out), "r"(in), "r"(pid)
			 : "rax", "rdi", "rsi", "rcx", "r11", "xmm0", "xmm1", "xmm7", "xmm15", "memory");
	int round = fegetround() == FE_TOWARDZERO;
	printf("FPU: kept %g %g %g %g round %d handler mxcsr %#x fcw %#x frame mxcsr %#x frame xmm0 %g\n", out[0],
	       out[1], out[2], out[3], round, seen_mxcsr, seen_fcw, frame_mxcsr, seen_xmm0);
	__asm__ volatile("movsd 0(%2), %%xmm0\nmovsd 8(%2), %%xmm1\n"
			 "mov $62, %%eax\nmov %3, %%rdi\nmov $12, %%esi\nsyscall\n"
			 "movsd %%xmm0, 0(%1)\nmovsd %%xmm1, 8(%1)\n"
			 : "=m"(out)
			 : "r"(out), "r"(in), "r"(pid)
			 : "rax", "rdi", "rsi", "rcx", "r11", "xmm0", "xmm1", "memory");
	printf("FPU frame edit: xmm0 %g xmm1 %g\n", out[0], out[1]);
	fesetround(FE_TONEAREST);
	dfl(SIGUSR1);
	dfl(SIGUSR2);
}

// sigaltstack and SA_ONSTACK; a stack overflow in a thread caught on its
// alternate stack.
static char *alt;
static volatile int on_alt, alt_flags_in;
static void h_alt(int sig, siginfo_t *si, void *p)
{
	char here;
	stack_t cur;
	sigaltstack(NULL, &cur);
	on_alt = &here > alt && &here < alt + 65536;
	alt_flags_in = cur.ss_flags;
	(void)sig, (void)si, (void)p;
}

static int depth(int n)
{
	volatile char buf[512];
	buf[0] = (char)n;
	return n > 1000000 ? buf[0] : depth(n + 1) + buf[0];
}

static void *overflow(void *arg)
{
	stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536};
	sigaltstack(&ss, NULL);
	on(SIGSEGV, h_jump, SA_ONSTACK, NULL);
	int s = sigsetjmp(jb, 1);
	if (s == 0)
		depth(0);
	*(int *)arg = s;
	return NULL;
}

static void step_altstack(void)
{
	alt = malloc(65536);
	stack_t ss = {.ss_sp = alt, .ss_size = 65536}, cur;
	sigaltstack(&ss, NULL);
	on(SIGUSR1, h_alt, SA_ONSTACK, NULL);
	raise(SIGUSR1);
	sigaltstack(NULL, &cur);
	printf("sigaltstack: handler on it %d flags in handler %d after %d\n", on_alt, alt_flags_in, cur.ss_flags);
	on(SIGUSR1, h_alt, 0, NULL);
	raise(SIGUSR1);
	printf("without SA_ONSTACK: on it %d\n", on_alt);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	pthread_t th;
	int got = -1;
	pthread_create(&th, &a, overflow, &got);
	pthread_join(th, NULL);
	printf("stack overflow caught on the alternate stack: %d\n", got);
	dfl(SIGSEGV);
	dfl(SIGUSR1);
}

// Another thread blocked in read on a pipe, interrupted by pthread_kill.
static int pfd[2];
static volatile pid_t reader_tid, handler_tid;
static void h_tid(int sig, siginfo_t *si, void *p)
{
	handler_tid = (pid_t)syscall(SYS_gettid);
	hits++;
	(void)sig, (void)si, (void)p;
}

static void *reader(void *arg)
{
	reader_tid = (pid_t)syscall(SYS_gettid);
	char c;
	ssize_t n = read(pfd[0], &c, 1);
	int e = errno;
	long *res = arg;
	res[0] = n;
	res[1] = n < 0 ? e : c;
	return NULL;
}

static void pause_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

static void step_threads(void)
{
	for (int restart = 0; restart <= 1; restart++) {
		on(SIGUSR1, h_tid, restart ? SA_RESTART : 0, NULL);
		pipe(pfd);
		long res[2];
		pthread_t th;
		hits = 0;
		pthread_create(&th, NULL, reader, res);
		pause_ms(200); // natively: long enough for the reader to block in read
		pthread_kill(th, SIGUSR1);
		pause_ms(50);
		write(pfd[1], "x", 1);
		pthread_join(th, NULL);
		printf("read interrupted (%s): result %ld %s handler in reader %d hits %d\n",
		       restart ? "SA_RESTART" : "no SA_RESTART", res[0], res[0] < 0 ? strerror((int)res[1]) : "x",
		       handler_tid == reader_tid, hits);
		close(pfd[0]);
		close(pfd[1]);
	}
	dfl(SIGUSR1);
}

static volatile sig_atomic_t alarms;
static void h_alarm(int sig, siginfo_t *si, void *p)
{
	alarms++;
	lastcode = si->si_code;
	(void)sig, (void)p;
}

static void step_timers(void)
{
	on(SIGALRM, h_alarm, 0, NULL);
	printf("alarm: %u", alarm(5));
	printf(" then %u", alarm(0));
	struct itimerval it = {{0, 0}, {0, 30000}}, old;
	setitimer(ITIMER_REAL, &it, NULL);
	getitimer(ITIMER_REAL, &old);
	printf(" getitimer in range %d\n", old.it_value.tv_sec == 0 && old.it_value.tv_usec > 0 &&
					      old.it_value.tv_usec <= 30000);
	alarms = 0;
	int r = pause();
	printf("pause: %d %s alarms %d code %d\n", r, strerror(errno), alarms, lastcode);
	// A busy loop interrupted by the timer.
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	unsigned long spins = 0;
	while (!alarms)
		spins++;
	printf("busy loop interrupted: %d\n", spins > 0);
	// An interval timer, counted in sigsuspend with SIGALRM blocked
	// outside it.
	sigset_t s, old_mask, none;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	sigprocmask(SIG_BLOCK, &s, &old_mask);
	sigemptyset(&none);
	struct itimerval iv = {{0, 20000}, {0, 20000}};
	alarms = 0;
	setitimer(ITIMER_REAL, &iv, NULL);
	int eintr = 0;
	while (alarms < 3)
		eintr += sigsuspend(&none) == -1 && errno == EINTR;
	struct itimerval zero = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &zero, &old);
	printf("interval timer: alarms %d eintr %d interval %ld alarm blocked %d\n", alarms, eintr,
	       (long)old.it_interval.tv_usec, blocked(SIGALRM));
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	// nanosleep interrupted: EINTR and the time left.
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec req = {10, 0}, rem = {0, 0};
	r = nanosleep(&req, &rem);
	printf("nanosleep: %d %s rem %ld s\n", r, strerror(errno), (long)rem.tv_sec);
	// ppoll and epoll_pwait with a mask that unblocks SIGALRM: the timer
	// interrupts them, the handler runs, the old mask comes back.
	sigprocmask(SIG_BLOCK, &s, &old_mask);
	sigset_t unblock;
	sigprocmask(SIG_BLOCK, NULL, &unblock);
	sigdelset(&unblock, SIGALRM);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	r = ppoll(NULL, 0, NULL, &unblock);
	printf("ppoll with a mask: %d %s alarms %d blocked after %d\n", r, strerror(errno), alarms, blocked(SIGALRM));
	int ep = epoll_create1(0);
	struct epoll_event ev;
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	r = epoll_pwait(ep, &ev, 1, -1, &unblock);
	printf("epoll_pwait with a mask: %d %s alarms %d blocked after %d\n", r, strerror(errno), alarms,
	       blocked(SIGALRM));
	close(ep);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	// CPU-time timers: SIGPROF every 2 ms of CPU time, SIGVTALRM once, in
	// a busy loop.
	on(SIGPROF, h_info, 0, NULL);
	on(SIGVTALRM, h_alarm, 0, NULL);
	struct itimerval prof = {{0, 2000}, {0, 2000}}, virt = {{0, 0}, {0, 5000}}, left;
	hits = 0;
	alarms = 0;
	setitimer(ITIMER_PROF, &prof, NULL);
	setitimer(ITIMER_VIRTUAL, &virt, NULL);
	getitimer(ITIMER_VIRTUAL, &left);
	// Linux adds a tick (4 ms at HZ=250) to a CPU timer's first expiry.
	int inrange = left.it_value.tv_sec == 0 && left.it_value.tv_usec > 5000 && left.it_value.tv_usec <= 9000;
	while (hits < 3 || alarms < 1)
		spins++;
	setitimer(ITIMER_PROF, &zero, &old);
	printf("ITIMER_PROF and ITIMER_VIRTUAL: prof signals >= 3 %d sig %d vtalrm %d code %d interval %ld in range %d\n",
	       hits >= 3, lastsig, alarms, lastcode, (long)old.it_interval.tv_usec, inrange);
	dfl(SIGPROF);
	dfl(SIGVTALRM);
	on(SIGALRM, h_alarm, 0, NULL);
	// select is never restarted, SA_RESTART or not.
	on(SIGALRM, h_alarm, SA_RESTART, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	struct timeval tv = {10, 0};
	r = select(0, NULL, NULL, NULL, &tv);
	printf("select under SA_RESTART: %d %s\n", r, strerror(errno));
	dfl(SIGALRM);
}

static void *sender(void *arg)
{
	pause_ms(30);
	pthread_kill(*(pthread_t *)arg, SIGUSR2);
	return NULL;
}

static void step_sigwait(void)
{
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, &old);
	struct timespec ts = {0, 20000000};
	siginfo_t si;
	int r = sigtimedwait(&s, &si, &ts);
	printf("sigtimedwait timeout: %d %s\n", r, strerror(errno));
	pthread_t self = pthread_self(), th;
	pthread_create(&th, NULL, sender, &self);
	r = sigwaitinfo(&s, &si);
	printf("sigwaitinfo: %d code %d pid %d\n", r, si.si_code, si.si_pid == getpid());
	pthread_join(th, NULL);
	raise(SIGUSR2);
	int sig = 0;
	r = sigwait(&s, &sig);
	printf("sigwait: %d sig %d still blocked %d\n", r, sig, blocked(SIGUSR2));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void step_sigpipe(void)
{
	on(SIGPIPE, h_info, 0, NULL);
	int p[2];
	pipe(p);
	close(p[0]);
	hits = 0;
	ssize_t n = write(p[1], "x", 1);
	printf("SIGPIPE: write %zd %s hits %d sig %d code %d\n", n, strerror(errno), hits, lastsig, lastcode);
	close(p[1]);
	dfl(SIGPIPE);
}

static volatile int chld_code, chld_status, chld_hits;
static volatile pid_t chld_pid;
static void h_chld(int sig, siginfo_t *si, void *p)
{
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
	chld_hits++;
	(void)sig, (void)p;
}

static void step_children(void)
{
	on(SIGCHLD, h_chld, SA_RESTART, NULL);
	pid_t c = fork();
	if (c == 0)
		_exit(3);
	int st;
	pid_t w = waitpid(c, &st, 0);
	printf("SIGCHLD: waited %d status %d hits %d code %d status %d pid %d\n", w == c, WEXITSTATUS(st), chld_hits,
	       chld_code, chld_status, chld_pid == c);
	// A child with a handler, killed with a caught signal, then with an
	// uncaught one.
	int sync[2];
	pipe(sync);
	c = fork();
	if (c == 0) {
		on(SIGUSR1, h_info, 0, NULL);
		hits = 0;
		write(sync[1], "r", 1);
		while (hits == 0)
			pause();
		_exit(lastsig + (lastcode == SI_QUEUE ? 100 : 0) + lastval);
	}
	char b;
	read(sync[0], &b, 1);
	union sigval sv = {.sival_int = 7};
	sigqueue(c, SIGUSR1, sv);
	waitpid(c, &st, 0);
	printf("child handler (sigqueue): exit %d\n", WEXITSTATUS(st));
	c = fork();
	if (c == 0) {
		write(sync[1], "r", 1);
		for (;;)
			pause();
	}
	read(sync[0], &b, 1);
	syscall(SYS_tgkill, c, c, SIGTERM);
	waitpid(c, &st, 0);
	printf("child killed (tgkill): signaled %d sig %d code %d status %d\n", WIFSIGNALED(st), WTERMSIG(st), chld_code,
	       chld_status);
	// wait4 interrupted by a timer: EINTR without SA_RESTART, restarted
	// with it.
	for (int restart = 0; restart <= 1; restart++) {
		on(SIGALRM, h_alarm, restart ? SA_RESTART : 0, NULL);
		c = fork();
		if (c == 0) {
			pause_ms(300);
			_exit(5);
		}
		struct itimerval it = {{0, 0}, {0, 30000}};
		setitimer(ITIMER_REAL, &it, NULL);
		alarms = 0;
		w = waitpid(c, &st, 0);
		int e = errno;
		pid_t w2 = w < 0 ? waitpid(c, &st, 0) : w;
		printf("waitpid and SIGALRM (%s): first %s alarms %d status %d\n", restart ? "SA_RESTART" : "no SA_RESTART",
		       w == c ? "returned the child" : strerror(e), alarms, w2 == c ? WEXITSTATUS(st) : -1);
	}
	dfl(SIGALRM);
	// kill(0) and kill(-pgid) in a session of its own (so that natively
	// nothing outside the test is signalled): the whole group, the caller
	// included.
	c = fork();
	if (c == 0) {
		setsid();
		on(SIGUSR2, h_info, 0, NULL);
		int s2[2];
		pipe(s2);
		pid_t g = fork();
		if (g == 0) {
			sigset_t u, none;
			sigemptyset(&u);
			sigaddset(&u, SIGUSR2);
			sigprocmask(SIG_BLOCK, &u, &none);
			sigdelset(&none, SIGUSR2);
			hits = 0;
			write(s2[1], "r", 1);
			for (int i = 1; i <= 2; i++) {
				while (hits < i)
					sigsuspend(&none);
				write(s2[1], "a", 1);
			}
			_exit(60 + hits);
		}
		read(s2[0], &b, 1);
		hits = 0;
		kill(0, SIGUSR2);
		int self = hits;
		read(s2[0], &b, 1);
		kill(-getpid(), SIGUSR2);
		read(s2[0], &b, 1);
		int st2;
		waitpid(g, &st2, 0);
		int e = kill(-12345, SIGUSR2) == -1 ? errno : 0;
		_exit(self * 10 + hits + (WEXITSTATUS(st2) == 62 ? 0 : 5) + (e == ESRCH ? 0 : 50));
	}
	waitpid(c, &st, 0);
	printf("kill(0), kill(-pgid): %d\n", WEXITSTATUS(st));
	// PR_SET_PDEATHSIG: a grandchild gets SIGUSR1 when its parent exits,
	// and says so through a pipe.
	int pd[2];
	pipe(pd);
	c = fork();
	if (c == 0) {
		int ready[2];
		pipe(ready);
		if (fork() == 0) {
			on(SIGUSR1, h_info, 0, NULL);
			hits = 0;
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
			write(ready[1], "r", 1);
			while (hits == 0)
				pause();
			char m = (char)('a' + lastsig + (lastcode == SI_USER ? 1 : 0));
			write(pd[1], &m, 1);
			_exit(0);
		}
		read(ready[0], &b, 1);
		_exit(0);
	}
	waitpid(c, &st, 0);
	close(pd[1]);
	char m = 0;
	read(pd[0], &m, 1);
	close(pd[0]);
	printf("PR_SET_PDEATHSIG: %c\n", m);
	// SIGCHLD ignored: children are reaped at once.
	signal(SIGCHLD, SIG_IGN);
	c = fork();
	if (c == 0)
		_exit(0);
	w = waitpid(c, &st, 0);
	printf("SIG_IGN SIGCHLD: waitpid %d %s\n", w, strerror(errno));
	dfl(SIGCHLD);
	close(sync[0]);
	close(sync[1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	step_basic();
	step_pending();
	step_faults();
	step_trap();
	step_fpu();
	step_altstack();
	step_threads();
	step_timers();
	step_sigwait();
	step_sigpipe();
	step_children();
	printf("done\n");
	return 0;
}
