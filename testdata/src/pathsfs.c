/* pathsfs: a guest whose file changes must happen once under
 * `emuprof paths --copies K` (issue 11 point 5). It reads a counter from
 * state.txt, deletes the file and creates it again with the counter plus
 * one, appends a line to log.txt, and writes out/data through a temporary
 * file renamed into place; its loop runs longer the higher the counter, so
 * a copy that saw another copy's changes would follow other paths. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static long classify(long v)
{
	long c = 0;
	if (v % 3 == 0)
		c += 1;
	else
		c += 2;
	if (v & 4)
		c *= 3;
	return c;
}

int main(void)
{
	long n = 0;
	FILE *f = fopen("state.txt", "r");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	if (unlink("state.txt") != 0 && errno != ENOENT) {
		perror("unlink state.txt");
		return 1;
	}
	if (!(f = fopen("state.txt", "w"))) {
		perror("state.txt");
		return 1;
	}
	fprintf(f, "%ld\n", n + 1);
	fclose(f);
	if (!(f = fopen("log.txt", "a"))) {
		perror("log.txt");
		return 1;
	}
	fprintf(f, "run %ld\n", n);
	fclose(f);
	if (mkdir("out", 0755) != 0 && errno != EEXIST) {
		perror("mkdir out");
		return 1;
	}
	if (!(f = fopen("out/data.tmp", "w"))) {
		perror("out/data.tmp");
		return 1;
	}
	long sum = 0;
	for (long i = 0; i < 2000 + n * 1000; i++) {
		long c = classify(i + n);
		sum += c;
		fprintf(f, "%ld\n", c);
	}
	fclose(f);
	if (rename("out/data.tmp", "out/data") != 0) {
		perror("rename");
		return 1;
	}
	printf("state %ld sum %ld\n", n, sum);
	return 0;
}
