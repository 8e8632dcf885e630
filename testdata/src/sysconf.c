/* sysconf: system call conformance. Makes raw system calls (syscall(2))
 * with edge arguments -- null, wild, kernel and non-canonical pointers,
 * pointers into .text, .rodata, read-only and PROT_NONE pages and buffers
 * that run into an unmapped page; negative, closed and out-of-range fds;
 * huge lengths; invalid flags, clocks, whences, advice and commands -- and
 * prints one line per call: the call with its arguments (pointers by
 * name, never by address) and its result or errno name. The output of a
 * native run and of an emulated run are compared line by line. Run it in
 * an empty directory: it creates files there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const errnames[] = {
	[EPERM] = "EPERM", [ENOENT] = "ENOENT", [ESRCH] = "ESRCH", [EINTR] = "EINTR", [EIO] = "EIO",
	[ENXIO] = "ENXIO", [E2BIG] = "E2BIG", [ENOEXEC] = "ENOEXEC", [EBADF] = "EBADF",
	[ECHILD] = "ECHILD", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM", [EACCES] = "EACCES",
	[EFAULT] = "EFAULT", [EBUSY] = "EBUSY", [EEXIST] = "EEXIST", [EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV", [ENOTDIR] = "ENOTDIR", [EISDIR] = "EISDIR", [EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE", [EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY", [ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG", [ENOSPC] = "ENOSPC", [ESPIPE] = "ESPIPE", [EROFS] = "EROFS",
	[EMLINK] = "EMLINK", [EPIPE] = "EPIPE", [EDOM] = "EDOM", [ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK", [ENAMETOOLONG] = "ENAMETOOLONG", [ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS", [ENOTEMPTY] = "ENOTEMPTY", [ELOOP] = "ELOOP", [ENOMSG] = "ENOMSG",
	[ENODATA] = "ENODATA", [ETIME] = "ETIME", [EOVERFLOW] = "EOVERFLOW",
	[ENOTSOCK] = "ENOTSOCK", [EOPNOTSUPP] = "EOPNOTSUPP", [EAFNOSUPPORT] = "EAFNOSUPPORT",
	[ETIMEDOUT] = "ETIMEDOUT",
};

/* linux/futex.h (musl's compiler wrapper has no kernel headers) */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE_FLAG 128

static int calls;

/* result prints the outcome of a call: the value, or its errno's name. */
static void result(const char *label, long r, int quiet) {
	calls++;
	if (r == -1) {
		int e = errno;
		if (e > 0 && e < (int)(sizeof errnames / sizeof *errnames) && errnames[e])
			printf("%s = -1 %s\n", label, errnames[e]);
		else
			printf("%s = -1 errno %d\n", label, e);
	} else if (quiet) {
		printf("%s = ok\n", label);
	} else {
		printf("%s = %ld\n", label, r);
	}
	fflush(stdout);
}

/* T makes a raw system call and prints its result; TQ prints "ok" for a
 * success whose value is an address or a host fact. */
#define ARGS(...) (long[]){__VA_ARGS__, 0, 0, 0, 0, 0, 0}
static long t(const char *label, long nr, const long *a, int quiet) {
	errno = 0;
	long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	result(label, r, quiet);
	return r;
}
#define T(label, nr, ...) t(label, nr, ARGS(__VA_ARGS__), 0)
#define TQ(label, nr, ...) t(label, nr, ARGS(__VA_ARGS__), 1)
#define L(x) ((long)(x))

static char buf[65536] __attribute__((aligned(4096)));
static const char rodata[8192] __attribute__((aligned(4096))) = "rodata: a page of constants";
static char longname[6000];

/* TC makes a raw clone. A child it creates (Linux refuses every one of
 * these but the PARENT_SETTID ones) exits at once, without flushing. */
static void tc(const char *label, long flags, long stack, long ptid) {
	errno = 0;
	long r = syscall(SYS_clone, flags, stack, ptid, 0, 0);
	if (r == 0)
		syscall(SYS_exit, 0);
	result(label, r, 1);
}
#define TC(label, flags, stack, ptid) tc(label, flags, stack, ptid)

static void tc3(const char *label, long args, long size) {
	errno = 0;
	long r = syscall(SYS_clone3, args, size);
	if (r == 0)
		syscall(SYS_exit, 0);
	result(label, r, 1);
}
#define TC3(label, args, size) tc3(label, args, size)

/* TC3A makes a clone3 with struct clone_args fields set; a size past the
 * 88 bytes Linux knows gets a nonzero byte there. */
static void tc3a(const char *label, long flags, long sig, long stack, long stack_size, long set_tid_size, long size) {
	static uint64_t a[16];
	memset(a, 0, sizeof a);
	a[0] = flags, a[4] = sig, a[5] = stack, a[6] = stack_size, a[9] = set_tid_size;
	if (size > 88)
		a[11] = 1;
	tc3(label, L(a), size);
}
#define TC3A(label, ...) tc3a(label, __VA_ARGS__)

int main(void);

