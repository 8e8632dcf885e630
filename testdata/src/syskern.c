// syskern: the kernel surface Debian's runtimes call (issue 28): POSIX
// timers, capabilities, ioprio, setgroups, unshare, pidfds, memfd, /dev/shm,
// splice/tee/vmsplice, inotify, /proc stat files, io_uring. One line per
// call with its result and errno, to compare emuprof's answers with
// Linux's; only what is the same on every native run is printed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <grp.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int n;

static void show(const char *what, long r) {
	n++;
	if (r == -1)
		printf("%3d %-50s -1 errno %d\n", n, what, errno);
	else
		printf("%3d %-50s %ld\n", n, what, r);
	fflush(stdout);
}

#define T(expr) show(#expr, (errno = 0, (long)(expr)))

static long tcreate(long clock, struct sigevent *ev, int *id) {
	return syscall(SYS_timer_create, clock, ev, id);
}

static long tset(int id, long flags, long isec, long insec, long vsec, long vnsec, struct itimerspec *old) {
	struct itimerspec its = {{isec, insec}, {vsec, vnsec}};
	return syscall(SYS_timer_settime, id, flags, &its, old);
}

static volatile sig_atomic_t fired;
static void onusr2(int sig) { fired = sig; }

static void timers(void) {
	int id = -1, id2 = -1, id3 = -1;
	struct sigevent ev;
	struct itimerspec its;
	siginfo_t si;
	sigset_t set;

	T(tcreate(CLOCK_MONOTONIC, 0, &id));
	T(id);
	T(tcreate(10, 0, &id2));
	T(tcreate(12, 0, &id2));
	T(tcreate(CLOCK_MONOTONIC_RAW, 0, &id2));
	T(tcreate(CLOCK_REALTIME_COARSE, 0, &id2));
	T(tcreate(CLOCK_MONOTONIC_COARSE, 0, &id2));
	T(tcreate(CLOCK_REALTIME_ALARM, 0, &id2));
	T(tcreate(CLOCK_BOOTTIME_ALARM, 0, &id2));
	T(tcreate(-8 * 12345 - 1 + 1 - 6, 0, &id2)); // a CPU clock with which 2
	T(tcreate(CLOCK_MONOTONIC, (struct sigevent *)1, &id2));
	T(tcreate(CLOCK_MONOTONIC, 0, (int *)1)); // uses up an id
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = 3;
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = 0;
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	ev.sigev_signo = 65;
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	*(int *)((char *)&ev + 16) = 999999; // sigev_notify_thread_id
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	*(int *)((char *)&ev + 16) = gettid(); // sigev_notify_thread_id
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	T(id2);
	T(syscall(SYS_timer_delete, id2));
	T(syscall(SYS_timer_delete, id2));
	T(syscall(SYS_timer_gettime, id2, &its));
	T(syscall(SYS_timer_getoverrun, id2));
	T(syscall(SYS_timer_delete, -1));
	T(syscall(SYS_timer_settime, id, 0, 0, 0));
	T(tset(id, 0, 0, 0, 0, 1000000000, 0));
	T(tset(id, 0, -1, 0, 1, 0, 0));
	T(tset(1000, 0, 0, 0, 1, 0, 0));
	T(syscall(SYS_timer_settime, id, 0, (void *)1, 0));
	T(syscall(SYS_timer_gettime, id, (void *)1));
	// Disarmed with an interval: nothing is armed.
	T(tset(id, 0, 3, 5, 0, 0, 0));
	T(syscall(SYS_timer_gettime, id, &its));
	T(its.it_interval.tv_sec * 1000000000 + its.it_interval.tv_nsec);
	T(its.it_value.tv_sec * 1000000000 + its.it_value.tv_nsec);

	// SIGEV_NONE: nothing is sent, the time left counts down.
	ev.sigev_notify = SIGEV_NONE;
	T(tcreate(CLOCK_REALTIME, &ev, &id3));
	T(id3);
	T(tset(id3, 0, 0, 0, 100, 0, 0));
	T(syscall(SYS_timer_gettime, id3, &its));
	T(its.it_value.tv_sec >= 99 && its.it_value.tv_sec < 100);
	T(tset(id3, 0, 0, 0, 0, 1000, &its));
	T(its.it_value.tv_sec >= 99 && its.it_value.tv_sec < 100);
	usleep(1000);
	T(syscall(SYS_timer_gettime, id3, &its));
	T(its.it_value.tv_sec + its.it_value.tv_nsec);
	// An absolute time in the past expires at once.
	T(tset(id3, TIMER_ABSTIME, 0, 0, 1, 0, 0));
	T(syscall(SYS_timer_gettime, id3, &its));
	T(its.it_value.tv_sec + its.it_value.tv_nsec);

	// SIGEV_SIGNAL with a value, taken by sigwaitinfo.
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, 0);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_value.sival_int = 42;
	T(tcreate(CLOCK_MONOTONIC, &ev, &id2));
	T(tset(id2, 0, 0, 0, 0, 1000000, 0));
	memset(&si, 0, sizeof si);
	T(sigwaitinfo(&set, &si));
	T(si.si_code);
	T(si.si_value.sival_int);
	T(si.si_timerid == id2);
	T(si.si_overrun);
	T(syscall(SYS_timer_getoverrun, id2));
	// A periodic timer whose signal stays pending counts overruns.
	ev.sigev_signo = SIGRTMIN;
	T(tcreate(CLOCK_MONOTONIC, &ev, &id3));
	T(tset(id3, 0, 0, 1000000, 0, 1000000, 0));
	usleep(30000);
	memset(&si, 0, sizeof si);
	T(sigtimedwait(&set, &si, &(struct timespec){0, 0}));
	T(si.si_overrun > 5);
	T(syscall(SYS_timer_getoverrun, id3) == si.si_overrun);
	// Rearming drops the signal of an expiry not yet delivered.
	usleep(3000);
	T(tset(id3, 0, 0, 0, 0, 0, 0));
	T(sigtimedwait(&set, &si, &(struct timespec){0, 0}));
	// Deleting a timer drops its pending signal.
	T(tset(id2, 0, 0, 0, 0, 1000, 0));
	usleep(2000);
	T(syscall(SYS_timer_delete, id2));
	T(sigtimedwait(&set, &si, &(struct timespec){0, 0}));
	// The default timer (no sigevent): SIGALRM, si_value the id.
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, 0);
	T(tset(id, 0, 0, 0, 0, 1000, 0));
	memset(&si, 0, sizeof si);
	T(sigwaitinfo(&set, &si));
	T(si.si_value.sival_int == id);
	// A CPU-time timer fires after that much work, into a handler.
	signal(SIGUSR2, onusr2);
	ev.sigev_signo = SIGUSR2;
	T(tcreate(CLOCK_PROCESS_CPUTIME_ID, &ev, &id2));
	T(tset(id2, 0, 0, 0, 0, 2000000, 0));
	for (volatile long i = 0; !fired; i++)
		;
	T(fired);
	T(syscall(SYS_timer_gettime, id2, &its));
	T(its.it_value.tv_sec + its.it_value.tv_nsec);
	T(tcreate(CLOCK_THREAD_CPUTIME_ID, 0, &id3));
	T(tcreate(CLOCK_MONOTONIC, 0, &id3));
	T(id3);
	// A child starts without timers, its ids from 0.
	pid_t pid = fork();
	if (pid == 0) {
		int cid = -1;
		int r = syscall(SYS_timer_gettime, id, &its);
		tcreate(CLOCK_MONOTONIC, 0, &cid);
		_exit(r == -1 && errno == EINVAL && cid == 0 ? 7 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	T(WEXITSTATUS(st));
	sigprocmask(SIG_UNBLOCK, &set, 0);
}

// Capabilities (linux/capability.h), io priorities, groups, namespaces.
struct cap_header {
	uint32_t version;
	int pid;
};
struct cap_data {
	uint32_t effective, permitted, inheritable;
};
#define CAPV1 0x19980330
#define CAPV2 0x20071026
#define CAPV3 0x20080522
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP 2
#define IOPRIO_WHO_USER 3
#define IOPRIO(class, level) ((class) << 13 | (level))

static long capget_raw(struct cap_header *h, struct cap_data *d) { return syscall(SYS_capget, h, d); }
static long capset_raw(struct cap_header *h, struct cap_data *d) { return syscall(SYS_capset, h, d); }

static void privs(void) {
	struct cap_header h;
	struct cap_data d[2];
	gid_t groups[4];

	h = (struct cap_header){CAPV3, 0};
	T(capget_raw(&h, 0));
	T(capget_raw(&h, d));
	// Root's sets are every capability; a container may drop some above
	// the first 24, so only those are printed.
	T(d[0].effective & 0xffffff);
	T(d[0].permitted & 0xffffff);
	T(d[0].inheritable);
	T(d[1].inheritable);
	T(d[0].effective == d[0].permitted && d[1].effective == d[1].permitted);
	h = (struct cap_header){CAPV1, 0};
	T(capget_raw(&h, d));
	h = (struct cap_header){CAPV2, 0};
	T(capget_raw(&h, d));
	h = (struct cap_header){12345, 0};
	T(capget_raw(&h, d));
	T(h.version);
	h = (struct cap_header){12345, 0};
	T(capget_raw(&h, 0));
	T(h.version);
	T(capget_raw((struct cap_header *)1, d));
	h = (struct cap_header){CAPV3, -1};
	T(capget_raw(&h, d));
	h = (struct cap_header){CAPV3, 999999};
	T(capget_raw(&h, d));
	h = (struct cap_header){CAPV3, getpid()};
	T(capget_raw(&h, d));
	h = (struct cap_header){CAPV3, 0};
	T(capget_raw(&h, (struct cap_data *)1));
	// capset: setting the sets to what they are; more is EPERM.
	h = (struct cap_header){CAPV3, 0};
	capget_raw(&h, d);
	T(capset_raw(&h, d));
	h = (struct cap_header){CAPV3, 999999};
	T(capset_raw(&h, d));
	h = (struct cap_header){12345, 0};
	T(capset_raw(&h, d));
	h = (struct cap_header){CAPV3, 0};
	T(capset_raw(&h, 0));
	struct cap_data more[2] = {{d[0].effective, d[0].permitted, d[0].inheritable}, {d[1].effective, d[1].permitted, d[1].inheritable}};
	more[0].effective |= 1u << 31;
	more[0].permitted = more[0].effective;
	T(capset_raw(&h, more) == 0 ? 0 : errno);
	more[0] = d[0];
	more[0].effective = d[0].permitted | 1; // effective beyond permitted
	T(capset_raw(&h, more) == 0 ? (long)(d[0].permitted & 1) : -errno);

	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, getpid()));
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 999999));
	// A group's or user's is the best of its processes': only this one's
	// is known natively.
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PGRP, 0) > 0);
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_USER, getuid()) > 0);
	T(syscall(SYS_ioprio_get, 0, 0));
	T(syscall(SYS_ioprio_get, 4, 0));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(2, 7)));
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(2, 8)));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(4, 0)));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(3, 0)));
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(3, 5)));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(0, 0)));
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(0, 3)));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 999999, IOPRIO(2, 0)));
	T(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO(1, 3))); // CAP_SYS_NICE
	T(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	T(syscall(SYS_ioprio_set, 9, 0, IOPRIO(2, 0)));

	groups[0] = 54321;
	T(getgroups(4, groups));
	T(groups[0] == getgid());
	T(setgroups(1, groups));
	T(setgroups(-1, groups));
	T(setgroups(70000, groups));
	T(setgroups(1, (gid_t *)1));
	T(setgroups(0, 0));
	T(getgroups(4, groups));

	T(unshare(0));
	T(unshare(CLONE_FILES | CLONE_FS | CLONE_SYSVSEM));
	T(unshare(CLONE_VM | CLONE_SIGHAND | CLONE_THREAD));
	T(unshare(CLONE_SETTLS));
	// Namespaces: Linux's answer without CAP_SYS_ADMIN; root may have it.
	if (geteuid() != 0) {
		T(unshare(CLONE_NEWNS));
		T(unshare(CLONE_NEWNET | CLONE_NEWUTS));
		T(unshare(CLONE_NEWPID));
	}
}

