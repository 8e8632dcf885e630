/* reserve: large address-space reservations, as thread stacks, malloc
 * arenas and garbage-collected runtimes make them. Linux grants a PROT_NONE
 * MAP_NORESERVE reservation of 1 TiB without memory; pages cost memory
 * only once they are made accessible and touched. The program reserves
 * 1 TiB, makes pieces of it accessible, touches, protects again, unmaps,
 * remaps and forks, and prints what it sees, with addresses relative to
 * the reservation so that the output is the same natively and under
 * emuprof.
 *
 * With an argument N (MiB), it instead maps and touches 1 MiB blocks until
 * mmap fails or N blocks are mapped, and prints how many it got and the
 * errno: under emuprof --max-memory, the limit is an ENOMEM.
 *
 * With "-r N", it maps N one-page areas whose protections alternate, so
 * that none merges with its neighbour, and prints how many it got.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1UL << 20)
#define GiB (1UL << 30)
#define TiB (1UL << 40)

static char *base;

/* sum is a checksum of n bytes at p. */
static unsigned long sum(const unsigned char *p, size_t n) {
	unsigned long s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

static void fill(char *p, size_t n, int seed) {
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed);
}

/* maps prints the areas of /proc/self/maps inside [lo, hi), relative to
 * base, merging nothing: what the kernel shows. */
static void maps(const char *when, char *lo, char *hi) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	printf("maps %s:\n", when);
	if (!f) {
		printf("  cannot open: %s\n", strerror(errno));
		return;
	}
	while (fgets(line, sizeof line, f)) {
		unsigned long s, e;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3)
			continue;
		if (e <= (uintptr_t)lo || s >= (uintptr_t)hi)
			continue;
		printf("  +%#lx-+%#lx %s\n", s - (uintptr_t)base, e - (uintptr_t)base, perms);
	}
	fclose(f);
}

static int grab(unsigned long n) {
	unsigned long got = 0;
	for (; got < n; got++) {
		char *p = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("mmap failed after %lu MiB: %s\n", got, strerror(errno));
			return 0;
		}
		memset(p, 1, MiB);
	}
	printf("mapped %lu MiB\n", got);
	return 0;
}

