// stdfds: what fds 0, 1 and 2 are (fstat type, size, F_GETFL, lseek), then
// reads 4 bytes of stdin, skips 2 with lseek, copies the next 4 to stdout
// and leaves the rest of stdin to whoever reads it next. Compared with the
// native run for regular files, pipes and /dev/null.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m) {
	if (S_ISREG(m)) return "regular";
	if (S_ISFIFO(m)) return "fifo";
	if (S_ISCHR(m)) return "chr";
	return "other";
}

int main(void) {
	char line[256];
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		if (fstat(fd, &st) != 0) {
			snprintf(line, sizeof line, "fd %d: fstat errno %d\n", fd, errno);
		} else {
			int fl = fcntl(fd, F_GETFL);
			off_t pos = lseek(fd, 0, SEEK_CUR);
			int e = pos < 0 ? errno : 0;
			snprintf(line, sizeof line, "fd %d: %s size %lld acc %d append %d pos %lld errno %d\n", fd,
			         kind(st.st_mode), S_ISREG(st.st_mode) ? (long long)st.st_size : 0LL, fl & O_ACCMODE,
			         (fl & O_APPEND) != 0, (long long)pos, e);
		}
		write(2, line, strlen(line));
	}
	char buf[8];
	ssize_t n = read(0, buf, 4);
	off_t skip = lseek(0, 2, SEEK_CUR);
	if (skip < 0) { // not seekable: skip by reading
		char tmp[2];
		read(0, tmp, 2);
	}
	ssize_t m = read(0, buf + (n > 0 ? n : 0), 4);
	snprintf(line, sizeof line, "read %zd then %zd: ", n, m);
	write(1, line, strlen(line));
	write(1, buf, (n > 0 ? n : 0) + (m > 0 ? m : 0));
	write(1, "\n", 1);
	return 0;
}
