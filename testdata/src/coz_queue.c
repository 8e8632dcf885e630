/* coz_queue.c - the shape of Coz's producer_consumer benchmark: five
 * producers and three consumers share a bounded queue (10 items) under one
 * mutex and two condition variables; each consumed item calls consumed(),
 * the progress point. Argument: the number of items (default 20000).
 * Threads block and wake all the time, so the emulator runs each for short
 * bursts: an experiment much shorter than the scheduler's quantum measures
 * one thread's burst, and its line may run, in virtual time, only outside
 * it. Prints the counts. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { QueueSize = 10, Producers = 5, Consumers = 3 };

static int items = 20000;
static int queue[QueueSize], head, len;
static int produced, consumed_n;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) void consumed(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *producer(void *arg)
{
	(void)arg;
	for (int n = 0; n < items / Producers; n++) {
		pthread_mutex_lock(&lock);
		while (len == QueueSize)
			pthread_cond_wait(&not_full, &lock);
		queue[(head + len++) % QueueSize] = n;
		produced++;
		pthread_mutex_unlock(&lock);
		pthread_cond_signal(&not_empty);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		while (len == 0 && consumed_n < items)
			pthread_cond_wait(&not_empty, &lock);
		if (len == 0) {
			pthread_mutex_unlock(&lock);
			pthread_cond_broadcast(&not_empty);
			return (void *)sum;
		}
		sum += queue[head];
		head = (head + 1) % QueueSize;
		len--;
		consumed_n++;
		pthread_mutex_unlock(&lock);
		pthread_cond_signal(&not_full);
		consumed();
	}
}

int main(int argc, char **argv)
{
	pthread_t p[Producers], c[Consumers];
	long total = 0;
	if (argc > 1)
		items = atoi(argv[1]);
	for (int i = 0; i < Producers; i++)
		pthread_create(&p[i], NULL, producer, NULL);
	for (int i = 0; i < Consumers; i++)
		pthread_create(&c[i], NULL, consumer, NULL);
	for (int i = 0; i < Producers; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < Consumers; i++) {
		void *s;
		pthread_join(c[i], &s);
		total += (long)s;
	}
	printf("produced %d consumed %d sum %ld\n", produced, consumed_n, total);
	return 0;
}
