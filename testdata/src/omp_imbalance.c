/* omp_imbalance.c - an OpenMP `parallel for schedule(static)` on 4 threads
 * whose iteration i costs i inner steps, so the threads' shares are in the
 * ratio 1:3:5:7 and three of them wait at the end of the loop: the
 * imbalance `emuprof parallel` charges, as idleness, to the loop (the
 * HPCToolkit oracle for OpenMP). Prints the sum. Built only against glibc. */
#include <stdio.h>

#define N 2000

int main(void)
{
	long sum = 0;
#pragma omp parallel for num_threads(4) schedule(static) reduction(+ : sum)
	for (long i = 0; i < N; i++) {
		long s = 0;
		for (long j = 0; j < i; j++)
			s += j ^ i;
		sum += s;
	}
	printf("sum %ld\n", sum);
	return 0;
}
