/* qsort.c - `qsort [N]`: sorts N ints (default 1000000) drawn from a fixed
 * LCG with libc qsort(), checks the order and prints a checksum.
 * CPU-bound; used for benchmarks (native vs emulated speed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = 1000000;
	if (argc > 1)
		n = strtol(argv[1], NULL, 10);
	if (n < 1)
		n = 1;
	int *a = malloc((size_t)n * sizeof *a);
	if (a == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	uint32_t x = 12345;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		a[i] = (int)(x >> 1);
	}
	qsort(a, (size_t)n, sizeof *a, cmp_int);
	uint64_t sum = 0;
	long unsorted = 0;
	for (long i = 0; i < n; i++) {
		if (i > 0 && a[i - 1] > a[i])
			unsorted++;
		sum = sum * 31 + (uint32_t)a[i];
	}
	printf("n=%ld min=%d max=%d median=%d\n", n, a[0], a[n - 1], a[n / 2]);
	printf("sorted=%s checksum=%016llx\n", unsorted ? "no" : "yes",
	       (unsigned long long)sum);
	free(a);
	return unsorted ? 1 : 0;
}
