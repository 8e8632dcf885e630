/* vforkbig.c - a vfork child runs in its parent's memory.
 *
 *   vforkbig   maps 2 GiB, touches one page, then vforks 4 children in
 *              turn; each stores into the mapping (and into a local of
 *              the parent's stack frame) and _exits, the last one execs
 *              /bin/true instead. The parent prints what the children
 *              stored, as Linux's vfork child writes the parent's memory.
 *              Natively its memory stays a few MB; emuprof's too.
 * Exit 2 on an unexpected failure. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	size_t n = (size_t)2 << 30;
	volatile char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	p[n / 2] = 1;
	for (int i = 0; i < 4; i++) {
		volatile int seen = 0;
		pid_t pid = vfork();
		if (pid < 0) {
			perror("vfork");
			return 2;
		}
		if (pid == 0) {
			p[n / 2 + 1 + i] = (char)(10 + i);
			seen = i + 100;
			if (i == 3) {
				execl("/bin/true", "true", (char *)0);
				_exit(127);
			}
			_exit(0);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("child %d failed\n", i);
			return 2;
		}
		printf("vfork %d: parent sees %d %d\n", i, p[n / 2 + 1 + i], seen);
	}
	printf("first page %d\n", p[n / 2]);
	return 0;
}
