/* sem_pc.c - `sem_pc [N]`: bounded-buffer producer/consumer with POSIX
 * semaphores (empty/full counting semaphores plus a mutex), 2 producers and
 * 2 consumers, a buffer of 8 slots, N items per producer (default 1000).
 * Prints the number of items and their sum, which do not depend on the
 * interleaving. Exercises sem_wait/sem_post (futex), clone, join. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define BUFN 8
#define NPROD 2
#define NCONS 2

static long buf[BUFN];
static int head, tail;
static sem_t empty_slots, full_slots;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long per_producer = 1000;
static long consumed_sum[NCONS], consumed_n[NCONS];

static void *producer(void *arg)
{
	long id = (long)arg;
	for (long i = 1; i <= per_producer; i++) {
		sem_wait(&empty_slots);
		pthread_mutex_lock(&mutex);
		buf[tail] = i * (id + 1);
		tail = (tail + 1) % BUFN;
		pthread_mutex_unlock(&mutex);
		sem_post(&full_slots);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long id = (long)arg;
	long total = per_producer * NPROD / NCONS;
	for (long i = 0; i < total; i++) {
		sem_wait(&full_slots);
		pthread_mutex_lock(&mutex);
		long v = buf[head];
		head = (head + 1) % BUFN;
		pthread_mutex_unlock(&mutex);
		sem_post(&empty_slots);
		consumed_sum[id] += v;
		consumed_n[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p[NPROD], c[NCONS];
	if (argc > 1)
		per_producer = atol(argv[1]);
	if (per_producer < 0)
		per_producer = 0;
	per_producer -= per_producer % 2; /* consumers split the items evenly */
	sem_init(&empty_slots, 0, BUFN);
	sem_init(&full_slots, 0, 0);
	for (long i = 0; i < NCONS; i++)
		pthread_create(&c[i], NULL, consumer, (void *)i);
	for (long i = 0; i < NPROD; i++)
		pthread_create(&p[i], NULL, producer, (void *)i);
	for (int i = 0; i < NPROD; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < NCONS; i++)
		pthread_join(c[i], NULL);
	long n = 0, sum = 0;
	for (int i = 0; i < NCONS; i++) {
		n += consumed_n[i];
		sum += consumed_sum[i];
	}
	long expect = 0;
	for (long id = 0; id < NPROD; id++)
		expect += (id + 1) * per_producer * (per_producer + 1) / 2;
	printf("items %ld, sum %ld, expected %ld\n", n, sum, expect);
	sem_destroy(&empty_slots);
	sem_destroy(&full_slots);
	return sum == expect ? 0 : 1;
}