// Protection keys: the emulated CPU has none (node's V8 asks).
static void pkeys(void) {
	T(syscall(SYS_pkey_alloc, 0, 0));
	T(syscall(SYS_pkey_alloc, 1, 0));
	T(syscall(SYS_pkey_free, 1));
	T(syscall(SYS_pkey_mprotect, (void *)((unsigned long)&n & ~4095UL), 4096, 3, 1));
	T(syscall(SYS_pkey_mprotect, (void *)((unsigned long)&n & ~4095UL), 4096, 3, -1));
	T(syscall(SYS_pkey_mprotect, (void *)1, 4096, 3, -1));
}

// pidfds: pidfd_open, pidfd_send_signal, waitid(P_PIDFD), CLONE_PIDFD.
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
static long pidfd_open(int pid, unsigned flags) { return syscall(SYS_pidfd_open, pid, flags); }
static long pidfd_signal(int fd, int sig, siginfo_t *info, unsigned flags) {
	return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static void pidfds(void) {
	siginfo_t si;
	int fd, cfd, st;

	T(fd = pidfd_open(getpid(), 0));
	T(fcntl(fd, F_GETFD));
	T(fcntl(fd, F_GETFL) & ~0100000); // O_LARGEFILE aside
	T(pidfd_signal(fd, 0, 0, 0));
	T(pidfd_signal(fd, 0, 0, 8));
	T(pidfd_signal(fd, 65, 0, 0));
	T(pidfd_signal(0, 0, 0, 0));
	T(pidfd_signal(99, 0, 0, 0));
	T(pidfd_signal(fd, SIGUSR1, (siginfo_t *)1, 0));
	T(waitid(P_PIDFD, fd, &si, WEXITED));
	T(waitid(P_PIDFD, 0, &si, WEXITED));
	T(waitid(P_PIDFD, 99, &si, WEXITED));
	T(waitid(P_PIDFD, -1, &si, WEXITED));
	char b[8];
	T(read(fd, b, 8));
	T(write(fd, b, 8));
	T(close(fd));
	T(pidfd_open(0, 0));
	T(pidfd_open(-1, 0));
	T(pidfd_open(999999, 0));
	T(pidfd_open(getpid(), 1));
	T(fd = pidfd_open(getpid(), O_NONBLOCK));
	T(fcntl(fd, F_GETFL) & ~0100000);
	T(close(fd));
	// A child: signalled through its pidfd, waited for through it.
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(3);
	}
	T(cfd = pidfd_open(pid, 0));
	T(pidfd_signal(cfd, SIGTERM, 0, 0));
	memset(&si, 0, sizeof si);
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(si.si_pid == pid);
	T(si.si_code);
	T(si.si_status);
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(pidfd_signal(cfd, 0, 0, 0));
	T(close(cfd));
	pid = fork();
	if (pid == 0)
		_exit(5);
	T(cfd = pidfd_open(pid, 0));
	memset(&si, 0, sizeof si);
	T(waitid(P_PIDFD, cfd, &si, WEXITED | WNOWAIT));
	T(si.si_status);
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(si.si_status);
	T(close(cfd));
	int go[2];
	pipe(go);
	pid = fork();
	if (pid == 0) {
		char c;
		read(go[0], &c, 1); // until the parent has seen it running
		_exit(6);
	}
	T(cfd = pidfd_open(pid, O_NONBLOCK));
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(waitid(P_PIDFD, cfd, &si, WEXITED | WNOHANG));
	T(write(go[1], "g", 1));
	close(go[0]), close(go[1]);
	T(fcntl(cfd, F_SETFL, 0));
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(si.si_status);
	T(close(cfd));
	// clone(CLONE_PIDFD) stores the child's pidfd.
	int pfd = -1;
	pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pfd, 0, 0);
	if (pid == 0)
		_exit(9);
	T(pid > 0);
	T(pfd > 2);
	T(fcntl(pfd, F_GETFD));
	T(waitid(P_PIDFD, pfd, &si, WEXITED));
	T(si.si_status);
	T(close(pfd));
	T(waitpid(-1, &st, WNOHANG));
	// A pidfd is readable when its process exits, and hangs up when reaped.
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	T(cfd = pidfd_open(pid, 0));
	struct pollfd pf = {cfd, POLLIN, 0};
	T(poll(&pf, 1, 0));
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, got;
	T(epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev));
	T(epoll_wait(ep, &got, 1, 0));
	T(pidfd_signal(cfd, SIGKILL, 0, 0));
	T(poll(&pf, 1, -1));
	T(pf.revents);
	T(epoll_wait(ep, &got, 1, -1));
	T(got.events);
	T(waitid(P_PIDFD, cfd, &si, WEXITED));
	T(poll(&pf, 1, 0));
	T(pf.revents);
	T(close(ep));
	T(close(cfd));
}

