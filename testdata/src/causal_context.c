/* causal_context.c - one line, hot in one calling context only (Coz issue
 * 78): each round creates two threads, one calling spin() from long_path()
 * with 20,000 iterations, one from short_path() with 18,000, joins both,
 * then calls round_done(), the progress point. Speeding spin()'s loop up
 * when called from long_path() helps until the two threads meet (10 %);
 * from short_path(), it does not help. Argument: the number of rounds
 * (default 100). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile size_t counter[2];

__attribute__((noinline)) void spin(int which, size_t n)
{
	for (counter[which] = 0; counter[which] < n; counter[which]++) {
	}
}

__attribute__((noinline)) void long_path(void)
{
	spin(0, 20000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void short_path(void)
{
	spin(1, 18000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void round_done(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *run_long(void *arg)
{
	(void)arg;
	long_path();
	return NULL;
}

static void *run_short(void *arg)
{
	(void)arg;
	short_path();
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < rounds; i++) {
		pthread_t a, b;
		pthread_create(&a, NULL, run_long, NULL);
		pthread_create(&b, NULL, run_short, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		round_done();
	}
	printf("long=%zu short=%zu\n", (size_t)counter[0], (size_t)counter[1]);
	return 0;
}
