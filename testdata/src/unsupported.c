/* unsupported: calls timerfd_create (syscall 283), which emuprof does not
 * emulate, from a function named `loop`: the run must stop with a clear
 * error naming the syscall and the guest address (or, with
 * --unsupported=enosys, the call fails with ENOSYS and the program goes on). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long loop(void) {
	return syscall(283, 1, 0); /* timerfd_create(CLOCK_MONOTONIC, 0) */
}

int main(void) {
	long r = loop();
	printf("timerfd_create: %s\n", r < 0 ? strerror(errno) : "ok");
	return 0;
}
