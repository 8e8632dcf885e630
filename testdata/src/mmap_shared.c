/* mmap_shared.c - MAP_SHARED file mappings are coherent with the file.
 *
 *   mmap_shared run     in the working directory, creates shm.dat, late.dat
 *                       and others (never two shared mappings of one file
 *                       range: emuprof makes those coherent only at system
 *                       calls), checks coherence step by step (prints
 *                       what it sees), and exits leaving a dirty shared
 *                       mapping of late.dat that was never msynced or
 *                       unmapped.
 *   mmap_shared crash   stores through a shared mapping of crash.dat, then
 *                       dies of SIGSEGV without unmapping it.
 *   mmap_shared alias   maps alias.dat twice, stores through both, msyncs
 *                       and prints both mappings.
 *   mmap_shared spin    stores through a shared mapping of spin.dat, then
 *                       loops forever (for emuprof --max-insns).
 *   mmap_shared show    prints the files the other modes left behind.
 *
 * Exercises: mmap MAP_SHARED (read-write and read-only), stores seen by
 * read/pread/sendfile/a second open/a hard link, pwrite/write/O_APPEND seen
 * through the mapping, msync, partial munmap, ftruncate shrink and grow,
 * mremap growth showing the file, MAP_PRIVATE and MAP_SHARED|MAP_ANONYMOUS
 * keeping their semantics, write-back at exit and at a crash.
 * Exit 1 on usage error, 2 on an unexpected failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG 4096

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(2);
}

/* dump prints n bytes compactly: runs of 8 or more equal bytes as
 * "<c*n>", other printable bytes as they are, the rest as \xHH. */
static void dump(const char *label, const unsigned char *p, size_t n)
{
	printf("%s (%zu):", label, n);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j] == p[i])
			j++;
		if (j - i >= 8) {
			if (p[i] >= 0x20 && p[i] < 0x7f)
				printf("<%c*%zu>", p[i], j - i);
			else
				printf("<\\x%02x*%zu>", p[i], j - i);
			i = j;
			continue;
		}
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '<' && p[i] != '\\')
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
		i++;
	}
	putchar('\n');
}

