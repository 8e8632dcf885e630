/* filetimes.c - file times against the program's own clock: in a fresh
 * directory under /tmp, creates, writes, links, chmods, renames and touches
 * a file, and checks after each step that stat shows the times Linux sets
 * (within the CLOCK_REALTIME readings around the step) and leaves the others
 * alone; stat, fstat, lstat, fstatat and statx must agree. Prints one
 * yes/no line per check (the same natively and under emuprof); exit 1 on a
 * failed call. Exercises: open(O_CREAT), write, link, chmod, rename,
 * unlink, utimensat, statx, clock_gettime. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

/* before: a clock reading no later than the time stamps of what follows
 * (file times come from the coarse clock); after: one no earlier. */
static long long before(void)
{
	struct timespec t;
	struct timespec d = {0, 5000000};
	nanosleep(&d, NULL); /* steps are 5 ms apart: times tell them apart */
	clock_gettime(CLOCK_REALTIME_COARSE, &t);
	return ns(t);
}

static long long after(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return ns(t);
}

static struct stat st(const char *name)
{
	struct stat s;
	if (lstat(name, &s) != 0)
		die(name);
	return s;
}

static void check(const char *what, int ok) { printf("%-52s %s\n", what, ok ? "yes" : "no"); }

static int within(struct timespec t, long long lo, long long hi) { return ns(t) >= lo && ns(t) <= hi; }

/* statx's time stamp at offset off of struct statx, by the raw system
 * call (musl's headers may lack statx). */
static struct timespec xtime(const unsigned char *b, int off)
{
	int64_t sec;
	uint32_t nsec;
	memcpy(&sec, b + off, 8);
	memcpy(&nsec, b + off + 8, 4);
	return (struct timespec){sec, nsec};
}

static int same_times(const struct stat *a, const struct stat *b)
{
	return ns(a->st_atim) == ns(b->st_atim) && ns(a->st_mtim) == ns(b->st_mtim) &&
	       ns(a->st_ctim) == ns(b->st_ctim);
}

int main(void)
{
	strcpy(dir, "/tmp/filetimes.XXXXXX");
	if (!mkdtemp(dir) || chdir(dir) != 0)
		die("mkdtemp");

	long long t0 = before();
	int fd = open("f", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die("open");
	long long t1 = after();
	struct stat s = st("f"), d = st(".");
	check("create: mtime within the clock", within(s.st_mtim, t0, t1));
	check("create: atime = mtime = ctime", ns(s.st_atim) == ns(s.st_mtim) && ns(s.st_mtim) == ns(s.st_ctim));
	check("create: directory mtime, ctime within the clock",
	      within(d.st_mtim, t0, t1) && within(d.st_ctim, t0, t1));

	struct stat prev = s;
	t0 = before();
	if (write(fd, "data", 4) != 4)
		die("write");
	t1 = after();
	s = st("f");
	check("write: mtime, ctime within the clock", within(s.st_mtim, t0, t1) && within(s.st_ctim, t0, t1));
	check("write: atime kept", ns(s.st_atim) == ns(prev.st_atim));

	/* Every stat call says the same. */
	struct stat sf, ss, sa;
	unsigned char sx[256];
	if (fstat(fd, &sf) || stat("f", &ss) || fstatat(AT_FDCWD, "f", &sa, 0) ||
	    syscall(SYS_statx, AT_FDCWD, "f", 0, 0x7ff /* STATX_BASIC_STATS */, sx))
		die("stat");
	struct timespec xa = xtime(sx, 64), xc = xtime(sx, 96), xm = xtime(sx, 112);
	check("stat, fstat, lstat, fstatat, statx agree",
	      same_times(&s, &sf) && same_times(&s, &ss) && same_times(&s, &sa) &&
		      ns(xa) == ns(s.st_atim) && ns(xm) == ns(s.st_mtim) && ns(xc) == ns(s.st_ctim));

	/* Explicit times are kept to the nanosecond; ctime is the clock's. */
	struct timespec ts[2] = {{1000000000, 500}, {1200000000, 250000000}};
	t0 = before();
	if (utimensat(AT_FDCWD, "f", ts, 0) != 0)
		die("utimensat");
	t1 = after();
	s = st("f");
	check("utimensat: atime, mtime as given",
	      ns(s.st_atim) == ns(ts[0]) && ns(s.st_mtim) == ns(ts[1]));
	check("utimensat: ctime within the clock", within(s.st_ctim, t0, t1));

	/* Times belong to the inode. */
	prev = s;
	t0 = before();
	if (link("f", "g") != 0)
		die("link");
	t1 = after();
	s = st("g");
	check("link: ctime within the clock, mtime kept", within(s.st_ctim, t0, t1) && ns(s.st_mtim) == ns(prev.st_mtim));
	int gfd = open("g", O_WRONLY | O_APPEND);
	t0 = before();
	if (gfd < 0 || write(gfd, "more", 4) != 4)
		die("write g");
	t1 = after();
	s = st("f");
	check("write through a second name: mtime within the clock", within(s.st_mtim, t0, t1));
	check("write through a second name: atime kept", ns(s.st_atim) == ns(prev.st_atim));

	prev = s;
	t0 = before();
	if (chmod("f", 0600) != 0)
		die("chmod");
	t1 = after();
	s = st("f");
	check("chmod: ctime within the clock, mtime kept", within(s.st_ctim, t0, t1) && ns(s.st_mtim) == ns(prev.st_mtim));

	prev = s;
	t0 = before();
	if (unlink("g") != 0)
		die("unlink");
	t1 = after();
	s = st("f");
	check("unlink of the other name: ctime within the clock", within(s.st_ctim, t0, t1));
	check("unlink of the other name: mtime kept", ns(s.st_mtim) == ns(prev.st_mtim));

	prev = s;
	t0 = before();
	if (rename("f", "h") != 0)
		die("rename");
	t1 = after();
	s = st("h");
	d = st(".");
	check("rename: ctime within the clock, mtime kept", within(s.st_ctim, t0, t1) && ns(s.st_mtim) == ns(prev.st_mtim));
	check("rename: directory mtime within the clock", within(d.st_mtim, t0, t1));

	t0 = before();
	if (utimensat(AT_FDCWD, "h", NULL, 0) != 0)
		die("touch");
	t1 = after();
	s = st("h");
	check("touch: all three times within the clock",
	      within(s.st_atim, t0, t1) && within(s.st_mtim, t0, t1) && within(s.st_ctim, t0, t1));

	close(fd);
	close(gfd);
	if (unlink("h") != 0 || chdir("/") != 0 || rmdir(dir) != 0)
		die("cleanup");
	return 0;
}
