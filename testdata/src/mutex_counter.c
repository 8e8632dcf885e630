/* mutex_counter.c - `mutex_counter [N [M]]`: N threads (default 4) each
 * increment a mutex-protected counter M times (default 10000); prints the
 * total, which is always N*M. Exercises clone, futex wait/wake under
 * contention, join. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long iters = 10000;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
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
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %d, iterations %ld, total %ld\n", n, iters, counter);
	free(t);
	return counter == (long)n * iters ? 0 : 1;
}
