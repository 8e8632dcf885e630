/* causal_single.c - one thread, a loop of steps: each step runs a loop of
 * 3,000 volatile increments on one line, then one of 1,000 on another, then
 * step_done(), the progress point. Speeding up a line by s speeds the
 * program up by the line's share of a step times s. Argument: the number of
 * steps (default 400). */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long u, v;

__attribute__((noinline)) void step_done(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 400;
	for (int i = 0; i < steps; i++) {
		for (u = 0; u < 3000; u++) {
		}
		for (v = 0; v < 1000; v++) {
		}
		step_done();
	}
	printf("u=%lu v=%lu\n", u, v);
	return 0;
}
