// Measures, natively, the constants of timemodel/zen4.table that are not
// from published tables: the clock (a dependent add chain runs one add per
// cycle), memory latencies (pointer chasing), and kernel costs.
// Usage: taskset -c 0 bin/calib   (futex hand-off: taskset -c 0,1)
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static double best(double (*f)(void)) {
	double b = 1e30;
	for (int i = 0; i < 7; i++) {
		double v = f();
		if (v < b) b = v;
	}
	return b;
}

#define CHAIN 100000000L
static double adds(void) {
	long x = 0;
	double t = now();
	for (long i = 0; i < CHAIN; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
	return (now() - t) / (4.0 * CHAIN); // ns per dependent add: 1 cycle
}

static size_t chase_bytes;
static double chase(void) {
	size_t n = chase_bytes / 64;
	char *buf = aligned_alloc(64, n * 64);
	size_t *perm = malloc(n * sizeof *perm);
	for (size_t i = 0; i < n; i++) perm[i] = i;
	srand(1);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	for (size_t i = 0; i < n; i++) *(char **)(buf + perm[i] * 64) = buf + perm[(i + 1) % n] * 64;
	char *p = buf;
	for (size_t i = 0; i < n; i++) p = *(char **)p;
	long steps = 4000000;
	double t = now();
	for (long i = 0; i < steps; i++) p = *(char **)p;
	double d = (now() - t) / steps;
	if (p == 0) puts("");
	free(buf), free(perm);
	return d;
}

// TLB: a chase over n lines, one per page (at a random line of it) or
// packed (n consecutive lines): the same cache footprint, different page
// counts, so the difference is the translation's cost.
static size_t tlb_lines;
static int tlb_spread;
static double tlbchase(void) {
	size_t n = tlb_lines, stride = tlb_spread ? 4096 : 64;
	char *buf = mmap(0, n * stride + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(buf, n * stride + 4096, MADV_NOHUGEPAGE); // 4 KiB pages, as the guest's
	size_t *perm = malloc(n * sizeof *perm);
	for (size_t i = 0; i < n; i++) perm[i] = i;
	srand(2);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	char **at = malloc(n * sizeof *at);
	for (size_t i = 0; i < n; i++) at[i] = buf + perm[i] * stride + (tlb_spread ? (perm[i] * 7 % 64) * 64 : 0);
	for (size_t i = 0; i < n; i++) *(char **)at[i] = at[(i + 1) % n];
	char *p = at[0];
	for (size_t i = 0; i < 2 * n; i++) p = *(char **)p;
	long steps = 4000000;
	double t = now();
	for (long i = 0; i < steps; i++) p = *(char **)p;
	double d = (now() - t) / steps;
	if (p == 0) puts("");
	munmap(buf, n * stride + 4096), free(perm), free(at);
	return d;
}

static double stream(void) {
	size_t n = 64 << 20;
	static char *buf;
	if (!buf) {
		buf = malloc(n);
		memset(buf, 1, n);
	}
	long s = 0;
	double t = now();
	for (size_t i = 0; i < n; i += 64) s += buf[i];
	double d = (now() - t) / (n / 64);
	if (s == 42) puts("");
	return d;
}

static double sys(void) {
	int n = 1000000;
	double t = now();
	for (int i = 0; i < n; i++) syscall(SYS_getppid);
	return (now() - t) / n;
}

static double faults(void) {
	size_t n = 4096, sz = n * 4096;
	char *p = mmap(0, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(p, sz, MADV_NOHUGEPAGE);
	double t = now();
	for (size_t i = 0; i < n; i++) p[i * 4096] = 1;
	double d = (now() - t) / n;
	munmap(p, sz);
	return d;
}

static double pipebytes(void) {
	int fd[2];
	if (pipe(fd)) exit(1);
	static char buf[32768];
	int n = 2000;
	double t0 = now();
	for (int i = 0; i < n; i++) write(fd[1], buf, 16), read(fd[0], buf, 16);
	double small = (now() - t0) / n;
	t0 = now();
	for (int i = 0; i < n; i++) write(fd[1], buf, sizeof buf), read(fd[0], buf, sizeof buf);
	double big = (now() - t0) / n;
	close(fd[0]), close(fd[1]);
	return (big - small) / (2.0 * (sizeof buf - 16)) * 1000; // ns per 1000 bytes, each way
}

static int fa, fb;
static void fwait(int *f, int v) { while (__atomic_load_n(f, __ATOMIC_ACQUIRE) == v) syscall(SYS_futex, f, FUTEX_WAIT_PRIVATE, v, 0, 0, 0); }
static void fwake(int *f) { __atomic_add_fetch(f, 1, __ATOMIC_RELEASE); syscall(SYS_futex, f, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0); }
#define ROUNDS 20000
static void *pong(void *a) {
	for (int i = 0; i < ROUNDS; i++) fwait(&fa, i), fwake(&fb);
	return 0;
}
static double pingpong(void) {
	fa = fb = 0;
	pthread_t t;
	pthread_create(&t, 0, pong, 0);
	double t0 = now();
	for (int i = 0; i < ROUNDS; i++) fwake(&fa), fwait(&fb, i);
	double d = (now() - t0) / (2.0 * ROUNDS); // one hand-off: wake, switch, wait return
	pthread_join(t, 0);
	return d;
}

int main(void) {
	double ns = best(adds);
	printf("clock\t%.0f MHz\n", 1000 / ns);
	size_t sizes[] = {16 << 10, 512 << 10, 4 << 20, 16 << 20, 256 << 20};
	const char *names[] = {"L1 (16 KiB)", "L2 (512 KiB)", "L3 (4 MiB, in the L2 TLB)", "L3 (16 MiB, past the L2 TLB)", "memory (256 MiB)"};
	for (int i = 0; i < 5; i++) {
		chase_bytes = sizes[i];
		double d = best(chase);
		printf("load-to-use %s\t%.1f ns\t%.0f cycles\n", names[i], d, d / ns);
	}
	size_t pages[] = {32, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 8192};
	for (int i = 0; i < 11; i++) {
		tlb_lines = pages[i];
		tlb_spread = 0;
		double packed = best(tlbchase);
		tlb_spread = 1;
		double spread = best(tlbchase);
		printf("TLB: %zu lines, one per page\t%.1f ns\t%.0f cycles\tpacked %.1f ns\t+%.0f cycles\n", pages[i], spread, spread / ns, packed,
		       (spread - packed) / ns);
	}
	printf("streamed line (64 MiB, one load per line)\t%.1f ns\t%.0f cycles\n", best(stream), best(stream) / ns);
	printf("syscall (getppid)\t%.0f ns\n", best(sys));
	printf("first-touch page fault\t%.0f ns\n", best(faults));
	printf("pipe bytes\t%.0f ns per 1000\n", best(pipebytes));
	printf("futex hand-off (wake + switch + wait)\t%.0f ns\n", best(pingpong));
	return 0;
}
