/* pathsig: a profiled loop interrupted by a signal handler (an interval
 * timer's SIGALRM, in virtual time under emuprof), for paths --copies: the
 * handler runs between any two blocks of the loop, and its own branches
 * depend on the loop's state. Prints only what does not depend on timing. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks, odd;
static volatile long state;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
	if (state & 1)
		odd++;
	else
		odd += 2;
}

static long step(long v, long i)
{
	if (i % 3 == 0)
		v += i;
	else
		v ^= i;
	if (v & 8)
		v -= 3;
	return v;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &it, NULL);
	long v = 0;
	for (long i = 0; i < 300000; i++) {
		v = step(v, i);
		state = v;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("v %ld\n", v);
	return 0;
}
