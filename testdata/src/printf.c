/* printf.c - printf-heavy output: ints, long long, hex, octal, chars,
 * strings with widths and precisions, floats with %f %e %g %a at various
 * precisions. Many lines (buffered stdout). Exercises libc's formatting
 * code (lots of small branches, x87/SSE) and write(1) of full buffers. */
#include <limits.h>
#include <stdio.h>

int main(void)
{
	static const double vals[] = {0.0,    1.0,       -1.5,      3.14159265358979,
				      1e-7,   123456789.0, 2.5e300, -6.02214076e23,
				      0.1,    1.0 / 3.0, 100.0,     65536.0};
	int nv = (int)(sizeof vals / sizeof vals[0]);
	int lines = 0;

	for (int i = -5; i <= 5; i++, lines++)
		printf("int %d |%5d|%-5d|%05d|%+d|% d|%x|%X|%o|%#x|%#o|\n", i, i, i, i, i, i,
		       (unsigned)i, (unsigned)i, (unsigned)i, (unsigned)i, (unsigned)i);
	printf("limits %d %d %u %ld %ld %lu\n", INT_MIN, INT_MAX, UINT_MAX, LONG_MIN,
	       LONG_MAX, ULONG_MAX);
	printf("long long %lld %llu %llx %020lld\n", LLONG_MIN, ULLONG_MAX, ULLONG_MAX,
	       -1234567890123LL);
	lines += 2;
	for (int i = 0; i < nv; i++) {
		double v = vals[i];
		printf("f %f|%.0f|%.2f|%10.3f|%-12.1f|\n", v, v, v, v, v);
		printf("e %e|%.0e|%.3E|%15.8e|\n", v, v, v, v);
		printf("g %g|%.1g|%.10g|%G|%#g|\n", v, v, v, v, v);
		printf("a %a|%.3a|\n", v, v);
		lines += 4;
	}
	for (int p = 0; p <= 17; p++, lines++)
		printf("pi %.*f %.*e\n", p, 3.14159265358979323846, p, 2.718281828459045);
	const char *s = "emulator";
	for (int w = 0; w <= 12; w += 3, lines++)
		printf("s |%*s|%-*s|%.*s|%c%c|\n", w, s, w, s, w / 3, s, 'A' + w, 'a' + w);
	unsigned long long acc = 1;
	for (int i = 0; i < 200; i++, lines++) {
		acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		printf("%3d %20llu %016llx %12.6f %s\n", i, acc, acc,
		       (double)(acc >> 11) / 9007199254740992.0, (acc & 1) ? "odd" : "even");
	}
	printf("%% literal, %s, %5.2s|\n", "done", "truncated");
	lines++;
	printf("lines %d\n", lines + 1);
	return 0;
}
