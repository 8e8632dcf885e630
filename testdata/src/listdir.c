/* listdir.c - `listdir DIR`: reads DIR with opendir/readdir (getdents64),
 * collects the names (skipping "." and ".."), sorts them with strcmp and
 * prints one line per entry: "NAME file SIZE", "NAME dir" or "NAME other".
 * Directory sizes are not printed because they depend on the host file
 * system. Exercises: openat(O_DIRECTORY), getdents64, newfstatat/stat.
 * Exit 1 on usage error, 2 on an I/O error. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (argc != 2) {
		fprintf(stderr, "usage: listdir DIR\n");
		return 1;
	}
	DIR *d = opendir(argv[1]);
	if (d == NULL) {
		perror(argv[1]);
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = realloc(names, cap * sizeof *names);
			if (names == NULL)
				return 2;
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, cmp);

	printf("%zu entries\n", n);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
		if (stat(path, &st) < 0) {
			printf("%s error\n", names[i]);
		} else if (S_ISREG(st.st_mode)) {
			printf("%s file %lld\n", names[i], (long long)st.st_size);
		} else if (S_ISDIR(st.st_mode)) {
			printf("%s dir\n", names[i]);
		} else {
			printf("%s other\n", names[i]);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}
