/* procexe.c - what the guest may do to its own executable through
 * /proc/self/exe: hard-link it at argv[1] (linkat AT_SYMLINK_FOLLOW) and
 * open it for writing. Prints each result or errno name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static const char *name(int e) {
	switch (e) {
	case EXDEV: return "EXDEV";
	case ETXTBSY: return "ETXTBSY";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EACCES: return "EACCES";
	}
	return "other";
}

static void show(const char *what, int r) {
	if (r < 0)
		printf("%s = -1 %s\n", what, name(errno));
	else
		printf("%s = ok\n", what);
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	show("linkat(/proc/self/exe, FOLLOW)", linkat(AT_FDCWD, "/proc/self/exe", AT_FDCWD, argv[1], AT_SYMLINK_FOLLOW));
	show("open(/proc/self/exe, O_WRONLY)", open("/proc/self/exe", O_WRONLY));
	show("open(/proc/self/exe, O_RDONLY|O_TRUNC)", open("/proc/self/exe", O_RDONLY | O_TRUNC));
	show("truncate(/proc/self/exe)", truncate("/proc/self/exe", 0));
	return 0;
}
