// Two threads update two independent tables under one mutex, or OPT under
// a mutex each.
#include <pthread.h>
#include <stdio.h>
#define ITER 2000000
static pthread_mutex_t m0 __attribute__((aligned(64))) = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m1 __attribute__((aligned(64))) = PTHREAD_MUTEX_INITIALIZER;
static long tab[2][64 * 8];
static void *work(void *a) {
	long i = (long)a;
#ifdef OPT
	pthread_mutex_t *m = i ? &m1 : &m0;
#else
	pthread_mutex_t *m = &m0;
#endif
	for (long k = 0; k < ITER; k++) {
		pthread_mutex_lock(m);
		tab[i][(k * 7) & 511] += k;
		pthread_mutex_unlock(m);
	}
	return 0;
}
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, work, (void *)1);
	work(0);
	pthread_join(t, 0);
	printf("%ld\n", tab[0][7] + tab[1][7]);
	return 0;
}
