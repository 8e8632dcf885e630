/* sockserver.c - a small TCP server and its client in one program, for
 * profiling a server under load: the parent listens on 127.0.0.1 (port 0),
 * forks a client that sends NREQ requests on one connection, request i
 * (from 0) being a 4-byte length and (i+1)*STEP bytes, and waits for each
 * 8-byte answer. The server's handle_request() reads the body through a
 * 16-byte buffer (so its TRMS grows with the request size while its RMS
 * stays that buffer) and checksums it; request_begin() and request_end()
 * mark each request's latency. The server waits in accept() and read()
 * between requests, and the client thinks (think()) before each one.
 * Usage: sockserver [NREQ [STEP]] (default 20 64). Prints each request's
 * length and checksum, then the client's exit status. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long thought;

static int readall(int fd, void *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = read(fd, (char *)p + done, n - done);
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

__attribute__((noinline)) void request_begin(int i)
{
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) void request_end(int i)
{
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) uint64_t handle_request(int fd, size_t len)
{
	unsigned char buf[16];
	uint64_t sum = 0;
	while (len > 0) {
		size_t n = len < sizeof buf ? len : sizeof buf;
		if (readall(fd, buf, n) != 0)
			return 0;
		for (size_t j = 0; j < n; j++)
			sum = sum * 31 + buf[j];
		len -= n;
	}
	return sum;
}

__attribute__((noinline)) void think(int i)
{
	for (int j = 0; j < 5000; j++)
		thought += (unsigned)(i ^ j);
}

static int client(struct sockaddr_in *a, int n, int step)
{
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)a, sizeof *a) != 0)
		return 1;
	char *body = malloc((size_t)n * step);
	for (int j = 0; j < n * step; j++)
		body[j] = (char)(j * 13 + 7);
	for (int i = 0; i < n; i++) {
		think(i);
		uint32_t len = (uint32_t)(i + 1) * step;
		uint64_t sum;
		if (write(c, &len, 4) != 4 || write(c, body, len) != (ssize_t)len || readall(c, &sum, 8) != 0)
			return 2;
	}
	uint32_t zero = 0;
	write(c, &zero, 4);
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, step = argc > 2 ? atoi(argv[2]) : 64;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 8) != 0 || getsockname(l, (struct sockaddr *)&a, &alen) != 0) {
		perror("sockserver: listen");
		return 1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(client(&a, n, step));
	int s = accept(l, NULL, NULL);
	for (int i = 0;; i++) {
		uint32_t len;
		if (readall(s, &len, 4) != 0 || len == 0)
			break;
		request_begin(i);
		uint64_t sum = handle_request(s, len);
		write(s, &sum, 8);
		request_end(i);
		printf("request %d: %u bytes, checksum %016llx\n", i, len, (unsigned long long)sum);
	}
	close(s);
	int st;
	waitpid(pid, &st, 0);
	printf("client exit %d\n", WEXITSTATUS(st));
	return 0;
}
