/* coz_hoist.c - two Coz progress points, COZ_PROGRESS_NAMED("alpha") and
 * ("beta"), in loops: gcc -O2 inlines coz.h's counter request and loads the
 * name's address before the dlsym call of "_coz_get_counter", so the load
 * nearest the counter's store names the dlsym symbol, not the point.
 * Argument: iterations of the loop (default 1000). */
#include <stdio.h>
#include <stdlib.h>
#include "coz.h"

volatile unsigned long sink;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < 100; k++)
			sink += k;
		COZ_PROGRESS_NAMED("alpha");
		for (int k = 0; k < 300; k++)
			sink += k;
		COZ_PROGRESS_NAMED("beta");
	}
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
