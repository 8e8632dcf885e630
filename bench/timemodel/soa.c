// Sum one field of many particles: array of 64-byte structs, or OPT a
// struct of arrays (the field's values contiguous).
#include <stdio.h>
#define N (1 << 18)
#define ROUNDS 8
#ifdef OPT
static double px[N], py[N], pz[N], vx[N], vy[N], vz[N], m[N], q[N];
#define X(i) px[i]
#else
static struct { double x, y, z, vx, vy, vz, m, q; } p[N];
#define X(i) p[i].x
#endif
int main(void) {
	for (int i = 0; i < N; i++) X(i) = i & 7;
	double s = 0;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < N; i++) s += X(i);
	printf("%g\n", s);
	return 0;
}
