/* threadpool.c - a fixed pool of 4 worker threads pulling tasks from a
 * queue protected by a mutex and a condition variable; 100 tasks, each a
 * small computation; the main thread enqueues them, waits until all are
 * done (second condvar), then shuts the pool down (broadcast) and joins.
 * Prints the sum of the results and the number of tasks run.
 * Exercises futex wait/wake, pthread_cond_broadcast, join. */
#include <pthread.h>
#include <stdio.h>

#define NWORKERS 4
#define NTASKS 100

struct task {
	int arg;
	long result;
};

static struct task tasks[NTASKS];
static int queue[NTASKS];
static int qhead, qtail, done_count, shutting_down;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t has_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int ran[NWORKERS];

__attribute__((noinline)) static long run_task(int arg)
{
	/* sum of (i*arg) mod 1009 for i < 2000 + 50*arg */
	long s = 0;
	for (int i = 0; i < 2000 + 50 * arg; i++)
		s += (long)i * arg % 1009;
	return s;
}

static void *worker(void *p)
{
	int id = (int)(long)p;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (qhead == qtail && !shutting_down)
			pthread_cond_wait(&has_work, &mu);
		if (qhead == qtail && shutting_down) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		int ti = queue[qhead++];
		pthread_mutex_unlock(&mu);

		long r = run_task(tasks[ti].arg);

		pthread_mutex_lock(&mu);
		tasks[ti].result = r;
		ran[id]++;
		if (++done_count == NTASKS)
			pthread_cond_signal(&all_done);
		pthread_mutex_unlock(&mu);
	}
}

int main(void)
{
	pthread_t t[NWORKERS];
	for (long i = 0; i < NWORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTASKS; i++) {
		tasks[i].arg = i + 1;
		pthread_mutex_lock(&mu);
		queue[qtail++] = i;
		pthread_cond_signal(&has_work);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	while (done_count < NTASKS)
		pthread_cond_wait(&all_done, &mu);
	shutting_down = 1;
	pthread_cond_broadcast(&has_work);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);

	long sum = 0;
	int nran = 0;
	for (int i = 0; i < NTASKS; i++)
		sum += tasks[i].result;
	for (int i = 0; i < NWORKERS; i++)
		nran += ran[i];
	printf("tasks %d, ran %d, sum %ld\n", NTASKS, nran, sum);
	return nran == NTASKS ? 0 : 1;
}
