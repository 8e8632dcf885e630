/* abort.c - prints a line and calls abort().
 * Exercises: SIGABRT raised by the guest itself (rt_sigprocmask + tgkill/
 * gettid in glibc, kill/tkill in musl), default action = terminate,
 * exit status 128+6. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void do_abort(void)
{
	abort();
}

int main(void)
{
	printf("calling abort\n");
	fflush(stdout);
	do_abort();
	return 0;
}
