/* par_serial.c - a serial phase while the other threads wait, then a
 * balanced parallel phase (the HPCToolkit oracles H1 and H9, for `emuprof
 * parallel`): main creates 3 workers that wait at a barrier, sleeps 1 ms so
 * that they are all blocked, runs serial() alone, then reaches the barrier,
 * and the 4 threads run balanced() on equal shares. Prints the sums. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define NT 4
#define N 200000

static pthread_barrier_t go;
static long sums[NT];

__attribute__((noinline)) long serial(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (i >> 3);
	return s;
}

__attribute__((noinline)) long balanced(long id, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i * (id + 1)) ^ (i >> 2);
	return s;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&go);
	sums[id] = balanced(id, N);
	return NULL;
}

int main(void)
{
	pthread_t t[NT];
	pthread_barrier_init(&go, NULL, NT);
	for (long i = 1; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	struct timespec ms = {0, 1000000};
	nanosleep(&ms, NULL);
	long s = serial(2 * N);
	pthread_barrier_wait(&go);
	sums[0] = balanced(0, N);
	for (long i = 1; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("serial %ld\n", s);
	for (int i = 0; i < NT; i++)
		printf("balanced %d %ld\n", i, sums[i]);
	return 0;
}
