/* causal_split.c - one thread, a loop of steps; each step runs a loop whose
 * body is written over two source lines (one basic block holds the
 * instructions of both), then step_done(), the progress point. A causal
 * profile must charge each line its own instructions: speeding up either
 * line by s speeds the program up by that line's share of a step times s,
 * as emuprof run --speedup, which speeds up each instruction of the line,
 * measures. Argument: the number of steps (default 400). */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long u, v, w;

__attribute__((noinline)) void step_done(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 400;
	for (int i = 0; i < steps; i++) {
		for (u = 0; u < 2000; u++) {
			v += u * 3;
			w ^= v + u;
		}
		step_done();
	}
	printf("u=%lu v=%lu w=%lu\n", u, v, w);
	return 0;
}
