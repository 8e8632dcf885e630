/* diffwork.c - a program whose work is ROUNDS rounds of the same loop:
 * TestDiffGate builds it twice, the second time with 2 % more rounds
 * (-DROUNDS=1020), as "the program changed to do 2 % more work". */
#include <stdio.h>

#ifndef ROUNDS
#define ROUNDS 1000
#endif

__attribute__((noipa)) static unsigned long mix(unsigned long h, int n)
{
	for (int i = 0; i < n; i++)
		h = h * 33 + (unsigned long)i;
	return h;
}

int main(void)
{
	unsigned long h = 5381;
	for (int r = 0; r < ROUNDS; r++)
		h = mix(h, 500);
	printf("%d rounds, checksum %016lx\n", ROUNDS, h);
	return 0;
}
