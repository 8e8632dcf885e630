// Two threads count into their own counters: adjacent (one cache line), or
// OPT padded to a line each.
#include <pthread.h>
#include <stdio.h>
#define ITER 20000000
#ifdef OPT
static struct { volatile long n; char pad[56]; } c[2] __attribute__((aligned(64)));
#else
static struct { volatile long n; } c[2] __attribute__((aligned(64)));
#endif
static void *work(void *a) {
	long i = (long)a;
	for (long k = 0; k < ITER; k++) c[i].n++;
	return 0;
}
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, work, (void *)1);
	work(0);
	pthread_join(t, 0);
	printf("%ld\n", c[0].n + c[1].n);
	return 0;
}
