// sysedge: raw system calls at the edges of their arguments, one line each
// with the result and errno, to compare emuprof's answers with Linux's.
// Every call is harmless whatever it returns (no thread or process is
// created by a call Linux refuses; files live in the working directory).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x1000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef CLONE_DETACHED
#define CLONE_DETACHED 0x400000
#endif
#ifndef MS_ASYNC
#define MS_ASYNC 1
#endif
// The clone3 argument block (linux/sched.h's struct clone_args, version 0).
struct clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

#ifndef RWF_HIPRI
#define RWF_HIPRI 1
#define RWF_DSYNC 2
#define RWF_SYNC 4
#define RWF_NOWAIT 8
#define RWF_APPEND 16
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#define RENAME_WHITEOUT 4
#endif
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004
#define ARCH_GET_CPUID 0x1011
#define ARCH_SET_CPUID 0x1012

static int n;

static void show(const char *what, long r) {
	n++;
	if (r == -1)
		printf("%3d %-44s -1 errno %d\n", n, what, errno);
	else
		printf("%3d %-44s %ld\n", n, what, r);
	fflush(stdout);
}

#define T(expr) show(#expr, (errno = 0, (long)(expr)))

// A child a clone must not create: if the call succeeds where Linux
// refuses, the child exits at once and the parent reaps it.
static long clone_raw(unsigned long flags) {
	long r = syscall(SYS_clone, flags, 0, 0, 0, 0);
	if (r == 0)
		syscall(SYS_exit, 0);
	if (r > 0)
		waitpid(r, 0, __WALL);
	return r > 0 ? 1 : r;
}

static long clone3_raw(struct clone_args *a, size_t size) {
	long r = syscall(SYS_clone3, a, size);
	if (r == 0)
		syscall(SYS_exit, 0);
	if (r > 0)
		waitpid(r, 0, __WALL);
	return r > 0 ? 1 : r;
}

