/* filecopy.c - `filecopy SRC DST`: copies SRC to DST with open/read/write and
 * a 4096-byte buffer, then fstat()s both, lseek()s SRC to its middle and
 * re-reads one chunk, and prints sizes and checksums.
 * Exercises: openat, read, write, lseek, fstat, close, O_CREAT|O_TRUNC.
 * Exit 1 on usage error, 2 on an I/O error. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUFSZ 4096

static uint32_t checksum(uint32_t h, const unsigned char *p, size_t n)
{
	/* FNV-1a */
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char buf[BUFSZ];
	struct stat st;
	long long copied = 0;
	long reads = 0;
	uint32_t sum = 2166136261u;

	if (argc != 3) {
		fprintf(stderr, "usage: filecopy SRC DST\n");
		return 1;
	}
	int in = open(argv[1], O_RDONLY);
	if (in < 0) {
		perror(argv[1]);
		return 2;
	}
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		perror(argv[2]);
		return 2;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0) {
			perror("read");
			return 2;
		}
		if (n == 0)
			break;
		reads++;
		sum = checksum(sum, buf, (size_t)n);
		if (write_all(out, buf, (size_t)n) < 0) {
			perror("write");
			return 2;
		}
		copied += n;
	}
	printf("copied %lld bytes in %ld reads\n", copied, reads);
	printf("checksum %08x\n", sum);

	if (fstat(in, &st) < 0) {
		perror("fstat");
		return 2;
	}
	printf("src size %lld\n", (long long)st.st_size);
	if (fstat(out, &st) < 0) {
		perror("fstat");
		return 2;
	}
	printf("dst size %lld\n", (long long)st.st_size);

	off_t mid = (off_t)(copied / 2);
	off_t pos = lseek(in, mid, SEEK_SET);
	if (pos != mid) {
		perror("lseek");
		return 2;
	}
	ssize_t n = read(in, buf, 1000);
	if (n < 0) {
		perror("read");
		return 2;
	}
	printf("reread at %lld: %lld bytes, checksum %08x\n", (long long)pos,
	       (long long)n, checksum(2166136261u, buf, (size_t)n));
	printf("offset after reread %lld\n", (long long)lseek(in, 0, SEEK_CUR));
	printf("end offset %lld\n", (long long)lseek(in, 0, SEEK_END));

	if (close(in) < 0 || close(out) < 0) {
		perror("close");
		return 2;
	}
	return 0;
}
