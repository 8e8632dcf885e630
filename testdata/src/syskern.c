// syskern: the kernel surface Debian's runtimes call (issue 28): POSIX
// timers, capabilities, ioprio, setgroups, unshare, pidfds, memfd, /dev/shm,
// splice/tee/vmsplice, inotify, /proc stat files, io_uring. One line per
// call with its result and errno, to compare emuprof's answers with
// Linux's; only what is the same on every native run is printed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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

int main(void) {
	timers();
	return 0;
}
