/* omp_reduce.c - OpenMP `parallel for reduction(+:sum)` with 4 threads
 * over 1000000 elements (integer arithmetic, so the result does not depend
 * on the reduction order). Prints the sum and the team size.
 * Exercises libgomp: thread team creation (clone), futex-based barriers,
 * sched_getaffinity / sysconf queries. Built only against glibc. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000000

int main(void)
{
	int *a = malloc(N * sizeof *a);
	for (int i = 0; i < N; i++)
		a[i] = (i * 37) % 1001 - 500;
	long long sum = 0;
	int team = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum) schedule(static)
	for (int i = 0; i < N; i++) {
		if (i == 0)
			team = omp_get_num_threads();
		sum += (long long)a[i] * a[i];
	}
	long long check = 0;
	for (int i = 0; i < N; i++)
		check += (long long)a[i] * a[i];
	printf("team %d, sum %lld, %s\n", team, sum, sum == check ? "ok" : "MISMATCH");
	free(a);
	return sum == check ? 0 : 1;
}
