/* ready_loop.c - writes "ready" with one write(2), then runs a CPU-bound
 * loop that makes no system call: N iterations (default 1000000), then
 * prints a checksum and exits 0; `ready_loop forever` (or 0) never stops.
 * For emuprof's Ctrl-C test, which sends SIGINT once it has read the
 * "ready" line: the guest is then in the loop, between system calls,
 * however fast or slow the host is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* n == 0: forever. */
__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	volatile unsigned long acc = 1;
	for (unsigned long i = 0; n == 0 || i < n; i++)
		acc = acc * 6364136223846793005UL + i;
	return acc;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000000;
	if (argc > 1)
		n = strcmp(argv[1], "forever") == 0 ? 0 : strtoul(argv[1], NULL, 10);
	if (write(1, "ready\n", 6) != 6)
		return 1;
	printf("checksum %lu\n", spin(n));
	return 0;
}
