// Process groups and sessions: setpgid, getpgid, getpgrp, setsid, getsid
// with Linux's rules (kernel/sys.c), from a child that starts its own
// session first, so that natively (under any test runner) and under
// emuprof the same things hold. Only relations between ids are printed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void show(const char *what, long r) {
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: ok\n", what);
	fflush(stdout);
}

static void check(const char *what, int cond) {
	printf("%s: %s\n", what, cond ? "yes" : "NO");
	fflush(stdout);
}

// child forks a process that waits until the byte on its pipe comes (or
// end of file), then runs f, then exits with code.
static pid_t child(int *release, void (*f)(void), int code) {
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		char c;
		if (read(fds[0], &c, 1) < 0)
			_exit(99);
		if (f)
			f();
		_exit(code);
	}
	close(fds[0]);
	*release = fds[1];
	return pid;
}

static void release(int fd) {
	if (write(fd, "x", 1) != 1)
		perror("write");
	close(fd);
}

static int wait_code(pid_t pid) {
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void own_session(void) {
	pid_t s = setsid();
	_exit(s == getpid() && getsid(0) == s && getpgrp() == s ? 0 : 1);
}

static void own_group(void) {
	_exit(setpgid(0, 0) == 0 && getpgrp() == getpid() ? 0 : 1);
}

static void session(void) {
	pid_t me = getpid();
	check("leads its session", getsid(0) == me);
	check("leads its group", getpgid(0) == me && getpgrp() == me);
	show("setsid again", setsid());
	show("setpgid of the session leader", setpgid(0, 0));
	show("setpgid to a negative group", setpgid(0, -1));
	show("setpgid of no such process", setpgid(999999, 0));
	show("setpgid of the parent (not a child)", setpgid(getppid(), getppid()));
	errno = 0;
	show("tcgetpgrp without a terminal", tcgetpgrp(0));

	// Children inherit the group and session; the parent may move them.
	int r1, r2, r3, r4;
	pid_t a = child(&r1, NULL, 0);
	check("child inherits the group", getpgid(a) == me);
	check("child inherits the session", getsid(a) == me);
	show("setpgid(child, child)", setpgid(a, a));
	check("child leads a new group", getpgid(a) == a);
	show("setpgid(child, its old group)", setpgid(a, me));
	check("child back in the group", getpgid(a) == me);
	show("setpgid(child, no such group)", setpgid(a, 999999));
	show("setpgid(child, 0)", setpgid(a, 0));
	pid_t b = child(&r2, NULL, 0);
	show("setpgid(other child, first child's group)", setpgid(b, a));
	check("in the first child's group", getpgid(b) == a);
	release(r1);
	release(r2);
	printf("children exit %d %d\n", wait_code(a), wait_code(b));

	// A child moves itself; one starts its own session and then cannot
	// be moved into ours.
	pid_t c = child(&r3, own_group, 0);
	release(r3);
	printf("child's own group: exit %d\n", wait_code(c));
	pid_t d = child(&r4, own_session, 0);
	release(r4);
	int sync[2];
	if (pipe(sync) < 0)
		return;
	pid_t e = fork();
	if (e == 0) { // in a new session, waits for the parent's attempt
		close(sync[1]);
		setsid();
		char x;
		if (read(sync[0], &x, 1) < 0)
			_exit(99);
		_exit(getsid(0) == getpid() ? 0 : 1);
	}
	close(sync[0]);
	printf("child's own session: exit %d\n", wait_code(d));
	while (getsid(e) != e) // until it has its session
		usleep(100);
	show("setpgid(child of another session, our group)", setpgid(e, me));
	release(sync[1]);
	printf("session child: exit %d\n", wait_code(e));

	// After an exec, the parent may no longer move it.
	int cl[2], in[2];
	if (pipe2(cl, O_CLOEXEC) < 0 || pipe(in) < 0)
		return;
	pid_t f = fork();
	if (f == 0) {
		close(cl[0]);
		close(in[1]);
		dup2(in[0], 0);
		close(in[0]);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(cl[1]);
	close(in[0]);
	char x;
	check("exec happened (end of file on the close-on-exec pipe)", read(cl[0], &x, 1) == 0);
	show("setpgid(child that exec'd)", setpgid(f, f));
	check("exec'd child still in the group", getpgid(f) == me);
	close(in[1]);
	printf("cat: exit %d\n", wait_code(f));

	// A zombie keeps its group until it is reaped.
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	siginfo_t si;
	waitid(P_PID, z, &si, WEXITED | WNOWAIT);
	check("zombie's group", getpgid(z) == me);
	wait_code(z);
	show("getpgid after the reap", getpgid(z));
	show("getsid after the reap", getsid(z));
}

int main(void) {
	fflush(stdout);
	// A child is never a group leader: it can start a session, natively
	// and under emuprof alike.
	pid_t pid = fork();
	if (pid == 0) {
		if (setsid() < 0) {
			perror("setsid");
			_exit(1);
		}
		session();
		_exit(0);
	}
	printf("session: exit %d\n", wait_code(pid));
	return 0;
}
