/* condvar_pc.c - `condvar_pc [N]`: producer/consumer through a single slot
 * protected by a mutex and two condition variables; the producer writes the
 * values 1..N (default 1000) into the slot one at a time and the consumer
 * sums them; prints the sum (N*(N+1)/2).
 * This is the aprof-trms paper's Fig. 2 pattern: the routine `consumer`
 * (via `consume_data`) repeatedly reads the one location `slot` that the
 * producer (via `produce_data`) rewrote in between, so RMS(consumer) is
 * small while TRMS(consumer) grows with N. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static int full;         /* 1 when slot holds an unconsumed value */
static long slot;        /* the shared location x of the paper */
static long nitems = 1000;
static long result;

__attribute__((noinline)) static void produce_data(long v)
{
	slot = v;
}

__attribute__((noinline)) static long consume_data(void)
{
	return slot;
}

__attribute__((noinline)) void *producer(void *arg)
{
	(void)arg;
	for (long i = 1; i <= nitems; i++) {
		pthread_mutex_lock(&mutex);
		while (full)
			pthread_cond_wait(&not_full, &mutex);
		produce_data(i);
		full = 1;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mutex);
	}
	return NULL;
}

__attribute__((noinline)) void *consumer(void *arg)
{
	long sum = 0;
	(void)arg;
	for (long i = 0; i < nitems; i++) {
		pthread_mutex_lock(&mutex);
		while (!full)
			pthread_cond_wait(&not_empty, &mutex);
		sum += consume_data();
		full = 0;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mutex);
	}
	result = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p, c;
	if (argc > 1)
		nitems = atol(argv[1]);
	if (nitems < 0)
		nitems = 0;
	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("items %ld, sum %ld\n", nitems, result);
	return result == nitems * (nitems + 1) / 2 ? 0 : 1;
}
