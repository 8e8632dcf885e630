/* shmfork.c - shared memory is shared across fork, as Linux shares it.
 *
 *   shmfork    in the working directory (creates and removes shmfork.dat):
 *              a parent and its children communicate through
 *              MAP_SHARED|MAP_ANONYMOUS memory, MAP_SHARED of /dev/zero
 *              and MAP_SHARED of a file, each seeing the other's stores
 *              (a child's, a grandchild's, the parent's after the fork),
 *              also after the child splits the area with mprotect and the
 *              parent unmaps part of it; MAP_PRIVATE memory stays a copy.
 *              Prints what each process sees.
 * Exit 2 on an unexpected failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(2);
}

static void waitchild(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("waitpid");
}

static void *map(int flags, int fd, size_t n)
{
	void *p = mmap(0, n, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* check runs a child that stores 42 at p[0] and 43 in the last page, then
 * a second child that reads what the parent stored after the first. */
static void check(const char *what, int *p, size_t n)
{
	int *last = p + (n - PG) / sizeof(int);
	p[0] = 1;
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		p[0] = 42;
		*last = 43;
		_exit(0);
	}
	waitchild(pid);
	printf("%s: parent sees %d %d\n", what, p[0], *last);
	p[1] = 7;
	pid = fork();
	if (pid == 0) {
		printf("%s: child sees %d\n", what, p[1]);
		fflush(stdout);
		_exit(0);
	}
	waitchild(pid);
}

int main(void)
{
	setvbuf(stdout, 0, _IOLBF, 0);
	size_t n = 4 * PG;

	int *a = map(MAP_SHARED | MAP_ANONYMOUS, -1, n);
	check("anonymous", a, n);

	int z = open("/dev/zero", O_RDWR);
	if (z < 0)
		die("open /dev/zero");
	check("/dev/zero", map(MAP_SHARED, z, n), n);
	close(z);

	int f = open("shmfork.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f < 0 || ftruncate(f, n) != 0)
		die("shmfork.dat");
	int *fm = map(MAP_SHARED, f, n);
	check("file", fm, n);
	int v;
	if (pread(f, &v, sizeof v, 0) != sizeof v)
		die("pread");
	printf("file: read gives %d\n", v);
	munmap(fm, n);
	close(f);
	unlink("shmfork.dat");

	/* A grandchild's store, after the child made part of the area
	 * read-only and the parent unmapped another part. */
	munmap((char *)a + 3 * PG, PG);
	pid_t pid = fork();
	if (pid == 0) {
		if (mprotect(a, PG, PROT_READ) != 0)
			die("mprotect");
		pid_t g = fork();
		if (g == 0) {
			a[PG / sizeof(int)] = 99;
			_exit(0);
		}
		waitchild(g);
		printf("child sees %d after the grandchild\n", a[PG / sizeof(int)]);
		a[2 * PG / sizeof(int)] = 100;
		_exit(0);
	}
	waitchild(pid);
	printf("parent sees %d %d after the child\n", a[PG / sizeof(int)], a[2 * PG / sizeof(int)]);

	/* Private memory stays the parent's own. */
	int *q = map(MAP_PRIVATE | MAP_ANONYMOUS, -1, PG);
	q[0] = 1;
	pid = fork();
	if (pid == 0) {
		q[0] = 42;
		_exit(0);
	}
	waitchild(pid);
	printf("private: parent sees %d\n", q[0]);
	return 0;
}
