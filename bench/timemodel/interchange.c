// Sum a 2048×2048 int matrix column by column (a stride of one row per
// access), or OPT with the loops interchanged (row by row).
#include <stdio.h>
#define N 2048
static int a[N][N];
int main(void) {
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) a[i][j] = i ^ j;
	long s = 0;
#ifdef OPT
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
#else
	for (int j = 0; j < N; j++)
		for (int i = 0; i < N; i++)
#endif
			s += a[i][j];
	printf("%ld\n", s);
	return 0;
}
