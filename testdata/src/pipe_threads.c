/* pipe_threads.c - one thread writes 1 MiB through a pipe (more than the
 * 64 KiB pipe capacity, so the writer blocks), the main thread reads it in
 * odd-sized chunks and checksums it. Prints the byte count and checksum.
 * Exercises pipe2, blocking read/write on a pipe across threads, EOF on
 * close of the write end. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define TOTAL (1 << 20)
#define WCHUNK 8192

static int fds[2];

static void *writer(void *arg)
{
	unsigned char buf[WCHUNK];
	long sent = 0;
	(void)arg;
	while (sent < TOTAL) {
		for (int i = 0; i < WCHUNK; i++)
			buf[i] = (unsigned char)((sent + i) * 131 + ((sent + i) >> 9));
		size_t off = 0;
		while (off < WCHUNK) {
			ssize_t w = write(fds[1], buf + off, WCHUNK - off);
			if (w <= 0) {
				perror("write");
				return (void *)1;
			}
			off += (size_t)w;
		}
		sent += WCHUNK;
	}
	close(fds[1]);
	return NULL;
}

int main(void)
{
	pthread_t t;
	unsigned char buf[3001];
	long got = 0, reads = 0, mismatches = 0;
	uint32_t h = 2166136261u;

	if (pipe(fds) < 0) {
		perror("pipe");
		return 1;
	}
	pthread_create(&t, NULL, writer, NULL);
	for (;;) {
		ssize_t n = read(fds[0], buf, sizeof buf);
		if (n < 0) {
			perror("read");
			return 1;
		}
		if (n == 0)
			break;
		reads++;
		for (ssize_t i = 0; i < n; i++) {
			long pos = got + i;
			if (buf[i] != (unsigned char)(pos * 131 + (pos >> 9)))
				mismatches++;
			h = (h ^ buf[i]) * 16777619u;
		}
		got += n;
	}
	void *ret;
	pthread_join(t, &ret);
	close(fds[0]);
	printf("received %ld bytes, checksum %08x, mismatches %ld\n", got, h,
	       mismatches);
	return (got == TOTAL && mismatches == 0 && ret == NULL) ? 0 : 1;
}
