/* fuzz_syscalls.c - random raw system calls for emuprof's robustness test:
 * `fuzz_syscalls SEED [N]` makes N (default 2000) calls of syscall(2), each
 * a number from a list of safe calls with arguments drawn from a PRNG
 * seeded by SEED: typed where the type matters (descriptors, buffers,
 * paths, lengths, flags, addresses, signals) and otherwise edge values
 * (0, -1, 2^31, 2^63, 2^64-1, page boundaries...). Whatever the calls
 * return, it then prints "fuzz_syscalls SEED: N calls" and exits 77: under
 * emuprof every seed must end that way (or with one clean emuprof line),
 * never with a Go trace.
 *
 * Left out: calls that end or replace the process or its threads (exit,
 * exit_group, execve, clone, fork, rt_sigreturn), that signal it (kill,
 * tgkill, alarm, timers) or wait for a signal forever (pause,
 * rt_sigsuspend). Kept from blocking forever: new descriptors are made
 * non-blocking, waits get short timeouts, flock gets LOCK_NB. Kept from
 * harming the guest itself: memory calls act on an arena of its own,
 * output buffers lie in a region of its own followed by 64 MiB of
 * PROT_NONE. Kept from harming the host: paths are relative names in the
 * working directory ("f0", "d0/f1", ...) or absolute names that are only
 * looked at (stat, access, readlink); device nodes are never made. The test
 * runs it with --sysroot and a working directory in a temporary directory.
 *
 * It refuses to run natively (the CPUID brand must be emuprof's), and
 * without arguments it only prints its usage: the real kernel would do
 * what it is asked (settimeofday, reboot as root...). */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUFSZ (64 * 1024)
#define GUARD (64UL << 20)
#define ARENA (16UL << 20)

static uint64_t rng;
static unsigned char *buf;   /* BUFSZ bytes, then GUARD bytes of PROT_NONE */
static unsigned char *arena; /* ARENA bytes for the memory calls */

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n) { return n ? next() % n : 0; }

static const uint64_t edges[] = {
	0, 1, 2, 3, 7, 8, 16, 64, 255, 256, 1024, 4095, 4096, 4097, 65536,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 1ULL << 47, 1ULL << 62,
	0x7fffffffffffffff, 0x8000000000000000, -4096ULL, -2ULL, -1ULL,
};

static uint64_t edge(void) { return edges[below(sizeof edges / sizeof edges[0])]; }

/* any: an edge, a small number or 64 random bits. */
static uint64_t any(void)
{
	switch (below(4)) {
	case 0:
	case 1: return edge();
	case 2: return below(4096);
	}
	return next();
}

/* Argument types. */
enum {
	A_ANY, A_FD, A_PATH, A_RPATH, A_LINK, A_OUT, A_IN, A_LEN, A_FLAGS,
	A_MODE, A_ADDR, A_SIG, A_PID, A_TS, A_TMS, A_IOV, A_CLK, A_SMALL,
	A_ZERO, A_EIGHT,
};

static uint64_t fd(void)
{
	switch (below(8)) {
	case 0: return edge();
	case 1: return (uint64_t)-100; /* AT_FDCWD */
	case 2: return below(3);
	}
	return 3 + below(16);
}

/* Paths that may be created, changed or removed: relative names. */
static const char *const paths[] = {
	"f0", "f1", "f2", "d0", "d1", "d0/f0", "d0/d1", "d1/f2", ".", "", "f0/",
	"d0/../f1", "/nonexistent/f0", "/dev/null", "/dev/zero", "/dev/full",
	"/proc/self/maps", "/proc/self/status", "/dev/stdin",
};
/* Paths that are only looked at. */
static const char *const rpaths[] = {
	"/", "/proc/self/exe", "/proc/self/fd/0", "/proc/self", "/etc", "..",
	"/proc/cpuinfo", "/dev",
};
/* Targets of symbolic links. */
static const char *const links[] = {"f0", "d0", ".", "f1/x", "/nonexistent", ""};

static char pathbuf[4][4200];
static int npath;

static uint64_t str(const char *s)
{
	char *p = pathbuf[npath++ & 3];
	strcpy(p, s);
	return (uint64_t)p;
}

static uint64_t badptr(void)
{
	switch (below(4)) {
	case 0: return 0;
	case 1: return 0xdeadbeef000;
	case 2: return 0xffffffffff600000; /* vsyscall page: kernel space */
	}
	return (uint64_t)buf + BUFSZ + below(GUARD); /* PROT_NONE */
}