int main(void) {
	char buf[256];
	struct timespec ts;
	struct clone_args ca;

	// clone: flag combinations copy_process refuses.
	T(clone_raw(CLONE_THREAD | SIGCHLD));
	T(clone_raw(CLONE_THREAD | CLONE_VM | SIGCHLD));
	T(clone_raw(CLONE_SIGHAND | SIGCHLD));
	T(clone_raw(CLONE_NEWNS | CLONE_FS | SIGCHLD));
	T(clone_raw(CLONE_NEWUSER | CLONE_FS | SIGCHLD));
	T(clone_raw(CLONE_PIDFD | CLONE_DETACHED | SIGCHLD));
	T(clone_raw(CLONE_PIDFD | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM));
	memset(&ca, 0, sizeof ca);
	ca.exit_signal = SIGCHLD;
	T(clone3_raw(&ca, 8));
	T(clone3_raw(&ca, 63));
	T(clone3_raw(0, sizeof ca));
	ca.exit_signal = 65;
	T(clone3_raw(&ca, sizeof ca));
	ca.exit_signal = SIGCHLD;
	ca.flags = CLONE_THREAD;
	T(clone3_raw(&ca, sizeof ca));
	ca.flags = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
	T(clone3_raw(&ca, sizeof ca)); // exit_signal with CLONE_THREAD
	ca.flags = 0;
	ca.stack = 0x1000;
	ca.stack_size = 0;
	T(clone3_raw(&ca, sizeof ca)); // a stack without a size
	ca.stack = 0;
	ca.stack_size = 4096;
	T(clone3_raw(&ca, sizeof ca)); // a size without a stack
	ca.stack_size = 0;
	ca.flags = CLONE_DETACHED;
	T(clone3_raw(&ca, sizeof ca));
	ca.flags = 1ull << 40;
	T(clone3_raw(&ca, sizeof ca));

	// mprotect, mmap, munmap, madvise, mremap.
	char *m = mmap(0, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T(mprotect(m, 4096, PROT_READ | PROT_GROWSDOWN | PROT_GROWSUP));
	T(mprotect(m, 4096, PROT_READ | PROT_GROWSDOWN));
	T(mprotect(m, 4096, PROT_READ | PROT_GROWSUP));
	T(mprotect(m + 1, 4096, PROT_READ));
	T(mprotect(m, 4096, 0x10));
	T(mprotect(m, 4096, PROT_READ | PROT_WRITE | PROT_EXEC));
	T(mprotect(m, 0, PROT_READ));
	T(mprotect((void *)0x10000000000, 4096, PROT_READ));
	T(mprotect(m, -4096UL, PROT_READ));
	T((long)mmap(0, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	T((long)mmap(0, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0));
	T((long)mmap(0, 4096, PROT_READ, MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	T((long)mmap((void *)1, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	T((long)mmap(0, 4096, PROT_READ, MAP_PRIVATE, 12345, 0));
	T((long)mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 1) > 0);
	T(munmap(m + 1, 4096));
	T(munmap(m, 0));
	T(munmap((void *)0x10000000000, 4096));
	T(madvise(m, 4096, 12345));
	T(madvise(m + 1, 4096, MADV_DONTNEED));
	T(madvise(m, 4096, MADV_NORMAL));
	T(madvise(m, 4096, MADV_HUGEPAGE));
	T(madvise((void *)0x10000000000, 4096, MADV_NORMAL));
	T((long)mremap(m, 4096, 8192, 0x100));
	T((long)mremap(m, 4096, 0, 0));
	T((long)mremap(m + 1, 4096, 8192, MREMAP_MAYMOVE));
	T((long)mremap(m, 4096, 8192, MREMAP_FIXED));
	T(mlock(m, 4096));
	T(munlock(m, 4096));
	T(mlockall(0));
	T(mlockall(0x100));
	T(msync(m + 1, 4096, MS_SYNC));
	T(msync(m, 4096, MS_SYNC | MS_ASYNC));
	T(msync(m, 4096, 0x100));
	T(mincore(m + 1, 4096, (unsigned char *)buf));

	// Clocks and time.
	T(syscall(SYS_clock_gettime, -1, &ts));
	T(syscall(SYS_clock_gettime, 16, &ts));
	T(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, 0));
	T(syscall(SYS_clock_getres, -1, &ts));
	T(syscall(SYS_clock_getres, CLOCK_REALTIME, 0));
	T(syscall(SYS_clock_getres, CLOCK_BOOTTIME, &ts));
	T(syscall(SYS_clock_gettime, CLOCK_TAI, &ts) == 0);
	T(syscall(SYS_clock_gettime, CLOCK_MONOTONIC_COARSE, &ts) == 0);
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000000;
	T(syscall(SYS_nanosleep, &ts, 0));
	ts.tv_nsec = -1;
	T(syscall(SYS_nanosleep, &ts, 0));
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	T(syscall(SYS_nanosleep, &ts, 0));
	ts.tv_sec = 0;
	T(syscall(SYS_clock_nanosleep, -1, 0, &ts, 0));
	T(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &ts, 0));
	T(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0x100, &ts, 0));
	T(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));

	// prctl and arch_prctl queries.
	T(prctl(PR_GET_DUMPABLE));
	T(prctl(PR_SET_DUMPABLE, 3));
	T(prctl(PR_GET_PDEATHSIG, buf));
	T(prctl(PR_SET_PDEATHSIG, 65));
	T(prctl(PR_GET_KEEPCAPS));
	T(prctl(PR_GET_TIMERSLACK));
	T(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	T(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0));
	T(prctl(PR_GET_SECUREBITS));
	T(prctl(PR_CAPBSET_READ, 0));
	T(prctl(PR_CAPBSET_READ, 1000));
	T(prctl(PR_GET_CHILD_SUBREAPER, buf));
	T(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	T(prctl(PR_GET_TSC, buf));
	T(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
	T(prctl(PR_GET_TAGGED_ADDR_CTRL, 0, 0, 0, 0));
	T(prctl(PR_GET_FP_MODE));
	T(prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0) >= 0);
	T(prctl(PR_GET_SPECULATION_CTRL, 1000, 0, 0, 0));
	T(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0));
	T(prctl(PR_CAP_AMBIENT, 1000, 0, 0, 0));
	T(prctl(PR_GET_NAME, 0));
	T(prctl(12345));
	unsigned long gs = 0;
	T(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	T(gs);
	T(syscall(SYS_arch_prctl, ARCH_SET_GS, 0x12345000));
	T(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	T(gs);
	T(syscall(SYS_arch_prctl, ARCH_SET_GS, 0));
	T(syscall(SYS_arch_prctl, ARCH_SET_GS, 0x800000000000UL));
	T(syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0));
	// Linux answers 0 where the host CPU has CPUID faulting and ENODEV where
	// it has none, so only "one of the two" is the same on every host
	// (emuprof's virtual CPU has none: syscalls' TestArchPrctlCPUID).
	long setcpuid = syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
	int setcpuid_linux = setcpuid == 0 || (setcpuid == -1 && errno == ENODEV);
	T(setcpuid_linux);
	T(syscall(SYS_arch_prctl, ARCH_GET_FS, 0));
	T(syscall(SYS_arch_prctl, 0x9999, 0));

	// Files.
	int fd = open("edge.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
	T(write(fd, "0123456789abcdef", 16));
	T(syscall(SYS_copy_file_range, fd, &(loff_t){0}, fd, &(loff_t){4}, 8, 0));
	T(syscall(SYS_copy_file_range, fd, &(loff_t){0}, fd, &(loff_t){8}, 8, 0));
	T(syscall(SYS_copy_file_range, fd, &(loff_t){0}, fd, &(loff_t){0}, 4, 0));
	T(syscall(SYS_copy_file_range, fd, &(loff_t){0}, fd, &(loff_t){20}, 4, 1));
	T(syscall(SYS_copy_file_range, fd, &(loff_t){-1}, fd, &(loff_t){20}, 4, 0));
	T(open(".", O_TMPFILE | O_RDONLY, 0600));
	T(open(".", O_TMPFILE, 0600));
	T(open("edge.txt", O_TMPFILE | O_RDWR, 0600));
	T(open("edge.txt", O_DIRECTORY));
	T(open("edge.txt/x", O_RDONLY));
	T(open("", O_RDONLY));
	T(open("nonexistent", O_RDONLY));
	T(open("edge.txt", O_CREAT | O_EXCL | O_RDWR, 0644));
	T(open("edge.txt", O_WRONLY | O_RDWR));
	T(openat(12345, "edge.txt", O_RDONLY));
	T(openat(fd, "x", O_RDONLY));
	T(mkdir("edgedir", 0755));
	T(mkdir("edgedir", 0755));
	T(close(open("edgedir/f", O_CREAT | O_WRONLY, 0644)));
	T(rmdir("edgedir"));
	T(unlink("edgedir"));
	T(rename("edgedir", "edgedir/sub"));
	T(rename("edge.txt", "edgedir"));
	T(rename("edgedir", "edge.txt"));
	T(close(open("edge2.txt", O_CREAT | O_WRONLY, 0644)));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge2.txt", AT_FDCWD, "edge.txt", RENAME_NOREPLACE));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge2.txt", AT_FDCWD, "edge3.txt", RENAME_NOREPLACE));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge3.txt", AT_FDCWD, "edge.txt", RENAME_EXCHANGE));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge3.txt", AT_FDCWD, "nonexistent", RENAME_EXCHANGE));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge3.txt", AT_FDCWD, "edge.txt", RENAME_EXCHANGE | RENAME_NOREPLACE));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge3.txt", AT_FDCWD, "edge.txt", 0x100));
	T(syscall(SYS_renameat2, AT_FDCWD, "edge3.txt", AT_FDCWD, "edge.txt", RENAME_EXCHANGE));
	T(lseek(fd, 0, SEEK_END));
	struct stat st;
	T(fstatat(fd, "", &st, AT_EMPTY_PATH));
	T(st.st_size);
	T(fstatat(fd, "", &st, 0));
	T(fstatat(AT_FDCWD, "", &st, AT_EMPTY_PATH));
	T(fstatat(AT_FDCWD, "edge.txt", &st, 0x8000));
	T(fchownat(fd, "", -1, -1, AT_EMPTY_PATH));
	T(fchownat(fd, "", -1, -1, 0));
	T(fchmodat(AT_FDCWD, "edge.txt", 0644, 0x8000));
	T(faccessat(AT_FDCWD, "edge.txt", R_OK, 0x8000));
	T(faccessat(AT_FDCWD, "edge.txt", 0x10, 0));
	T(syscall(SYS_linkat, fd, "", AT_FDCWD, "edge.link", AT_EMPTY_PATH));
	T(unlink("edge.link"));
	T(syscall(SYS_linkat, AT_FDCWD, "edge.txt", AT_FDCWD, "edge.link", 0x8000));
	struct iovec iov = {buf, 4};
	T(syscall(SYS_preadv2, fd, &iov, 1, 0, 0, RWF_HIPRI));
	T(syscall(SYS_preadv2, fd, &iov, 1, 0, 0, RWF_NOWAIT));
	T(syscall(SYS_preadv2, fd, &iov, 1, 0, 0, RWF_DSYNC));
	T(syscall(SYS_preadv2, fd, &iov, 1, 0, 0, 1 << 30));
	T(syscall(SYS_preadv2, fd, &iov, 1, -1, 0, 0));
	T(syscall(SYS_pwritev2, fd, &iov, 1, 0, 0, RWF_DSYNC));
	T(syscall(SYS_pwritev2, fd, &iov, 1, 0, 0, RWF_SYNC));
	T(syscall(SYS_pwritev2, fd, &iov, 1, 0, 0, RWF_APPEND));
	T(lseek(fd, 0, SEEK_END));
	T(syscall(SYS_pwritev2, fd, &iov, 1, 0, 0, 1 << 30));
	T(syscall(SYS_preadv2, fd, &iov, -1, 0, 0, 0));
	T(syscall(SYS_preadv2, fd, &iov, 1025, 0, 0, 0));
	T(lseek(fd, -1, SEEK_SET));
	T(lseek(fd, 0, 5));
	T(lseek(fd, 0, SEEK_DATA));
	T(lseek(fd, 100, SEEK_DATA));
	T(lseek(fd, 0, SEEK_HOLE));
	T(ftruncate(fd, -1));
	T(truncate("edge.txt", -1));
	T(fallocate(fd, 0x100, 0, 10));
	T(fallocate(fd, 0, -1, 10));
	T(fallocate(fd, 0, 0, 0));
	T(posix_fadvise(fd, 0, 0, 12345));
	T(fsync(12345));
	int p[2];
	T(pipe2(p, 0x1));
	T(pipe2(p, 0));
	T(lseek(p[0], 0, SEEK_SET));
	T(fsync(p[0]));
	T(write(p[0], "x", 1));
	T(read(p[1], buf, 1));
	T(ftruncate(p[1], 0));
	T(fcntl(fd, 12345));
	T(fcntl(12345, F_GETFD));
	T(fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK) == 0);
	T(fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK | O_ACCMODE));
	T(fcntl(fd, F_DUPFD, -1));
	T(fcntl(fd, F_DUPFD, 1 << 30));
	T(fcntl(p[0], F_SETPIPE_SZ, 0) > 0);
	T(fcntl(p[0], F_GETPIPE_SZ));
	T(dup2(fd, -1));
	T(dup2(12345, 5));
	T(dup3(fd, fd, 0));
	T(dup3(fd, 20, 0x1));
	T(dup2(fd, fd));
	T(syscall(SYS_getdents64, fd, buf, sizeof buf));
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	T(syscall(SYS_getdents64, dfd, buf, 1));
	T(read(dfd, buf, 1));
	T(write(dfd, buf, 1));
	T(getcwd(buf, 1) == 0);
	T(syscall(SYS_getcwd, buf, 0));
	T(readlink("edge.txt", buf, sizeof buf));
	T(readlink("edge.txt", buf, 0));
	T(readlink("nonexistent", buf, sizeof buf));
	T(symlink("", "edge.sym"));
	T(symlink("edge.txt", "edge.sym"));
	T(readlink("edge.sym", buf, 3));
	T(unlink("edge.sym"));
	char *volatile bad = (char *)1;
	T(write(fd, bad, 10));
	T(read(fd, bad, 10) < 0 ? -1 : 0);
	T(write(fd, buf, 0));
	T(read(12345, buf, 1));
	int ro = open("edge.txt", O_RDONLY);
	T(write(ro, "x", 1));
	T(ftruncate(ro, 0));
	T(syscall(332 /* statx */, AT_FDCWD, "edge.txt", 0x10000, 0x7ff, buf));
	T(syscall(332 /* statx */, AT_FDCWD, "edge.txt", 0, 1u << 31, buf));
	T(utimensat(AT_FDCWD, "edge.txt", (struct timespec[]){{0, 1000000000}, {0, 0}}, 0));
	T(utimensat(AT_FDCWD, "edge.txt", 0, 0x8000));

	// Signals, processes, limits, scheduling.
	T(kill(getpid(), 65));
	T(kill(999999, 0));
	T(syscall(SYS_rt_sigaction, SIGKILL, &(struct sigaction){0}, 0, 8));
	T(syscall(SYS_rt_sigaction, SIGUSR1, 0, 0, 4));
	T(syscall(SYS_rt_sigaction, 0, 0, 0, 8));
	T(syscall(SYS_rt_sigaction, 65, 0, 0, 8));
	T(syscall(SYS_rt_sigprocmask, 7, &(sigset_t){0}, 0, 8));
	T(syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0, 0, 4));
	stack_t ss = {.ss_sp = buf, .ss_size = 16, .ss_flags = 0};
	T(sigaltstack(&ss, 0));
	ss.ss_flags = 0x100;
	T(sigaltstack(&ss, 0));
	T(syscall(SYS_tgkill, getpid(), 999999, 0));
	T(syscall(SYS_tgkill, -1, getpid(), 0));
	T(syscall(SYS_tkill, getpid(), 65));
	T(wait4(-1, 0, 0, 0));
	T(wait4(-1, 0, 0x1000000, 0));
	T(syscall(SYS_waitid, 99, 0, 0, WEXITED, 0));
	T(syscall(SYS_waitid, P_ALL, 0, 0, 0, 0));
	T(getrlimit(99, (struct rlimit *)buf));
	T(setrlimit(RLIMIT_NOFILE, &(struct rlimit){10, 5}));
	T(syscall(SYS_prlimit64, 0, 99, 0, 0));
	T(syscall(SYS_prlimit64, 999999, RLIMIT_NOFILE, 0, buf));
	cpu_set_t cs;
	CPU_ZERO(&cs);
	T(sched_setaffinity(0, sizeof cs, &cs));
	T(syscall(SYS_sched_getaffinity, 0, 1, &cs));
	T(syscall(SYS_sched_getaffinity, 0, 7, &cs));
	T(syscall(SYS_sched_getaffinity, 999999, sizeof cs, &cs));
	T(sched_getscheduler(999999));
	T(sched_getscheduler(-1));
	T(syscall(SYS_sched_setscheduler, 0, 99, &(struct sched_param){0}));
	T(sched_yield());
	T(syscall(SYS_getpriority, 99, 0));
	T(setpgid(-1, 0));
	T(setpgid(999999, 0));
	T(getpgid(999999));
	T(getsid(999999));
	T(syscall(SYS_futex, buf, 99, 0, 0, 0, 0));
	T(syscall(SYS_futex, 0, FUTEX_WAKE, 1, 0, 0, 0));
	T(syscall(SYS_futex, buf + 1, FUTEX_WAIT, 0, 0, 0, 0));
	T(syscall(SYS_uname, 0));
	T(syscall(SYS_gettimeofday, 1, 0));
	T(syscall(SYS_getrandom, buf, 8, 0x100));
	T(syscall(SYS_getrandom, buf, 8, GRND_NONBLOCK));
	T(syscall(SYS_select, -1, 0, 0, 0, 0));
	T(syscall(SYS_poll, 0, 1 << 30, 0));
	T(syscall(SYS_poll, 0, 0, 0));
	T(syscall(SYS_umask, 0777) >= 0);
	T(syscall(SYS_umask, 022));
	T(syscall(SYS_brk, 0) > 0);
	T(syscall(SYS_set_tid_address, 0) > 0);
	T(syscall(SYS_set_robust_list, 0, 1));
	T(syscall(SYS_get_robust_list, 999999, buf, buf + 8));
	T(syscall(SYS_sysinfo, 0));
	T(syscall(SYS_times, 0) >= 0);
	T(syscall(SYS_getgroups, -1, 0));
	T(syscall(SYS_setuid, -1));
	T(syscall(SYS_personality, 0xffffffff) >= 0);
	unlink("edge.txt");
	unlink("edge3.txt");
	unlink("edge.link");
	unlink("edgedir/f");
	rmdir("edgedir");
	return 0;
}
