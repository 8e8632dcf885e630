/* readbuf.c - `readbuf FILE`: sum_file(fd) reads FILE through read() into a
 * 2-byte buffer and sums the bytes. Every read overwrites the same 2 bytes
 * through the kernel, so RMS(sum_file) stays ~constant while its TRMS (with
 * external input counted) grows with the file size. Prints size and sum.
 * Exit 1 on usage error, 2 if the file cannot be opened. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static long nbytes;

__attribute__((noinline)) long sum_file(int fd)
{
	unsigned char buf[2];
	long sum = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			sum += buf[i];
		nbytes += n;
	}
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: readbuf FILE\n");
		return 1;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	long sum = sum_file(fd);
	close(fd);
	printf("bytes %ld, sum %ld\n", nbytes, sum);
	return 0;
}
