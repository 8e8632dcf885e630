/* par_lock.c - a lock held for a long time while other threads wait for it
 * (the HPCToolkit oracle H4, for `emuprof parallel`'s lock-wait blame): main
 * locks a mutex, creates 3 threads that each lock it (they block), runs
 * hold() with the lock held, then unlocks; each waiter in turn takes the
 * lock, adds to a counter and releases it. Prints the results. */
#include <pthread.h>
#include <stdio.h>

#define NT 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

__attribute__((noinline)) long hold(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (i >> 5);
	return s;
}

static void *waiter(void *arg)
{
	pthread_mutex_lock(&m);
	counter += (long)arg;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t[NT];
	pthread_mutex_lock(&m);
	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, waiter, (void *)(i + 1));
	long s = hold(1000000);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("hold %ld, counter %ld\n", s, counter);
	return 0;
}
