// Measures, natively, the time model's costs between threads
// (timemodel/zen4.table's coherence and kernel figures): a cache line
// ping-ponging between CPU 0 and CPU 1, false sharing (two threads writing
// adjacent counters) against padded counters, a futex hand-off and a
// wake-up's latency across CPUs and on one CPU, a forced context switch
// (two threads yielding on one CPU), and whether the two vCPUs share a
// core (SMT: independent adds on both at once run at half speed each).
// Each figure is the best of 7, and the lines that measure work say the
// threads' CPU time (CLOCK_THREAD_CPUTIME_ID) beside the wall time, so a
// loaded host shows as wall > CPU. Usage: bin/calibthreads (it pins its
// threads itself; needs CPUs 0 and 1). Run it as `chrt -f 10 bin/calibthreads`
// (root): at real-time priority the host's other load cannot preempt the
// threads, which otherwise overlap too rarely for false sharing to show.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double clk(clockid_t c) {
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}
static double now(void) { return clk(CLOCK_MONOTONIC); }
static double cpu(void) { return clk(CLOCK_THREAD_CPUTIME_ID); }

static void pin(int c) {
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(c, &s);
	if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) perror("pin"), exit(1);
}

// A two-thread experiment: body(0) on CPU a (the caller), body(1) on CPU b;
// returns the wall ns of body(0); body(1)'s CPU ns in other_cpu.
typedef void (*body_t)(int);
static body_t body;
static int cpu_b;
static double other_cpu;
static volatile int go;
static void *second(void *a) {
	pin(cpu_b);
	while (!go) sched_yield(); // on one CPU at real-time priority, spinning would starve the caller
	double c = cpu();
	body(1);
	other_cpu = cpu() - c;
	return 0;
}
static double pair(body_t f, int a, int b, double *self_cpu) {
	body = f, cpu_b = b, go = 0;
	pin(a);
	pthread_t t;
	pthread_create(&t, 0, second, 0);
	usleep(2000); // let the second thread reach its spin (a != b) or its pin
	double w = now(), c = cpu();
	go = 1;
	if (a == b) sched_yield();
	f(0);
	w = now() - w, c = cpu() - c;
	pthread_join(t, 0);
	if (self_cpu) *self_cpu = c;
	return w;
}

// Line ping-pong: the two threads take turns writing one int; each turn
// moves the line once.
#define TURNS 20000
static volatile int turn __attribute__((aligned(64)));
static void pingpong_line(int me) { // turn is reset by the caller
	for (int i = me; i < 2 * TURNS; i += 2) {
		while (turn != i) ;
		turn = i + 1;
	}
}

// False sharing: each thread increments its own counter ITER times, the
// counters adjacent or a line apart (falseshare.c's loop).
#define ITER 20000000L
static struct { volatile long a; volatile long b; char pad[48]; volatile long c; } ctr __attribute__((aligned(64)));
static int padded;
static void count(int me) {
	volatile long *p = me == 0 ? &ctr.a : padded ? &ctr.c : &ctr.b;
	for (long k = 0; k < ITER; k++) (*p)++;
}

// Futex hand-off: the two threads wake each other in turn (calib.c's
// pingpong); latency: the waker stamps the time before its wake, the
// woken thread reads it after its wait returns.
#define ROUNDS 5000
static int fa, fb;
static volatile double stamp;
static double lat_sum;
static void fwait(int *f, int v) { while (__atomic_load_n(f, __ATOMIC_ACQUIRE) == v) syscall(SYS_futex, f, FUTEX_WAIT_PRIVATE, v, 0, 0, 0); }
static void fwake(int *f) { stamp = now(); __atomic_add_fetch(f, 1, __ATOMIC_RELEASE); syscall(SYS_futex, f, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0); }
static void handoff(int me) {
	double sum = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (me == 0) {
			fwake(&fa), fwait(&fb, i);
		} else {
			fwait(&fa, i);
			sum += now() - stamp;
			fwake(&fb);
		}
	}
	if (me) lat_sum = sum;
}

// Forced switch: two threads on one CPU yield to each other.
#define YIELDS 50000
static void yields(int me) {
	for (int i = 0; i < YIELDS; i++) sched_yield();
}

