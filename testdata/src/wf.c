/* wf.c - a word-frequency counter in the style of Debian's wf (the aprof
 * paper's case study): reads stdin, splits it into words of letters,
 * lowers them with str_tolower (strlen in the loop condition: quadratic,
 * as in wf 0.41), counts them in a chained hash table with addword, and
 * prints the total/distinct counts and the top 10 words sorted by count
 * (descending) then word (ascending). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBUCKETS 4096

struct entry {
	char *word;
	long count;
	struct entry *next;
};

static struct entry *table[NBUCKETS];
static long distinct;

__attribute__((noinline)) static int wf_tolower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

__attribute__((noinline)) void str_tolower(char *str)
{
	size_t i;
	for (i = 0; i < strlen(str); i++)
		str[i] = (char)wf_tolower((unsigned char)str[i]);
}

__attribute__((noinline)) static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

__attribute__((noinline)) void addword(const char *w)
{
	unsigned b = hash(w) % NBUCKETS;
	for (struct entry *e = table[b]; e; e = e->next)
		if (strcmp(e->word, w) == 0) {
			e->count++;
			return;
		}
	struct entry *e = malloc(sizeof *e);
	e->word = strdup(w);
	e->count = 1;
	e->next = table[b];
	table[b] = e;
	distinct++;
}

static int cmp(const void *pa, const void *pb)
{
	const struct entry *a = *(struct entry *const *)pa;
	const struct entry *b = *(struct entry *const *)pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->word, b->word);
}

int main(void)
{
	char buf[4096];
	char word[1024];
	size_t wl = 0;
	long total = 0;
	ssize_t n;

	while ((n = read(0, buf, sizeof buf)) > 0) {
		/* a word may continue across two reads: wl carries over */
		for (ssize_t i = 0; i < n; i++) {
			int c = (unsigned char)buf[i];
			if (isalpha(c)) {
				if (wl < sizeof word - 1)
					word[wl++] = (char)c;
			} else if (wl > 0) {
				word[wl] = '\0';
				str_tolower(word);
				addword(word);
				total++;
				wl = 0;
			}
		}
	}
	if (wl > 0) {
		word[wl] = '\0';
		str_tolower(word);
		addword(word);
		total++;
	}

	struct entry **all = malloc((size_t)(distinct ? distinct : 1) * sizeof *all);
	long k = 0;
	for (int b = 0; b < NBUCKETS; b++)
		for (struct entry *e = table[b]; e; e = e->next)
			all[k++] = e;
	qsort(all, (size_t)k, sizeof *all, cmp);
	printf("words %ld, distinct %ld\n", total, distinct);
	for (long i = 0; i < k && i < 10; i++)
		printf("%7ld %s\n", all[i]->count, all[i]->word);
	return 0;
}
