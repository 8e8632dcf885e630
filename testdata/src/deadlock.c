/* deadlock.c - two threads lock two mutexes in opposite order, with a
 * barrier between the first and the second lock so that each holds one
 * mutex while asking for the other: the program ALWAYS deadlocks (main
 * blocks in pthread_join). Used to test deadlock detection and the report
 * of every thread's state and stack (thread_a, thread_b, main).
 * Natively it hangs forever: run it under `timeout`. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

__attribute__((noinline)) void *thread_a(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m1);
	pthread_barrier_wait(&both_hold_one);
	pthread_mutex_lock(&m2); /* blocks forever: thread_b holds m2 */
	pthread_mutex_unlock(&m2);
	pthread_mutex_unlock(&m1);
	return NULL;
}

__attribute__((noinline)) void *thread_b(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m2);
	pthread_barrier_wait(&both_hold_one);
	pthread_mutex_lock(&m1); /* blocks forever: thread_a holds m1 */
	pthread_mutex_unlock(&m1);
	pthread_mutex_unlock(&m2);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	printf("starting threads\n");
	fflush(stdout);
	pthread_barrier_init(&both_hold_one, NULL, 2);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("not reached\n");
	return 0;
}
