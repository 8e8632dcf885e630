/* causal_stage.c - `causal_stage [N]`: a three-stage pipeline (bench/
 * timemodel/pipeline.c): a reader makes N items (default 4000), a transform
 * stage works on each (the slow stage, line 37), a writer sums them; the
 * queues are mutex+condvar rings. Three threads that all have work: on two
 * virtual CPUs they queue for a CPU, so a virtual speedup's pauses must keep
 * the CPU of the thread that pauses (sched.Pause), or they vanish into the
 * waits. Prints the sum. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define WORK 800
#define Q 64
struct q { long v[Q]; int h, t, n; pthread_mutex_t m; pthread_cond_t ne, nf; };
static struct q q1 = {.m = PTHREAD_MUTEX_INITIALIZER, .ne = PTHREAD_COND_INITIALIZER, .nf = PTHREAD_COND_INITIALIZER};
static struct q q2 = {.m = PTHREAD_MUTEX_INITIALIZER, .ne = PTHREAD_COND_INITIALIZER, .nf = PTHREAD_COND_INITIALIZER};
static long items = 4000;
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
static void *transform(void *a) {
	(void)a;
	for (long i = 0; i < items; i++) {
		long v = get(&q1);
		for (int k = 0; k < WORK; k++) v = v * 6364136223846793005L + 1442695040888963407L;
		put(&q2, v & 0xffff);
	}
	return 0;
}
static void *reader(void *a) {
	(void)a;
	for (long i = 0; i < items; i++) put(&q1, i);
	return 0;
}
int main(int argc, char **argv) {
	if (argc > 1) items = atol(argv[1]);
	pthread_t r, w;
	pthread_create(&r, 0, reader, 0);
	pthread_create(&w, 0, transform, 0);
	long s = 0;
	for (long i = 0; i < items; i++) s += get(&q2);
	pthread_join(r, 0);
	pthread_join(w, 0);
	printf("%ld\n", s);
	return 0;
}
