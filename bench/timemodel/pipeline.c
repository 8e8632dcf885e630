// A three-stage pipeline: a reader makes items, a transform stage (the
// slow one) works on them, a writer sums them; queues are mutex+condvar
// rings. OPT runs the transform stage on two threads.
#include <pthread.h>
#include <stdio.h>
#define ITEMS 20000
#define WORK 800
#define Q 64
struct q { long v[Q]; int h, t, n; pthread_mutex_t m; pthread_cond_t ne, nf; };
static struct q q1 = {.m = PTHREAD_MUTEX_INITIALIZER, .ne = PTHREAD_COND_INITIALIZER, .nf = PTHREAD_COND_INITIALIZER};
static struct q q2 = {.m = PTHREAD_MUTEX_INITIALIZER, .ne = PTHREAD_COND_INITIALIZER, .nf = PTHREAD_COND_INITIALIZER};
static void put(struct q *q, long v) {
	pthread_mutex_lock(&q->m);
	while (q->n == Q) pthread_cond_wait(&q->nf, &q->m);
	q->v[q->t] = v, q->t = (q->t + 1) % Q, q->n++;
	pthread_cond_signal(&q->ne);
	pthread_mutex_unlock(&q->m);
}
static long get(struct q *q) {
	pthread_mutex_lock(&q->m);
	while (q->n == 0) pthread_cond_wait(&q->ne, &q->m);
	long v = q->v[q->h];
	q->h = (q->h + 1) % Q, q->n--;
	pthread_cond_signal(&q->nf);
	pthread_mutex_unlock(&q->m);
	return v;
}
#ifdef OPT
#define WORKERS 2
#else
#define WORKERS 1
#endif
static void *transform(void *a) {
	for (int i = 0; i < ITEMS / WORKERS; i++) {
		long v = get(&q1);
		for (int k = 0; k < WORK; k++) v = v * 6364136223846793005L + 1442695040888963407L;
		put(&q2, v & 0xffff);
	}
	return 0;
}
static void *reader(void *a) {
	for (long i = 0; i < ITEMS; i++) put(&q1, i);
	return 0;
}
int main(void) {
	pthread_t r, w[WORKERS];
	pthread_create(&r, 0, reader, 0);
	for (int i = 0; i < WORKERS; i++) pthread_create(&w[i], 0, transform, 0);
	long s = 0;
	for (int i = 0; i < ITEMS; i++) s += get(&q2);
	pthread_join(r, 0);
	for (int i = 0; i < WORKERS; i++) pthread_join(w[i], 0);
	printf("%ld\n", s);
	return 0;
}
