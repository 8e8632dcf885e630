// Count words in a chained hash table of 4096 buckets: the hash sums the
// key's bytes (few distinct values, long chains), or OPT is FNV-1a.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define B 4096
#define N 8000
struct e { char k[16]; int n; struct e *next; };
static struct e *tab[B], pool[N];
static unsigned h(const char *s) {
	unsigned v;
#ifdef OPT
	v = 2166136261u;
	while (*s) v = (v ^ (unsigned char)*s++) * 16777619u;
#else
	v = 0;
	while (*s) v += (unsigned char)*s++;
#endif
	return v % B;
}
int main(void) {
	int used = 0;
	char k[16];
	unsigned x = 1;
	for (int i = 0; i < 2 * N; i++) {
		x = x * 1103515245u + 12345u;
		snprintf(k, sizeof k, "w%u", (x >> 8) % N);
		struct e **p = &tab[h(k)];
		while (*p && strcmp((*p)->k, k)) p = &(*p)->next;
		if (!*p) { *p = &pool[used++]; strcpy((*p)->k, k); }
		(*p)->n++;
	}
	printf("%d\n", used);
	return 0;
}