static uint64_t pathof(const char *const *pool, unsigned n)
{
	switch (below(12)) {
	case 0: return badptr();
	case 1: { /* longer than PATH_MAX */
		char *p = pathbuf[npath++ & 3];
		memset(p, 'a', 4196);
		p[4196] = 0;
		return (uint64_t)p;
	}
	case 2: { /* a name longer than NAME_MAX */
		char *p = pathbuf[npath++ & 3];
		memset(p, 'n', 300);
		p[300] = 0;
		return (uint64_t)p;
	}
	}
	return str(pool[below(n)]);
}

static uint64_t out(void)
{
	if (below(6) == 0)
		return badptr();
	uint64_t off = below(BUFSZ);
	if (below(2))
		off &= ~7ULL;
	return (uint64_t)buf + off;
}

/* in: a buffer of fresh random bytes (mostly small values). */
static uint64_t in(void)
{
	if (below(8) == 0)
		return badptr();
	uint64_t off = below(BUFSZ - 1024) & ~7ULL;
	uint64_t *p = (uint64_t *)(buf + off);
	for (int i = 0; i < 64; i++)
		p[i] = below(3) ? below(256) : any();
	return (uint64_t)p;
}

static uint64_t len(void)
{
	switch (below(6)) {
	case 0: return edge();
	case 1: return below(16);
	}
	return below(BUFSZ);
}

static uint64_t flags(void)
{
	switch (below(4)) {
	case 0: return 0;
	case 1: return edge();
	}
	return next() & next() & 0xffffffff;
}

static uint64_t addr(void)
{
	switch (below(8)) {
	case 0: return badptr();
	case 1: return (uint64_t)arena + below(ARENA); /* unaligned */
	}
	return (uint64_t)arena + below(ARENA / 4096) * 4096;
}

/* ts: a timespec (or timeval) of at most a millisecond, or NULL. */
static uint64_t ts(void)
{
	uint64_t *p = (uint64_t *)(buf + (below(BUFSZ - 64) & ~7ULL));
	p[0] = 0;
	p[1] = below(1000000);
	return (uint64_t)p;
}

/* iov: an iovec array of up to 4 entries over the buffer (or bad). */
static uint64_t iov(void)
{
	if (below(8) == 0)
		return badptr();
	uint64_t *p = (uint64_t *)(buf + (below(BUFSZ - 256) & ~15ULL));
	for (int i = 0; i < 4; i++) {
		p[2 * i] = below(6) ? (uint64_t)buf + below(BUFSZ) : badptr();
		p[2 * i + 1] = below(6) ? below(512) : len();
	}
	return (uint64_t)p;
}

static uint64_t arg(int type)
{
	if (type != A_PATH && type != A_LINK && type != A_ADDR && type != A_TS && type != A_TMS &&
	    below(16) == 0)
		return any(); /* sometimes anything at all */
	switch (type) {
	case A_FD: return fd();
	case A_PATH: return pathof(paths, sizeof paths / sizeof paths[0]);
	case A_RPATH:
		return below(2) ? pathof(rpaths, sizeof rpaths / sizeof rpaths[0])
				: pathof(paths, sizeof paths / sizeof paths[0]);
	case A_LINK: return str(links[below(sizeof links / sizeof links[0])]);
	case A_OUT: return out();
	case A_IN: return in();
	case A_LEN: return len();
	case A_FLAGS: return flags();
	case A_MODE: return below(4) ? below(07777 + 1) : any();
	case A_ADDR: return addr();
	case A_SIG: return below(8) ? below(65) : any();
	case A_PID: return below(4) ? 0 : below(2) ? (uint64_t)getpid() : any();
	case A_TS: return below(8) ? ts() : 0;
	case A_TMS: return below(2);
	case A_IOV: return iov();
	case A_CLK: return below(4) ? below(12) : any();
	case A_SMALL: return below(8);
	case A_ZERO: return 0;
	case A_EIGHT: return 8;
	}
	return any();
}

struct call {
	int nr;
	unsigned char t[6];
};

