// madvise: what MADV_DONTNEED leaves in memory, compared byte for byte
// with a native run. A worker thread fills areas with a pattern and drops
// parts of them; the main thread then prints each area page by page:
// 'P' the pattern, '0' zeros, 'x' anything else. Private anonymous pages
// read as zeros afterwards (the length rounded up to whole pages), shared
// ones and private file pages keep or re-read their contents, locked pages
// refuse (EINVAL), a range running past a mapping drops the mapped part and
// fails with ENOMEM, and a code page dropped and written again runs its
// new code while the dropped rest of it holds zeros (executing them
// faults). Nothing printed depends on addresses.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096
#define NPAGES 16

static unsigned char pat(size_t i, int id) { return (unsigned char)((i * 13 + id) | 1); }

// fill stores the pattern id in p[from, to).
static void fill(unsigned char *p, size_t from, size_t to, int id)
{
	for (size_t i = from; i < to; i++)
		p[i] = pat(i, id);
}

// show prints one character per page of [p, p+npages*PG).
static void show(const char *name, const unsigned char *p, int npages, int id)
{
	char line[NPAGES * 4 + 1];
	int n = 0;
	for (int g = 0; g < npages; g++) {
		const unsigned char *q = p + (size_t)g * PG;
		int zero = 1, same = 1;
		for (size_t i = 0; i < PG; i++) {
			zero &= q[i] == 0;
			same &= q[i] == pat((size_t)g * PG + i, id);
		}
		line[n++] = same ? 'P' : zero ? '0' : 'x';
	}
	line[n] = 0;
	printf("%-10s %s\n", name, line);
}

static int adv(void *p, size_t n)
{
	int r = madvise(p, n, MADV_DONTNEED);
	return r == 0 ? 0 : errno;
}

struct areas {
	unsigned char *anon, *noreserve, *none, *shared, *file, *locked, *edge;
	int r_anon, r_noreserve, r_none, r_shared, r_file, r_locked, r_edge, r_unaligned;
	const char *self;
};

static void *worker(void *arg)
{
	struct areas *a = arg;
	size_t n = NPAGES * PG;

	// Ordinary private anonymous memory: pages 2..5, the length 3 pages
	// and 100 bytes (rounded up to 4 pages), and page 9.
	fill(a->anon, 0, n, 1);
	a->r_anon = adv(a->anon + 2 * PG, 3 * PG + 100) | adv(a->anon + 9 * PG, 1);

	// MAP_NORESERVE, partly touched: pages 1, 3 and 6..9 written, 0..7
	// dropped (with untouched pages among them).
	a->noreserve[1 * PG] = 0; // touched, still zero
	fill(a->noreserve, 3 * PG, 4 * PG, 2);
	fill(a->noreserve, 6 * PG, 10 * PG, 2);
	a->r_noreserve = adv(a->noreserve, 8 * PG);

	// Pages made PROT_NONE keep their contents until dropped.
	fill(a->none, 0, n, 3);
	mprotect(a->none + 4 * PG, 8 * PG, PROT_NONE);
	a->r_none = adv(a->none + 6 * PG, 8 * PG);
	mprotect(a->none + 4 * PG, 8 * PG, PROT_READ | PROT_WRITE);

	// Shared anonymous memory keeps its contents.
	fill(a->shared, 0, n, 4);
	a->r_shared = adv(a->shared, n);

	// A private file mapping written to reads the file again.
	fill(a->file, 0, 2 * PG, 5);
	a->r_file = adv(a->file, PG);

	// Locked pages are not dropped: EINVAL.
	fill(a->locked, 0, 2 * PG, 6);
	a->r_locked = mlock(a->locked, 2 * PG) == 0 ? adv(a->locked, 2 * PG) : -1;

	// A range running past the mapping: the mapped part is dropped, ENOMEM.
	fill(a->edge, 0, 4 * PG, 7);
	a->r_edge = adv(a->edge + 2 * PG, 4 * PG);

	// An unaligned start is refused: EINVAL, nothing dropped.
	a->r_unaligned = adv(a->anon + 12 * PG + 8, PG);
	return NULL;
}

