/* shardwork.c - `prog input`: the Slurm recipes of docs/analyses/ run it
 * (TestSlurmShards). input holds the number of rounds; each round runs
 * a() and b(), loops of different lengths, in two threads (Coz's Figure 1),
 * joins them and calls round_done(), the progress point; the branches of
 * a() give paths to count. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile size_t x, y, odd;

__attribute__((noipa)) void a(void)
{
	for (x = 0; x < 4000; x++) {
		if (x % 3 == 0)
			odd++;
	}
}

__attribute__((noipa)) void b(void)
{
	for (y = 0; y < 3000; y++) {
	}
}

__attribute__((noipa)) void round_done(void)
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
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	int rounds = 0;
	if (f == NULL || fscanf(f, "%d", &rounds) != 1) {
		fprintf(stderr, "usage: prog FILE (the number of rounds)\n");
		return 2;
	}
	fclose(f);
	for (int i = 0; i < rounds; i++) {
		pthread_t ta, tb;
		pthread_create(&ta, NULL, run_a, NULL);
		pthread_create(&tb, NULL, run_b, NULL);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		round_done();
	}
	printf("x=%zu y=%zu odd=%zu\n", (size_t)x, (size_t)y, (size_t)odd);
	return 0;
}