// SMT: independent adds (4 chains), alone and on both CPUs at once.
#define ADDS 50000000L
static void adds(int me) {
	long a = 0, b = 0, c = 0, d = 0;
	for (long i = 0; i < ADDS; i++)
		__asm__ volatile("add $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\tadd $1, %3" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
}

// Time slice: two CPU-bound threads on one CPU (normal priority) read
// the clock in a loop; a gap of more than 20 µs is a switch away, and the
// time between gaps is what the thread ran of its slice. Median of them.
#define RUNS 400
static double runs[2][RUNS];
static int nruns[2];
static void slices(int me) {
	struct sched_param sp = {0};
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp); // under chrt: time-sliced again
	double end = now() + 400e6, last = now(), since = last;
	nruns[me] = 0;
	while (nruns[me] < RUNS) {
		double t = now();
		if (t > end) break;
		if (t - last > 20e3) runs[me][nruns[me]++] = last - since, since = t;
		last = t;
	}
}
static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }

// Sharing shapes (`calibthreads share`): each thread runs SHITER iterations
// of one loop on its own 8-byte word, the two words in one line
// (shared) or a line apart (padded); the per-iteration cost of each
// shape says what a contended line costs an access of that kind.
#define SHITER 4000000L
static struct { volatile long w[2]; char pad[48]; volatile long w2; } sh __attribute__((aligned(64)));
static int shape;
static const char *shapes[] = {"load+add+store (falseshare)", "load+add+store+load (coz_fig1)", "store only", "add [mem],1",
			       "lock add [mem],1", "load only (other stores)", "lock add, same word"};
