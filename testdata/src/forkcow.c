/* forkcow.c - each side of a fork stores into its own copy of private memory.
 *
 *   forkcow [MB [quick]]
 *                  maps MB MiB (default 16) private anonymous memory and
 *                  touches every page, then forks 4 children in turn, all
 *                  alive together like a pre-forking server's workers. Between
 *                  two forks the parent stores into a page, so each child sees
 *                  the stores made before its fork and none made after. Each
 *                  child checks every page it can predict, stores into one
 *                  page, waits for the parent's last stores (a pipe), checks
 *                  again and exits with the number of wrong pages. The parent
 *                  checks it sees none of the children's stores. quick: the
 *                  children only store into their page (a fork's cost: what
 *                  the processes write).
 *                  Natively its memory is MB MiB plus a few pages per child.
 * Exit 2 on an unexpected failure. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096
#define KIDS 4

static volatile unsigned char *p;
static size_t pages;

/* What page i holds for a process forked after the parent's stores
 * number 0..k-1 (marks[]) and after its own store (own, or -1). */
static unsigned char expect(size_t i, int k, int own)
{
	if (own >= 0 && i == (size_t)(1 + 2 * own))
		return (unsigned char)(200 + own);
	for (int j = k - 1; j >= 0; j--)
		if (i == (size_t)(2 + 2 * j))
			return (unsigned char)(100 + j);
	return (unsigned char)(i * 7 + 1);
}

static int check(int k, int own)
{
	int bad = 0;
	for (size_t i = 0; i < pages; i++)
		if (p[i * PAGE] != expect(i, k, own) || p[i * PAGE + PAGE - 1] != (unsigned char)i)
			bad++;
	return bad;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], 0, 10) : 16;
	int quick = argc > 2;
	pages = mb << 8;
	if (pages < 2 * KIDS + 2) {
		fprintf(stderr, "forkcow: at least 1 MB\n");
		return 2;
	}
	p = mmap(0, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (size_t i = 0; i < pages; i++) {
		p[i * PAGE] = (unsigned char)(i * 7 + 1);
		p[i * PAGE + PAGE - 1] = (unsigned char)i;
	}
	int go[2];
	if (pipe(go) != 0) {
		perror("pipe");
		return 2;
	}
	pid_t kid[KIDS];
	for (int k = 0; k < KIDS; k++) {
		fflush(stdout);
		kid[k] = fork();
		if (kid[k] < 0) {
			perror("fork");
			return 2;
		}
		if (kid[k] == 0) {
			close(go[1]);
			int bad = quick ? 0 : check(k, -1);
			p[(1 + 2 * k) * PAGE] = (unsigned char)(200 + k);
			char c;
			if (read(go[0], &c, 1) != 0)
				_exit(100);
			bad += quick ? p[(1 + 2 * k) * PAGE] != 200 + k : check(k, k);
			_exit(bad > 99 ? 99 : bad);
		}
		/* A store of the parent's after fork k: children 0..k must
		 * not see it, children k+1.. must. */
		p[(2 + 2 * k) * PAGE] = (unsigned char)(100 + k);
	}
	close(go[0]);
	close(go[1]);
	int failed = 0;
	for (int k = 0; k < KIDS; k++) {
		int st;
		if (waitpid(kid[k], &st, 0) != kid[k] || !WIFEXITED(st)) {
			printf("child %d: wait failed\n", k);
			return 2;
		}
		printf("child %d: %d wrong pages\n", k, WEXITSTATUS(st));
		failed |= WEXITSTATUS(st) != 0;
	}
	int bad = check(KIDS, -1);
	printf("parent: %d wrong pages of %zu\n", bad, pages);
	return failed || bad ? 1 : 0;
}
