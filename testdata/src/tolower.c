/* tolower.c - the aprof paper's wf example in miniature: str_tolower(s)
 * calls strlen(s) in its loop condition, so its cost is quadratic in the
 * length of s, while addword(buf, w), which appends w to buf, is linear.
 * Both noinline; called on words of lengths 1, 61, ..., 2941 (step 60): long
 * enough that the quadratic term dominates even with SSE2 strlen, which
 * scans 64 bytes per iteration.
 * Prints a checksum of the lowered text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int wf_tolower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

__attribute__((noinline)) void str_tolower(char *s)
{
	size_t i;
	for (i = 0; i < strlen(s); i++) /* strlen in the condition: quadratic */
		s[i] = (char)wf_tolower((unsigned char)s[i]);
}

/* appends w and a space to buf; returns the new length. Linear in |w|. */
__attribute__((noinline)) size_t addword(char *buf, const char *w)
{
	size_t n = 0;
	while (buf[n] != '\0')
		n++;
	while (*w)
		buf[n++] = *w++;
	buf[n++] = ' ';
	buf[n] = '\0';
	return n;
}

int main(void)
{
	static char word[4096] __attribute__((aligned(64))); /* alignment-independent strlen reads */
	static char text[65536];
	unsigned long h = 5381;
	int words = 0;
	size_t len = 0;

	for (int n = 1; n <= 3000; n += 60) {
		for (int i = 0; i < n; i++)
			word[i] = (char)((i % 3 == 0 ? 'A' : 'a') + (i * 7 + n) % 26);
		word[n] = '\0';
		str_tolower(word);
		text[0] = '\0'; /* addword scans from the start: keep it per word */
		len = addword(text, word);
		for (size_t i = 0; i < len; i++)
			h = h * 33 + (unsigned char)text[i];
		words++;
	}
	printf("words %d, last length %zu, checksum %016lx\n", words, len, h);
	return 0;
}
