// Processes: fork + wait with exit status and signal propagation, a pipe
// between parent and child, vfork + exec, exec of a missing file, orphans,
// getppid, waitid, WNOHANG. Everything printed comes from the parent after
// its waits, so the output is the same natively and under emuprof.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void status(const char *what, int st) {
	if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: killed by signal %d\n", what, WTERMSIG(st));
	else
		printf("%s: status %#x\n", what, st);
}

int main(void) {
	int st;
	fflush(stdout);

	// Exit codes.
	for (int code = 0; code < 3; code++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(code * 21);
		if (waitpid(pid, &st, 0) != pid)
			perror("waitpid");
		status("child", st);
	}

	// A crash and a signal the child sends itself.
	pid_t pid = fork();
	if (pid == 0) {
		*(volatile int *)0 = 1;
		_exit(0);
	}
	waitpid(pid, &st, 0);
	status("segv child", st);
	pid = fork();
	if (pid == 0) {
		abort();
	}
	waitpid(pid, &st, 0);
	status("abort child", st);

	// A pipe: the child writes, the parent reads to end of file.
	int fds[2];
	if (pipe(fds) < 0)
		return 1;
	pid_t parent = getpid();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		char buf[64];
		int n = snprintf(buf, sizeof buf, "from child, parent ok %d\n", getppid() == parent);
		for (int i = 0; i < 1000; i++)
			write(fds[1], buf, n);
		_exit(0);
	}
	close(fds[1]);
	long total = 0;
	char buf[4096], first[64] = "";
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof buf)) > 0) {
		if (!total)
			snprintf(first, sizeof first, "%.*s", (int)(strchr(buf, '\n') - buf), buf);
		total += n;
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	printf("pipe: %ld bytes, first line \"%s\"\n", total, first);

	// Memory is copied, not shared.
	static int shared = 1;
	pid = fork();
	if (pid == 0) {
		shared = 2;
		_exit(shared);
	}
	waitpid(pid, &st, 0);
	printf("after child wrote 2: %d (child exited %d)\n", shared, WEXITSTATUS(st));

	// vfork + exec, and exec of a missing file.
	pid = vfork();
	if (pid == 0) {
		char *argv[] = {"echo", "vfork exec", NULL};
		execv("/bin/echo", argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	status("vfork child", st);
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"missing", NULL};
		execv("/nonexistent/program", argv);
		_exit(errno == ENOENT ? 42 : 1);
	}
	waitpid(pid, &st, 0);
	status("exec missing", st);

	// An orphan: the child exits at once, the grandchild writes later.
	if (pipe(fds) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			close(fds[0]);
			usleep(1000);
			char msg[32];
			int n = snprintf(msg, sizeof msg, "orphan ppid changed %d\n", getppid() != parent);
			write(fds[1], msg, n);
			_exit(0);
		}
		_exit(7);
	}
	close(fds[1]);
	waitpid(pid, &st, 0);
	status("orphan's parent", st);
	n = read(fds[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("%s", buf);
	close(fds[0]);

	// WNOHANG, waitid, ECHILD.
	pid = fork();
	if (pid == 0) {
		usleep(1000);
		_exit(9);
	}
	printf("WNOHANG: %d\n", waitpid(pid, &st, WNOHANG));
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, pid, &si, WEXITED) < 0)
		perror("waitid");
	printf("waitid: signo %d code %d status %d pid ok %d\n", si.si_signo, si.si_code, si.si_status, si.si_pid == pid);
	errno = 0;
	int r = wait(&st);
	printf("no children: %d %s\n", r, strerror(errno));
	return 3;
}
