/* coz_fig1.c - the Coz paper's Figure 1 program, in C with scaled-down loop
 * counts: two threads run a() and b(), loops of volatile increments of
 * different lengths (2,000,000 and 1,800,000), and main joins both.
 * Optimizing a() alone barely helps because b() becomes the critical path;
 * a causal profile shows it. Prints the final counters. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

volatile size_t x, y;

__attribute__((noinline)) void a(void)
{
	for (x = 0; x < 2000000; x++) {
	}
}

__attribute__((noinline)) void b(void)
{
	for (y = 0; y < 1800000; y++) {
	}
}

static void *run_a(void *arg)
{
	(void)arg;
	a();
	return NULL;
}

static void *run_b(void *arg)
{
	(void)arg;
	b();
	return NULL;
}

int main(void)
{
	pthread_t ta, tb;
	pthread_create(&ta, NULL, run_a, NULL);
	pthread_create(&tb, NULL, run_b, NULL);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("x=%zu y=%zu\n", (size_t)x, (size_t)y);
	return 0;
}
