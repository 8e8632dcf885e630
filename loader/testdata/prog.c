/* Guest program for the loader tests: initialized data, a BSS that starts
 * mid-page, and functions whose source lines the tests look up (LINE:name). */
#include <stdio.h>

char bss_buf[100000];
int counter = 42;

static int square(int x) { /* LINE:square */
	return x * x;
}

int main(int argc, char **argv) { /* LINE:main */
	int s = counter;
	for (int i = 0; i < argc; i++)
		s += square(i) + bss_buf[i];
	printf("%d %s\n", s, argv[0]);
	return 0;
}