static void sharing(int me) {
	volatile long *p = me == 0 || shape == 6 ? &sh.w[0] : padded ? &sh.w2 : &sh.w[1];
	long n = SHITER, v = 0;
	switch (shape) {
	case 0: __asm__ volatile("1: mov (%1),%%rax\n add $1,%%rax\n mov %%rax,(%1)\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "rax", "memory"); break;
	case 1: __asm__ volatile("1: mov (%1),%%rax\n add $1,%%rax\n mov %%rax,(%1)\n mov (%1),%%rax\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "rax", "memory"); break;
	case 2: __asm__ volatile("1: mov %0,(%1)\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "memory"); break;
	case 3: __asm__ volatile("1: addq $1,(%1)\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "memory"); break;
	case 4: case 6: __asm__ volatile("1: lock addq $1,(%1)\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "memory"); break;
	case 5:
		if (me) __asm__ volatile("1: mov %0,(%1)\n sub $1,%0\n jne 1b" : "+r"(n) : "r"(p) : "memory");
		else __asm__ volatile("1: add (%2),%1\n sub $1,%0\n jne 1b" : "+r"(n), "+r"(v) : "r"(p) : "memory");
		break;
	}
}
// Contended mutex: both threads lock, update a table line of their own
// (locksplit.c's critical section), unlock, MXITER times.
#define MXITER 400000L
static pthread_mutex_t mx[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static long mtab[2][512];
static int split;
static void mutexes(int me) {
	pthread_mutex_t *m = split ? &mx[me] : &mx[0];
	for (long k = 0; k < MXITER; k++) {
		pthread_mutex_lock(m);
		mtab[me][(k * 7) & 511] += k;
		pthread_mutex_unlock(m);
	}
}

#define BEST(expr) ({ double _b = 1e30; for (int _i = 0; _i < 7; _i++) { double _v = (expr); if (_v < _b) _b = _v; } _b; })

static void share_main(void) {
	double cs;
	for (shape = 0; shape < 7; shape++)
		for (padded = 0; padded < 2; padded++) {
			if (shape == 6 && padded) continue;
			double bw = 1e30, bc = 0, bo = 0;
			for (int i = 0; i < 7; i++) {
				double w = pair(sharing, 0, 1, &cs);
				if (w < bw) bw = w, bc = cs, bo = other_cpu;
			}
			double alone = BEST(({ pin(0); double t = cpu(); sharing(0); cpu() - t; }));
			printf("%s, %s, per iteration\t%.2f ns wall\t%.2f / %.2f ns CPU\talone %.2f ns\n", shapes[shape], shape == 6 ? "one word" : padded ? "padded" : "one line",
			       bw / SHITER, bc / SHITER, bo / SHITER, alone / SHITER);
		}
	for (split = 0; split < 2; split++) {
		double bw = 1e30, bc = 0, bo = 0;
		for (int i = 0; i < 7; i++) {
			double w = pair(mutexes, 0, 1, &cs);
			if (w < bw) bw = w, bc = cs, bo = other_cpu;
		}
		double alone = BEST(({ pin(0); double t = cpu(); mutexes(0); cpu() - t; }));
		printf("mutex lock+update+unlock, %s, per iteration\t%.2f ns wall\t%.2f / %.2f ns CPU\talone %.2f ns\n", split ? "a mutex each" : "one mutex",
		       bw / MXITER, bc / MXITER, bo / MXITER, alone / MXITER);
	}
}

int main(int argc, char **argv) {
	setvbuf(stdout, 0, _IOLBF, 0);
	if (argc > 1 && argv[1][0] == 's') { // `calibthreads share`: the sharing shapes only
		share_main();
		return 0;
	}
	double c0;
	double pp = BEST((turn = 0, pair(pingpong_line, 0, 1, 0) / (2.0 * TURNS)));
	printf("line ping-pong CPU0<->CPU1 (one transfer)\t%.1f ns\n", pp);
	double w, cs, bw = 1e30, bc = 0, bo = 0;
	for (int i = 0; i < 7; i++) {
		padded = 0, w = pair(count, 0, 1, &cs);
		if (w < bw) bw = w, bc = cs, bo = other_cpu;
	}
	printf("false sharing: adjacent counters, per increment\t%.2f ns wall\t%.2f / %.2f ns CPU\n", bw / ITER, bc / ITER, bo / ITER);
	bw = 1e30;
	for (int i = 0; i < 7; i++) {
		padded = 1, w = pair(count, 0, 1, &cs);
		if (w < bw) bw = w, bc = cs, bo = other_cpu;
	}
	printf("false sharing: padded counters, per increment\t%.2f ns wall\t%.2f / %.2f ns CPU\n", bw / ITER, bc / ITER, bo / ITER);
	double lat[2], ho[2];
	for (int same = 0; same < 2; same++) {
		double bh = 1e30, bl = 0;
		for (int i = 0; i < 7; i++) {
			fa = fb = 0;
			double h = pair(handoff, 0, same ? 0 : 1, 0) / (2.0 * ROUNDS);
			if (h < bh) bh = h, bl = lat_sum / ROUNDS;
		}
		ho[same] = bh, lat[same] = bl;
	}
	printf("futex hand-off (wake + switch + wait), CPU0<->CPU1\t%.0f ns\twake-to-run %.0f ns\n", ho[0], lat[0]);
	printf("futex hand-off (wake + switch + wait), both on CPU0\t%.0f ns\twake-to-run %.0f ns\n", ho[1], lat[1]);
	double y = BEST(pair(yields, 0, 0, 0) / (2.0 * YIELDS));
	printf("forced switch (sched_yield between two threads on CPU0)\t%.0f ns\n", y);
	pair(slices, 0, 0, 0);
	int n = nruns[0] > 1 ? nruns[0] - 1 : 0; // the first run began before the other thread
	qsort(runs[0] + 1, n, sizeof(double), cmpd);
	double sum = 0;
	for (int i = 1; i <= n; i++) sum += runs[0][i];
	if (n > 3) printf("time slice (two busy threads on CPU0, runs between gaps > 20 us, of %d)\tquartiles %.0f %.0f %.0f us\tmean %.0f us\n", n, runs[0][1 + n / 4] / 1e3, runs[0][1 + n / 2] / 1e3, runs[0][1 + 3 * n / 4] / 1e3, sum / n / 1e3);
	double alone = BEST(({ pin(0); double t = cpu(); adds(0); cpu() - t; })) / ADDS;
	double both = BEST((pair(adds, 0, 1, &c0), c0)) / ADDS;
	printf("SMT check: 4 independent adds, CPU ns per iteration\talone %.3f\tboth CPUs busy %.3f\t(x%.2f: ~1 separate cores, ~2 SMT siblings)\n", alone, both, both / alone);
	return 0;
}
