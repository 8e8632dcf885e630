/* spin_flag.c - one thread spins on a volatile int flag with no syscalls in
 * the loop; the main thread does some work and then sets the flag. The
 * program terminates only if the spinning thread cannot starve the main
 * thread, i.e. under a preemptive, fair scheduler. Prints the work result
 * (never the spin count, which depends on timing). */
#include <pthread.h>
#include <stdio.h>

static volatile int flag;
static volatile int seen;

static void *spinner(void *arg)
{
	(void)arg;
	while (!flag)
		; /* no syscall, no pause: pure busy wait */
	seen = 1;
	return NULL;
}

__attribute__((noinline)) static long work(void)
{
	long s = 0;
	for (long i = 0; i < 200000; i++)
		s = (s + i * i) % 1000000007;
	return s;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, spinner, NULL);
	long r = work();
	flag = 1;
	pthread_join(t, NULL);
	printf("work %ld, spinner saw flag: %s\n", r, seen ? "yes" : "no");
	return 0;
}