#define C(nr, ...) {nr, {__VA_ARGS__}}
static const struct call calls[] = {
	C(SYS_read, A_FD, A_OUT, A_LEN),
	C(SYS_write, A_FD, A_IN, A_LEN),
	C(SYS_open, A_PATH, A_FLAGS, A_MODE),
	C(SYS_close, A_FD),
	C(SYS_stat, A_RPATH, A_OUT),
	C(SYS_fstat, A_FD, A_OUT),
	C(SYS_lstat, A_RPATH, A_OUT),
	C(SYS_poll, A_IN, A_SMALL, A_TMS),
	C(SYS_lseek, A_FD, A_ANY, A_SMALL),
	C(SYS_mmap, A_ADDR, A_LEN, A_SMALL, A_FLAGS, A_FD, A_ANY),
	C(SYS_mprotect, A_ADDR, A_LEN, A_SMALL),
	C(SYS_munmap, A_ADDR, A_LEN),
	C(SYS_brk, A_ANY),
	C(SYS_rt_sigaction, A_SIG, A_IN, A_OUT, A_EIGHT),
	C(SYS_rt_sigprocmask, A_SMALL, A_IN, A_OUT, A_EIGHT),
	C(SYS_ioctl, A_FD, A_ANY, A_OUT),
	C(SYS_pread64, A_FD, A_OUT, A_LEN, A_ANY),
	C(SYS_pwrite64, A_FD, A_IN, A_LEN, A_ANY),
	C(SYS_readv, A_FD, A_IOV, A_SMALL),
	C(SYS_writev, A_FD, A_IOV, A_SMALL),
	C(SYS_access, A_RPATH, A_SMALL),
	C(SYS_pipe, A_OUT),
	C(SYS_select, A_SMALL, A_IN, A_IN, A_IN, A_TS),
	C(SYS_sched_yield),
	C(SYS_mremap, A_ADDR, A_LEN, A_LEN, A_SMALL, A_ADDR),
	C(SYS_msync, A_ADDR, A_LEN, A_SMALL),
	C(SYS_mincore, A_ADDR, A_LEN, A_OUT),
	C(SYS_madvise, A_ADDR, A_LEN, A_SMALL),
	C(SYS_dup, A_FD),
	C(SYS_dup2, A_FD, A_FD),
	C(SYS_nanosleep, A_TS, A_OUT),
	C(SYS_getitimer, A_SMALL, A_OUT),
	C(SYS_getpid),
	C(SYS_sendfile, A_FD, A_FD, A_OUT, A_LEN),
	C(SYS_socket, A_SMALL, A_SMALL, A_SMALL),
	C(SYS_connect, A_FD, A_IN, A_LEN),
	C(SYS_sendto, A_FD, A_IN, A_LEN, A_FLAGS, A_IN, A_LEN),
	C(SYS_recvfrom, A_FD, A_OUT, A_LEN, A_FLAGS, A_OUT, A_OUT),
	C(SYS_shutdown, A_FD, A_SMALL),
	C(SYS_getsockopt, A_FD, A_SMALL, A_SMALL, A_OUT, A_OUT),
	C(SYS_socketpair, A_SMALL, A_SMALL, A_SMALL, A_OUT),
	C(SYS_wait4, A_PID, A_OUT, A_FLAGS, A_OUT),
	C(SYS_uname, A_OUT),
	C(SYS_fcntl, A_FD, A_SMALL, A_ANY),
	C(SYS_flock, A_FD, A_SMALL),
	C(SYS_fsync, A_FD),
	C(SYS_fdatasync, A_FD),
	C(SYS_truncate, A_PATH, A_LEN),
	C(SYS_ftruncate, A_FD, A_LEN),
	C(SYS_getdents, A_FD, A_OUT, A_LEN),
	C(SYS_getcwd, A_OUT, A_LEN),
	C(SYS_chdir, A_PATH),
	C(SYS_fchdir, A_FD),
	C(SYS_rename, A_PATH, A_PATH),
	C(SYS_mkdir, A_PATH, A_MODE),
	C(SYS_rmdir, A_PATH),
	C(SYS_creat, A_PATH, A_MODE),
	C(SYS_link, A_PATH, A_PATH),
	C(SYS_unlink, A_PATH),
	C(SYS_symlink, A_LINK, A_PATH),
	C(SYS_readlink, A_RPATH, A_OUT, A_LEN),
	C(SYS_chmod, A_PATH, A_MODE),
	C(SYS_fchmod, A_FD, A_MODE),
	C(SYS_chown, A_PATH, A_ANY, A_ANY),
	C(SYS_fchown, A_FD, A_ANY, A_ANY),
	C(SYS_lchown, A_PATH, A_ANY, A_ANY),
	C(SYS_umask, A_MODE),
	C(SYS_gettimeofday, A_OUT, A_OUT),
	C(SYS_getrlimit, A_SMALL, A_OUT),
	C(SYS_getrusage, A_SMALL, A_OUT),
	C(SYS_sysinfo, A_OUT),
	C(SYS_times, A_OUT),
	C(SYS_getuid), C(SYS_getgid), C(SYS_geteuid), C(SYS_getegid), C(SYS_getppid), C(SYS_getpgrp),
	C(SYS_setuid, A_ANY), C(SYS_setgid, A_ANY), C(SYS_setpgid, A_PID, A_PID), C(SYS_setsid),
	C(SYS_getgroups, A_SMALL, A_OUT),
	C(SYS_setgroups, A_SMALL, A_IN),
	C(SYS_getresuid, A_OUT, A_OUT, A_OUT),
	C(SYS_getresgid, A_OUT, A_OUT, A_OUT),
	C(SYS_getpgid, A_PID), C(SYS_getsid, A_PID),
	C(SYS_capget, A_IN, A_OUT),
	C(SYS_rt_sigpending, A_OUT, A_LEN),
	C(SYS_rt_sigtimedwait, A_IN, A_OUT, A_TS, A_EIGHT),
	C(SYS_sigaltstack, A_IN, A_OUT),
	C(SYS_utime, A_PATH, A_IN),
	C(SYS_mknod, A_PATH, A_MODE, A_ANY),
	C(SYS_personality, A_ANY),
	C(SYS_statfs, A_RPATH, A_OUT),
	C(SYS_fstatfs, A_FD, A_OUT),
	C(SYS_getpriority, A_SMALL, A_PID),
	C(SYS_setpriority, A_SMALL, A_PID, A_ANY),
	C(SYS_sched_getparam, A_PID, A_OUT),
	C(SYS_sched_getscheduler, A_PID),
	C(SYS_sched_get_priority_max, A_SMALL),
	C(SYS_sched_rr_get_interval, A_PID, A_OUT),
	C(SYS_mlock, A_ADDR, A_LEN),
	C(SYS_munlock, A_ADDR, A_LEN),
	C(SYS_mlockall, A_SMALL),
	C(SYS_munlockall),
	C(SYS_prctl, A_SMALL, A_OUT, A_ANY, A_ANY, A_ANY),
	C(SYS_arch_prctl, A_ANY, A_OUT),
	C(SYS_setrlimit, A_SMALL, A_IN),
	C(SYS_chroot, A_PATH),
	C(SYS_sync),
	C(SYS_settimeofday, A_IN, A_IN),
	C(SYS_mount, A_PATH, A_PATH, A_PATH, A_ANY, A_IN),
	C(SYS_umount2, A_PATH, A_ANY),
	C(SYS_reboot, A_ANY, A_ANY, A_ANY, A_IN),
	C(SYS_sethostname, A_IN, A_LEN),
	C(SYS_gettid),
	C(SYS_readahead, A_FD, A_ANY, A_LEN),
	C(SYS_getxattr, A_RPATH, A_IN, A_OUT, A_LEN),
	C(SYS_time, A_OUT),
	C(SYS_futex, A_OUT, A_SMALL, A_ANY, A_TS, A_OUT, A_ANY),
	C(SYS_sched_setaffinity, A_PID, A_LEN, A_IN),
	C(SYS_sched_getaffinity, A_PID, A_LEN, A_OUT),
	C(SYS_epoll_create, A_ANY),
	C(SYS_getdents64, A_FD, A_OUT, A_LEN),
	C(SYS_set_tid_address, A_OUT),
	C(SYS_fadvise64, A_FD, A_ANY, A_LEN, A_SMALL),
	C(SYS_clock_settime, A_CLK, A_IN),
	C(SYS_clock_gettime, A_CLK, A_OUT),
	C(SYS_clock_getres, A_CLK, A_OUT),
	C(SYS_clock_nanosleep, A_CLK, A_SMALL, A_TS, A_OUT),
	C(SYS_epoll_wait, A_FD, A_OUT, A_SMALL, A_TMS),
	C(SYS_epoll_ctl, A_FD, A_SMALL, A_FD, A_IN),
	C(SYS_utimes, A_PATH, A_IN),
	C(SYS_waitid, A_SMALL, A_PID, A_OUT, A_FLAGS, A_OUT),
	C(SYS_inotify_init),
	C(SYS_inotify_add_watch, A_FD, A_RPATH, A_FLAGS),
	C(SYS_openat, A_FD, A_PATH, A_FLAGS, A_MODE),
	C(SYS_mkdirat, A_FD, A_PATH, A_MODE),
	C(SYS_mknodat, A_FD, A_PATH, A_MODE, A_ANY),
	C(SYS_fchownat, A_FD, A_PATH, A_ANY, A_ANY, A_FLAGS),
	C(SYS_newfstatat, A_FD, A_RPATH, A_OUT, A_FLAGS),
	C(SYS_unlinkat, A_FD, A_PATH, A_FLAGS),
	C(SYS_renameat, A_FD, A_PATH, A_FD, A_PATH),
	C(SYS_linkat, A_FD, A_PATH, A_FD, A_PATH, A_FLAGS),
	C(SYS_symlinkat, A_LINK, A_FD, A_PATH),
	C(SYS_readlinkat, A_FD, A_RPATH, A_OUT, A_LEN),
	C(SYS_fchmodat, A_FD, A_PATH, A_MODE),
	C(SYS_faccessat, A_FD, A_RPATH, A_SMALL),
	C(SYS_pselect6, A_SMALL, A_IN, A_IN, A_IN, A_TS, A_ZERO),
	C(SYS_ppoll, A_IN, A_SMALL, A_TS, A_IN, A_EIGHT),
	C(SYS_set_robust_list, A_IN, A_LEN),
	C(SYS_get_robust_list, A_PID, A_OUT, A_OUT),
	C(SYS_splice, A_FD, A_IN, A_FD, A_IN, A_LEN, A_FLAGS),
	C(SYS_tee, A_FD, A_FD, A_LEN, A_FLAGS),
	C(SYS_sync_file_range, A_FD, A_ANY, A_ANY, A_FLAGS),
	C(SYS_vmsplice, A_FD, A_IOV, A_SMALL, A_FLAGS),
	C(SYS_utimensat, A_FD, A_PATH, A_IN, A_FLAGS),
	C(SYS_epoll_pwait, A_FD, A_OUT, A_SMALL, A_TMS, A_IN, A_EIGHT),
	C(SYS_timerfd_create, A_CLK, A_FLAGS),
	C(SYS_eventfd, A_ANY),
	C(SYS_fallocate, A_FD, A_SMALL, A_ANY, A_LEN),
	C(SYS_timerfd_settime, A_FD, A_FLAGS, A_IN, A_OUT),
	C(SYS_timerfd_gettime, A_FD, A_OUT),
	C(SYS_accept4, A_FD, A_OUT, A_OUT, A_FLAGS),
	C(SYS_signalfd4, A_FD, A_IN, A_EIGHT, A_FLAGS),
	C(SYS_eventfd2, A_ANY, A_FLAGS),
	C(SYS_epoll_create1, A_FLAGS),
	C(SYS_dup3, A_FD, A_FD, A_FLAGS),
	C(SYS_pipe2, A_OUT, A_FLAGS),
	C(SYS_inotify_init1, A_FLAGS),
	C(SYS_preadv, A_FD, A_IOV, A_SMALL, A_ANY, A_ANY),
	C(SYS_pwritev, A_FD, A_IOV, A_SMALL, A_ANY, A_ANY),
	C(SYS_prlimit64, A_PID, A_SMALL, A_IN, A_OUT),
	C(SYS_syncfs, A_FD),
	C(SYS_getcpu, A_OUT, A_OUT, A_OUT),
	C(SYS_renameat2, A_FD, A_PATH, A_FD, A_PATH, A_FLAGS),
	C(SYS_getrandom, A_OUT, A_LEN, A_FLAGS),
	C(SYS_memfd_create, A_LINK, A_FLAGS),
	C(SYS_mlock2, A_ADDR, A_LEN, A_FLAGS),
	C(SYS_copy_file_range, A_FD, A_IN, A_FD, A_IN, A_LEN, A_FLAGS),
	C(SYS_preadv2, A_FD, A_IOV, A_SMALL, A_ANY, A_ANY, A_FLAGS),
	C(SYS_pwritev2, A_FD, A_IOV, A_SMALL, A_ANY, A_ANY, A_FLAGS),
	C(SYS_pkey_mprotect, A_ADDR, A_LEN, A_SMALL, A_ANY),
	C(SYS_statx, A_FD, A_RPATH, A_FLAGS, A_FLAGS, A_OUT),
	C(SYS_rseq, A_IN, A_LEN, A_FLAGS, A_ANY),
	C(436 /* close_range */, A_FD, A_FD, A_FLAGS),
	C(437 /* openat2 */, A_FD, A_PATH, A_IN, A_LEN),
	C(439 /* faccessat2 */, A_FD, A_RPATH, A_SMALL, A_FLAGS),
	C(441 /* epoll_pwait2 */, A_FD, A_OUT, A_SMALL, A_TS, A_IN, A_EIGHT),
	C(452 /* fchmodat2 */, A_FD, A_PATH, A_MODE, A_FLAGS),
	C(999 /* no such call */, A_ANY),
};

