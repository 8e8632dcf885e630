/* causal_latency.c - a queue for Coz's latency progress points (Little's
 * law): a producer makes items (produce(), short) and puts them into a
 * bounded queue of K; a consumer takes them out and serves them (serve(),
 * long: the bottleneck). Each item's latency runs from item_begin(), when
 * the producer has a free slot and enqueues it, to item_end(), when the
 * consumer has served it; item_begin/item_end also hold Coz's COZ_BEGIN and
 * COZ_END, and the consumer marks COZ_PROGRESS_NAMED("served"). Argument:
 * the number of items (default 500). Prints a checksum. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "coz.h"

#define K 4

static int queue[K], head, count;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t notempty = PTHREAD_COND_INITIALIZER, notfull = PTHREAD_COND_INITIALIZER;
static int items;
volatile unsigned long made, served;

__attribute__((noinline)) void item_begin(int i)
{
	COZ_BEGIN("item");
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) void item_end(int i)
{
	COZ_END("item");
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) void produce(int i)
{
	for (int j = 0; j < 300; j++) made += (unsigned)(i ^ j); /* one line: causal attributes blocks to lines */
}

__attribute__((noinline)) void serve(int i)
{
	for (int j = 0; j < 2000; j++) served += (unsigned)(i * j);
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < items; i++) {
		produce(i);
		pthread_mutex_lock(&mu);
		while (count == K)
			pthread_cond_wait(&notfull, &mu);
		item_begin(i);
		queue[(head + count) % K] = i;
		count++;
		pthread_cond_signal(&notempty);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int n = 0; n < items; n++) {
		pthread_mutex_lock(&mu);
		while (count == 0)
			pthread_cond_wait(&notempty, &mu);
		int i = queue[head];
		head = (head + 1) % K;
		count--;
		pthread_cond_signal(&notfull);
		pthread_mutex_unlock(&mu);
		serve(i);
		item_end(i);
		COZ_PROGRESS_NAMED("served");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	items = argc > 1 ? atoi(argv[1]) : 500;
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("items=%d made=%lu served=%lu\n", items, (unsigned long)made, (unsigned long)served);
	return 0;
}
