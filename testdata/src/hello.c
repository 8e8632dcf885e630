/* hello.c - the smallest guest: one write(2) of "hello, world\n", exit_group(0).
 * Exercises: ELF loading, libc start-up (TLS, auxv), stdio, exit. */
#include <stdio.h>

int main(void)
{
	printf("hello, world\n");
	return 0;
}
