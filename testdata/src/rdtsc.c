/* rdtsc: reads the time stamp counter with rdtsc and rdtscp around a loop.
 * Under emuprof both are virtual time, so the printed differences are the
 * same on every run; natively they vary, so the test compares two emulated
 * runs, not a native one. */
#include <stdio.h>
#include <x86intrin.h>

int main(void)
{
	unsigned aux;
	unsigned long long a = __rdtsc();
	volatile unsigned long s = 0;
	for (int i = 0; i < 1000; i++)
		s += i;
	unsigned long long b = __rdtscp(&aux);
	unsigned long long c = __rdtsc();
	printf("increasing: %s\n", a < b && b < c ? "yes" : "no");
	printf("loop took %llu ticks, then %llu\n", b - a, c - b);
	return 0;
}