static sigjmp_buf jb;
static void on_segv(int sig) { siglongjmp(jb, sig); }

// run calls the code at fn with rax 0 (zeros, add %al,(%rax), then fault
// at address 0), below the red zone.
static long run(void *fn)
{
	long r;
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "xor %%eax, %%eax\n\t"
			 "call *%%rbx\n\t"
			 "add $128, %%rsp"
			 : "=a"(r)
			 : "b"(fn)
			 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	return r;
}

// faults runs the code at fn and returns the signal it raised (0: none,
// *ret its result).
static __attribute__((noinline)) int faults(void *fn, long *ret)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	int sig = sigsetjmp(jb, 1);
	if (sig == 0)
		*ret = run(fn);
	signal(SIGSEGV, SIG_DFL);
	return sig;
}

static void code(void)
{
	// mov eax, imm32; ret
	static const unsigned char ret42[] = {0xb8, 42, 0, 0, 0, 0xc3}, ret7[] = {0xb8, 7, 0, 0, 0, 0xc3},
				   ret99[] = {0xb8, 99, 0, 0, 0, 0xc3};
	unsigned char *c = mmap(NULL, PG, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("mmap code");
		return;
	}
	memcpy(c, ret42, sizeof ret42);
	memcpy(c + 64, ret7, sizeof ret7);
	long a = run(c), b = run(c + 64);
	int r = adv(c, PG);
	int zero = 1;
	for (int i = 0; i < PG; i++)
		zero &= c[i] == 0;
	memcpy(c, ret99, sizeof ret99);
	long d = run(c);
	long e = -1;
	int sig = faults(c + 64, &e);
	printf("code       before %ld %ld, madvise %d, zeros %d, rewritten %ld, dropped code: %s\n", a, b, r, zero, d,
	       sig == SIGSEGV ? "SIGSEGV" : e == 7 ? "old code ran" : "other");
	munmap(c, PG);
}

static void *map(size_t n, int prot, int flags, int fd)
{
	void *p = mmap(NULL, n, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		_exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t n = NPAGES * PG;
	int rw = PROT_READ | PROT_WRITE, priv = MAP_PRIVATE | MAP_ANONYMOUS;
	struct areas a = {0};
	a.anon = map(n, rw, priv, -1);
	a.noreserve = map(n, rw, priv | MAP_NORESERVE, -1);
	a.none = map(n, rw, priv, -1);
	a.shared = map(n, rw, MAP_SHARED | MAP_ANONYMOUS, -1);
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0) {
		perror("open /proc/self/exe");
		return 1;
	}
	a.file = map(2 * PG, rw, MAP_PRIVATE, fd);
	unsigned char orig[2 * PG];
	if (pread(fd, orig, sizeof orig, 0) != (ssize_t)sizeof orig) {
		perror("pread");
		return 1;
	}
	close(fd);
	a.locked = map(2 * PG, rw, priv, -1);
	// Four pages followed by a hole.
	a.edge = map(8 * PG, rw, priv, -1);
	munmap(a.edge + 4 * PG, 4 * PG);

	pthread_t t;
	if (pthread_create(&t, NULL, worker, &a) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "thread failed\n");
		return 1;
	}
	printf("madvise    anon %d noreserve %d none %d shared %d file %d locked %d edge %d unaligned %d\n", a.r_anon,
	       a.r_noreserve, a.r_none, a.r_shared, a.r_file, a.r_locked, a.r_edge, a.r_unaligned);
	show("anon", a.anon, NPAGES, 1);
	show("noreserve", a.noreserve, NPAGES, 2);
	show("none", a.none, NPAGES, 3);
	show("shared", a.shared, NPAGES, 4);
	show("locked", a.locked, 2, 6);
	show("edge", a.edge, 4, 7);
	printf("file       page 0 as the file %d, page 1 %s\n", memcmp(a.file, orig, PG) == 0,
	       memcmp(a.file + PG, orig + PG, PG) == 0 ? "as the file" : "written");
	code();
	return 0;
}
