/* mallocstress.c - allocator stress: malloc of sizes from 16 B to 4 MiB (so
 * both the brk heap and mmap'd chunks are used), realloc growth, free in a
 * scrambled order, calloc (checked zeroed); blocks are filled with a pattern
 * (every byte of small blocks, a sparse sample of big ones) and verified
 * before they are freed. Prints counts and a checksum.
 * Exercises: brk, mmap, munmap, mremap (glibc realloc of big chunks).
 * Exit 1 if any verification fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBLK 128
#define ROUNDS 3
#define MAXSZ ((size_t)4 << 20)

static uint32_t rng = 2463534242u;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

struct blk {
	unsigned char *p;
	size_t n;
	unsigned char seed;
};

/* positions touched: every byte up to 64 KiB; in bigger blocks every
 * 1021st byte (several per page) plus the last 256 bytes, which keeps
 * emulated runs short. */
static size_t step_for(size_t n)
{
	return n <= 65536 ? 1 : 1021;
}

static unsigned char pat(const struct blk *b, size_t i)
{
	return (unsigned char)(b->seed + i * 7);
}

static void fill(struct blk *b)
{
	size_t st = step_for(b->n);
	for (size_t i = 0; i < b->n; i += st)
		b->p[i] = pat(b, i);
	for (size_t i = b->n > 256 ? b->n - 256 : 0; i < b->n; i++)
		b->p[i] = pat(b, i);
}

static int check_prefix(const struct blk *b, const unsigned char *p, size_t n)
{
	size_t st = step_for(b->n);
	for (size_t i = 0; i < n; i += st)
		if (p[i] != pat(b, i))
			return -1;
	for (size_t i = b->n > 256 ? b->n - 256 : 0; i < n; i++)
		if (p[i] != pat(b, i))
			return -1;
	return 0;
}

static int check(const struct blk *b, uint64_t *sum)
{
	if (check_prefix(b, b->p, b->n) < 0)
		return -1;
	*sum = *sum * 1000003u + b->n + b->seed;
	return 0;
}

static size_t pick_size(void)
{
	/* mostly 16 B .. 16 KiB; one in eight log-uniform up to 4 MiB */
	unsigned shift = (next() % 8 == 0) ? 4 + next() % 19 : 4 + next() % 10;
	size_t base = (size_t)1 << shift;
	size_t n = base + next() % base / 2;
	return n > MAXSZ ? MAXSZ : n;
}

int main(void)
{
	static struct blk b[NBLK];
	uint64_t sum = 0;
	int errors = 0, allocs = 0;
	size_t big = 0, total = 0;

	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < NBLK; i++) {
			b[i].n = (i % 32 == 0) ? MAXSZ : pick_size();
			b[i].seed = (unsigned char)next();
			b[i].p = malloc(b[i].n);
			if (b[i].p == NULL) {
				printf("malloc failed\n");
				return 1;
			}
			allocs++;
			if (b[i].n >= 128 * 1024)
				big++;
			total += b[i].n;
			fill(&b[i]);
		}
		/* realloc growth of a quarter of the blocks, in several steps
		 * (not the 4 MiB ones at i % 32 == 0, to bound the peak) */
		for (int i = 2; i < NBLK; i += 4) {
			for (int g = 0; g < 3; g++) {
				if (check(&b[i], &sum) < 0)
					errors++;
				size_t nn = b[i].n + b[i].n / 2 + 100;
				unsigned char *q = realloc(b[i].p, nn);
				if (q == NULL) {
					printf("realloc failed\n");
					return 1;
				}
				/* old contents must survive: compare sampled positions */
				size_t st = step_for(b[i].n);
				for (size_t k = 0; k < b[i].n; k += st)
					if (q[k] != pat(&b[i], k)) {
						errors++;
						break;
					}
				b[i].p = q;
				b[i].n = nn;
				fill(&b[i]);
			}
		}
		/* free in a scrambled order: a permutation from the PRNG */
		int order[NBLK];
		for (int i = 0; i < NBLK; i++)
			order[i] = i;
		for (int i = NBLK - 1; i > 0; i--) {
			int j = (int)(next() % (uint32_t)(i + 1));
			int t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int k = 0; k < NBLK; k++) {
			struct blk *x = &b[order[k]];
			if (check(x, &sum) < 0)
				errors++;
			free(x->p);
			x->p = NULL;
		}
	}

	/* calloc: must come back zeroed, including memory reused after free */
	for (int i = 0; i < 64; i++) {
		size_t n = (i % 8 == 0) ? ((size_t)1 << 20) + 17 : 16 + (size_t)i * 123;
		unsigned char *p = calloc(n, 1);
		if (p == NULL) {
			printf("calloc failed\n");
			return 1;
		}
		allocs++;
		size_t st = n > 65536 ? 61 : 1;
		for (size_t k = 0; k < n; k += st)
			if (p[k] != 0) {
				errors++;
				break;
			}
		if (p[n - 1] != 0)
			errors++;
		memset(p, 0xAB, n);
		sum = sum * 31 + n;
		free(p);
	}

	printf("allocations %d, big (>=128KiB) %zu, total bytes %zu\n", allocs, big,
	       total);
	printf("errors %d\n", errors);
	printf("checksum %016llx\n", (unsigned long long)sum);
	return errors ? 1 : 0;
}