#define O_NONBLOCK_ 04000
#define MAP_FIXED_ 0x10
#define MREMAP_FIXED_ 2

/* sanitize keeps a call from blocking forever or harming the guest or the
 * host (see the comment at the top). */
static void sanitize(int nr, uint64_t *a)
{
	switch (nr) { /* memory calls stay in the arena (or at a bad address) */
	case SYS_mprotect: case SYS_munmap: case SYS_mremap: case SYS_msync: case SYS_madvise:
	case SYS_mlock: case SYS_munlock: case SYS_mlock2: case SYS_pkey_mprotect: case SYS_mmap:
		if (a[0] >= (uint64_t)arena && a[0] < (uint64_t)arena + ARENA && a[1] > (uint64_t)arena + ARENA - a[0])
			a[1] = (uint64_t)arena + ARENA - a[0];
		else if (a[0] >= (uint64_t)buf && a[0] < (uint64_t)buf + BUFSZ + GUARD &&
			 a[1] > (uint64_t)buf + BUFSZ + GUARD - a[0])
			a[1] = (uint64_t)buf + BUFSZ + GUARD - a[0];
		else if (a[0] < 0x10000 && a[1] > 0x10000 - a[0]) /* the program lies above */
			a[1] = 0x10000 - a[0];
		else if (a[1] > 1ULL << 40 && a[1] < -4096ULL) /* 0xdeadbeef000 + 2^47: the stack */
			a[1] = 1ULL << 40;
		break;
	}
	switch (nr) {
	case SYS_open:
		a[1] |= O_NONBLOCK_;
		break;
	case SYS_openat:
		a[2] |= O_NONBLOCK_;
		break;
	case 437: /* openat2: struct open_how {flags, mode, resolve} */
		if (a[2] >= (uint64_t)buf && a[2] < (uint64_t)buf + BUFSZ)
			((uint64_t *)a[2])[0] |= O_NONBLOCK_;
		break;
	case SYS_mknod:
		a[1] = (a[1] & 07777) | 0100000; /* regular files only */
		break;
	case SYS_mknodat:
		a[2] = (a[2] & 07777) | 0100000;
		break;
	case SYS_mmap:
		if (a[1] > ARENA && below(4))
			a[1] = below(ARENA);
		if (a[3] & MAP_FIXED_) {
			a[0] = (uint64_t)arena + below(ARENA / 4096) * 4096;
			if (a[1] > (uint64_t)arena + ARENA - a[0])
				a[1] = (uint64_t)arena + ARENA - a[0];
		}
		break;
	case SYS_mremap:
		if (a[2] > ARENA && below(4))
			a[2] = below(ARENA);
		if (a[3] & MREMAP_FIXED_) {
			a[4] = (uint64_t)arena + below(ARENA / 4096) * 4096;
			if (a[2] > (uint64_t)arena + ARENA - a[4])
				a[2] = (uint64_t)arena + ARENA - a[4];
		}
		break;
	case SYS_rt_sigaction:
		if (a[0] == 13 || a[0] == 24 || a[0] == 25) /* SIGPIPE, SIGXCPU, SIGXFSZ stay ignored */
			a[0] = 10;
		if (a[1] >= (uint64_t)buf && a[1] < (uint64_t)buf + BUFSZ)
			((uint64_t *)a[1])[0] &= 1; /* SIG_DFL or SIG_IGN: no handler */
		break;
	case SYS_fcntl:
		if (a[1] == 4) /* F_SETFL */
			a[2] |= O_NONBLOCK_;
		if (a[1] == 7) /* F_SETLKW */
			a[1] = 6;
		if (a[1] == 38) /* F_OFD_SETLKW */
			a[1] = 37;
		if (a[1] == 5 || a[1] == 6 || a[1] == 36 || a[1] == 37)
			a[2] = in();
		break;
	case SYS_ioctl:
		if (a[1] == 0x5421) /* FIONBIO */
			a[1] = 0x541b;
		break;
	case SYS_flock:
		a[1] |= 4; /* LOCK_NB */
		break;
	case SYS_arch_prctl:
		if (a[0] == 0x1002) /* ARCH_SET_FS */
			a[0] = 0x1003;
		break;
	case SYS_prctl:
		if (a[0] == 22) /* PR_SET_SECCOMP */
			a[0] = 16;
		break;
	case SYS_fallocate:
		a[3] &= 0xfffff; /* at most 1 MiB of the host's disk */
		break;
	case SYS_futex: /* waits time out */
		if (a[3] == 0)
			a[3] = ts();
		break;
	case SYS_rt_sigtimedwait:
	case SYS_ppoll:
		if (a[2] == 0)
			a[2] = ts();
		break;
	case 441: /* epoll_pwait2 */
		if (a[3] == 0)
			a[3] = ts();
		break;
	case SYS_select:
	case SYS_pselect6:
		if (a[4] == 0)
			a[4] = ts();
		break;
	}
}

