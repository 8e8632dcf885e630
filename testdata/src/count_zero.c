/* count_zero.c - the aprof paper's (PLDI'12) Examples 3 and 4: an iterative
 * count_zero_iter(v, n) and a recursive count_zero_rec(v, n), both noinline,
 * called from main for n = 1, 8, 15, ..., 197 (step 7) on int arrays with a
 * fixed pattern of zeros. Prints per-n counts and the totals.
 * Input-sensitive profiling must show cost linear in the read memory size
 * for both; the recursive one yields n+1 tuples per top-level call. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int count_zero_iter(int *v, int n)
{
	int i, count = 0;
	for (i = 0; i < n; i++)
		count += (v[i] == 0 ? 1 : 0);
	return count;
}

__attribute__((noinline)) int count_zero_rec(int *v, int n)
{
	if (n < 1)
		return 0;
	int r = count_zero_rec(v, n - 1);
	/* keep a real call at -O2: stop GCC turning the recursion into a loop */
	__asm__ volatile("" : "+r"(r));
	return (v[n - 1] == 0 ? 1 : 0) + r;
}

int main(void)
{
	long total_iter = 0, total_rec = 0;
	int calls = 0;
	for (int n = 1; n <= 200; n += 7) {
		int *v = malloc((size_t)n * sizeof *v);
		for (int i = 0; i < n; i++)
			v[i] = (i * 7 + n) % 5 == 0 ? 0 : i + 1;
		int ci = count_zero_iter(v, n);
		int cr = count_zero_rec(v, n);
		if (ci != cr)
			printf("mismatch at n=%d: %d vs %d\n", n, ci, cr);
		printf("n=%d zeros=%d\n", n, ci);
		total_iter += ci;
		total_rec += cr;
		calls++;
		free(v);
	}
	printf("calls %d, total iter %ld, total rec %ld\n", calls, total_iter, total_rec);
	return total_iter == total_rec ? 0 : 1;
}
