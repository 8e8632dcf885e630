/* cat.c - copies stdin to stdout with a read/write loop (no stdio).
 * Exercises: read(0) from files, pipes and EOF; short writes; exit 0.
 * Exit 1 on a read or write error. */
#include <errno.h>
#include <unistd.h>

int main(void)
{
	char buf[8192];
	for (;;) {
		ssize_t n = read(0, buf, sizeof buf);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(1, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return 1;
			}
			off += w;
		}
	}
}