/* nonblock makes a new descriptor non-blocking (pipes, eventfds, timerfds,
 * inotify: reads that would wait forever in one thread). */
static void nonblock(long fd)
{
	if (fd >= 0)
		syscall(SYS_fcntl, fd, 4, syscall(SYS_fcntl, fd, 3) | O_NONBLOCK_);
}

static int under_emuprof(void)
{
	unsigned r[12], a, b, c, d;
	if (__get_cpuid(0x80000000, &a, &b, &c, &d) == 0 || a < 0x80000004)
		return 0;
	for (unsigned i = 0; i < 3; i++)
		__get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
	return memcmp(r, "emuprof virtual", 15) == 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		printf("usage: fuzz_syscalls SEED [N] (under emuprof only)\n");
		return 0;
	}
	if (!under_emuprof()) {
		fprintf(stderr, "fuzz_syscalls: runs under emuprof only\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0);
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 2000;
	rng = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (rng == 0)
		rng = 1;
	buf = mmap(NULL, BUFSZ + GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	arena = mmap(NULL, ARENA, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED || arena == MAP_FAILED || mprotect(buf + BUFSZ, GUARD, PROT_NONE) != 0) {
		perror("fuzz_syscalls: mmap");
		return 2;
	}
	/* Ignored: SIGPIPE (writes to pipes without readers), SIGXFSZ and
	 * SIGXCPU (random rlimits). */
	for (int sig = 13; sig <= 25; sig += sig == 13 ? 11 : 1)
		syscall(SYS_rt_sigaction, sig, &(uint64_t[4]){1, 0, 0, 0}, NULL, 8);
	int out = dup(1);
	const int ncalls = sizeof calls / sizeof calls[0];
	for (long i = 0; i < n; i++) {
		const struct call *c = &calls[below(ncalls)];
		uint64_t a[6];
		for (int j = 0; j < 6; j++)
			a[j] = arg(c->t[j]);
		sanitize(c->nr, a);
		long r = syscall(c->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		switch (c->nr) {
		case SYS_open: case SYS_openat: case SYS_creat: case 437: case SYS_epoll_create:
		case SYS_epoll_create1: case SYS_eventfd: case SYS_eventfd2: case SYS_timerfd_create:
		case SYS_signalfd4: case SYS_inotify_init: case SYS_inotify_init1: case SYS_memfd_create:
		case SYS_dup: case SYS_dup2: case SYS_dup3: case SYS_socket: case SYS_accept4:
			nonblock(r);
			break;
		case SYS_pipe: case SYS_pipe2: case SYS_socketpair:
			if (r == 0) {
				int *fds = (int *)a[c->nr == SYS_socketpair ? 3 : 0];
				nonblock(fds[0]);
				nonblock(fds[1]);
			}
			break;
		}
	}
	dprintf(out, "fuzz_syscalls %llu: %ld calls\n", (unsigned long long)seed, n);
	dprintf(2, "fuzz_syscalls %llu: %ld calls\n", (unsigned long long)seed, n);
	syscall(SYS_exit_group, 77);
	return 77;
}
