// Direct calls to another page, 60 million of them: the case chain.c
// (docs/PERFORMANCE.md, item 16) chains, where Unicorn looked the callee
// up at every call. f and g each start a page of their own.
#include <stdio.h>
__attribute__((noinline, aligned(4096))) long f(long x) { return x * 3 + 1; }
__attribute__((noinline, aligned(4096))) long g(long x) { return x ^ (x >> 3); }
int main(void) {
	long s = 0;
	for (long i = 0; i < 30000000; i++)
		s = f(s) + g(i);
	printf("%ld\n", s);
	return 0;
}
