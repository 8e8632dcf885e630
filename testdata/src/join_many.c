/* join_many.c - creates 200 short threads in batches of 8 (create 8, join
 * 8, repeat); each returns a value computed from its index through the
 * pthread exit value. Prints the sum of the return values.
 * Exercises repeated clone/exit/join, thread stack reuse, CLONE_CHILD_CLEARTID
 * futex wakeups. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define TOTAL 200
#define BATCH 8

static void *work(void *arg)
{
	long i = (long)arg;
	long v = 0;
	for (long k = 0; k <= i; k++)
		v += k * k % 97;
	return (void *)v;
}

int main(void)
{
	long sum = 0;
	int created = 0;
	for (long base = 0; base < TOTAL; base += BATCH) {
		pthread_t t[BATCH];
		int n = 0;
		for (long i = base; i < base + BATCH && i < TOTAL; i++, n++) {
			if (pthread_create(&t[n], NULL, work, (void *)i) != 0) {
				fprintf(stderr, "pthread_create failed at %ld\n", i);
				return 1;
			}
			created++;
		}
		for (int k = 0; k < n; k++) {
			void *r;
			pthread_join(t[k], &r);
			sum += (long)r;
		}
	}
	printf("threads %d, sum %ld\n", created, sum);
	return 0;
}
