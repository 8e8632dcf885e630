/* vclock: prints how many ns of CLOCK_MONOTONIC a loop of N strided writes
 * over 8 MiB took (N the argument, default 100000). Under emuprof the clock
 * is virtual time, the same on every run and the time model's
 * (--time-model): tests compare emulated runs, not a native one. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static char buf[8 << 20];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		buf[(i * 4160) & (sizeof buf - 1)]++;
	clock_gettime(CLOCK_MONOTONIC, &b);
	long long ns = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
	printf("loop took %s\n", ns > 0 ? "time" : "no time");
	printf("%lld ns\n", ns);
	return 0;
}
