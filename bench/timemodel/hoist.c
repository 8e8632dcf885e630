// Upper-case a string; the loop condition calls strlen every iteration
// (the loop writes the string, so the compiler cannot hoist it), or OPT
// once before the loop.
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#define L 4000
#define ROUNDS 60
static char s[L + 1];
int main(void) {
	memset(s, 'a', L);
	long sum = 0;
	for (int r = 0; r < ROUNDS; r++) {
#ifdef OPT
		size_t n = strlen(s);
		for (size_t i = 0; i < n; i++)
#else
		for (size_t i = 0; i < strlen(s); i++)
#endif
			s[i] = r & 1 ? toupper(s[i]) : tolower(s[i]);
		sum += s[r];
	}
	printf("%ld\n", sum);
	return 0;
}
