// textbusy: what a process may do to the file it runs. Linux refuses to
// write a running program (ETXTBSY) through any name: its path, a hard
// link, /proc/self/exe, in a child too; a copy that does not run is a file
// like any other. Run from a directory holding a copy of this program.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *errname(int e) {
	switch (e) {
	case ETXTBSY: return "ETXTBSY";
	case EXDEV: return "EXDEV";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	}
	static char buf[16];
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

static void report(const char *what, long r) {
	if (r < 0)
		printf("%-40s -1 %s\n", what, errname(errno));
	else
		printf("%-40s ok\n", what);
	fflush(stdout);
}

static long openclose(const char *path, int flags) {
	int fd = open(path, flags);
	if (fd >= 0)
		close(fd);
	return fd;
}

int main(int argc, char **argv) {
	const char *self = argv[0];
	if (argc > 1 && strcmp(argv[1], "sysroot") == 0) {
		// Under emuprof --sysroot, with this program outside the sysroot.
		report("open /proc/self/exe O_WRONLY", openclose("/proc/self/exe", O_WRONLY));
		report("linkat /proc/self/exe FOLLOW", linkat(AT_FDCWD, "/proc/self/exe", AT_FDCWD, "planted", AT_SYMLINK_FOLLOW));
		report("chmod /proc/self/exe", chmod("/proc/self/exe", 0777));
		report("truncate /proc/self/exe", truncate("/proc/self/exe", 0));
		report("open /proc/self/exe O_RDONLY", openclose("/proc/self/exe", O_RDONLY));
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "child-copy") == 0) {
		report("copy: open /proc/self/exe O_WRONLY", openclose("/proc/self/exe", O_WRONLY));
		return 0;
	}
	report("open self O_WRONLY", openclose(self, O_WRONLY));
	report("open self O_RDWR", openclose(self, O_RDWR));
	report("open self O_WRONLY|O_APPEND", openclose(self, O_WRONLY | O_APPEND));
	report("open self O_RDONLY", openclose(self, O_RDONLY));
	report("open /proc/self/exe O_WRONLY", openclose("/proc/self/exe", O_WRONLY));
	report("open /proc/self/exe O_RDWR|O_TRUNC", openclose("/proc/self/exe", O_RDWR | O_TRUNC));
	report("open /proc/self/exe O_RDONLY|O_TRUNC", openclose("/proc/self/exe", O_RDONLY | O_TRUNC));
	report("truncate self", truncate(self, 0));
	report("truncate /proc/self/exe", truncate("/proc/self/exe", 0));
	report("link self hard", link(self, "hard"));
	report("open hard O_WRONLY", openclose("hard", O_WRONLY));
	report("unlink hard", unlink("hard"));
	report("linkat /proc/self/exe FOLLOW", linkat(AT_FDCWD, "/proc/self/exe", AT_FDCWD, "viaproc", AT_SYMLINK_FOLLOW));
	report("open viaproc O_WRONLY", openclose("viaproc", O_WRONLY));
	report("unlink viaproc", unlink("viaproc"));
	// A copy that does not run may be written.
	int in = open(self, O_RDONLY), out = open("copy", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[4096];
	long n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n)
			return 1;
	close(in);
	close(out);
	report("open copy O_WRONLY", openclose("copy", O_WRONLY));
	pid_t pid = fork();
	if (pid == 0) {
		report("child: open self O_WRONLY", openclose(self, O_WRONLY));
		// The child runs another program: the copy is busy while it runs.
		execl("copy", "copy", "child-copy", (char *)0);
		_exit(127);
	}
	waitpid(pid, 0, 0);
	report("after the child: open copy O_WRONLY", openclose("copy", O_WRONLY));
	report("unlink copy", unlink("copy"));
	return 0;
}
