/* coz_rounds.c - the Coz paper's Figure 1 program repeated: each round
 * creates two threads running a() and b(), loops of volatile increments of
 * different lengths (20,000 and 18,000), joins both, then calls round_done(),
 * the progress point. Optimizing a()'s loop helps only until b()'s becomes
 * the longer one (Figure 1); optimizing b()'s loop does not help. Argument:
 * the number of rounds (default 100). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile size_t x, y;

__attribute__((noinline)) void a(void)
{
	for (x = 0; x < 20000; x++) {
	}
}

__attribute__((noinline)) void b(void)
{
	for (y = 0; y < 18000; y++) {
	}
}

__attribute__((noinline)) void round_done(void)
{
	__asm__ volatile("" ::: "memory");
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

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < rounds; i++) {
		pthread_t ta, tb;
		pthread_create(&ta, NULL, run_a, NULL);
		pthread_create(&tb, NULL, run_b, NULL);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		round_done();
	}
	printf("x=%zu y=%zu\n", (size_t)x, (size_t)y);
	return 0;
}