static int regions(unsigned long n) {
	unsigned long got = 0;
	for (; got < n; got++) {
		char *p = mmap(NULL, 4096, got % 2 ? PROT_READ : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("mmap failed after %lu areas: %s\n", got, strerror(errno));
			return 0;
		}
	}
	printf("mapped %lu areas\n", got);
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 2 && strcmp(argv[1], "-r") == 0)
		return regions(strtoul(argv[2], NULL, 0));
	if (argc > 1)
		return grab(strtoul(argv[1], NULL, 0));
	setvbuf(stdout, NULL, _IOLBF, 0);

	base = mmap(NULL, TiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		printf("reserve 1 TiB: %s\n", strerror(errno));
		return 1;
	}
	printf("reserve 1 TiB: ok, aligned %d\n", ((uintptr_t)base & 0xfff) == 0);

	/* Pieces at the start, in the middle and at the end. */
	char *a = base, *b = base + TiB / 2, *c = base + TiB - 4 * MiB;
	printf("mprotect start: %d\n", mprotect(a, 2 * MiB, PROT_READ | PROT_WRITE));
	printf("mprotect middle: %d\n", mprotect(b, 64 * MiB, PROT_READ | PROT_WRITE));
	printf("mprotect end: %d\n", mprotect(c, 4 * MiB, PROT_READ));
	fill(a, 2 * MiB, 1);
	fill(b, MiB, 2);
	fill(b + 63 * MiB, MiB, 3);
	printf("sums: %lx %lx %lx\n", sum((unsigned char *)a, 2 * MiB), sum((unsigned char *)b, 64 * MiB),
	       sum((unsigned char *)c, 4 * MiB));
	maps("after mprotect", base, base + TiB);

	/* Back to PROT_NONE and accessible again: the contents stay. */
	printf("mprotect none: %d\n", mprotect(b, 64 * MiB, PROT_NONE));
	printf("mprotect read: %d\n", mprotect(b, 32 * MiB, PROT_READ));
	printf("sum after none/read: %lx\n", sum((unsigned char *)b, 32 * MiB));
	printf("mprotect rw whole middle: %d\n", mprotect(b, 128 * MiB, PROT_READ | PROT_WRITE));
	printf("sum of the middle: %lx\n", sum((unsigned char *)b, 128 * MiB));

	/* Grow a heap piece by piece, as malloc's arenas do. */
	char *h = base + 3 * GiB;
	for (int i = 0; i < 16; i++) {
		if (mprotect(h + i * 132 * 1024, 132 * 1024, PROT_READ | PROT_WRITE) != 0)
			printf("grow %d: %s\n", i, strerror(errno));
		fill(h + i * 132 * 1024, 132 * 1024, i);
	}
	printf("heap sum: %lx\n", sum((unsigned char *)h, 16 * 132 * 1024));
	/* Shrink it: the top half back to PROT_NONE by a fixed mapping. */
	char *top = h + 8 * 132 * 1024;
	printf("shrink: %d\n", mmap(top, 8 * 132 * 1024, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == top);
	printf("madvise dontneed: %d\n", madvise(h, 132 * 1024, MADV_DONTNEED));
	printf("heap sum after: %lx\n", sum((unsigned char *)h, 8 * 132 * 1024));
	printf("mprotect regrow: %d\n", mprotect(top, 4096, PROT_READ));
	printf("zero: %lx\n", sum((unsigned char *)top, 4096));
	maps("heap", h, h + GiB);

	/* Unmap a hole in the middle piece, and parts of the reservation. */
	printf("munmap hole: %d\n", munmap(b + 16 * MiB, 16 * MiB));
	printf("munmap reserved part: %d\n", munmap(base + 100 * GiB, 100 * GiB));
	maps("after munmap", base, base + TiB);

	/* mremap: move a touched piece out, and grow it. */
	char *m = mremap(a, 2 * MiB, 8 * MiB, MREMAP_MAYMOVE);
	if (m == MAP_FAILED) {
		printf("mremap: %s\n", strerror(errno));
	} else {
		printf("mremap: moved %d, sum %lx, tail zero %lx\n", m != a, sum((unsigned char *)m, 2 * MiB),
		       sum((unsigned char *)m + 2 * MiB, 6 * MiB));
		a = m;
	}
	/* mremap a PROT_NONE piece of the reservation somewhere fixed. */
	char *dst = mremap(base + 10 * GiB, GiB, GiB, MREMAP_MAYMOVE | MREMAP_FIXED, base + 20 * GiB);
	printf("mremap reserved: %s\n", dst == base + 20 * GiB ? "ok" : strerror(errno));
	printf("mprotect moved: %d\n", mprotect(dst + GiB - 4096, 4096, PROT_READ | PROT_WRITE));
	dst[GiB - 1] = 42;
	printf("moved byte: %d\n", dst[GiB - 1]);

	/* A read-write MAP_NORESERVE mapping of 32 GiB: pages are given as they
	 * are touched (one byte per GiB, and a string a syscall writes). */
	char *big = mmap(NULL, 32 * GiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (big == MAP_FAILED) {
		printf("rw noreserve 32 GiB: %s\n", strerror(errno));
	} else {
		unsigned long s = 0;
		for (unsigned long g = 0; g < 32; g++)
			big[g * GiB + g] = (char)(g + 1);
		for (unsigned long g = 0; g < 32; g++)
			s = s * 31 + big[g * GiB + g] + big[g * GiB + 4096];
		FILE *f = fopen("/proc/self/maps", "r");
		size_t n = f ? fread(big + 17 * GiB + 100, 1, 20, f) : 0;
		if (f)
			fclose(f);
		printf("rw noreserve 32 GiB: sum %lx, read %zu bytes, first byte nonzero %d\n", s, n, big[17 * GiB + 100] != 0);
		printf("munmap 32 GiB: %d\n", munmap(big, 32 * GiB));
	}

	/* fork: the child sees the same memory, and its stores stay its own. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child sums: %lx %lx\n", sum((unsigned char *)a, 2 * MiB), sum((unsigned char *)b, 16 * MiB));
		fill(b, MiB, 9);
		printf("child mprotect: %d\n", mprotect(base + 500 * GiB, MiB, PROT_READ | PROT_WRITE));
		base[500 * GiB] = 1;
		printf("child wrote: %lx\n", sum((unsigned char *)b, MiB));
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child exit %d; parent sum %lx\n", WEXITSTATUS(st), sum((unsigned char *)b, MiB));
	printf("munmap all: %d\n", munmap(base, TiB));
	printf("munmap moved: %d\n", munmap(a, 8 * MiB));
	return 0;
}
