// Do misses overlap? Natively, and as the time model prices them: a chase
// through a random cycle of lines (each step's address is the previous
// step's load: dependent misses), the same chase with W independent adds
// per step (work the core can run while the next miss is in flight), the
// adds alone (the chase in 4 KiB, L1D), and loads of the same lines in the
// same order whose addresses come from an index array (independent misses).
// Then a sequential stream of lines past L3 (the prefetcher's case) with
// the same adds per line. hash.c's chain walk is the second shape: one miss per entry, a strcmp
// beside it. Prints ns per step and, with the clock of a dependent add
// chain, cycles. Usage: chrt -f 10 taskset -c 0 bin/calibmlp [KIB [STEPS
// [REPS [SMIB]]]]; under emuprof (the guest's clock is the model's) the same
// program prints the model's figures: emuprof run --time-model zen4 --
// bin/calibmlp 256 200000 1.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static long steps = 2000000;
static int reps = 7;

// The adds of a step: W of them in four independent chains (IPC up to 4).
#define ADD4 "add $1, %1\n\tadd $1, %2\n\tadd $1, %3\n\tadd $1, %4\n\t"
#define WORK(w)                                                                                    \
	do {                                                                                       \
		for (int k = 0; k < (w) / 16; k++)                                                 \
			__asm__ volatile(ADD4 ADD4 ADD4 ADD4 : "+r"(p), "+r"(a), "+r"(b), "+r"(c), "+r"(d)); \
	} while (0)

static double chase(char *buf, int w) {
	long a = 0, b = 0, c = 0, d = 0;
	char *p = buf;
	double t = now();
	for (long i = 0; i < steps; i++) {
		p = *(char **)p;
		WORK(w);
	}
	double ns = (now() - t) / steps;
	if (p == 0 || a + b + c + d == 1) puts("");
	return ns;
}

static double indep(char *buf, const unsigned *idx, long n) {
	long s = 0, j = 0;
	double t = now();
	for (long i = 0; i < steps; i++) {
		s += *(long *)(buf + (size_t)idx[j] * 64 + 8);
		j = j + 1 == n ? 0 : j + 1;
	}
	double ns = (now() - t) / steps;
	if (s == 1) puts("");
	return ns;
}

// stream reads one word per line of buf (n lines, sequentially: the
// prefetcher's case) with w adds per line.
static double stream(char *buf, long n, int w) {
	long a = 0, b = 0, c = 0, d = 0, s = 0, j = 0;
	char *p = buf;
	double t = now();
	for (long i = 0; i < steps; i++) {
		s += *(long *)(buf + (size_t)j * 64);
		j = j + 1 == n ? 0 : j + 1;
		WORK(w);
	}
	double ns = (now() - t) / steps;
	if (s == 1 || a + b + c + d == 1 || p == 0) puts("");
	return ns;
}

static double clockns(void) {
	long x = 0, n = 20000000;
	double t = now();
	for (long i = 0; i < n; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
	return (now() - t) / (4.0 * n);
}

// ring lays a random cycle through n lines of buf, one pointer per line
// (at offset 0), and returns the order.
static unsigned *ring(char *buf, long n) {
	unsigned *perm = malloc(n * sizeof *perm);
	for (long i = 0; i < n; i++) perm[i] = i;
	srand(1);
	for (long i = n - 1; i > 0; i--) {
		long j = rand() % (i + 1);
		unsigned t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	for (long i = 0; i < n; i++) *(char **)(buf + (size_t)perm[i] * 64) = buf + (size_t)perm[(i + 1) % n] * 64;
	return perm;
}

int main(int argc, char **argv) {
	long kib = argc > 1 ? atol(argv[1]) : 256;
	if (argc > 2) steps = atol(argv[2]);
	if (argc > 3) reps = atoi(argv[3]);
	long n = kib * 1024 / 64, small = 4096 / 64;
	char *buf = aligned_alloc(64, n * 64), *l1 = aligned_alloc(64, small * 64);
	unsigned *perm = ring(buf, n);
	free(ring(l1, small));
	// The order of the chase as indices: the same lines, independent.
	unsigned *idx = malloc(n * sizeof *idx);
	for (long i = 0; i < n; i++) idx[i] = perm[(i + 1) % n];
	double cyc = 1e30;
	for (int r = 0; r < reps; r++) {
		double v = clockns();
		cyc = v < cyc ? v : cyc;
	}
	printf("clock\t%.0f MHz\n", 1000 / cyc);
	for (long i = 0; i < n; i++) buf[i * 64 + 8] = 1; // warm
	static const int ws[] = {0, 16, 32, 48, 64, 96};
	for (unsigned i = 0; i < sizeof ws / sizeof *ws; i++) {
		double dep = 1e30, alone = 1e30;
		for (int r = 0; r < reps; r++) {
			double v = chase(buf, ws[i]), u = chase(l1, ws[i]);
			dep = v < dep ? v : dep, alone = u < alone ? u : alone;
		}
		printf("%ld KiB chase + %d adds\t%.2f ns\t%.1f cycles\tadds alone (L1 chase) %.2f ns\t%.1f cycles\tmiss beyond %.1f cycles\n",
		       kib, ws[i], dep, dep / cyc, alone, alone / cyc, (dep - alone) / cyc);
	}
	double ind = 1e30;
	for (int r = 0; r < reps; r++) {
		double v = indep(buf, idx, n);
		ind = v < ind ? v : ind;
	}
	printf("%ld KiB independent loads (same lines, same order)\t%.2f ns\t%.1f cycles\n", kib, ind, ind / cyc);
	// A sequential stream through SMIB MiB (64: past L3, from memory;
	// 16: L3), prefetched, with the same adds per line.
	long smib = argc > 4 ? atol(argv[4]) : 64, sn = (smib << 20) / 64;
	char *sbuf = aligned_alloc(64, sn * 64);
	for (long i = 0; i < sn; i++) sbuf[i * 64] = 1; // touch every page
	for (unsigned i = 0; i < sizeof ws / sizeof *ws; i++) {
		double v = 1e30;
		for (int r = 0; r < reps; r++) {
			double u = stream(sbuf, sn, ws[i]);
			v = u < v ? u : v;
		}
		printf("%ld MiB stream + %d adds\t%.2f ns\t%.1f cycles\n", smib, ws[i], v, v / cyc);
	}
	return 0;
}