int main(void) {
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	/* Fixtures (not printed). Descriptors a parent leaked would shift the
	 * numbers the calls print. */
	syscall(SYS_close_range, 3, ~0U, 0);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *gap = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || none == MAP_FAILED || two == MAP_FAILED || gap == MAP_FAILED)
		return 1;
	munmap(two + 4096, 4096);
	munmap(gap, 3 * 4096); /* an unmapped hole */
	char *edge = two + 4096 - 8; /* 8 writable bytes, then nothing */
	char *text = (char *)(uintptr_t)main;
	const char *rod = rodata;
	char *wild = (char *)0xdeadbeefUL;
	char *kern = (char *)0xffff888000000000UL;
	char *noncanon = (char *)0x0000800000000000UL;
	memset(longname, 'n', sizeof longname - 1);
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	int f = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 100; i++)
		buf[i] = 'a' + i % 26;
	write(f, buf, 100);
	lseek(f, 0, SEEK_SET);
	mkdir("d", 0755);
	symlink("f", "link");
	int dir = open("d", O_RDONLY | O_DIRECTORY);
	int rdonly = open("f", O_RDONLY);
	int wronly = open("f", O_WRONLY);
	int devnull = open("/dev/null", O_RDWR);
	int devfull = open("/dev/full", O_WRONLY);
	int devzero = open("/dev/zero", O_RDONLY);
	int p[2];
	pipe(p);
	int q[2];
	pipe2(q, O_NONBLOCK);
	int closed = dup(0);
	close(closed);
	int big = 1000000;
	struct iovec iov[2];
	const long huge = 0x7fffffffffffffffL;

	printf("# fds: f=%d dir=%d rdonly=%d wronly=%d null=%d full=%d zero=%d pipe=%d,%d nbpipe=%d,%d\n",
	       f, dir, rdonly, wronly, devnull, devfull, devzero, p[0], p[1], q[0], q[1]);

	/* read */
	T("read(-1, buf, 8)", SYS_read, -1, L(buf), 8);
	T("read(closed, buf, 8)", SYS_read, closed, L(buf), 8);
	T("read(1000000, buf, 8)", SYS_read, big, L(buf), 8);
	T("read(wronly, buf, 8)", SYS_read, wronly, L(buf), 8);
	T("read(dir, buf, 8)", SYS_read, dir, L(buf), 8);
	T("read(dir, NULL, 8)", SYS_read, dir, 0, 8);
	T("read(f, NULL, 8)", SYS_read, f, 0, 8);
	T("read(f, wild, 8)", SYS_read, f, L(wild), 8);
	T("read(f, kernel, 8)", SYS_read, f, L(kern), 8);
	T("read(f, noncanonical, 8)", SYS_read, f, L(noncanon), 8);
	T("read(f, ro, 8)", SYS_read, f, L(ro), 8);
	T("read(f, none, 8)", SYS_read, f, L(none), 8);
	T("read(f, rodata, 8)", SYS_read, f, L(rod), 8);
	T("read(f, text, 8)", SYS_read, f, L(text), 8);
	T("read(f, hole, 8)", SYS_read, f, L(gap), 8);
	T("lseek(f, 0, SEEK_CUR)", SYS_lseek, f, 0, SEEK_CUR);
	T("read(f, edge, 64)", SYS_read, f, L(edge), 64);
	T("lseek(f, 0, SEEK_CUR)", SYS_lseek, f, 0, SEEK_CUR);
	T("read(f, buf, huge)", SYS_read, f, L(buf), huge);
	T("read(f, buf, -1)", SYS_read, f, L(buf), -1L);
	T("read(f, buf, 0)", SYS_read, f, L(buf), 0);
	T("read(f, NULL, 0)", SYS_read, f, 0, 0);
	T("read(f, buf, 1000)", SYS_read, f, L(buf), 1000);
	T("read(f at EOF, NULL, 8)", SYS_read, f, 0, 8);
	T("read(f at EOF, none, 8)", SYS_read, f, L(none), 8);
	T("read(null, NULL, 8)", SYS_read, devnull, 0, 8);
	T("read(zero, NULL, 8)", SYS_read, devzero, 0, 8);
	T("read(zero, edge, 64)", SYS_read, devzero, L(edge), 64);
	T("read(zero, ro, 8)", SYS_read, devzero, L(ro), 8);
	T("read(nbpipe empty, NULL, 8)", SYS_read, q[0], 0, 8);
	T("read(nbpipe empty, buf, 8)", SYS_read, q[0], L(buf), 8);
	T("write(nbpipe, rodata, 5)", SYS_write, q[1], L(rod), 5);
	T("read(nbpipe, NULL, 8)", SYS_read, q[0], 0, 8);
	T("read(nbpipe, none, 8)", SYS_read, q[0], L(none), 8);
	T("read(nbpipe, edge, 64)", SYS_read, q[0], L(edge), 64);
	T("read(nbpipe write end, buf, 8)", SYS_read, q[1], L(buf), 8);

	/* write */
	T("write(-1, buf, 8)", SYS_write, -1, L(buf), 8);
	T("write(closed, buf, 8)", SYS_write, closed, L(buf), 8);
	T("write(rdonly, buf, 8)", SYS_write, rdonly, L(buf), 8);
	T("write(dir, buf, 8)", SYS_write, dir, L(buf), 8);
	T("write(null, NULL, 10)", SYS_write, devnull, 0, 10);
	T("write(null, wild, 10)", SYS_write, devnull, L(wild), 10);
	T("write(null, none, 10)", SYS_write, devnull, L(none), 10);
	T("write(null, kernel, 10)", SYS_write, devnull, L(kern), 10);
	T("write(null, buf, huge)", SYS_write, devnull, L(buf), huge);
	T("write(null, buf, 0x7ffff000+1)", SYS_write, devnull, 0, 0x7ffff001L);
	T("write(full, buf, 10)", SYS_write, devfull, L(buf), 10);
	T("write(full, NULL, 10)", SYS_write, devfull, 0, 10);
	T("write(zero, NULL, 10)", SYS_write, devzero, 0, 10);
	T("write(f, NULL, 8)", SYS_write, f, 0, 8);
	T("write(f, none, 8)", SYS_write, f, L(none), 8);
	T("write(f, wild, 8)", SYS_write, f, L(wild), 8);
	T("write(f, hole, 8)", SYS_write, f, L(gap), 8);
	T("write(f, text, 16)", SYS_write, f, L(text), 16);
	T("write(f, rodata, 16)", SYS_write, f, L(rod), 16);
	T("write(f, ro, 16)", SYS_write, f, L(ro), 16);
	T("write(f, edge, 64)", SYS_write, f, L(edge), 64);
	T("write(f, buf, -1)", SYS_write, f, L(buf), -1L);
	T("lseek(f, 0, SEEK_CUR)", SYS_lseek, f, 0, SEEK_CUR);
	T("write(pipe, NULL, 8)", SYS_write, p[1], 0, 8);
	T("write(pipe, none, 8)", SYS_write, p[1], L(none), 8);
	T("write(pipe read end, buf, 8)", SYS_write, p[0], L(buf), 8);
	T("write(pipe, buf, 0)", SYS_write, p[1], L(buf), 0);
	T("write(nbpipe, buf, 70000)", SYS_write, q[1], L(buf), 70000);
	T("write(nbpipe full, buf, 1)", SYS_write, q[1], L(buf), 1);
	T("write(nbpipe full, NULL, 1)", SYS_write, q[1], 0, 1);

	/* pread, pwrite, readv, writev */
	T("pread64(f, buf, 8, -1)", SYS_pread64, f, L(buf), 8, -1);
	T("pread64(f, buf, 8, 1<<62)", SYS_pread64, f, L(buf), 8, 1L << 62);
	T("pread64(f, NULL, 8, 0)", SYS_pread64, f, 0, 8, 0);
	T("pread64(f, edge, 64, 0)", SYS_pread64, f, L(edge), 64, 0);
	T("pread64(pipe, buf, 8, 0)", SYS_pread64, p[0], L(buf), 8, 0);
	T("pread64(dir, buf, 8, 0)", SYS_pread64, dir, L(buf), 8, 0);
	T("pread64(null, buf, 8, 0)", SYS_pread64, devnull, L(buf), 8, 0);
	T("pwrite64(f, buf, 8, -1)", SYS_pwrite64, f, L(buf), 8, -1);
	T("pwrite64(f, NULL, 8, 0)", SYS_pwrite64, f, 0, 8, 0);
	T("pwrite64(pipe, buf, 8, 0)", SYS_pwrite64, p[1], L(buf), 8, 0);
	T("pwrite64(rdonly, buf, 8, 0)", SYS_pwrite64, rdonly, L(buf), 8, 0);
	T("readv(f, NULL, 1)", SYS_readv, f, 0, 1);
	T("readv(f, NULL, 0)", SYS_readv, f, 0, 0);
	T("readv(f, iov, -1)", SYS_readv, f, L(iov), -1);
	T("readv(f, iov, 1025)", SYS_readv, f, L(iov), 1025);
	iov[0] = (struct iovec){none, 8};
	T("readv(f, {none, 8}, 1)", SYS_readv, f, L(iov), 1);
	iov[0] = (struct iovec){kern, 8};
	T("readv(f, {kernel, 8}, 1)", SYS_readv, f, L(iov), 1);
	iov[0] = (struct iovec){buf, (size_t)-1};
	T("readv(f, {buf, -1}, 1)", SYS_readv, f, L(iov), 1);
	iov[0] = (struct iovec){buf, 4};
	iov[1] = (struct iovec){kern, 4};
	T("readv(f, {buf, 4}{kernel, 4}, 2)", SYS_readv, f, L(iov), 2);
	iov[1] = (struct iovec){none, 4};
	T("pread... preadv(f, {buf, 4}{none, 4}, 2, 0)", SYS_preadv, f, L(iov), 2, 0);
	T("readv(-1, iov, 1)", SYS_readv, -1, L(iov), 1);
	T("readv(f, ro, 1)", SYS_readv, f, L(ro), 1);
	iov[0] = (struct iovec){NULL, 8};
	T("writev(null, {NULL, 8}, 1)", SYS_writev, devnull, L(iov), 1);
	T("writev(f, {NULL, 8}, 1)", SYS_writev, f, L(iov), 1);
	T("writev(f, iov, -1)", SYS_writev, f, L(iov), -1);
	T("writev(f, wild, 1)", SYS_writev, f, L(wild), 1);
	T("preadv2(f, iov, 1, 0, flags 0x10000)", SYS_preadv2, f, L(iov), 1, 0, 0, 0x10000);
	T("pwritev2(f, iov, 1, 0, flags 0x10000)", SYS_pwritev2, f, L(iov), 1, 0, 0, 0x10000);
	T("preadv2(f, iov, 1, -2, 0)", SYS_preadv2, f, L(iov), 1, -2, 0, 0);

	/* lseek */
	T("lseek(f, 1<<62, SEEK_SET)", SYS_lseek, f, 1L << 62, SEEK_SET);
	T("lseek(f, (1<<62)+1, SEEK_SET)", SYS_lseek, f, (1L << 62) + 1, SEEK_SET);
	T("lseek(f, 0xfffffffff000, SEEK_SET)", SYS_lseek, f, 0xfffffffff000L, SEEK_SET);
	T("lseek(f, 0x7fffffffffffffff, SEEK_SET)", SYS_lseek, f, huge, SEEK_SET);
	T("lseek(f, -1, SEEK_SET)", SYS_lseek, f, -1, SEEK_SET);
	T("lseek(f, 10, SEEK_SET)", SYS_lseek, f, 10, SEEK_SET);
	T("lseek(f, -20, SEEK_CUR)", SYS_lseek, f, -20, SEEK_CUR);
	T("lseek(f, huge, SEEK_CUR)", SYS_lseek, f, huge, SEEK_CUR);
	T("lseek(f, 0, 7)", SYS_lseek, f, 0, 7);
	T("lseek(f, 0, -1)", SYS_lseek, f, 0, -1);
	T("lseek(f, 5, SEEK_END)", SYS_lseek, f, 5, SEEK_END);
	T("lseek(f, -1000, SEEK_END)", SYS_lseek, f, -1000, SEEK_END);
	T("lseek(f, 1000, SEEK_DATA)", SYS_lseek, f, 1000, SEEK_DATA);
	T("lseek(f, -1, SEEK_HOLE)", SYS_lseek, f, -1, SEEK_HOLE);
	T("lseek(pipe, 0, SEEK_SET)", SYS_lseek, p[0], 0, SEEK_SET);
	T("lseek(-1, 0, SEEK_SET)", SYS_lseek, -1, 0, SEEK_SET);
	T("lseek(null, 123, SEEK_SET)", SYS_lseek, devnull, 123, SEEK_SET);
	T("lseek(dir, 0, SEEK_END)", SYS_lseek, dir, 0, SEEK_END);
	T("lseek(f, 0, SEEK_SET)", SYS_lseek, f, 0, SEEK_SET);

	/* open, close, dup, fcntl */
	T("open(NULL, O_RDONLY)", SYS_open, 0, O_RDONLY);
	T("open(wild, O_RDONLY)", SYS_open, L(wild), O_RDONLY);
	T("open(none, O_RDONLY)", SYS_open, L(none), O_RDONLY);
	T("open(kernel, O_RDONLY)", SYS_open, L(kern), O_RDONLY);
	T("open(\"\", O_RDONLY)", SYS_open, L(""), O_RDONLY);
	T("open(longname, O_RDONLY)", SYS_open, L(longname), O_RDONLY);
	T("open(\"f\", O_CREAT|O_EXCL)", SYS_open, L("f"), O_CREAT | O_EXCL | O_RDWR, 0644);
	T("open(\"f/x\", O_RDONLY)", SYS_open, L("f/x"), O_RDONLY);
	T("open(\"d\", O_WRONLY)", SYS_open, L("d"), O_WRONLY);
	T("open(\"f\", O_DIRECTORY)", SYS_open, L("f"), O_RDONLY | O_DIRECTORY);
	T("open(\"nope\", O_RDONLY)", SYS_open, L("nope"), O_RDONLY);
	T("open(\"link\", O_NOFOLLOW)", SYS_open, L("link"), O_RDONLY | O_NOFOLLOW);
	T("open(\"d\", O_TMPFILE without O_RDWR)", SYS_open, L("d"), O_TMPFILE & ~O_DIRECTORY, 0600);
	T("openat(-5, \"f\", O_RDONLY)", SYS_openat, -5, L("f"), O_RDONLY);
	T("openat(f, \"x\", O_RDONLY)", SYS_openat, f, L("x"), O_RDONLY);
	T("openat(1000000, \"f\", O_RDONLY)", SYS_openat, big, L("f"), O_RDONLY);
	T("openat(dir, NULL, O_RDONLY)", SYS_openat, dir, 0, O_RDONLY);
	T("creat(NULL, 0644)", SYS_creat, 0, 0644);
	T("creat(\"d\", 0644)", SYS_creat, L("d"), 0644);
	T("close(-1)", SYS_close, -1);
	T("close(closed)", SYS_close, closed);
	T("close(1000000)", SYS_close, big);
	T("close_range(5, 3, 0)", SYS_close_range, 5, 3, 0);
	T("close_range(1000, 2000, 0x80)", SYS_close_range, 1000, 2000, 0x80);
	T("close_range(1000, ~0, 0)", SYS_close_range, 1000, ~0U, 0);
	T("dup(-1)", SYS_dup, -1);
	T("dup(closed)", SYS_dup, closed);
	T("dup2(f, -1)", SYS_dup2, f, -1);
	T("dup2(-1, 20)", SYS_dup2, -1, 20);
	T("dup2(f, f)", SYS_dup2, f, f);
	T("dup2(closed, closed)", SYS_dup2, closed, closed);
	T("dup2(f, 1000000)", SYS_dup2, f, big);
	T("dup3(f, f, 0)", SYS_dup3, f, f, 0);
	T("dup3(f, 40, 1)", SYS_dup3, f, 40, 1);
	T("fcntl(-1, F_GETFD)", SYS_fcntl, -1, F_GETFD);
	T("fcntl(f, 9999)", SYS_fcntl, f, 9999);
	T("fcntl(f, F_GETFD)", SYS_fcntl, f, F_GETFD);
	T("fcntl(f, F_SETFD, 7)", SYS_fcntl, f, F_SETFD, 7);
	T("fcntl(f, F_GETFD)", SYS_fcntl, f, F_GETFD);
	T("fcntl(f, F_GETFL)", SYS_fcntl, f, F_GETFL);
	T("fcntl(f, F_DUPFD, -1)", SYS_fcntl, f, F_DUPFD, -1);
	T("fcntl(f, F_DUPFD, 1000000)", SYS_fcntl, f, F_DUPFD, big);
	T("fcntl(pipe, F_SETPIPE_SZ, -1)", SYS_fcntl, p[0], F_SETPIPE_SZ, -1);
	T("fcntl(pipe, F_SETPIPE_SZ, 0)", SYS_fcntl, p[0], F_SETPIPE_SZ, 0);
	T("fcntl(pipe, F_GETPIPE_SZ)", SYS_fcntl, p[0], F_GETPIPE_SZ);
	T("fcntl(pipe, F_SETPIPE_SZ, 100000)", SYS_fcntl, p[0], F_SETPIPE_SZ, 100000);
	T("fcntl(pipe, F_SETPIPE_SZ, 1<<31)", SYS_fcntl, p[0], F_SETPIPE_SZ, 1L << 31);
	T("fcntl(f, F_SETPIPE_SZ, 4096)", SYS_fcntl, f, F_SETPIPE_SZ, 4096);
	T("fcntl(f, F_GETPIPE_SZ)", SYS_fcntl, f, F_GETPIPE_SZ);
	T("fcntl(f, F_GETLK, NULL)", SYS_fcntl, f, F_GETLK, 0);
	T("fcntl(f, F_SETLK, ro)", SYS_fcntl, f, F_SETLK, L(ro));
	T("fcntl(f, F_GETLK, ro)", SYS_fcntl, f, F_GETLK, L(ro));
	T("fcntl(f, F_GETOWN)", SYS_fcntl, f, F_GETOWN);
	T("ioctl(-1, TCGETS, buf)", SYS_ioctl, -1, 0x5401, L(buf));
	T("ioctl(f, TCGETS, buf)", SYS_ioctl, f, 0x5401, L(buf));
	T("ioctl(pipe, TCGETS, buf)", SYS_ioctl, p[0], 0x5401, L(buf));
	T("ioctl(pipe, FIONREAD, NULL)", SYS_ioctl, p[0], 0x541b, 0);
	T("ioctl(pipe, FIONREAD, ro)", SYS_ioctl, p[0], 0x541b, L(ro));
	T("ioctl(pipe, FIONREAD, buf)", SYS_ioctl, p[0], 0x541b, L(buf));
	T("ioctl(f, FIONREAD, NULL)", SYS_ioctl, f, 0x541b, 0);
	T("ioctl(f, FIONBIO, NULL)", SYS_ioctl, f, 0x5421, 0);
	T("ioctl(null, TIOCGWINSZ, buf)", SYS_ioctl, devnull, 0x5413, L(buf));

	/* stat and friends */
	T("stat(NULL, buf)", SYS_stat, 0, L(buf));
	T("stat(\"f\", NULL)", SYS_stat, L("f"), 0);
	T("stat(\"f\", ro)", SYS_stat, L("f"), L(ro));
	T("stat(\"f\", none)", SYS_stat, L("f"), L(none));
	T("stat(\"f\", rodata)", SYS_stat, L("f"), L(rod));
	T("stat(\"f\", text)", SYS_stat, L("f"), L(text));
	T("stat(\"f\", edge)", SYS_stat, L("f"), L(edge));
	T("stat(\"f\", kernel)", SYS_stat, L("f"), L(kern));
	T("stat(\"nope\", NULL)", SYS_stat, L("nope"), 0);
	T("stat(\"\", buf)", SYS_stat, L(""), L(buf));
	T("stat(longname, buf)", SYS_stat, L(longname), L(buf));
	T("lstat(NULL, buf)", SYS_lstat, 0, L(buf));
	T("lstat(\"link\", ro)", SYS_lstat, L("link"), L(ro));
	T("fstat(-1, buf)", SYS_fstat, -1, L(buf));
	T("fstat(f, NULL)", SYS_fstat, f, 0);
	T("fstat(f, ro)", SYS_fstat, f, L(ro));
	T("fstat(pipe, text)", SYS_fstat, p[0], L(text));
	T("newfstatat(AT_FDCWD, \"\", buf, 0)", SYS_newfstatat, AT_FDCWD, L(""), L(buf), 0);
	T("newfstatat(f, \"\", buf, AT_EMPTY_PATH)", SYS_newfstatat, f, L(""), L(buf), AT_EMPTY_PATH);
	T("newfstatat(AT_FDCWD, \"f\", buf, 0x8000)", SYS_newfstatat, AT_FDCWD, L("f"), L(buf), 0x8000);
	T("newfstatat(-5, \"f\", buf, 0)", SYS_newfstatat, -5, L("f"), L(buf), 0);
	T("newfstatat(f, \"x\", buf, 0)", SYS_newfstatat, f, L("x"), L(buf), 0);
	T("statx(AT_FDCWD, \"f\", 0, 0x7ff, NULL)", SYS_statx, AT_FDCWD, L("f"), 0, 0x7ff, 0);
	T("statx(AT_FDCWD, \"f\", 0x6000, 0x7ff, buf)", SYS_statx, AT_FDCWD, L("f"), 0x6000, 0x7ff, L(buf));
	T("statx(AT_FDCWD, \"f\", 0x8000, 0x7ff, buf)", SYS_statx, AT_FDCWD, L("f"), 0x8000, 0x7ff, L(buf));
	T("statx(AT_FDCWD, \"f\", 0, 0x80000000, buf)", SYS_statx, AT_FDCWD, L("f"), 0, 0x80000000L, L(buf));
	T("statx(AT_FDCWD, NULL, 0, 0x7ff, buf)", SYS_statx, AT_FDCWD, 0, 0, 0x7ff, L(buf));
	T("statx(AT_FDCWD, \"f\", 0, 0x7ff, ro)", SYS_statx, AT_FDCWD, L("f"), 0, 0x7ff, L(ro));
	T("access(NULL, F_OK)", SYS_access, 0, F_OK);
	T("access(\"f\", 8)", SYS_access, L("f"), 8);
	T("access(\"nope\", F_OK)", SYS_access, L("nope"), F_OK);
	T("access(\"f/x\", F_OK)", SYS_access, L("f/x"), F_OK);
	T("faccessat(AT_FDCWD, \"f\", 8)", SYS_faccessat, AT_FDCWD, L("f"), 8);
	T("faccessat2(AT_FDCWD, \"f\", F_OK, 0x1)", SYS_faccessat2, AT_FDCWD, L("f"), F_OK, 0x1);
	T("faccessat2(AT_FDCWD, \"f\", 8, 0)", SYS_faccessat2, AT_FDCWD, L("f"), 8, 0);
	T("readlink(\"f\", buf, 64)", SYS_readlink, L("f"), L(buf), 64);
	T("readlink(\"link\", NULL, 64)", SYS_readlink, L("link"), 0, 64);
	T("readlink(\"link\", buf, 0)", SYS_readlink, L("link"), L(buf), 0);
	T("readlink(\"link\", buf, -1)", SYS_readlink, L("link"), L(buf), -1);
	T("readlink(\"link\", ro, 64)", SYS_readlink, L("link"), L(ro), 64);
	T("readlink(\"link\", buf, 64)", SYS_readlink, L("link"), L(buf), 64);
	T("readlink(NULL, buf, 64)", SYS_readlink, 0, L(buf), 64);
	T("readlinkat(-5, \"link\", buf, 64)", SYS_readlinkat, -5, L("link"), L(buf), 64);
	T("statfs(NULL, buf)", SYS_statfs, 0, L(buf));
	T("statfs(\".\", NULL)", SYS_statfs, L("."), 0);
	T("statfs(\".\", ro)", SYS_statfs, L("."), L(ro));
	T("fstatfs(-1, buf)", SYS_fstatfs, -1, L(buf));
	T("fstatfs(f, NULL)", SYS_fstatfs, f, 0);

	/* directories and names */
	T("getcwd(NULL, 100)", SYS_getcwd, 0, 100);
	T("getcwd(buf, 0)", SYS_getcwd, L(buf), 0);
	T("getcwd(buf, 1)", SYS_getcwd, L(buf), 1);
	T("getcwd(ro, 4096)", SYS_getcwd, L(ro), 4096);
	T("getcwd(edge, 4096)", SYS_getcwd, L(edge), 4096);
	T("chdir(NULL)", SYS_chdir, 0);
	T("chdir(\"f\")", SYS_chdir, L("f"));
	T("chdir(\"nope\")", SYS_chdir, L("nope"));
	T("chdir(\"\")", SYS_chdir, L(""));
	T("fchdir(-1)", SYS_fchdir, -1);
	T("fchdir(f)", SYS_fchdir, f);
	T("fchdir(pipe)", SYS_fchdir, p[0]);
	T("mkdir(NULL, 0755)", SYS_mkdir, 0, 0755);
	T("mkdir(\"d\", 0755)", SYS_mkdir, L("d"), 0755);
	T("mkdir(\"\", 0755)", SYS_mkdir, L(""), 0755);
	T("mkdir(\"f/x\", 0755)", SYS_mkdir, L("f/x"), 0755);
	T("mkdir(\"nope/x\", 0755)", SYS_mkdir, L("nope/x"), 0755);
	T("mkdir(\"d2\", 0755)", SYS_mkdir, L("d2"), 0755);
	T("mkdirat(-5, \"x\", 0755)", SYS_mkdirat, -5, L("x"), 0755);
	T("rmdir(\".\")", SYS_rmdir, L("."));
	T("rmdir(\"..\")", SYS_rmdir, L(".."));
	T("rmdir(\"f\")", SYS_rmdir, L("f"));
	T("rmdir(\"nope\")", SYS_rmdir, L("nope"));
	T("rmdir(\"d2/.\")", SYS_rmdir, L("d2/."));
	T("rmdir(NULL)", SYS_rmdir, 0);
	T("rmdir(\"d2\")", SYS_rmdir, L("d2"));
	T("unlink(\"d\")", SYS_unlink, L("d"));
	T("unlink(NULL)", SYS_unlink, 0);
	T("unlink(\"nope\")", SYS_unlink, L("nope"));
	T("unlink(\"\")", SYS_unlink, L(""));
	T("unlinkat(AT_FDCWD, \"d\", 0x1)", SYS_unlinkat, AT_FDCWD, L("d"), 0x1);
	T("unlinkat(AT_FDCWD, \"f\", AT_REMOVEDIR)", SYS_unlinkat, AT_FDCWD, L("f"), AT_REMOVEDIR);
	T("rename(\".\", \"x\")", SYS_rename, L("."), L("x"));
	T("rename(\"f\", \".\")", SYS_rename, L("f"), L("."));
	T("rename(\"..\", \"x\")", SYS_rename, L(".."), L("x"));
	T("rename(\"nope\", \"x\")", SYS_rename, L("nope"), L("x"));
	T("rename(NULL, \"x\")", SYS_rename, 0, L("x"));
	T("rename(\"f\", NULL)", SYS_rename, L("f"), 0);
	T("rename(\"d\", \"d/sub\")", SYS_rename, L("d"), L("d/sub"));
	T("rename(\"f\", \"d\")", SYS_rename, L("f"), L("d"));
	T("rename(\"d\", \"f\")", SYS_rename, L("d"), L("f"));
	T("rename(\"f\", \"f\")", SYS_rename, L("f"), L("f"));
	T("rename(\"f\", \"\")", SYS_rename, L("f"), L(""));
	T("renameat2(AT_FDCWD, \"f\", AT_FDCWD, \"x\", EXCHANGE|NOREPLACE)", SYS_renameat2, AT_FDCWD, L("f"), AT_FDCWD, L("x"), 3);
	T("renameat2(AT_FDCWD, \"f\", AT_FDCWD, \"link\", NOREPLACE)", SYS_renameat2, AT_FDCWD, L("f"), AT_FDCWD, L("link"), 1);
	T("renameat2(AT_FDCWD, \"f\", AT_FDCWD, \"x\", 0x100)", SYS_renameat2, AT_FDCWD, L("f"), AT_FDCWD, L("x"), 0x100);
	T("link(\"f\", \"f\")", SYS_link, L("f"), L("f"));
	T("link(\"d\", \"x\")", SYS_link, L("d"), L("x"));
	T("link(NULL, \"x\")", SYS_link, 0, L("x"));
	T("link(\"nope\", \"x\")", SYS_link, L("nope"), L("x"));
	T("linkat(AT_FDCWD, \"f\", AT_FDCWD, \"x\", 0x1)", SYS_linkat, AT_FDCWD, L("f"), AT_FDCWD, L("x"), 0x1);
	T("symlink(\"\", \"s\")", SYS_symlink, L(""), L("s"));
	T("symlink(\"t\", NULL)", SYS_symlink, L("t"), 0);
	T("symlink(\"t\", \"f\")", SYS_symlink, L("t"), L("f"));
	T("symlink(longname, \"s\")", SYS_symlink, L(longname), L("s"));
	T("chmod(NULL, 0644)", SYS_chmod, 0, 0644);
	T("chmod(\"nope\", 0644)", SYS_chmod, L("nope"), 0644);
	T("chmod(\"f\", 0644)", SYS_chmod, L("f"), 0644);
	T("fchmod(-1, 0644)", SYS_fchmod, -1, 0644);
	T("fchmodat(-5, \"f\", 0644)", SYS_fchmodat, -5, L("f"), 0644);
	T("chown(\"f\", -1, -1)", SYS_chown, L("f"), -1, -1);
	T("chown(NULL, -1, -1)", SYS_chown, 0, -1, -1);
	T("fchown(-1, -1, -1)", SYS_fchown, -1, -1, -1);
	T("fchownat(AT_FDCWD, \"f\", -1, -1, 0x1)", SYS_fchownat, AT_FDCWD, L("f"), -1, -1, 0x1);
	T("truncate(NULL, 0)", SYS_truncate, 0, 0);
	T("truncate(\"f\", -1)", SYS_truncate, L("f"), -1);
	T("truncate(\"d\", 0)", SYS_truncate, L("d"), 0);
	T("truncate(\"nope\", 0)", SYS_truncate, L("nope"), 0);
	T("truncate(\"f\", 1<<62)", SYS_truncate, L("f"), 1L << 62);
	T("ftruncate(-1, 0)", SYS_ftruncate, -1, 0);
	T("ftruncate(rdonly, 0)", SYS_ftruncate, rdonly, 0);
	T("ftruncate(pipe, 0)", SYS_ftruncate, p[1], 0);
	T("ftruncate(f, -1)", SYS_ftruncate, f, -1);
	T("ftruncate(dir, 0)", SYS_ftruncate, dir, 0);
	T("ftruncate(f, 100)", SYS_ftruncate, f, 100);
	T("fsync(-1)", SYS_fsync, -1);
	T("fsync(pipe)", SYS_fsync, p[0]);
	T("fsync(f)", SYS_fsync, f);
	T("fdatasync(null)", SYS_fdatasync, devnull);
	T("umask(077)", SYS_umask, 077);
	T("umask(022)", SYS_umask, 022);
	T("utimensat(AT_FDCWD, NULL, NULL, 0)", SYS_utimensat, AT_FDCWD, 0, 0, 0);
	long badtimes[4] = {0, 1000000000L, 0, 0};
	T("utimensat(AT_FDCWD, \"f\", {0, 1e9}, 0)", SYS_utimensat, AT_FDCWD, L("f"), L(badtimes), 0);
	T("utimensat(AT_FDCWD, \"f\", NULL, 0x8000)", SYS_utimensat, AT_FDCWD, L("f"), 0, 0x8000);
	T("utimensat(AT_FDCWD, \"f\", wild, 0)", SYS_utimensat, AT_FDCWD, L("f"), L(wild), 0);
	T("fadvise64(f, 0, 0, 99)", SYS_fadvise64, f, 0, 0, 99);
	T("fadvise64(pipe, 0, 0, 0)", SYS_fadvise64, p[0], 0, 0, 0);
	T("fadvise64(-1, 0, 0, 0)", SYS_fadvise64, -1, 0, 0, 0);
	T("fadvise64(f, 0, -1, 0)", SYS_fadvise64, f, 0, -1, 0);
	T("flock(-1, LOCK_SH)", SYS_flock, -1, 1);
	T("flock(f, 99)", SYS_flock, f, 99);
	T("flock(f, LOCK_UN)", SYS_flock, f, 8);
	T("getdents64(-1, buf, 4096)", SYS_getdents64, -1, L(buf), 4096);
	T("getdents64(f, buf, 4096)", SYS_getdents64, f, L(buf), 4096);
	T("getdents64(dir, NULL, 4096)", SYS_getdents64, dir, 0, 4096);
	T("getdents64(dir, buf, 1)", SYS_getdents64, dir, L(buf), 1);
	T("getdents64(dir, ro, 4096)", SYS_getdents64, dir, L(ro), 4096);
	T("getdents64(dir, kernel, 4096)", SYS_getdents64, dir, L(kern), 4096);

	/* memory */
	TQ("mmap(NULL, 0, RW, PRIVATE|ANON)", SYS_mmap, 0, 0, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, 1<<62, RW, PRIVATE|ANON)", SYS_mmap, 0, 1L << 62, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, -4096, RW, PRIVATE|ANON)", SYS_mmap, 0, -4096L, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, 4096, RW, ANON)", SYS_mmap, 0, 4096, 3, MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, 4096, RW, PRIVATE, -1)", SYS_mmap, 0, 4096, 3, MAP_PRIVATE, -1, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, f, 1)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, f, 1);
	TQ("mmap(hole+1, 4096, RW, PRIVATE|ANON|FIXED)", SYS_mmap, L(gap) + 1, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	TQ("mmap(NULL, 4096, RW, SHARED, rdonly, 0)", SYS_mmap, 0, 4096, 3, MAP_SHARED, rdonly, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, wronly, 0)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, wronly, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, dir, 0)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, dir, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, pipe, 0)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, p[0], 0);
	TQ("mmap(NULL, 4096, 0x10, PRIVATE|ANON)", SYS_mmap, 0, 4096, 0x10, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, 4096, R, 0xf|ANON)", SYS_mmap, 0, 4096, 1, 0xf | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(NULL, 4096, R, SHARED_VALIDATE|0x400000|ANON)", SYS_mmap, 0, 4096, 1, 3 | 0x400000 | MAP_ANONYMOUS, -1, 0);
	TQ("mmap(kernel, 4096, RW, PRIVATE|ANON|FIXED)", SYS_mmap, L(kern), 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, f, -4096)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, f, -4096L);
	T("munmap(hole+1, 4096)", SYS_munmap, L(gap) + 1, 4096);
	T("munmap(hole, 0)", SYS_munmap, L(gap), 0);
	T("munmap(hole, 4096)", SYS_munmap, L(gap), 4096);
	T("munmap(kernel, 4096)", SYS_munmap, L(kern), 4096);
	T("munmap(hole, -4096)", SYS_munmap, L(gap), -4096L);
	T("mprotect(hole+1, 4096, R)", SYS_mprotect, L(gap) + 1, 4096, 1);
	T("mprotect(hole, 4096, R)", SYS_mprotect, L(gap), 4096, 1);
	T("mprotect(ro, 4096, 0x10)", SYS_mprotect, L(ro), 4096, 0x10);
	T("mprotect(ro, 0, R)", SYS_mprotect, L(ro), 0, 1);
	T("mprotect(ro, -4096, R)", SYS_mprotect, L(ro), -4096L, 1);
	T("madvise(buf, 4096, 999)", SYS_madvise, L(buf), 4096, 999);
	T("madvise(buf, 4096, 12345678)", SYS_madvise, L(buf), 4096, 12345678);
	T("madvise(buf+1, 4096, MADV_NORMAL)", SYS_madvise, L(buf) + 1, 4096, MADV_NORMAL);
	T("madvise(hole, 4096, MADV_NORMAL)", SYS_madvise, L(gap), 4096, MADV_NORMAL);
	T("madvise(hole, 4096, MADV_DONTNEED)", SYS_madvise, L(gap), 4096, MADV_DONTNEED);
	T("madvise(buf, 0, 999)", SYS_madvise, L(buf), 0, 999);
	T("madvise(buf, 0, MADV_NORMAL)", SYS_madvise, L(buf), 0, MADV_NORMAL);
	T("madvise(buf, -4096, MADV_NORMAL)", SYS_madvise, L(buf), -4096L, MADV_NORMAL);
	T("madvise(buf, 4096, MADV_HWPOISON)", SYS_madvise, L(buf), 4096, 100);
	T("madvise(buf, 4096, MADV_WILLNEED)", SYS_madvise, L(buf), 4096, MADV_WILLNEED);
	T("madvise(text, 4096, MADV_DONTNEED)", SYS_madvise, L(text) & ~4095L, 4096, MADV_DONTNEED);
	TQ("mremap(hole+1, 4096, 8192, 0)", SYS_mremap, L(gap) + 1, 4096, 8192, 0);
	TQ("mremap(ro, 0, 0, 0)", SYS_mremap, L(ro), 0, 0, 0);
	TQ("mremap(ro, 4096, 8192, 0x80)", SYS_mremap, L(ro), 4096, 8192, 0x80);
	TQ("mremap(hole, 4096, 8192, MAYMOVE)", SYS_mremap, L(gap), 4096, 8192, 1);
	TQ("mremap(ro, 4096, 8192, FIXED)", SYS_mremap, L(ro), 4096, 8192, 2);
	T("msync(buf+1, 4096, MS_SYNC)", SYS_msync, L(buf) + 1, 4096, MS_SYNC);
	T("msync(buf, 4096, MS_SYNC|MS_ASYNC)", SYS_msync, L(buf), 4096, MS_SYNC | MS_ASYNC);
	T("msync(buf, 4096, 0x100)", SYS_msync, L(buf), 4096, 0x100);
	T("msync(hole, 4096, MS_SYNC)", SYS_msync, L(gap), 4096, MS_SYNC);
	T("msync(buf, 4096, MS_SYNC)", SYS_msync, L(buf), 4096, MS_SYNC);
	T("mincore(buf+1, 4096, buf)", SYS_mincore, L(buf) + 1, 4096, L(buf + 8192));
	T("mincore(buf, 4096, NULL)", SYS_mincore, L(buf), 4096, 0);
	T("mincore(buf, 4096, ro)", SYS_mincore, L(buf), 4096, L(ro));
	T("mincore(hole, 4096, buf)", SYS_mincore, L(gap), 4096, L(buf + 8192));
	T("mincore(buf, -4096, buf)", SYS_mincore, L(buf), -4096L, L(buf + 8192));
	T("mincore(buf, 0, NULL)", SYS_mincore, L(buf), 0, 0);
	T("mincore(kernel, 4096, buf)", SYS_mincore, L(kern), 4096, L(buf + 8192));
	TQ("brk(0)", SYS_brk, 0);
	TQ("brk(kernel)", SYS_brk, L(kern));
	T("mlock(hole, 4096)", SYS_mlock, L(gap), 4096);
	T("mlock(buf, 0)", SYS_mlock, L(buf), 0);
	T("munlock(hole, 4096)", SYS_munlock, L(gap), 4096);
	T("mlockall(0)", SYS_mlockall, 0);
	T("mlockall(0x10)", SYS_mlockall, 0x10);
	T("munlockall()", SYS_munlockall, 0);

	/* process */
	TQ("getpid()", SYS_getpid, 0);
	TQ("getppid()", SYS_getppid, 0);
	TQ("gettid()", SYS_gettid, 0);
	T("uname(NULL)", SYS_uname, 0);
	T("uname(ro)", SYS_uname, L(ro));
	T("uname(rodata)", SYS_uname, L(rod));
	T("uname(edge)", SYS_uname, L(edge));
	T("uname(buf)", SYS_uname, L(buf));
	printf("# sysname %s\n", buf);
	T("getrlimit(RLIMIT_NOFILE, NULL)", SYS_getrlimit, RLIMIT_NOFILE, 0);
	T("getrlimit(RLIMIT_NOFILE, ro)", SYS_getrlimit, RLIMIT_NOFILE, L(ro));
	T("getrlimit(99, buf)", SYS_getrlimit, 99, L(buf));
	T("getrlimit(99, NULL)", SYS_getrlimit, 99, 0);
	T("setrlimit(RLIMIT_NOFILE, NULL)", SYS_setrlimit, RLIMIT_NOFILE, 0);
	T("setrlimit(99, NULL)", SYS_setrlimit, 99, 0);
	long rl[2] = {10, 5};
	T("setrlimit(RLIMIT_CORE, {10, 5})", SYS_setrlimit, RLIMIT_CORE, L(rl));
	T("prlimit64(0, RLIMIT_NOFILE, NULL, NULL)", SYS_prlimit64, 0, RLIMIT_NOFILE, 0, 0);
	T("prlimit64(999999, RLIMIT_NOFILE, NULL, buf)", SYS_prlimit64, 999999, RLIMIT_NOFILE, 0, L(buf));
	T("prlimit64(0, 99, NULL, buf)", SYS_prlimit64, 0, 99, 0, L(buf));
	T("prlimit64(0, RLIMIT_NOFILE, wild, NULL)", SYS_prlimit64, 0, RLIMIT_NOFILE, L(wild), 0);
	T("prlimit64(0, RLIMIT_NOFILE, NULL, ro)", SYS_prlimit64, 0, RLIMIT_NOFILE, 0, L(ro));
	T("prlimit64(999999, 99, wild, NULL)", SYS_prlimit64, 999999, 99, L(wild), 0);
	T("sched_getaffinity(0, 0, buf)", SYS_sched_getaffinity, 0, 0, L(buf));
	T("sched_getaffinity(0, 7, buf)", SYS_sched_getaffinity, 0, 7, L(buf));
	T("sched_getaffinity(0, 128, NULL)", SYS_sched_getaffinity, 0, 128, 0);
	T("sched_getaffinity(0, 128, ro)", SYS_sched_getaffinity, 0, 128, L(ro));
	T("sched_getaffinity(999999, 128, buf)", SYS_sched_getaffinity, 999999, 128, L(buf));
	T("sched_setaffinity(0, 128, wild)", SYS_sched_setaffinity, 0, 128, L(wild));
	T("sched_setaffinity(0, 128, NULL)", SYS_sched_setaffinity, 0, 128, 0);
	T("sched_setaffinity(0, 0, wild)", SYS_sched_setaffinity, 0, 0, L(wild));
	memset(buf, 0, 128);
	T("sched_setaffinity(0, 128, zeros)", SYS_sched_setaffinity, 0, 128, L(buf));
	T("sched_setaffinity(999999, 128, buf)", SYS_sched_setaffinity, 999999, 128, L(buf));
	T("sched_yield()", SYS_sched_yield, 0);
	T("getcpu(NULL, NULL)", SYS_getcpu, 0, 0, 0);
	T("getcpu(ro, NULL)", SYS_getcpu, L(ro), 0, 0);
	T("getcpu(NULL, text)", SYS_getcpu, 0, L(text), 0);
	T("sysinfo(NULL)", SYS_sysinfo, 0);
	T("sysinfo(ro)", SYS_sysinfo, L(ro));
	T("times(ro)", SYS_times, L(ro));
	T("getrusage(99, buf)", SYS_getrusage, 99, L(buf));
	T("getrusage(RUSAGE_SELF, NULL)", SYS_getrusage, 0, 0);
	T("getrusage(RUSAGE_SELF, ro)", SYS_getrusage, 0, L(ro));
	T("getrandom(NULL, 8, 0)", SYS_getrandom, 0, 8, 0);
	T("getrandom(buf, 8, 0x100)", SYS_getrandom, L(buf), 8, 0x100);
	T("getrandom(buf, 0, 0)", SYS_getrandom, L(buf), 0, 0);
	T("getrandom(ro, 8, 0)", SYS_getrandom, L(ro), 8, 0);
	T("getrandom(edge, 64, 0)", SYS_getrandom, L(edge), 64, 0);
	T("getrandom(buf, 8, GRND_RANDOM|GRND_INSECURE)", SYS_getrandom, L(buf), 8, 6);
	T("getrandom(kernel, 8, 0)", SYS_getrandom, L(kern), 8, 0);
	T("getgroups(-1, buf)", SYS_getgroups, -1, L(buf));
	T("getresuid(NULL, NULL, NULL)", SYS_getresuid, 0, 0, 0);
	T("getresuid(ro, ro, ro)", SYS_getresuid, L(ro), L(ro), L(ro));
	T("getresgid(buf, buf, text)", SYS_getresgid, L(buf), L(buf), L(text));
	T("arch_prctl(0x9999, 0)", SYS_arch_prctl, 0x9999, 0);
	T("arch_prctl(ARCH_GET_FS, NULL)", SYS_arch_prctl, 0x1003, 0);
	T("arch_prctl(ARCH_GET_FS, ro)", SYS_arch_prctl, 0x1003, L(ro));
	T("arch_prctl(ARCH_SET_FS, kernel)", SYS_arch_prctl, 0x1002, L(kern));
	T("prctl(PR_SET_NAME, NULL)", SYS_prctl, 15, 0);
	T("prctl(PR_SET_NAME, none)", SYS_prctl, 15, L(none));
	T("prctl(PR_GET_NAME, NULL)", SYS_prctl, 16, 0);
	T("prctl(PR_GET_NAME, ro)", SYS_prctl, 16, L(ro));
	T("prctl(9999, 0)", SYS_prctl, 9999, 0);
	T("prctl(PR_SET_PDEATHSIG, 99)", SYS_prctl, 1, 99);
	T("prctl(PR_GET_PDEATHSIG, NULL)", SYS_prctl, 2, 0);
	T("prctl(PR_GET_DUMPABLE)", SYS_prctl, 3, 0);
	T("prctl(PR_SET_DUMPABLE, 5)", SYS_prctl, 4, 5);
	T("set_robust_list(NULL, 0)", SYS_set_robust_list, 0, 0);
	T("set_robust_list(buf, 24)", SYS_set_robust_list, L(buf + 4096), 24);
	T("kill(self, 0)", SYS_kill, getpid(), 0);
	T("kill(self, 99)", SYS_kill, getpid(), 99);
	T("kill(999999, 0)", SYS_kill, 999999, 0);
	T("tkill(0, 0)", SYS_tkill, 0, 0);
	T("tkill(-1, 0)", SYS_tkill, -1, 0);
	T("tgkill(-1, tid, 0)", SYS_tgkill, -1, gettid(), 0);
	T("tgkill(self, 999999, 0)", SYS_tgkill, getpid(), 999999, 0);
	T("tgkill(self, tid, 99)", SYS_tgkill, getpid(), gettid(), 99);
	T("rt_sigaction(99, NULL, NULL, 8)", SYS_rt_sigaction, 99, 0, 0, 8);
	T("rt_sigaction(0, NULL, NULL, 8)", SYS_rt_sigaction, 0, 0, 0, 8);
	T("rt_sigaction(SIGKILL, buf, NULL, 8)", SYS_rt_sigaction, SIGKILL, L(buf), 0, 8);
	T("rt_sigaction(SIGKILL, NULL, buf, 8)", SYS_rt_sigaction, SIGKILL, 0, L(buf), 8);
	T("rt_sigaction(SIGUSR1, NULL, NULL, 4)", SYS_rt_sigaction, SIGUSR1, 0, 0, 4);
	T("rt_sigaction(SIGUSR1, wild, NULL, 8)", SYS_rt_sigaction, SIGUSR1, L(wild), 0, 8);
	T("rt_sigaction(SIGUSR1, NULL, ro, 8)", SYS_rt_sigaction, SIGUSR1, 0, L(ro), 8);
	T("rt_sigaction(SIGUSR1, NULL, NULL, 8)", SYS_rt_sigaction, SIGUSR1, 0, 0, 8);
	T("rt_sigprocmask(99, buf, NULL, 8)", SYS_rt_sigprocmask, 99, L(buf), 0, 8);
	T("rt_sigprocmask(99, NULL, NULL, 8)", SYS_rt_sigprocmask, 99, 0, 0, 8);
	T("rt_sigprocmask(SIG_BLOCK, NULL, NULL, 4)", SYS_rt_sigprocmask, SIG_BLOCK, 0, 0, 4);
	T("rt_sigprocmask(SIG_BLOCK, wild, NULL, 8)", SYS_rt_sigprocmask, SIG_BLOCK, L(wild), 0, 8);
	T("rt_sigprocmask(SIG_BLOCK, NULL, ro, 8)", SYS_rt_sigprocmask, SIG_BLOCK, 0, L(ro), 8);
	T("rt_sigprocmask(SIG_BLOCK, NULL, text, 8)", SYS_rt_sigprocmask, SIG_BLOCK, 0, L(text), 8);
	T("rt_sigpending(NULL, 8)", SYS_rt_sigpending, 0, 8);
	T("rt_sigpending(buf, 4)", SYS_rt_sigpending, L(buf), 4);
	T("rt_sigpending(buf, 16)", SYS_rt_sigpending, L(buf), 16);
	T("rt_sigpending(ro, 8)", SYS_rt_sigpending, L(ro), 8);
	T("sigaltstack(NULL, NULL)", SYS_sigaltstack, 0, 0);
	T("sigaltstack(wild, NULL)", SYS_sigaltstack, L(wild), 0);
	T("sigaltstack(NULL, ro)", SYS_sigaltstack, 0, L(ro));
	long ss[3] = {L(buf), 0x4, 65536};
	T("sigaltstack({buf, 0x4, 64K}, NULL)", SYS_sigaltstack, L(ss), 0);
	long ss2[3] = {L(buf), 0, 100};
	T("sigaltstack({buf, 0, 100}, NULL)", SYS_sigaltstack, L(ss2), 0);

	/* time */
	T("clock_gettime(99, buf)", SYS_clock_gettime, 99, L(buf));
	T("clock_gettime(10, buf)", SYS_clock_gettime, 10, L(buf));
	T("clock_gettime(CLOCK_MONOTONIC, NULL)", SYS_clock_gettime, 1, 0);
	T("clock_gettime(CLOCK_MONOTONIC, ro)", SYS_clock_gettime, 1, L(ro));
	T("clock_gettime(CLOCK_MONOTONIC, none)", SYS_clock_gettime, 1, L(none));
	T("clock_gettime(CLOCK_MONOTONIC, text)", SYS_clock_gettime, 1, L(text));
	T("clock_gettime(CLOCK_REALTIME, rodata)", SYS_clock_gettime, 0, L(rod));
	T("clock_gettime(CLOCK_REALTIME, edge)", SYS_clock_gettime, 0, L(edge));
	T("clock_gettime(CLOCK_REALTIME, kernel)", SYS_clock_gettime, 0, L(kern));
	T("clock_gettime(CLOCK_BOOTTIME, buf)", SYS_clock_gettime, 7, L(buf));
	T("clock_getres(99, NULL)", SYS_clock_getres, 99, 0);
	T("clock_getres(CLOCK_MONOTONIC, NULL)", SYS_clock_getres, 1, 0);
	T("clock_getres(CLOCK_MONOTONIC, ro)", SYS_clock_getres, 1, L(ro));
	T("clock_getres(CLOCK_MONOTONIC, buf)", SYS_clock_getres, 1, L(buf));
	printf("# resolution %ld.%09ld\n", ((long *)buf)[0], ((long *)buf)[1]);
	T("gettimeofday(NULL, NULL)", SYS_gettimeofday, 0, 0);
	T("gettimeofday(ro, NULL)", SYS_gettimeofday, L(ro), 0);
	T("gettimeofday(NULL, ro)", SYS_gettimeofday, 0, L(ro));
	T("gettimeofday(text, NULL)", SYS_gettimeofday, L(text), 0);
	T("time(ro)", SYS_time, L(ro));
	T("time(rodata)", SYS_time, L(rod));
	T("nanosleep(NULL, NULL)", SYS_nanosleep, 0, 0);
	long ts[2] = {0, -1};
	T("nanosleep({0, -1}, NULL)", SYS_nanosleep, L(ts), 0);
	ts[1] = 1000000000L;
	T("nanosleep({0, 1e9}, NULL)", SYS_nanosleep, L(ts), 0);
	ts[0] = -1, ts[1] = 0;
	T("nanosleep({-1, 0}, NULL)", SYS_nanosleep, L(ts), 0);
	ts[0] = 0, ts[1] = 0;
	T("nanosleep({0, 0}, ro)", SYS_nanosleep, L(ts), L(ro));
	T("nanosleep(wild, NULL)", SYS_nanosleep, L(wild), 0);
	T("clock_nanosleep(99, 0, {0, 0}, NULL)", SYS_clock_nanosleep, 99, 0, L(ts), 0);
	T("clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, {0, 0}, NULL)", SYS_clock_nanosleep, 3, 0, L(ts), 0);
	T("clock_nanosleep(CLOCK_MONOTONIC, 0, NULL, NULL)", SYS_clock_nanosleep, 1, 0, 0, 0);
	T("clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, {0, 0}, NULL)", SYS_clock_nanosleep, 1, 1, L(ts), 0);
	ts[1] = -5;
	T("clock_nanosleep(CLOCK_MONOTONIC, 0, {0, -5}, NULL)", SYS_clock_nanosleep, 1, 0, L(ts), 0);

	/* poll */
	T("poll(NULL, 1, 0)", SYS_poll, 0, 1, 0);
	T("poll(NULL, 0, 0)", SYS_poll, 0, 0, 0);
	T("poll(buf, 100000000, 0)", SYS_poll, L(buf), 100000000, 0);
	int pfd[4] = {-1, POLLIN, closed, POLLIN};
	T("poll({-1, closed}, 2, 0)", SYS_poll, L(pfd), 2, 0);
	printf("# revents %#x %#x\n", pfd[1] >> 16, pfd[3] >> 16);
	T("poll(ro, 1, 0)", SYS_poll, L(ro), 1, 0);
	T("poll(rodata, 1, 0)", SYS_poll, L(rod), 1, 0);
	long pts[2] = {0, 1000000000L};
	T("ppoll(pfd, 1, {0, 1e9}, NULL, 8)", SYS_ppoll, L(pfd), 1, L(pts), 0, 8);
	T("ppoll(pfd, 1, NULL, buf, 4)", SYS_ppoll, L(pfd), 1, 0, L(buf), 4);
	T("ppoll(pfd, 1, wild, NULL, 8)", SYS_ppoll, L(pfd), 1, L(wild), 0, 8);

	/* pipes */
	T("pipe(NULL)", SYS_pipe, 0);
	T("pipe(ro)", SYS_pipe, L(ro));
	T("pipe(rodata)", SYS_pipe, L(rod));
	T("pipe(text)", SYS_pipe, L(text));
	T("pipe(none)", SYS_pipe, L(none));
	T("pipe2(buf, 0x1)", SYS_pipe2, L(buf), 0x1);
	T("pipe2(buf, O_NONBLOCK|0x80000000)", SYS_pipe2, L(buf), O_NONBLOCK | 0x80000000L);

	/* event files */
	T("epoll_create(-1)", SYS_epoll_create, -1);
	T("epoll_create1(0x1)", SYS_epoll_create1, 0x1);
	int ep = syscall(SYS_epoll_create1, 0);
	T("epoll_ctl(ep, ADD, pipe, NULL)", SYS_epoll_ctl, ep, 1, p[0], 0);
	T("epoll_ctl(ep, ADD, pipe, ro)", SYS_epoll_ctl, ep, 1, p[0], L(ro));
	T("epoll_ctl(ep, DEL, pipe, NULL)", SYS_epoll_ctl, ep, 2, p[0], 0);
	T("epoll_ctl(ep, ADD, f, buf)", SYS_epoll_ctl, ep, 1, f, L(buf));
	T("epoll_wait(ep, ro, 1, 0)", SYS_epoll_wait, ep, L(ro), 1, 0);
	T("epoll_wait(ep, kernel, 1, 0)", SYS_epoll_wait, ep, L(kern), 1, 0);
	T("epoll_wait(ep, buf, -1, 0)", SYS_epoll_wait, ep, L(buf), -1, 0);
	T("epoll_pwait(ep, buf, 1, 0, buf, 7)", SYS_epoll_pwait, ep, L(buf), 1, 0, L(buf), 7);
	T("eventfd2(0, 0x10)", SYS_eventfd2, 0, 0x10);
	int efd = syscall(SYS_eventfd2, 1, 0);
	T("read(efd, ro, 8)", SYS_read, efd, L(ro), 8);
	T("read(efd, buf, 4)", SYS_read, efd, L(buf), 4);
	T("write(efd, NULL, 8)", SYS_write, efd, 0, 8);
	T("write(efd, NULL, 4)", SYS_write, efd, 0, 4);
	T("timerfd_create(CLOCK_MONOTONIC, 0x1)", SYS_timerfd_create, 1, 0x1);
	T("timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0)", SYS_timerfd_create, 2, 0);
	int tfd = syscall(SYS_timerfd_create, 1, 0);
	T("timerfd_settime(tfd, 0, NULL, NULL)", SYS_timerfd_settime, tfd, 0, 0, 0);
	T("timerfd_gettime(tfd, NULL)", SYS_timerfd_gettime, tfd, 0);
	T("timerfd_gettime(tfd, ro)", SYS_timerfd_gettime, tfd, L(ro));
	T("timerfd_gettime(f, buf)", SYS_timerfd_gettime, f, L(buf));

	/* sockets, processes, unknown calls */
	T("connect(-1, NULL, 0)", SYS_connect, -1, 0, 0);
	T("connect(f, NULL, 0)", SYS_connect, f, 0, 0);
	T("getsockopt(pipe, 0, 0, NULL, NULL)", SYS_getsockopt, p[0], 0, 0, 0, 0);
	T("sendto(null, buf, 1, 0, NULL, 0)", SYS_sendto, devnull, L(buf), 1, 0, 0, 0);
	T("execve(NULL, NULL, NULL)", SYS_execve, 0, 0, 0);
	T("execve(\"nope\", NULL, NULL)", SYS_execve, L("nope"), 0, 0);
	T("rseq(NULL, 0, 0, 0)", SYS_rseq, 0, 0, 0, 0);

	/* groups and sessions (the test starts the native run as a session
	 * leader, which is how emuprof shows the process), memory policy,
	 * fallocate, mknod */
	T("setsid()", SYS_setsid, 0);
	T("setpgid(0, 0)", SYS_setpgid, 0, 0);
	T("setpgid(0, -1)", SYS_setpgid, 0, -1);
	T("setpgid(999999, 0)", SYS_setpgid, 999999, 0);
	printf("# getpgid(0) == getpid(): %d, getsid(0) == getpid(): %d\n",
	       syscall(SYS_getpgid, 0) == getpid(), syscall(SYS_getsid, 0) == getpid());
	T("getpgid(999999)", SYS_getpgid, 999999);
	T("getsid(-1)", SYS_getsid, -1);
	int mode = -1;
	unsigned long nodes[2] = {~0UL, ~0UL};
	T("get_mempolicy(&mode, nodes, 64, NULL, 0)", SYS_get_mempolicy, L(&mode), L(nodes), 64, 0, 0);
	printf("# mode %d nodes %#lx\n", mode, nodes[0]);
	T("get_mempolicy(NULL, NULL, 0, NULL, 0)", SYS_get_mempolicy, 0, 0, 0, 0, 0);
	T("get_mempolicy(NULL, nodes, 0, NULL, 0)", SYS_get_mempolicy, 0, L(nodes), 0, 0, 0);
	T("get_mempolicy(&mode, NULL, 0, NULL, 0x8)", SYS_get_mempolicy, L(&mode), 0, 0, 0, 8);
	T("get_mempolicy(&mode, NULL, 0, buf, 0)", SYS_get_mempolicy, L(&mode), 0, 0, L(buf), 0);
	T("get_mempolicy(&mode, NULL, 0, hole, MPOL_F_ADDR)", SYS_get_mempolicy, L(&mode), 0, 0, L(gap), 2);
	T("get_mempolicy(&mode, NULL, 0, buf, MPOL_F_NODE|MPOL_F_ADDR)", SYS_get_mempolicy, L(&mode), 0, 0, L(buf), 3);
	printf("# node %d\n", mode);
	T("get_mempolicy(&mode, NULL, 0, NULL, MPOL_F_NODE)", SYS_get_mempolicy, L(&mode), 0, 0, 0, 1);
	T("get_mempolicy(ro, NULL, 0, NULL, 0)", SYS_get_mempolicy, L(ro), 0, 0, 0, 0);
	T("get_mempolicy(NULL, nodes, 64, NULL, MPOL_F_MEMS_ALLOWED)", SYS_get_mempolicy, 0, L(nodes), 64, 0, 4);
	printf("# allowed %#lx\n", nodes[0]);
	T("set_mempolicy(99, NULL, 0)", SYS_set_mempolicy, 99, 0, 0);
	T("set_mempolicy(MPOL_BIND, NULL, 0)", SYS_set_mempolicy, 2, 0, 0);
	nodes[0] = 2;
	T("set_mempolicy(MPOL_BIND, {node 1}, 64)", SYS_set_mempolicy, 2, L(nodes), 64);
	T("set_mempolicy(MPOL_BIND, wild, 64)", SYS_set_mempolicy, 2, L(wild), 64);
	nodes[0] = 1;
	T("set_mempolicy(MPOL_DEFAULT, {node 0}, 64)", SYS_set_mempolicy, 0, L(nodes), 64);
	T("set_mempolicy(MPOL_INTERLEAVE, {node 0}, 64)", SYS_set_mempolicy, 3, L(nodes), 64);
	T("get_mempolicy(&mode, nodes, 64, NULL, 0)", SYS_get_mempolicy, L(&mode), L(nodes), 64, 0, 0);
	printf("# mode %d nodes %#lx\n", mode, nodes[0]);
	T("get_mempolicy(&mode, NULL, 0, NULL, MPOL_F_NODE)", SYS_get_mempolicy, L(&mode), 0, 0, 0, 1);
	T("set_mempolicy(MPOL_LOCAL, {node 0}, 64)", SYS_set_mempolicy, 4, L(nodes), 64);
	T("set_mempolicy(MPOL_PREFERRED, NULL, 0)", SYS_set_mempolicy, 1, 0, 0);
	T("get_mempolicy(&mode, NULL, 0, NULL, 0)", SYS_get_mempolicy, L(&mode), 0, 0, 0, 0);
	printf("# mode %d\n", mode);
	T("set_mempolicy(MPOL_DEFAULT, NULL, 0)", SYS_set_mempolicy, 0, 0, 0);
	int fa = open("fa", O_RDWR | O_CREAT, 0644);
	T("fallocate(fa, 0, 0, 8192)", SYS_fallocate, fa, 0, 0, 8192);
	T("lseek(fa, 0, SEEK_END)", SYS_lseek, fa, 0, SEEK_END);
	T("fallocate(fa, KEEP_SIZE, 0, 100000)", SYS_fallocate, fa, 1, 0, 100000);
	T("lseek(fa, 0, SEEK_END)", SYS_lseek, fa, 0, SEEK_END);
	T("pwrite64(fa, rodata, 100, 0)", SYS_pwrite64, fa, L(rod), 100, 0);
	T("fallocate(fa, PUNCH_HOLE|KEEP_SIZE, 4, 8)", SYS_fallocate, fa, 3, 4, 8);
	T("pread64(fa, buf, 16, 0)", SYS_pread64, fa, L(buf), 16, 0);
	printf("# bytes %02x %02x %02x %02x\n", buf[3], buf[4], buf[11], buf[12]);
	T("fallocate(fa, PUNCH_HOLE, 0, 8)", SYS_fallocate, fa, 2, 0, 8);
	T("fallocate(fa, 0, -1, 8)", SYS_fallocate, fa, 0, -1, 8);
	T("fallocate(fa, 0, 0, 0)", SYS_fallocate, fa, 0, 0, 0);
	T("fallocate(fa, 0x100, 0, 8)", SYS_fallocate, fa, 0x100, 0, 8);
	T("fallocate(fa, PUNCH_HOLE|ZERO_RANGE|KEEP_SIZE, 0, 8)", SYS_fallocate, fa, 0x13, 0, 8);
	T("fallocate(fa, 0, 1<<62, 8)", SYS_fallocate, fa, 0, 1L << 62, 8);
	T("fallocate(rdonly, 0, 0, 8)", SYS_fallocate, rdonly, 0, 0, 8);
	T("fallocate(pipe, 0, 0, 8)", SYS_fallocate, p[1], 0, 0, 8);
	T("fallocate(null, 0, 0, 8)", SYS_fallocate, devnull, 0, 0, 8);
	T("fallocate(-1, 0, 0, 8)", SYS_fallocate, -1, 0, 0, 8);
	T("mknod(\"fifo\", S_IFIFO|0600, 0)", SYS_mknod, L("fifo"), S_IFIFO | 0600, 0);
	T("mknod(\"fifo\", S_IFIFO|0600, 0)", SYS_mknod, L("fifo"), S_IFIFO | 0600, 0);
	T("mknod(\"reg\", 0600, 0)", SYS_mknod, L("reg"), 0600, 0);
	T("mknod(\"x\", S_IFDIR|0700, 0)", SYS_mknod, L("x"), S_IFDIR | 0700, 0);
	T("mknod(\"x\", 0170000, 0)", SYS_mknod, L("x"), 0170000, 0);
	T("mknod(NULL, S_IFIFO|0600, 0)", SYS_mknod, 0, S_IFIFO | 0600, 0);
	T("mknod(\"d/.\", S_IFIFO|0600, 0)", SYS_mknod, L("d/."), S_IFIFO | 0600, 0);
	T("mknodat(-5, \"y\", S_IFIFO|0600, 0)", SYS_mknodat, -5, L("y"), S_IFIFO | 0600, 0);
	T("open(\"fifo\", O_WRONLY|O_NONBLOCK)", SYS_open, L("fifo"), O_WRONLY | O_NONBLOCK);
	int fr = T("open(\"fifo\", O_RDONLY|O_NONBLOCK)", SYS_open, L("fifo"), O_RDONLY | O_NONBLOCK);
	int fw = T("open(\"fifo\", O_WRONLY|O_NONBLOCK)", SYS_open, L("fifo"), O_WRONLY | O_NONBLOCK);
	T("write(fifo, rodata, 6)", SYS_write, fw, L(rod), 6);
	T("read(fifo, buf, 64)", SYS_read, fr, L(buf), 64);
	T("read(fifo, buf, 64)", SYS_read, fr, L(buf), 64);
	T("lseek(fifo, 0, SEEK_SET)", SYS_lseek, fr, 0, SEEK_SET);
	close(fw);
	T("read(fifo, buf, 64) no writer", SYS_read, fr, L(buf), 64);
	int frw = T("open(\"fifo\", O_RDWR)", SYS_open, L("fifo"), O_RDWR);
	T("write(fifo rdwr, rodata, 3)", SYS_write, frw, L(rod), 3);
	T("read(fifo, buf, 64)", SYS_read, fr, L(buf), 64);
	struct stat fst;
	fstat(frw, &fst);
	printf("# fifo: S_ISFIFO %d mode %o\n", S_ISFIFO(fst.st_mode), fst.st_mode & 0777);

	/* futex */
	static int word[4] __attribute__((aligned(16)));
	T("futex(word+1 byte, FUTEX_WAIT, 0, NULL)", SYS_futex, L((char *)word + 1), FUTEX_WAIT, 0, 0);
	T("futex(word+1 byte, FUTEX_WAKE, 1)", SYS_futex, L((char *)word + 1), FUTEX_WAKE, 1);
	T("futex(word, FUTEX_WAIT, 1, NULL)", SYS_futex, L(word), FUTEX_WAIT, 1, 0);
	long fts[2] = {0, 0};
	T("futex(word, FUTEX_WAIT, 0, {0, 0})", SYS_futex, L(word), FUTEX_WAIT, 0, L(fts));
	fts[1] = -1;
	T("futex(word, FUTEX_WAIT, 0, {0, -1})", SYS_futex, L(word), FUTEX_WAIT, 0, L(fts));
	T("futex(word, FUTEX_WAIT, 0, wild)", SYS_futex, L(word), FUTEX_WAIT, 0, L(wild));
	T("futex(NULL, FUTEX_WAIT, 0, NULL)", SYS_futex, 0, FUTEX_WAIT, 0, 0);
	T("futex(NULL, FUTEX_WAKE, 1)", SYS_futex, 0, FUTEX_WAKE, 1);
	T("futex(none, FUTEX_WAIT, 0, NULL)", SYS_futex, L(none), FUTEX_WAIT, 0, 0);
	T("futex(ro, FUTEX_WAIT_PRIVATE, 1, NULL)", SYS_futex, L(ro), FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, 0);
	T("futex(NULL, FUTEX_WAKE_PRIVATE, 1)", SYS_futex, 0, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
	T("futex(none, FUTEX_WAKE_PRIVATE, 1)", SYS_futex, L(none), FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
	T("futex(none, FUTEX_WAKE, 1)", SYS_futex, L(none), FUTEX_WAKE, 1);
	T("futex(kernel, FUTEX_WAKE_PRIVATE, 1)", SYS_futex, L(kern), FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
	T("futex(text, FUTEX_WAIT, 0, NULL)", SYS_futex, L(text), FUTEX_WAIT, 0, 0);
	T("futex(kernel, FUTEX_WAIT, 0, NULL)", SYS_futex, L(kern), FUTEX_WAIT, 0, 0);
	T("futex(word, 99, 0)", SYS_futex, L(word), 99, 0);
	T("futex(word, FUTEX_WAKE, -1)", SYS_futex, L(word), FUTEX_WAKE, -1);
	T("futex(ro, FUTEX_WAKE_OP, 1, 1, ro, op)", SYS_futex, L(ro), FUTEX_WAKE_OP, 1, 1, L(ro), 0);
	T("futex(word, FUTEX_WAKE_OP, 1, 1, ro, op)", SYS_futex, L(word), FUTEX_WAKE_OP, 1, 1, L(ro), 0);
	T("futex(word, FUTEX_CMP_REQUEUE, 1, 1, word+1, 5)", SYS_futex, L(word), FUTEX_CMP_REQUEUE, 1, 1, L(word + 1), 5);
	T("futex(word, FUTEX_WAIT_BITSET, 0, NULL, NULL, 0)", SYS_futex, L(word), FUTEX_WAIT_BITSET, 0, 0, 0, 0);

	/* Edge cases of issue 31.6: invalid clone and clone3 flag
	 * combinations (Linux refuses them before creating anything; a child
	 * that is created anyway exits at once), mprotect's grow flags,
	 * overlapping copy_file_range, invalid clocks, prctl and arch_prctl
	 * queries, O_TMPFILE, renameat2 flags, AT_EMPTY_PATH, preadv2 and
	 * pwritev2 flags, shared mappings of /dev/zero. */
	TC("clone(THREAD|VM, NULL)", 0x10000 | 0x100, 0, 0);
	TC("clone(THREAD, NULL)", 0x10000, 0, 0);
	TC("clone(SIGHAND, NULL)", 0x800, 0, 0);
	TC("clone(SIGHAND|THREAD, NULL)", 0x800 | 0x10000, 0, 0);
	TC("clone(NEWNS|FS|SIGCHLD, NULL)", 0x20000 | 0x200 | SIGCHLD, 0, 0);
	TC("clone(NEWUSER|FS|SIGCHLD, NULL)", 0x10000000 | 0x200 | SIGCHLD, 0, 0);
	TC("clone(THREAD|SIGHAND|VM|NEWPID, stack)", 0x10000 | 0x800 | 0x100 | 0x20000000, L(buf + 4096), 0);
	TC("clone(THREAD|SIGHAND|VM|NEWUSER, stack)", 0x10000 | 0x800 | 0x100 | 0x10000000, L(buf + 4096), 0);
	TC("clone(PIDFD|DETACHED|SIGCHLD, NULL)", 0x1000 | 0x400000 | SIGCHLD, 0, 0);
	TC("clone(PIDFD|PARENT_SETTID|SIGCHLD, NULL, buf)", 0x1000 | 0x100000 | SIGCHLD, 0, L(buf));
	TC("clone(PIDFD|SIGCHLD, NULL, NULL)", 0x1000 | SIGCHLD, 0, 0);
	TC("clone(PIDFD|SIGCHLD, NULL, ro)", 0x1000 | SIGCHLD, 0, L(ro));
	TC("clone(PARENT_SETTID|SIGCHLD, NULL, ro)", 0x100000 | SIGCHLD, 0, L(ro));
	TC("clone(PARENT_SETTID|SIGCHLD, NULL, kernel)", 0x100000 | SIGCHLD, 0, L(kern));
	TC3("clone3(NULL, 88)", 0, 88);
	TC3("clone3(args, 0)", L(buf), 0);
	TC3("clone3(args, 63)", L(buf), 63);
	TC3("clone3(args, 8192)", L(buf), 8192);
	TC3("clone3(wild, 88)", L(wild), 88);
	TC3("clone3(none, 88)", L(none), 88);
	TC3A("clone3({flags SIGCHLD})", SIGCHLD, 0, 0, 0, 0, 88);
	TC3A("clone3({flags THREAD|VM})", 0x10000 | 0x100, 0, 0, 0, 0, 88);
	TC3A("clone3({flags SIGHAND})", 0x800, 0, 0, 0, 0, 88);
	TC3A("clone3({flags THREAD|SIGHAND|VM, exit SIGCHLD}, stack)", 0x10000 | 0x800 | 0x100, SIGCHLD, L(buf), 4096, 0, 88);
	TC3A("clone3({flags 0, exit 100})", 0, 100, 0, 0, 0, 88);
	TC3A("clone3({flags 0, exit 0x1000})", 0, 0x1000, 0, 0, 0, 88);
	TC3A("clone3({stack NULL, size 4096})", 0, SIGCHLD, 0, 4096, 0, 88);
	TC3A("clone3({stack buf, size 0})", 0, SIGCHLD, L(buf), 0, 0, 88);
	TC3A("clone3({stack kernel, size 4096})", 0, SIGCHLD, L(kern), 4096, 0, 88);
	TC3A("clone3({flags DETACHED})", 0x400000, SIGCHLD, 0, 0, 0, 88);
	TC3A("clone3({flags NEWNS|FS})", 0x20000 | 0x200, SIGCHLD, 0, 0, 0, 88);
	TC3A("clone3({flags SIGHAND|CLEAR_SIGHAND|VM})", 0x800 | 0x100000000L | 0x100, 0, 0, 0, 0, 88);
	TC3A("clone3({flags 1<<40})", 1L << 40, SIGCHLD, 0, 0, 0, 88);
	TC3A("clone3({set_tid_size 1, set_tid NULL})", 0, SIGCHLD, 0, 0, 1, 88);
	TC3A("clone3({set_tid_size 40})", 0, SIGCHLD, 0, 0, 40, 88);
	TC3A("clone3({flags SIGCHLD}, 96 with junk)", SIGCHLD, 0, 0, 0, 0, 96);
	TC3A("clone3({flags THREAD|SIGHAND|VM, exit 0}, NULL stack, 64)", 0x10000 | 0x800 | 0x100, 0, 0, 4096, 0, 64);

	char *rw = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T("mprotect(rw, 4096, R|GROWSDOWN|GROWSUP)", SYS_mprotect, L(rw), 4096, 1 | 0x01000000 | 0x02000000);
	T("mprotect(rw, 4096, R|GROWSDOWN)", SYS_mprotect, L(rw), 4096, 1 | 0x01000000);
	T("mprotect(rw, 4096, R|GROWSUP)", SYS_mprotect, L(rw), 4096, 1 | 0x02000000);
	T("mprotect(rw, 4096, R|SEM)", SYS_mprotect, L(rw), 4096, 1 | 0x8);
	T("mprotect(rw, 4096, 0x20)", SYS_mprotect, L(rw), 4096, 0x20);
	T("mprotect(rw, 4096, 0x80000000)", SYS_mprotect, L(rw), 4096, 0x80000000L);
	T("mprotect(rw, 4096, RWX)", SYS_mprotect, L(rw), 4096, 7);
	T("mprotect(rw, 4*4096+4096, R)", SYS_mprotect, L(rw), 5 * 4096, 1);
	T("mprotect(rw+1, 4096, R)", SYS_mprotect, L(rw) + 1, 4096, 1);
	T("mprotect(rw, 1, NONE)", SYS_mprotect, L(rw), 1, 0);
	T("mprotect(kernel, 4096, R)", SYS_mprotect, L(kern), 4096, 1);
	T("mprotect(noncanonical, 4096, R)", SYS_mprotect, L(noncanon), 4096, 1);
	T("mprotect(NULL, 4096, R)", SYS_mprotect, 0, 4096, 1);
	T("mprotect(rw, 4096, R|W)", SYS_mprotect, L(rw), 4096, 3);
	T("munmap(rw+4096, 1)", SYS_munmap, L(rw) + 4096, 1);
	T("mprotect(rw, 3*4096, R) across hole", SYS_mprotect, L(rw), 3 * 4096, 1);
	T("madvise(rw, 4096, 9999)", SYS_madvise, L(rw), 4096, 9999);
	T("madvise(rw, 3*4096, MADV_DONTNEED) across hole", SYS_madvise, L(rw), 3 * 4096, 4);
	T("madvise(rw+1, 4096, MADV_NORMAL)", SYS_madvise, L(rw) + 1, 4096, 0);
	T("madvise(rw, 0, MADV_NORMAL)", SYS_madvise, L(rw), 0, 0);
	T("msync(rw, 4096, MS_ASYNC|MS_SYNC)", SYS_msync, L(rw), 4096, 1 | 4);
	T("msync(rw, 4096, 8)", SYS_msync, L(rw), 4096, 8);
	T("msync(rw+1, 4096, MS_SYNC)", SYS_msync, L(rw) + 1, 4096, 4);
	T("msync(rw, 3*4096, MS_SYNC) across hole", SYS_msync, L(rw), 3 * 4096, 4);
	T("msync(rw, 4096, MS_INVALIDATE)", SYS_msync, L(rw), 4096, 2);
	T("mremap(rw, 4096, 8192, 0x80)", SYS_mremap, L(rw), 4096, 8192, 0x80);
	T("mremap(rw, 4096, 8192, FIXED)", SYS_mremap, L(rw), 4096, 8192, 2, L(rw) + 8192);
	T("mremap(rw+1, 4096, 4096, 0)", SYS_mremap, L(rw) + 1, 4096, 4096, 0);
	T("mremap(rw, 4096, 0, 0)", SYS_mremap, L(rw), 4096, 0, 0);
	TQ("mremap(rw, 4096, 4096, 0)", SYS_mremap, L(rw), 4096, 4096, 0);
	T("mremap(rw, 4096, 4096, MAYMOVE|FIXED, rw+2048)", SYS_mremap, L(rw), 4096, 4096, 3, L(rw) + 2048);
	T("mremap(rw, 4096, 4096, MAYMOVE|FIXED, rw)", SYS_mremap, L(rw), 4096, 4096, 3, L(rw));
	T("mremap(rw, 4096, 8192, DONTUNMAP)", SYS_mremap, L(rw), 4096, 8192, 4);

	int zfd = open("/dev/zero", O_RDWR);
	char *z = (char *)t("mmap(NULL, 8192, RW, SHARED, /dev/zero, 0)", SYS_mmap, ARGS(0, 8192, 3, MAP_SHARED, zfd, 0), 1);
	if (z != MAP_FAILED) {
		z[0] = 7;
		z[8191] = 9;
		printf("# shared /dev/zero = %d %d %d\n", z[0], z[1], z[8191]);
	} else
		printf("# shared /dev/zero = none\n");
	char *zp = (char *)t("mmap(NULL, 4096, RW, PRIVATE, /dev/zero, 0)", SYS_mmap, ARGS(0, 4096, 3, MAP_PRIVATE, zfd, 0), 1);
	printf("# private /dev/zero = %d\n", zp != MAP_FAILED ? zp[100] : -1);
	TQ("mmap(NULL, 4096, RW, SHARED, /dev/zero, 4096)", SYS_mmap, 0, 4096, 3, MAP_SHARED, zfd, 4096);
	TQ("mmap(NULL, 4096, RW, SHARED, zero rdonly, 0)", SYS_mmap, 0, 4096, 3, MAP_SHARED, devzero, 0);
	TQ("mmap(NULL, 4096, R, SHARED, /dev/null, 0)", SYS_mmap, 0, 4096, 1, MAP_SHARED, devnull, 0);
	TQ("mmap(NULL, 4096, R, SHARED_VALIDATE|SYNC, f, 8192)", SYS_mmap, 0, 4096, 1, 3 | 0x80000, f, 8192);
	TQ("mmap(NULL, 4096, R, SHARED_VALIDATE, f, 0)", SYS_mmap, 0, 4096, 1, 3, f, 0);
	TQ("mmap(NULL, 4096, R, SHARED_VALIDATE|0x40000000, f, 4096)", SYS_mmap, 0, 4096, 1, 3 | 0x40000000, f, 4096);
	TQ("mmap(rw, 4096, R, PRIVATE|ANON|FIXED_NOREPLACE)", SYS_mmap, L(rw), 4096, 1, MAP_PRIVATE | MAP_ANONYMOUS | 0x100000, -1, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE|ANON, -1, 4095)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE | MAP_ANONYMOUS, -1, 4095);
	TQ("mmap(NULL, 4096, R, SHARED|ANON, 5, 0)", SYS_mmap, 0, 4096, 1, MAP_SHARED | MAP_ANONYMOUS, 5, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, 1000000, 0)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, big, 0);
	TQ("mmap(NULL, 4096, R, PRIVATE, closed, 0)", SYS_mmap, 0, 4096, 1, MAP_PRIVATE, closed, 0);

	int cf = open("cf", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int cg = open("cg", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int ca = open("ca", O_WRONLY | O_CREAT | O_APPEND, 0644);
	write(cf, buf, 100);
	long o1 = 0, o2 = 10;
	T("copy_file_range(cf, &0, cf, &10, 20, 0) overlap", SYS_copy_file_range, cf, L(&o1), cf, L(&o2), 20, 0);
	o1 = 10, o2 = 0;
	T("copy_file_range(cf, &10, cf, &0, 20, 0) overlap", SYS_copy_file_range, cf, L(&o1), cf, L(&o2), 20, 0);
	o1 = 0, o2 = 50;
	T("copy_file_range(cf, &0, cf, &50, 20, 0)", SYS_copy_file_range, cf, L(&o1), cf, L(&o2), 20, 0);
	printf("# offsets = %ld %ld\n", o1, o2);
	o1 = 0, o2 = 20;
	T("copy_file_range(cf, &0, cf, &20, 20, 0) adjacent", SYS_copy_file_range, cf, L(&o1), cf, L(&o2), 20, 0);
	T("copy_file_range(cf, NULL, cf, NULL, 10, 0) same fd", SYS_copy_file_range, cf, 0, cf, 0, 10, 0);
	lseek(cf, 0, SEEK_SET);
	T("copy_file_range(cf, NULL, cg, NULL, 10, 0)", SYS_copy_file_range, cf, 0, cg, 0, 10, 0);
	T("lseek(cf, 0, SEEK_CUR)", SYS_lseek, cf, 0, SEEK_CUR);
	T("copy_file_range(cf, NULL, cg, NULL, 10, 1)", SYS_copy_file_range, cf, 0, cg, 0, 10, 1);
	T("copy_file_range(-1, NULL, cg, NULL, 10, 0)", SYS_copy_file_range, -1, 0, cg, 0, 10, 0);
	T("copy_file_range(cf, NULL, -1, NULL, 10, 0)", SYS_copy_file_range, cf, 0, -1, 0, 10, 0);
	T("copy_file_range(cf, NULL, rdonly, NULL, 10, 0)", SYS_copy_file_range, cf, 0, rdonly, 0, 10, 0);
	T("copy_file_range(wronly, NULL, cg, NULL, 10, 0)", SYS_copy_file_range, wronly, 0, cg, 0, 10, 0);
	T("copy_file_range(dir, NULL, cg, NULL, 10, 0)", SYS_copy_file_range, dir, 0, cg, 0, 10, 0);
	T("copy_file_range(cf, NULL, dir, NULL, 10, 0)", SYS_copy_file_range, cf, 0, dir, 0, 10, 0);
	T("copy_file_range(pipe, NULL, cg, NULL, 10, 0)", SYS_copy_file_range, p[0], 0, cg, 0, 10, 0);
	T("copy_file_range(cf, NULL, pipe, NULL, 10, 0)", SYS_copy_file_range, cf, 0, p[1], 0, 10, 0);
	T("copy_file_range(cf, NULL, null, NULL, 10, 0)", SYS_copy_file_range, cf, 0, devnull, 0, 10, 0);
	T("copy_file_range(cf, NULL, ca, NULL, 10, 0) append", SYS_copy_file_range, cf, 0, ca, 0, 10, 0);
	o1 = 1000;
	T("copy_file_range(cf, &1000, cg, NULL, 10, 0)", SYS_copy_file_range, cf, L(&o1), cg, 0, 10, 0);
	T("copy_file_range(cf, NULL, cg, NULL, 0, 0)", SYS_copy_file_range, cf, 0, cg, 0, 0, 0);
	o1 = -1;
	T("copy_file_range(cf, &-1, cg, NULL, 10, 0)", SYS_copy_file_range, cf, L(&o1), cg, 0, 10, 0);
	T("copy_file_range(cf, kernel, cg, NULL, 10, 0)", SYS_copy_file_range, cf, L(kern), cg, 0, 10, 0);
	T("copy_file_range(cf, NULL, cg, wild, 10, 0)", SYS_copy_file_range, cf, 0, cg, L(wild), 10, 0);
	T("copy_file_range(cf, NULL, cg, NULL, huge, 0)", SYS_copy_file_range, cf, 0, cg, 0, huge, 0);
	T("fstat-size cg", SYS_lseek, cg, 0, SEEK_END);

	T("clock_gettime(-1, buf)", SYS_clock_gettime, -1, L(buf));
	T("clock_gettime(-8, buf)", SYS_clock_gettime, -8, L(buf));
	T("clock_gettime(INT_MIN, buf)", SYS_clock_gettime, (int)0x80000000, L(buf));
	T("clock_gettime(12, buf)", SYS_clock_gettime, 12, L(buf));
	T("clock_gettime(16, buf)", SYS_clock_gettime, 16, L(buf));
	T("clock_gettime(CLOCK_TAI, buf)", SYS_clock_gettime, 11, L(buf));
	T("clock_gettime(CLOCK_REALTIME_COARSE, buf)", SYS_clock_gettime, 5, L(buf));
	T("clock_gettime(CLOCK_MONOTONIC_RAW, NULL)", SYS_clock_gettime, 4, 0);
	T("clock_gettime(CLOCK_PROCESS_CPUTIME_ID, NULL)", SYS_clock_gettime, 2, 0);
	T("clock_getres(-1, buf)", SYS_clock_getres, -1, L(buf));
	T("clock_getres(12, buf)", SYS_clock_getres, 12, L(buf));
	T("clock_getres(CLOCK_THREAD_CPUTIME_ID, NULL)", SYS_clock_getres, 3, 0);
	T("clock_getres(CLOCK_REALTIME, kernel)", SYS_clock_getres, 0, L(kern));
	long zts[2] = {0, 0};
	T("clock_nanosleep(-1, 0, {0, 0}, NULL)", SYS_clock_nanosleep, -1, 0, L(zts), 0);
	T("clock_nanosleep(CLOCK_REALTIME, 2, {0, 0}, NULL)", SYS_clock_nanosleep, 0, 2, L(zts), 0);
	T("clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, {0, 0}, NULL)", SYS_clock_nanosleep, 2, 0, L(zts), 0);

	int iv = -1;
	T("prctl(PR_GET_KEEPCAPS)", SYS_prctl, 7);
	T("prctl(PR_SET_KEEPCAPS, 2)", SYS_prctl, 8, 2);
	T("prctl(PR_GET_TIMING)", SYS_prctl, 13);
	T("prctl(PR_GET_SECUREBITS)", SYS_prctl, 27);
	T("prctl(PR_GET_TIMERSLACK)", SYS_prctl, 30);
	T("prctl(PR_GET_NO_NEW_PRIVS)", SYS_prctl, 39, 0, 0, 0, 0);
	T("prctl(PR_GET_NO_NEW_PRIVS, 1)", SYS_prctl, 39, 1, 0, 0, 0);
	T("prctl(PR_SET_NO_NEW_PRIVS, 1, 1)", SYS_prctl, 38, 1, 1, 0, 0);
	T("prctl(PR_SET_NO_NEW_PRIVS, 2)", SYS_prctl, 38, 2, 0, 0, 0);
	T("prctl(PR_GET_CHILD_SUBREAPER, &iv)", SYS_prctl, 37, L(&iv));
	printf("# subreaper = %d\n", iv);
	T("prctl(PR_GET_CHILD_SUBREAPER, NULL)", SYS_prctl, 37, 0);
	T("prctl(PR_SET_CHILD_SUBREAPER, 1)", SYS_prctl, 36, 1);
	T("prctl(PR_GET_CHILD_SUBREAPER, &iv)", SYS_prctl, 37, L(&iv));
	printf("# subreaper = %d\n", iv);
	T("prctl(PR_GET_THP_DISABLE)", SYS_prctl, 42, 0, 0, 0, 0);
	T("prctl(PR_GET_THP_DISABLE, 1)", SYS_prctl, 42, 1, 0, 0, 0);
	T("prctl(PR_GET_TSC, &iv)", SYS_prctl, 25, L(&iv));
	printf("# tsc = %d\n", iv);
	T("prctl(PR_GET_TSC, NULL)", SYS_prctl, 25, 0);
	T("prctl(PR_MCE_KILL_GET)", SYS_prctl, 34, 0, 0, 0, 0);
	T("prctl(PR_GET_FP_MODE)", SYS_prctl, 46);
	T("prctl(PR_GET_TAGGED_ADDR_CTRL)", SYS_prctl, 56, 0, 0, 0, 0);
	T("prctl(PR_GET_ENDIAN, &iv)", SYS_prctl, 19, L(&iv));
	T("prctl(PR_GET_UNALIGN, &iv)", SYS_prctl, 5, L(&iv));
	T("prctl(PR_GET_FPEXC, &iv)", SYS_prctl, 11, L(&iv));
	T("prctl(PR_CAPBSET_READ, 99)", SYS_prctl, 23, 99);
	T("prctl(PR_CAPBSET_READ, -1)", SYS_prctl, 23, -1);
	T("prctl(PR_CAP_AMBIENT, IS_SET, 99)", SYS_prctl, 47, 1, 99, 0, 0);
	T("prctl(PR_CAP_AMBIENT, 99)", SYS_prctl, 47, 99, 0, 0, 0);
	T("prctl(PR_SET_PDEATHSIG, SIGKILL)", SYS_prctl, 1, SIGKILL);
	T("prctl(PR_GET_PDEATHSIG, &iv)", SYS_prctl, 2, L(&iv));
	printf("# pdeathsig = %d\n", iv);
	T("prctl(PR_SET_PDEATHSIG, 0)", SYS_prctl, 1, 0);
	T("prctl(PR_GET_PDEATHSIG, ro)", SYS_prctl, 2, L(ro));
	T("prctl(PR_SET_DUMPABLE, 1)", SYS_prctl, 4, 1);
	T("prctl(PR_SET_NAME, \"sysconf-x\")", SYS_prctl, 15, L("sysconf-x"));
	memset(buf, 'X', 32);
	T("prctl(PR_GET_NAME, buf)", SYS_prctl, 16, L(buf));
	printf("# name = %.16s\n", buf);
	T("prctl(PR_SET_NAME, longname)", SYS_prctl, 15, L(longname));
	T("prctl(PR_GET_NAME, buf)", SYS_prctl, 16, L(buf));
	printf("# name = %.16s\n", buf);
	T("prctl(PR_SET_NAME, \"sysconf\")", SYS_prctl, 15, L("sysconf"));
	T("prctl(PR_SET_MM, 99)", SYS_prctl, 35, 99, 0, 0, 0);
	T("prctl(PR_SET_TIMERSLACK, 0)", SYS_prctl, 29, 0);
	T("prctl(PR_GET_TIMERSLACK)", SYS_prctl, 30);

	long gs = -1;
	T("arch_prctl(ARCH_SET_GS, 0x12345000)", SYS_arch_prctl, 0x1001, 0x12345000);
	T("arch_prctl(ARCH_GET_GS, &gs)", SYS_arch_prctl, 0x1004, L(&gs));
	printf("# gs = %#lx\n", gs);
	T("arch_prctl(ARCH_SET_GS, kernel)", SYS_arch_prctl, 0x1001, L(kern));
	T("arch_prctl(ARCH_SET_GS, noncanonical)", SYS_arch_prctl, 0x1001, L(noncanon));
	T("arch_prctl(ARCH_SET_GS, 0)", SYS_arch_prctl, 0x1001, 0);
	T("arch_prctl(ARCH_GET_GS, &gs)", SYS_arch_prctl, 0x1004, L(&gs));
	printf("# gs = %#lx\n", gs);
	T("arch_prctl(ARCH_GET_GS, NULL)", SYS_arch_prctl, 0x1004, 0);
	T("arch_prctl(ARCH_GET_GS, ro)", SYS_arch_prctl, 0x1004, L(ro));
	T("arch_prctl(ARCH_GET_CPUID)", SYS_arch_prctl, 0x1011, 0);
	T("arch_prctl(ARCH_GET_FS, &gs)", SYS_arch_prctl, 0x1003, L(&gs));
	T("arch_prctl(ARCH_SET_FS, noncanonical)", SYS_arch_prctl, 0x1002, L(noncanon));
	T("arch_prctl(0x1005, 0)", SYS_arch_prctl, 0x1005, 0);

	T("open(\".\", O_TMPFILE|O_RDONLY)", SYS_open, L("."), O_TMPFILE | O_RDONLY, 0600);
	T("open(\"cf\", O_TMPFILE|O_RDWR)", SYS_open, L("cf"), O_TMPFILE | O_RDWR, 0600);
	T("open(\"nope\", O_TMPFILE|O_RDWR)", SYS_open, L("nope"), O_TMPFILE | O_RDWR, 0600);
	T("open(\".\", __O_TMPFILE|O_RDWR)", SYS_open, L("."), 0x400000 | O_RDWR, 0600);
	T("open(\".\", O_TMPFILE|O_CREAT|O_RDWR)", SYS_open, L("."), O_TMPFILE | O_CREAT | O_RDWR, 0600);
	int tf = T("open(\".\", O_TMPFILE|O_RDWR, 0600)", SYS_open, L("."), O_TMPFILE | O_RDWR, 0600);
	T("write(tmpfile, rodata, 5)", SYS_write, tf, L(rod), 5);
	struct stat tst = {0};
	fstat(tf, &tst);
	printf("# tmpfile = regular %d nlink %ld size %ld mode %o\n", S_ISREG(tst.st_mode), (long)tst.st_nlink,
	       (long)tst.st_size, tst.st_mode & 07777);
	T("linkat(tmpfile, \"\", AT_FDCWD, \"tmpl\", AT_EMPTY_PATH)", SYS_linkat, tf, L(""), AT_FDCWD, L("tmpl"), AT_EMPTY_PATH);
	memset(&tst, 0, sizeof tst);
	T("stat(\"tmpl\") size", SYS_stat, L("tmpl"), L(&tst));
	printf("# tmpl = nlink %ld size %ld\n", (long)tst.st_nlink, (long)tst.st_size);
	int tx = T("open(\".\", O_TMPFILE|O_EXCL|O_WRONLY)", SYS_open, L("."), O_TMPFILE | O_EXCL | O_WRONLY, 0600);
	T("linkat(tmpfile excl, \"\", AT_FDCWD, \"tmpx\", AT_EMPTY_PATH)", SYS_linkat, tx, L(""), AT_FDCWD, L("tmpx"), AT_EMPTY_PATH);
	T("open(\"d\", O_TMPFILE|O_WRONLY)", SYS_open, L("d"), O_TMPFILE | O_WRONLY, 0600);
	T("getdents64(dir, buf, 4096) tmpfile invisible", SYS_getdents64, dir, L(buf), 4096);

	int ra = open("ra", O_RDWR | O_CREAT, 0644), rb = open("rb", O_RDWR | O_CREAT, 0644);
	write(ra, "A", 1);
	write(rb, "B", 1);
	mkdir("rd", 0755);
	T("renameat2(\"ra\", \"rb\", NOREPLACE)", SYS_renameat2, AT_FDCWD, L("ra"), AT_FDCWD, L("rb"), 1);
	T("renameat2(\"ra\", \"rc\", NOREPLACE)", SYS_renameat2, AT_FDCWD, L("ra"), AT_FDCWD, L("rc"), 1);
	T("renameat2(\"rc\", \"rb\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("rb"), 2);
	int rbf = open("rb", O_RDONLY);
	char rch = 0;
	read(rbf, &rch, 1);
	printf("# rb holds = %c\n", rch);
	T("renameat2(\"rc\", \"nope\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("nope"), 2);
	T("renameat2(\"nope\", \"rc\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("nope"), AT_FDCWD, L("rc"), 2);
	T("renameat2(\"rc\", \"rc\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("rc"), 2);
	T("renameat2(\"rc\", \"rd\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("rd"), 2);
	T("stat(\"rc\") is dir", SYS_open, L("rc"), O_RDONLY | O_DIRECTORY);
	T("renameat2(\"rc\", \"rd\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("rd"), 2);
	T("renameat2(\"rc\", \"rd/x\", NOREPLACE)", SYS_renameat2, AT_FDCWD, L("rc"), AT_FDCWD, L("rd/x"), 1);
	T("renameat2(\"rd/x\", \"rb\", EXCHANGE|WHITEOUT)", SYS_renameat2, AT_FDCWD, L("rd/x"), AT_FDCWD, L("rb"), 6);
	T("renameat2(\"rd\", \"rd/y\", EXCHANGE)", SYS_renameat2, AT_FDCWD, L("rd"), AT_FDCWD, L("rd/y"), 2);
	T("renameat2(\"rd/x\", \"rb\", 8)", SYS_renameat2, AT_FDCWD, L("rd/x"), AT_FDCWD, L("rb"), 8);

	T("fchownat(f, \"\", 0, 0, AT_EMPTY_PATH)", SYS_fchownat, f, L(""), 0, 0, AT_EMPTY_PATH);
	T("fchownat(f, \"\", 0, 0, 0)", SYS_fchownat, f, L(""), 0, 0, 0);
	T("fchownat(f, \"\", -1, -1, AT_EMPTY_PATH|0x1)", SYS_fchownat, f, L(""), -1, -1, AT_EMPTY_PATH | 0x1);
	T("linkat(cf, \"\", AT_FDCWD, \"elink\", AT_EMPTY_PATH)", SYS_linkat, cf, L(""), AT_FDCWD, L("elink"), AT_EMPTY_PATH);
	T("linkat(cf, \"\", AT_FDCWD, \"elink2\", 0)", SYS_linkat, cf, L(""), AT_FDCWD, L("elink2"), 0);
	T("linkat(dir, \"\", AT_FDCWD, \"elink3\", AT_EMPTY_PATH)", SYS_linkat, dir, L(""), AT_FDCWD, L("elink3"), AT_EMPTY_PATH);
	T("linkat(pipe, \"\", AT_FDCWD, \"elink4\", AT_EMPTY_PATH)", SYS_linkat, p[0], L(""), AT_FDCWD, L("elink4"), AT_EMPTY_PATH);
	T("faccessat2(f, \"\", R_OK, AT_EMPTY_PATH)", SYS_faccessat2, f, L(""), R_OK, AT_EMPTY_PATH);
	T("faccessat2(f, \"\", R_OK, 0)", SYS_faccessat2, f, L(""), R_OK, 0);
	T("statx(f, \"\", AT_EMPTY_PATH, 0x7ff, buf)", SYS_statx, f, L(""), AT_EMPTY_PATH, 0x7ff, L(buf));
	T("statx(f, NULL, AT_EMPTY_PATH, 0x7ff, buf)", SYS_statx, f, 0, AT_EMPTY_PATH, 0x7ff, L(buf));
	T("newfstatat(AT_FDCWD, \"\", buf, AT_EMPTY_PATH)", SYS_newfstatat, AT_FDCWD, L(""), L(buf), AT_EMPTY_PATH);
	T("newfstatat(pipe, \"\", buf, AT_EMPTY_PATH)", SYS_newfstatat, p[0], L(""), L(buf), AT_EMPTY_PATH);
	T("newfstatat(-1, \"\", buf, AT_EMPTY_PATH)", SYS_newfstatat, -1, L(""), L(buf), AT_EMPTY_PATH);
	int lp = T("open(\"link\", O_PATH|O_NOFOLLOW)", SYS_open, L("link"), O_PATH | O_NOFOLLOW);
	T("readlinkat(linkfd, \"\", buf, 64)", SYS_readlinkat, lp, L(""), L(buf), 64);
	T("readlinkat(f, \"\", buf, 64)", SYS_readlinkat, f, L(""), L(buf), 64);
	T("newfstatat(linkfd, \"\", buf, AT_EMPTY_PATH)", SYS_newfstatat, lp, L(""), L(buf), AT_EMPTY_PATH);
	T("read(linkfd, buf, 1)", SYS_read, lp, L(buf), 1);
	T("utimensat(f, \"\", NULL, AT_EMPTY_PATH)", SYS_utimensat, f, L(""), 0, AT_EMPTY_PATH);
	T("utimensat(f, \"\", NULL, 0)", SYS_utimensat, f, L(""), 0, 0);
	T("openat(f, \"\", O_RDONLY)", SYS_openat, f, L(""), O_RDONLY);
	T("fchmodat(f, \"\", 0644)", SYS_fchmodat, f, L(""), 0644);

	iov[0] = (struct iovec){buf, 4};
	T("preadv2(f, iov, 1, 0, RWF_HIPRI)", SYS_preadv2, f, L(iov), 1, 0, 0, 1);
	T("preadv2(f, iov, 1, 0, RWF_DSYNC)", SYS_preadv2, f, L(iov), 1, 0, 0, 2);
	T("preadv2(f, iov, 1, 0, RWF_SYNC)", SYS_preadv2, f, L(iov), 1, 0, 0, 4);
	T("preadv2(f, iov, 1, 0, RWF_NOWAIT)", SYS_preadv2, f, L(iov), 1, 0, 0, 8);
	T("preadv2(f, iov, 1, 0, RWF_APPEND)", SYS_preadv2, f, L(iov), 1, 0, 0, 0x10);
	T("preadv2(f, iov, 1, 0, HIPRI|DSYNC|SYNC|NOWAIT|APPEND)", SYS_preadv2, f, L(iov), 1, 0, 0, 0x1f);
	T("preadv2(f, iov, 1, 0, 0x100000)", SYS_preadv2, f, L(iov), 1, 0, 0, 0x100000);
	lseek(f, 3, SEEK_SET);
	T("preadv2(f, iov, 1, -1, 0)", SYS_preadv2, f, L(iov), 1, -1, 0, 0);
	printf("# read = %.4s\n", buf);
	T("lseek(f, 0, SEEK_CUR)", SYS_lseek, f, 0, SEEK_CUR);
	T("preadv2(f, iov, 1, -1, RWF_NOWAIT)", SYS_preadv2, f, L(iov), 1, -1, 0, 8);
	T("preadv2(pipe, iov, 1, 0, 0)", SYS_preadv2, p[0], L(iov), 1, 0, 0, 0);
	T("preadv2(nbpipe, iov, 1, -1, 0)", SYS_preadv2, q[0], L(iov), 1, -1, 0, 0);
	T("preadv2(pipe, iov, 1, -1, RWF_NOWAIT)", SYS_preadv2, p[0], L(iov), 1, -1, 0, 8);
	T("preadv2(wronly, iov, 1, 0, 0)", SYS_preadv2, wronly, L(iov), 1, 0, 0, 0);
	T("preadv2(dir, iov, 1, 0, 0)", SYS_preadv2, dir, L(iov), 1, 0, 0, 0);
	T("pwritev2(cg, iov, 1, 0, RWF_DSYNC)", SYS_pwritev2, cg, L(iov), 1, 0, 0, 2);
	T("pwritev2(cg, iov, 1, 0, RWF_SYNC)", SYS_pwritev2, cg, L(iov), 1, 0, 0, 4);
	T("pwritev2(cg, iov, 1, 0, RWF_HIPRI)", SYS_pwritev2, cg, L(iov), 1, 0, 0, 1);
	T("pwritev2(cg, iov, 1, 0, RWF_APPEND)", SYS_pwritev2, cg, L(iov), 1, 0, 0, 0x10);
	T("lseek(cg, 0, SEEK_END)", SYS_lseek, cg, 0, SEEK_END);
	T("pwritev2(cg, iov, 1, -1, RWF_APPEND)", SYS_pwritev2, cg, L(iov), 1, -1, 0, 0x10);
	T("lseek(cg, 0, SEEK_CUR)", SYS_lseek, cg, 0, SEEK_CUR);
	T("pwritev2(cg, iov, 1, -1, 0)", SYS_pwritev2, cg, L(iov), 1, -1, 0, 0);
	T("pwritev2(rdonly, iov, 1, 0, 0)", SYS_pwritev2, rdonly, L(iov), 1, 0, 0, 0);
	T("pwritev2(pipe, iov, 1, -1, 0)", SYS_pwritev2, p[1], L(iov), 1, -1, 0, 0);
	T("pwritev2(pipe, iov, 1, 0, 0)", SYS_pwritev2, p[1], L(iov), 1, 0, 0, 0);
	T("pwritev2(cg, iov, 1, -2, 0)", SYS_pwritev2, cg, L(iov), 1, -2, 0, 0);
	T("pwritev2(cg, iov, 1, 0, 0x100000)", SYS_pwritev2, cg, L(iov), 1, 0, 0, 0x100000);
	T("read(pipe, buf, 64)", SYS_read, p[0], L(buf), 64);

	printf("# %d calls\n", calls);
	return 0;
}
