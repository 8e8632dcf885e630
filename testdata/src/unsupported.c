/* unsupported: calls keyctl (syscall 250), which emuprof does not emulate,
 * from a function named `loop`: the run must stop with a clear error naming
 * the syscall and the guest address (or, with --unsupported=enosys, the call
 * fails with ENOSYS and the program goes on). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long loop(void) {
	return syscall(250, 0, -3, 0); /* keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING) */
}

int main(void) {
	long r = loop();
	printf("keyctl: %s\n", r < 0 ? strerror(errno) : "ok");
	return 0;
}
