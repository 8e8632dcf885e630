/* rwlock.c - pthread_rwlock with 4 readers and 2 writers. Writers update a
 * record {a, b, c} keeping the invariant b == 2*a and c == a + b; readers
 * check the invariant under the read lock and count violations (always 0).
 * Prints the final record and the check results, which do not depend on the
 * interleaving. Exercises rwlock futex paths. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define NREADERS 4
#define NWRITERS 2
#define WRITES 500
#define READS 2000

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	long a, b, c;
} rec;
static long violations[NREADERS];
static long reads_done[NREADERS];

static void *writer(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < WRITES; i++) {
		pthread_rwlock_wrlock(&rw);
		rec.a += id + 1;
		if (i % 50 == 0)
			sched_yield(); /* hold the lock across a reschedule */
		rec.b = 2 * rec.a;
		rec.c = rec.a + rec.b;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < READS; i++) {
		pthread_rwlock_rdlock(&rw);
		long a = rec.a, b = rec.b, c = rec.c;
		if (b != 2 * a || c != a + b)
			violations[id]++;
		reads_done[id]++;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

int main(void)
{
	pthread_t r[NREADERS], w[NWRITERS];
	for (long i = 0; i < NREADERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)i);
	for (long i = 0; i < NWRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)i);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);
	long v = 0, nr = 0;
	for (int i = 0; i < NREADERS; i++) {
		v += violations[i];
		nr += reads_done[i];
	}
	printf("final a=%ld b=%ld c=%ld\n", rec.a, rec.b, rec.c);
	printf("reads %ld, violations %ld\n", nr, v);
	return v == 0 ? 0 : 1;
}
