// mmapeof: accesses to the pages of a file mapping that lie past the end of
// the file. Linux raises SIGBUS (BUS_ADRERR, si_addr the address) for
// them, whatever the mapping's protection, in MAP_PRIVATE and MAP_SHARED
// mappings, in a forked child too; the kernel's own accesses there fail
// with EFAULT; a shared mapping follows the file as it grows and shrinks.
// The page holding the end of the file reads as zeros after it. One line
// per access, the address as an offset in the mapping.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile int got_sig, got_code;
static volatile uintptr_t got_addr;

static void on_fault(int sig, siginfo_t *si, void *uc) {
	got_sig = sig;
	got_code = si->si_code;
	got_addr = (uintptr_t)si->si_addr;
	siglongjmp(env, 1);
}

// touch reads (write: writes) the byte at base+off and says what happened.
static void touch(const char *what, volatile char *base, size_t off, int write) {
	got_sig = 0;
	if (sigsetjmp(env, 1) == 0) {
		int v = 0;
		if (write)
			base[off] = 'w';
		else
			v = base[off];
		printf("%-32s +%#06zx %s ok (%d)\n", what, off, write ? "write" : "read ", v);
	} else {
		printf("%-32s +%#06zx %s %s code %d at +%#lx\n", what, off, write ? "write" : "read ",
		       got_sig == SIGBUS ? "SIGBUS" : got_sig == SIGSEGV ? "SIGSEGV" : "signal", got_code,
		       (unsigned long)(got_addr - (uintptr_t)base));
	}
	fflush(stdout);
}

static void result(const char *what, long r) {
	printf("%-32s %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
	fflush(stdout);
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	long pg = sysconf(_SC_PAGESIZE);

	int fd = open("eof.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char text[100];
	memset(text, 'a', sizeof text);
	if (fd < 0 || write(fd, text, sizeof text) != sizeof text)
		return 1;

	// Private, read-only: the first page holds the file and zeros.
	char *p = mmap(NULL, 3 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
	touch("private first page", p, 50, 0);
	touch("private after the end, page 0", p, pg - 1, 0);
	touch("private page 1", p, pg, 0);
	touch("private page 2", p, 2 * pg + 7, 0);
	touch("private page 1 (read-only)", p, pg + 1, 1);
	result("mprotect page 1 rw", mprotect(p + pg, pg, PROT_READ | PROT_WRITE));
	touch("private page 1 (rw)", p, pg + 2, 1);
	// To a file the readable bytes go; a pipe keeps whole pages only.
	int out = open("eof.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	result("write(out, page 1, 10)", write(out, p + pg, 10));
	result("write(out, end of page 0, 10)", write(out, p + pg - 5, 10));
	close(out);
	unlink("eof.out");
	int pfd[2];
	if (pipe(pfd) != 0)
		return 1;
	result("write(pipe, end of page 0, 10)", write(pfd[1], p + pg - 5, 10));
	result("write(pipe, page 0 and on, +10)", write(pfd[1], p, pg + 10));
	result("write(pipe, end of page 0, 10)", write(pfd[1], p + pg - 5, 10));
	result("write(stdout, end of page 0, 10)", write(1, p + pg - 5, 10));
	close(pfd[0]);
	close(pfd[1]);
	// writev fills the pipe's pages across its buffers: a fault drops the
	// page being filled, bytes of earlier buffers in it too.
	struct iovec two[2] = {{p, pg - 100}, {p + pg - 100, 200}};
	if (pipe(pfd) != 0)
		return 1;
	result("writev(pipe, page 0 in two, +100)", writev(pfd[1], two, 2));
	close(pfd[0]);
	close(pfd[1]);
	struct iovec tail[2] = {{p + pg - 50, 20}, {p + pg - 30, 40}};
	if (pipe(pfd) != 0)
		return 1;
	result("writev(pipe, 50 of page 0, +10)", writev(pfd[1], tail, 2));
	close(pfd[0]);
	close(pfd[1]);
	result("read(fd, page 1, 10)", pread(fd, p + pg, 10, 0));

	// Shared, read-write: the same, and it follows the file's size.
	char *s = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	touch("shared first page", s, 10, 1);
	touch("shared page 1", s, pg + 3, 1);
	result("ftruncate 2 pages", ftruncate(fd, 2 * pg));
	touch("shared page 1 after growth", s, pg + 3, 0);
	touch("shared page 1 after growth", s, pg + 3, 1);
	touch("shared page 2 after growth", s, 2 * pg, 0);
	char c = 0;
	result("pread the store", pread(fd, &c, 1, pg + 3));
	printf("%-32s %c\n", "stored byte", c);
	result("pwrite page 2", pwrite(fd, "z", 1, 2 * pg + 1));
	touch("shared page 2 after pwrite", s, 2 * pg + 1, 0);
	result("ftruncate 10 bytes", ftruncate(fd, 10));
	touch("shared page 0 after shrinking", s, 50, 0);
	touch("shared page 1 after shrinking", s, pg + 3, 0);
	touch("shared page 2 after shrinking", s, 2 * pg + 1, 0);

	// A mapping wholly past the end.
	char *q = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 2 * pg);
	touch("mapping past the end", q, 0, 0);

	// A child: its touch past the end kills it (no handler there).
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL);
		volatile char v = p[pg];
		(void)v;
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("%-32s %s %d\n", "child", WIFSIGNALED(st) ? "killed by signal" : "exited", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	unlink("eof.dat");
	return 0;
}