static void dump_file(const char *name)
{
	static unsigned char buf[8 * PG];
	int fd = open(name, O_RDONLY);
	if (fd < 0) {
		printf("%s: %s\n", name, strerror(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0)
		die("read for dump");
	dump(name, buf, (size_t)n);
	close(fd);
}

static void fill(int fd, size_t size)
{
	static unsigned char buf[8 * PG];
	for (size_t i = 0; i < size; i++)
		buf[i] = 'a' + (i / 512) % 26;
	if (write(fd, buf, size) != (ssize_t)size)
		die("write fill");
}

static int create(const char *name, size_t size)
{
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open create");
	fill(fd, size);
	return fd;
}

static unsigned char *map(size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void show_pread(const char *label, int fd, size_t n, off_t off)
{
	unsigned char buf[64];
	ssize_t got = pread(fd, buf, n, off);
	if (got < 0)
		die("pread");
	dump(label, buf, (size_t)got);
}

static void run(void)
{
	const size_t size = 3 * PG + 100; /* the last page is partial */
	int fd = create("shm.dat", size);
	unsigned char *p = map(size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	/* Stores through the mapping are seen by read, pread, another open,
	 * a hard link and sendfile, without msync. */
	memcpy(p + 10, "STORE-1", 7);
	p[2 * PG + 5] = 'Z';
	show_pread("pread after store", fd, 20, 0);
	if (lseek(fd, 0, SEEK_SET) != 0)
		die("lseek");
	static unsigned char whole[8 * PG];
	ssize_t n = read(fd, whole, sizeof whole);
	if (n < 0)
		die("read");
	dump("read after store", whole, (size_t)n);
	int fd2 = open("shm.dat", O_RDONLY);
	if (fd2 < 0)
		die("open second");
	show_pread("second open", fd2, 16, 2 * PG);
	unlink("shm.link");
	if (link("shm.dat", "shm.link") != 0)
		die("link");
	int fdl = open("shm.link", O_RDWR);
	if (fdl < 0)
		die("open link");
	show_pread("hard link", fdl, 20, 0);
	int out = open("sent.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	off_t soff = 0;
	if (out < 0 || sendfile(out, fd2, &soff, 32) != 32)
		die("sendfile");
	show_pread("sendfile copy", out, 32, 0);
	close(out);

	/* Writes to the file, through any descriptor, show in the mapping. */
	if (pwrite(fd, "PWRITE", 6, PG + 20) != 6)
		die("pwrite");
	dump("mapping after pwrite", p + PG + 16, 16);
	if (pwrite(fdl, "VIA-LINK", 8, 40) != 8)
		die("pwrite link");
	dump("mapping after pwrite via link", p + 32, 24);
	int fda = open("shm.dat", O_WRONLY | O_APPEND);
	if (fda < 0 || write(fda, "APPENDED", 8) != 8)
		die("append");
	close(fda);
	dump("mapping after append", p + size - 4, 12);
	struct stat st;
	if (fstat(fd, &st) != 0)
		die("fstat");
	printf("size after append %lld\n", (long long)st.st_size);

	/* A read-only shared mapping of a read-only descriptor follows the
	 * file too, and cannot be made writable. */
	int rw = create("ro.dat", PG);
	int rofd = open("ro.dat", O_RDONLY);
	if (rofd < 0)
		die("open ro");
	unsigned char *ro = map(PG, PROT_READ, MAP_SHARED, rofd, 0);
	dump("read-only mapping", ro, 16);
	if (pwrite(rw, "SEEN-BY-RO", 10, 4) != 10)
		die("pwrite ro");
	dump("read-only mapping after pwrite", ro, 16);
	if (mprotect(ro, PG, PROT_READ | PROT_WRITE) == 0)
		printf("mprotect PROT_WRITE on a read-only file: allowed\n");
	else
		printf("mprotect PROT_WRITE on a read-only file: %s\n", strerror(errno));
	munmap(ro, PG);
	close(rofd);
	close(rw);

	/* A private mapping sees the file as it is, and its stores stay
	 * private. */
	unsigned char *priv = map(PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	dump("private mapping", priv, 24);
	memcpy(priv, "PRIVATE", 7);
	munmap(priv, PG);
	show_pread("file after private store", fd, 16, 0);

	if (msync(p, size, MS_SYNC) != 0)
		die("msync");
	show_pread("after msync", fd, 16, 0);

	/* Unmapping the middle page writes it back; the rest stays mapped. */
	memcpy(p + PG + 100, "MIDDLE", 6);
	if (munmap(p + PG, PG) != 0)
		die("munmap middle");
	show_pread("after partial munmap", fd, 12, PG + 96);
	memcpy(p + 200, "AFTER-PARTIAL", 13);

	/* Shrinking the file drops what the mapping held past the new end;
	 * growing it again shows zeros there. */
	p[2 * PG + 60] = 'Q';
	if (ftruncate(fd, 2 * PG + 50) != 0)
		die("ftruncate shrink");
	dump("mapping after shrink", p + 2 * PG + 40, 24);
	if (ftruncate(fd, 3 * PG) != 0)
		die("ftruncate grow");
	dump("mapping after grow", p + 2 * PG + 40, 24);
	p[2 * PG + 100] = 'T';
	if (munmap(p, 4 * PG) != 0)
		die("munmap");
	close(fd);
	close(fd2);
	close(fdl);
	dump_file("shm.dat");

	/* mremap: pages added to a shared mapping show the file, and stores
	 * there reach it. */
	fd = create("remap.dat", 3 * PG);
	p = map(PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	p[1] = '1';
	p = mremap(p, PG, 3 * PG, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		die("mremap");
	dump("grown mapping", p + 2 * PG, 8);
	memcpy(p + 2 * PG + 1, "REMAPPED", 8);
	/* Moving it elsewhere keeps the contents and the link to the file. */
	unsigned char *hole = map(4 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mremap(p, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	if (p == MAP_FAILED)
		die("mremap fixed");
	p[PG + 1] = 'M';
	show_pread("after move", fd, 4, PG);
	/* MAP_FIXED over part of it writes that part back first. */
	p[3] = '3';
	if (mmap(p, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		die("mmap fixed");
	show_pread("after MAP_FIXED over", fd, 4, 0);
	munmap(p, 3 * PG);
	munmap(hole, 4 * PG);
	close(fd);
	dump_file("remap.dat");

	/* MAP_SHARED|MAP_ANONYMOUS is plain memory. */
	unsigned char *anon = map(2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	dump("shared anonymous", anon, 16);
	memcpy(anon + PG, "ANON", 4);
	dump("shared anonymous after store", anon + PG, 8);
	munmap(anon, 2 * PG);

	/* A dirty mapping left at exit, its descriptor already closed. */
	fd = create("late.dat", 2 * PG);
	p = map(2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	memcpy(p + 5, "LATE-STORE", 10);
	memcpy(p + PG + 5, "LATE-PAGE-2", 11);
	printf("exiting with a dirty mapping\n");
	fflush(stdout);
	_exit(0);
}

/* Two shared mappings of the same bytes: emuprof shows a store through one
 * in the other only at a write-back (here msync), and warns. */
static void alias(void)
{
	int fd = create("alias.dat", PG);
	unsigned char *a = map(PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned char *b = map(PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memcpy(a + 3, "VIA-A", 5);
	memcpy(b + 20, "VIA-B", 5);
	if (msync(a, PG, MS_SYNC) != 0 || msync(b, PG, MS_SYNC) != 0)
		die("msync");
	dump("a after msync", a, 32);
	dump("b after msync", b, 32);
	show_pread("file after msync", fd, 32, 0);
}

/* Stores through a shared mapping, then runs until stopped (emuprof
 * --max-insns, Ctrl-C). */
static void spin(void)
{
	int fd = create("spin.dat", PG);
	unsigned char *p = map(PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memcpy(p + 9, "BEFORE-LIMIT", 12);
	__asm__ volatile("" ::: "memory"); /* keep the store before the loop */
	for (volatile unsigned long i = 0;; i++)
		;
}

static void crash(void)
{
	int fd = create("crash.dat", PG);
	unsigned char *p = map(PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memcpy(p + 7, "BEFORE-CRASH", 12);
	printf("crashing with a dirty mapping\n");
	fflush(stdout);
	*(volatile int *)0 = 1; /* SIGSEGV */
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mmap_shared run|crash|alias|spin|show\n");
		return 1;
	}
	if (strcmp(argv[1], "run") == 0)
		run();
	else if (strcmp(argv[1], "crash") == 0)
		crash();
	else if (strcmp(argv[1], "alias") == 0)
		alias();
	else if (strcmp(argv[1], "spin") == 0)
		spin();
	else if (strcmp(argv[1], "show") == 0) {
		dump_file("shm.dat");
		dump_file("ro.dat");
		dump_file("remap.dat");
		dump_file("late.dat");
		dump_file("crash.dat");
	} else {
		fprintf(stderr, "usage: mmap_shared run|crash|alias|spin|show\n");
		return 1;
	}
	return 0;
}
