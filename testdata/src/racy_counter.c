/* racy_counter.c - `racy_counter [N [M]]`: N threads (default 4) each do M
 * (default 10000) UNPROTECTED read-modify-write increments of a shared
 * counter; the load and the store are separated by a call (so a preemption
 * can fall between them), and every 100 iterations the thread calls
 * sched_yield(). Prints the final value, which depends on the interleaving
 * (lost updates): under emuprof it is the same for the same schedule and
 * differs between schedules. NOT deterministic natively. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long counter;
static long iters = 10000;

__attribute__((noinline)) static long bump(long v)
{
	__asm__ volatile("" : "+r"(v)); /* opaque: keeps the call and the gap */
	return v + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		long v = counter;      /* read */
		counter = bump(v);     /* modify + write, after a block boundary */
		if (i % 100 == 99)
			sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = 4;
	if (argc > 1)
		n = atoi(argv[1]);
	if (argc > 2)
		iters = atol(argv[2]);
	if (n < 1 || n > 256)
		n = 4;
	pthread_t *t = calloc((size_t)n, sizeof *t);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %d, iterations %ld, expected %ld, counter %ld\n", n, iters,
	       (long)n * iters, (long)counter);
	free(t);
	return 0;
}
