/* segv.c - writes through a NULL pointer in crash(), called from main.
 * Exercises: guest fault reporting (SIGSEGV, faulting address 0, symbolized
 * stack main -> crash), exit status 128+11. */
#include <stdio.h>

volatile int *volatile target; /* NULL; volatile so -O2 keeps the store */

__attribute__((noinline)) void crash(void)
{
	*target = 42;
}

int main(void)
{
	printf("about to crash\n");
	fflush(stdout);
	crash();
	printf("not reached\n");
	return 0;
}
