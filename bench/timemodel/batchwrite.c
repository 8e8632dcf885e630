// Write 200000 records of 8 bytes to stdout: one write(2) each, or OPT
// batched into 4 KiB writes.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#define N 200000
int main(void) {
	char rec[8] = "record\n";
#ifdef OPT
	static char buf[4096];
	size_t n = 0;
	for (int i = 0; i < N; i++) {
		if (n + 8 > sizeof buf) write(1, buf, n), n = 0;
		memcpy(buf + n, rec, 8), n += 8;
	}
	write(1, buf, n);
#else
	for (int i = 0; i < N; i++) write(1, rec, 8);
#endif
	return 0;
}