// memfd_create, seals, MAP_SHARED across fork; /dev/shm for shm_open and
// sem_open.
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1
#define MFD_ALLOW_SEALING 2
#endif
#define MFD_HUGETLB_ 4
#define MFD_NOEXEC_SEAL_ 8
#define MFD_EXEC_ 0x10
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 1
#define F_SEAL_SHRINK 2
#define F_SEAL_GROW 4
#define F_SEAL_WRITE 8
#endif

static long memfd(const char *name, unsigned flags) { return syscall(SYS_memfd_create, name, flags); }

static void shared(void) {
	char big[300], link[256], path[64];
	struct stat st;
	int fd, st2;

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	shm_unlink("/k28shm"); // left by an interrupted native run
	sem_unlink("/k28sem");
	T(fd = memfd("k28", 0));
	T(fstat(fd, &st));
	T(st.st_mode);
	T(st.st_nlink);
	T(st.st_size);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	memset(link, 0, sizeof link);
	T(readlink(path, link, sizeof link - 1));
	printf("    %s\n", link);
	T(fcntl(fd, F_GETFL) & ~0100000);
	T(fcntl(fd, F_GETFD));
	T(fcntl(fd, F_GET_SEALS));
	T(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
	T(write(fd, "hello", 5));
	T(ftruncate(fd, 4096));
	char *m = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T(m != MAP_FAILED);
	pid_t pid = fork();
	if (pid == 0) {
		memcpy(m, "child", 5);
		_exit(0);
	}
	waitpid(pid, &st2, 0);
	T(memcmp(m, "child", 5) == 0);
	T(pread(fd, link, 5, 0));
	T(memcmp(link, "child", 5) == 0);
	munmap(m, 4096);
	T(close(fd));
	T(fd = memfd("sealed", MFD_ALLOW_SEALING | MFD_CLOEXEC));
	T(fcntl(fd, F_GETFD));
	T(fcntl(fd, F_GET_SEALS));
	T(write(fd, "0123456789", 10));
	T(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	T(fcntl(fd, F_GET_SEALS));
	T(ftruncate(fd, 5));
	T(ftruncate(fd, 20));
	T(ftruncate(fd, 10));
	T(pwrite(fd, "ab", 2, 9));
	T(pwrite(fd, "ab", 2, 3));
	T(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL));
	T(pwrite(fd, "ab", 2, 3));
	T(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	T(fcntl(fd, F_ADD_SEALS, 0x100));
	T(fcntl(1, F_GET_SEALS));
	T(close(fd));
	T(fd = memfd("noexec", MFD_NOEXEC_SEAL_));
	T(fstat(fd, &st));
	T(st.st_mode);
	T(fcntl(fd, F_GET_SEALS));
	T(close(fd));
	T(memfd("x", 0x100));
	T(memfd("x", MFD_NOEXEC_SEAL_ | MFD_EXEC_));
	T(memfd(big, 0));
	big[249] = 0;
	T(fd = memfd(big, 0));
	T(close(fd));
	T(memfd((char *)1, 0));

	T(stat("/dev/shm", &st));
	T(S_ISDIR(st.st_mode));
	T(st.st_mode & 07777);
	T(access("/dev/shm", W_OK));
	T(fd = shm_open("/k28shm", O_CREAT | O_EXCL | O_RDWR, 0600));
	T(shm_open("/k28shm", O_CREAT | O_EXCL | O_RDWR, 0600));
	T(ftruncate(fd, 8192));
	T(fstat(fd, &st));
	T(st.st_size);
	T(st.st_mode);
	m = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T(m != MAP_FAILED);
	pid = fork();
	if (pid == 0) {
		strcpy(m + 4096, "from the child");
		_exit(0);
	}
	waitpid(pid, &st2, 0);
	T(strcmp(m + 4096, "from the child") == 0);
	munmap(m, 8192);
	T(close(fd));
	T(access("/dev/shm/k28shm", F_OK));
	T(shm_unlink("/k28shm"));
	T(shm_open("/k28shm", O_RDWR, 0));
	T(shm_unlink("/k28shm"));
	sem_t *sem = sem_open("/k28sem", O_CREAT | O_EXCL, 0600, 0);
	T(sem != SEM_FAILED);
	T(access("/dev/shm/sem.k28sem", F_OK));
	pid = fork();
	if (pid == 0) {
		sem_post(sem);
		sem_post(sem);
		_exit(0);
	}
	T(sem_wait(sem));
	waitpid(pid, &st2, 0);
	int v = -1;
	T(sem_getvalue(sem, &v));
	T(v);
	T(sem_close(sem));
	T(sem_unlink("/k28sem"));
	T(access("/dev/shm/sem.k28sem", F_OK));
}

// splice, tee and vmsplice between pipes and files.
static void splices(void) {
	int p[2], q[2], fd;
	char buf[64];
	loff_t off;

	T(pipe(p));
	T(pipe(q));
	T(fd = open("splice.txt", O_CREAT | O_TRUNC | O_RDWR, 0600));
	T(write(fd, "0123456789abcdef", 16));
	off = 4;
	T(splice(fd, &off, p[1], 0, 6, 0));
	T(off);
	T(lseek(fd, 0, SEEK_CUR));
	T(splice(fd, 0, p[1], 0, 100, 0)); // at the file's end: nothing
	T(lseek(fd, 2, SEEK_SET));
	T(splice(fd, 0, p[1], 0, 3, 0));
	T(lseek(fd, 0, SEEK_CUR));
	T(tee(p[0], q[1], 100, 0));
	T(splice(q[0], 0, p[1], 0, 4, 0));
	memset(buf, 0, sizeof buf);
	T(read(p[0], buf, sizeof buf));
	printf("    %s\n", buf);
	T(splice(p[0], 0, q[1], 0, 10, SPLICE_F_NONBLOCK));
	T(read(q[0], buf, sizeof buf));
	printf("    %.5s\n", buf);
	T(write(p[1], "to the file", 11));
	off = 20;
	T(splice(p[0], 0, fd, &off, 100, 0));
	T(off);
	T(pread(fd, buf, 11, 20));
	printf("    %.11s\n", buf);
	T(write(p[1], "xy", 2));
	T(splice(p[0], 0, fd, 0, 1, 0));
	T(lseek(fd, 0, SEEK_CUR));
	T(read(p[0], buf, 8));
	// Errors.
	T(splice(fd, 0, fd, 0, 1, 0));
	T(splice(p[0], 0, p[1], 0, 1, 0));
	T(splice(p[0], &off, fd, 0, 1, 0));
	T(splice(fd, 0, p[1], 0, 1, 0x100));
	T(splice(p[1], 0, fd, 0, 1, 0));
	T(splice(99, 0, p[1], 0, 1, 0));
	T(splice(p[0], 0, q[1], 0, 0, 0));
	T(splice(p[0], 0, q[1], 0, 10, SPLICE_F_NONBLOCK));
	T(tee(p[0], fd, 1, 0));
	T(tee(p[0], q[1], 1, SPLICE_F_NONBLOCK));
	T(tee(p[0], p[1], 1, 0));
	// vmsplice: the iovecs into the pipe, or out of it.
	struct iovec iov[2] = {{"vm", 2}, {"splice", 6}};
	T(vmsplice(p[1], iov, 2, 0));
	char a[3] = {0}, b[6] = {0};
	struct iovec out[2] = {{a, 2}, {b, 6}};
	T(vmsplice(p[0], out, 2, 0));
	printf("    %.2s %.6s\n", a, b);
	T(vmsplice(p[0], out, 2, SPLICE_F_NONBLOCK));
	T(vmsplice(fd, iov, 2, 0));
	T(vmsplice(p[1], iov, 2, 0x100));
	// A pipe without readers: EPIPE (SIGPIPE ignored here).
	signal(SIGPIPE, SIG_IGN);
	T(close(q[0]));
	T(write(p[1], "z", 1));
	T(splice(p[0], 0, q[1], 0, 1, 0));
	T(tee(p[0], q[1], 1, 0));
	T(vmsplice(q[1], iov, 1, 0));
	signal(SIGPIPE, SIG_DFL);
	close(p[0]), close(p[1]), close(q[1]), close(fd);
	unlink("splice.txt");
}

// inotify: the events of the changes this process and its child make.
static void drain(int in) {
	char buf[4096] __attribute__((aligned(8)));
	long len = read(in, buf, sizeof buf);
	if (len < 0) {
		printf("    read -1 errno %d\n", errno);
		return;
	}
	for (char *p = buf; p < buf + len;) {
		struct inotify_event *ev = (struct inotify_event *)p;
		printf("    wd %d mask %#x cookie %s len %u %s\n", ev->wd, ev->mask, ev->cookie ? "set" : "0", ev->len,
		       ev->len ? ev->name : "");
		p += sizeof *ev + ev->len;
	}
}

static void inotify(void) {
	int in, wd, wf, fd, avail;
	char buf[16];

	mkdir("watched", 0700);
	T(in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
	T(fcntl(in, F_GETFD));
	T(inotify_init1(1));
	T(wd = inotify_add_watch(in, "watched", IN_ALL_EVENTS));
	T(inotify_add_watch(in, "watched", IN_ALL_EVENTS) == wd);
	T(inotify_add_watch(in, "watched", IN_MODIFY | IN_MASK_CREATE));
	T(inotify_add_watch(in, "watched", IN_MODIFY | IN_MASK_CREATE | IN_MASK_ADD));
	T(inotify_add_watch(in, "watched", 0));
	T(inotify_add_watch(in, "nonexistent", IN_MODIFY));
	T(inotify_add_watch(1, "watched", IN_MODIFY));
	T(inotify_add_watch(99, "watched", IN_MODIFY));
	T(inotify_rm_watch(in, 99));
	T(read(in, buf, sizeof buf));
	T(fd = open("watched/f", O_CREAT | O_WRONLY, 0600));
	T(write(fd, "abc", 3));
	T(close(fd));
	drain(in);
	T(wf = inotify_add_watch(in, "watched/f", IN_ALL_EVENTS));
	T(fd = open("watched/f", O_RDONLY));
	T(read(fd, buf, 2));
	T(close(fd));
	T(ioctl(in, FIONREAD, &avail));
	T(avail);
	drain(in);
	T(fd = open("watched/f", O_WRONLY | O_TRUNC));
	T(close(fd));
	drain(in);
	T(rename("watched/f", "watched/g"));
	drain(in);
	T(mkdir("watched/d", 0700));
	T(rmdir("watched/d"));
	drain(in);
	pid_t pid = fork();
	if (pid == 0) {
		int c = open("watched/g", O_WRONLY | O_APPEND);
		write(c, "from the child", 14);
		close(c);
		_exit(0);
	}
	waitpid(pid, 0, 0);
	drain(in);
	T(chmod("watched/g", 0640));
	T(utimensat(AT_FDCWD, "watched/g", 0, 0));
	T(link("watched/g", "watched/h"));
	T(symlink("g", "watched/s"));
	T(mknod("watched/p", S_IFIFO | 0600, 0));
	drain(in);
	T(unlink("watched/h"));
	T(unlink("watched/s"));
	T(unlink("watched/p"));
	drain(in);
	DIR *dir = opendir("watched");
	T(dir != 0);
	while (readdir(dir))
		;
	closedir(dir);
	drain(in);
	T(unlink("watched/g"));
	drain(in);
	T(inotify_rm_watch(in, wd));
	drain(in);
	T(inotify_rm_watch(in, wd));
	T(close(in));
	rmdir("watched");
}

// /proc/self/stat, statm, /proc/loadavg: the fields ps and top read, as
// the system calls say.
static void procstat(void) {
	char buf[2048], comm[64], state;
	int pid, ppid, pgrp, sid, tty, tpgid, nfields = 0;
	long nice, threads, prio, vsize, rss;
	FILE *f = fopen("/proc/self/stat", "r");
	T(f != 0);
	if (!f)
		return;
	T(fgets(buf, sizeof buf, f) != 0);
	fclose(f);
	T(sscanf(buf, "%d %63s %c %d %d %d %d %d", &pid, comm, &state, &ppid, &pgrp, &sid, &tty, &tpgid));
	for (char *p = strrchr(buf, ')'); p && *p; p++)
		nfields += *p == ' ';
	T(nfields + 1);
	printf("    %s %c\n", comm, state);
	T(pid == getpid());
	T(ppid == getppid());
	T(pgrp == getpgrp());
	T(sid == getsid(0));
	char *p = strrchr(buf, ')') + 2;
	for (int i = 3; i < 18; i++)
		p = strchr(p, ' ') + 1;
	T(sscanf(p, "%ld %ld %ld", &prio, &nice, &threads));
	T(prio);
	T(nice);
	T(threads);
	T(setpriority(PRIO_PROCESS, 0, 3));
	f = fopen("/proc/self/stat", "r");
	fgets(buf, sizeof buf, f);
	fclose(f);
	p = strrchr(buf, ')') + 2;
	for (int i = 3; i < 18; i++)
		p = strchr(p, ' ') + 1;
	sscanf(p, "%ld %ld", &prio, &nice);
	T(prio);
	T(nice);
	setpriority(PRIO_PROCESS, 0, 0);
	f = fopen("/proc/self/statm", "r");
	T(fscanf(f, "%ld %ld", &vsize, &rss));
	fclose(f);
	T(vsize >= rss && rss > 0);
	f = fopen("/proc/loadavg", "r");
	double l1, l5, l15;
	int running, total, last;
	T(fscanf(f, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running, &total, &last));
	fclose(f);
	T(l1 >= 0 && running >= 1 && total >= running && last > 0);
	// cmdline: the arguments, NUL-terminated; /proc/stat's boot time.
	f = fopen("/proc/self/cmdline", "r");
	size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f)
		fclose(f);
	T(len > 0 && buf[len - 1] == 0);
	for (size_t i = 0; i < len; i++)
		if (buf[i] == 0)
			buf[i] = '|';
	printf("    %.*s\n", (int)len, buf);
	f = fopen("/proc/stat", "r");
	long btime = 0;
	while (f && fgets(buf, sizeof buf, f))
		sscanf(buf, "btime %ld", &btime);
	if (f)
		fclose(f);
	T(btime > 1000000000);
	// Another process's stat: the parent of a child is this process.
	pid_t c = fork();
	if (c == 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/stat", getppid());
		FILE *g = fopen(path, "r");
		int ppid2 = 0, ok = g && fscanf(g, "%d", &ppid2) == 1 && ppid2 == getppid();
		_exit(ok ? 0 : 1);
	}
	int st;
	waitpid(c, &st, 0);
	T(WEXITSTATUS(st));
}

// mknod of a FIFO: an in-kernel pipe its openers share.
static void fifos(void) {
	struct stat st;
	char buf[8];
	int r, w;

	unlink("k28fifo");
	T(mknod("k28fifo", S_IFIFO | 0640, 0));
	T(mknod("k28fifo", S_IFIFO | 0640, 0));
	T(stat("k28fifo", &st));
	T(S_ISFIFO(st.st_mode));
	T(st.st_mode & 0777);
	T(open("k28fifo", O_WRONLY | O_NONBLOCK));
	T(r = open("k28fifo", O_RDONLY | O_NONBLOCK));
	T(w = open("k28fifo", O_WRONLY | O_NONBLOCK));
	T(write(w, "fifo", 4));
	T(read(r, buf, sizeof buf));
	T(read(r, buf, sizeof buf));
	T(close(w));
	T(read(r, buf, sizeof buf));
	T(close(r));
	T(mknodat(AT_FDCWD, "k28fifo2", S_IFIFO | 0600, 0));
	T(unlink("k28fifo2"));
	T(unlink("k28fifo"));
}

static int status_ids(const char *key) {
	// The four ids of /proc/self/status's Uid: or Gid: line, as one number.
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int a = -1, b = -1, c = -1, d = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0)
			sscanf(line + strlen(key), "%d %d %d %d", &a, &b, &c, &d);
	if (f)
		fclose(f);
	return (a == 65534) << 3 | (b == 65534) << 2 | (c == 65534) << 1 | (d == 65534);
}

static long caps_state(void) {
	// 1: effective set empty, 2: permitted set empty, 4: effective equals permitted.
	struct cap_header h = {CAPV3, 0};
	struct cap_data d[2];
	if (capget_raw(&h, d) != 0)
		return -1;
	int e0 = (d[0].effective & 0xffffff) == 0, p0 = (d[0].permitted & 0xffffff) == 0;
	return e0 | p0 << 1 | (d[0].effective == d[0].permitted) << 2;
}

// User and group ids with Linux's rules, in a child so that the rest runs
// with the ids it started with.
static void ids(void) {
	uid_t r, e, s;
	pid_t pid = fork();
	if (pid != 0) {
		int st;
		waitpid(pid, &st, 0);
		T(WEXITSTATUS(st));
		return;
	}
	int root = getuid() == 0;
	T(setuid(-1));
	T(setuid(getuid()));
	T(setresuid(-1, -1, -1));
	T(setfsuid(-1) == (int)geteuid());
	if (root) {
		// Leave uid 0 as the effective id only: back again, the
		// effective capabilities come back from the permitted set.
		T(setreuid(-1, 65534));
		T((getresuid(&r, &e, &s), r == 0 && e == 65534 && s == 65534));
		T(caps_state());
		T(status_ids("Uid:"));
		T(seteuid(0));
		T(caps_state());
		T(setresuid(0, 0, 0));
		// PR_SET_KEEPCAPS keeps the permitted set through setuid.
		T(prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0));
		T(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
		T(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
		pid_t k = fork();
		if (k == 0) {
			T(setresuid(65534, 65534, 65534));
			T(caps_state());
			_exit(0);
		}
		waitpid(k, NULL, 0);
		T(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0));
		T(setgid(65534));
		T((getresgid(&r, &e, &s), r == 65534 && e == 65534 && s == 65534));
		T(status_ids("Gid:"));
		T(setgroups(0, NULL));
		T(setuid(65534));
	}
	// Unprivileged now (or from the start): only to one's own ids.
	T((getresuid(&r, &e, &s), r == e && e == s));
	T(getuid() == 65534 && geteuid() == 65534);
	T(status_ids("Uid:"));
	T(caps_state());
	T(setuid(0));
	T(seteuid(0));
	T(setresuid(-1, 0, -1));
	T(setreuid(0, -1));
	T(setgid(0));
	T(setfsuid(0) == (int)getuid());
	T(setfsuid(-1) == (int)getuid());
	T(setresuid(getuid(), getuid(), getuid()));
	T(setuid(getuid()));
	fflush(stdout);
	_exit(root ? 3 : 4);
}

int main(void) {
	fifos();
	procstat();
	inotify();
	splices();
	timers();
	privs();
	pkeys();
	pidfds();
	shared();
	ids();
	return 0;
}
