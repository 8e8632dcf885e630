/* strings.c - string routines over a built-in text: strtok splits it into
 * lines and words, strlen/strcmp/strstr/strchr/memcmp/strncpy/snprintf
 * compute counts; prints them. Exercises libc's SSE/AVX string routines
 * (selected by IFUNC in glibc, i.e. CPUID), no syscalls besides stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char text[] =
	"The emulator runs one instruction block at a time and counts them.\n"
	"Every system call is answered by the emulator, never by the host.\n"
	"Threads run one at a time; the scheduler picks the thread whose clock\n"
	"is the smallest, so the same program gives the same answer twice.\n"
	"A profile that is the same every time is a profile you can diff.\n"
	"Blocks, calls, returns, reads and writes become events in a stream.\n"
	"The stream is read by analyses that never see the emulator itself.\n"
	"Time is virtual: a line of code can be made faster by slowing the rest.\n"
	"the end of the text is here, and THE END is near the end.\n";

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char *copy = strdup(text);
	char *lines[64];
	int nlines = 0;
	char *save1;

	printf("text length %zu\n", strlen(text));
	for (char *l = strtok_r(copy, "\n", &save1); l && nlines < 64;
	     l = strtok_r(NULL, "\n", &save1))
		lines[nlines++] = l;
	printf("lines %d\n", nlines);

	char *words[512];
	int nwords = 0;
	size_t total_len = 0, longest = 0;
	for (int i = 0; i < nlines; i++) {
		char line[256];
		snprintf(line, sizeof line, "%s", lines[i]);
		int inl = 0;
		for (char *w = strtok(line, " .,;:"); w; w = strtok(NULL, " .,;:")) {
			if (nwords < 512)
				words[nwords++] = strdup(w);
			size_t len = strlen(w);
			total_len += len;
			if (len > longest)
				longest = len;
			inl++;
		}
		printf("line %2d: %2d words, %3zu chars\n", i + 1, inl, strlen(lines[i]));
	}
	printf("words %d, total word length %zu, longest %zu\n", nwords, total_len,
	       longest);

	int the = 0, The = 0, ci_the = 0;
	for (int i = 0; i < nwords; i++) {
		if (strcmp(words[i], "the") == 0)
			the++;
		if (strcmp(words[i], "The") == 0)
			The++;
		if (strcasecmp(words[i], "the") == 0)
			ci_the++;
	}
	printf("'the' %d, 'The' %d, case-insensitive %d\n", the, The, ci_the);

	int occ = 0;
	for (const char *p = text; (p = strstr(p, "emulator")) != NULL; p++)
		occ++;
	printf("strstr 'emulator' %d\n", occ);
	occ = 0;
	for (const char *p = text; (p = strchr(p, 'e')) != NULL; p++)
		occ++;
	printf("strchr 'e' %d\n", occ);
	const char *last = strrchr(text, 'T');
	printf("strrchr 'T' at offset %ld\n", last ? (long)(last - text) : -1L);

	qsort(words, (size_t)nwords, sizeof words[0], cmp_str);
	int distinct = nwords > 0;
	for (int i = 1; i < nwords; i++)
		if (strcmp(words[i - 1], words[i]) != 0)
			distinct++;
	printf("distinct words %d, first '%s', last '%s'\n", distinct, words[0],
	       words[nwords - 1]);

	char buf[64];
	int total = 0;
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(buf, sizeof buf, "%d:%s:%x", i, words[i % nwords], i * 7);
		total += n;
		if (memcmp(buf, "99:", 3) == 0)
			printf("snprintf %s\n", buf);
	}
	printf("snprintf total %d\n", total);

	char small[8];
	strncpy(small, "abcdefghijk", sizeof small - 1);
	small[sizeof small - 1] = '\0';
	printf("strncpy '%s' strspn %zu strcspn %zu\n", small,
	       strspn(text, "The "), strcspn(text, "."));

	for (int i = 0; i < nwords; i++)
		free(words[i]);
	free(copy);
	return 0;
}
