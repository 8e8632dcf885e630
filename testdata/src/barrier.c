/* barrier.c - 4 threads, 5 phases separated by pthread_barrier_wait. In each
 * phase every thread computes a value from its neighbours' values of the
 * previous phase (double buffered) and, after the barrier, checks the whole
 * row against a sequential recomputation. Prints each phase's row and
 * whether all checks passed. Exercises pthread barriers (futex). */
#include <pthread.h>
#include <stdio.h>

#define NT 4
#define PHASES 5

static pthread_barrier_t bar;
static long row[PHASES + 1][NT];
static int bad[NT];

static long step(long left, long self, long right, int phase)
{
	long v = self;
	/* some work so that threads do not finish at the same time */
	for (int k = 0; k < 1000 * (phase + 1); k++)
		v = (v * 31 + left + right + k) % 1000003;
	return v;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int ph = 0; ph < PHASES; ph++) {
		const long *prev = row[ph];
		row[ph + 1][id] = step(prev[(id + NT - 1) % NT], prev[id], prev[(id + 1) % NT], ph);
		pthread_barrier_wait(&bar);
		/* check the row every thread produced in this phase */
		for (int j = 0; j < NT; j++) {
			long want = step(prev[(j + NT - 1) % NT], prev[j], prev[(j + 1) % NT], ph);
			if (row[ph + 1][j] != want)
				bad[id]++;
		}
		/* nobody may start the next phase before everyone checked */
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NT];
	for (int i = 0; i < NT; i++)
		row[0][i] = i + 1;
	pthread_barrier_init(&bar, NULL, NT);
	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	int nbad = 0;
	for (int ph = 1; ph <= PHASES; ph++) {
		printf("phase %d:", ph);
		for (int i = 0; i < NT; i++)
			printf(" %ld", row[ph][i]);
		printf("\n");
	}
	for (int i = 0; i < NT; i++)
		nbad += bad[i];
	printf("checks %s\n", nbad ? "FAILED" : "ok");
	return nbad ? 1 : 0;
}
