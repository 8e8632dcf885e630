/* args.c - prints argc, every argv[i], every environment string in order,
 * and the auxv entries whose values are deterministic across runs:
 * AT_PAGESZ, AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE, whether AT_RANDOM
 * and AT_EXECFN are non-null, and the AT_EXECFN string.
 * Exercises: the initial stack built by the loader (argv, envp, auxv). */
#include <stdio.h>
#include <sys/auxv.h>

extern char **environ;

int main(int argc, char **argv)
{
	int i;

	printf("argc=%d\n", argc);
	for (i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	if (argv[argc] != NULL)
		printf("argv[argc] is not NULL\n");

	for (i = 0; environ[i] != NULL; i++)
		printf("env[%d]=%s\n", i, environ[i]);
	printf("envc=%d\n", i);

	printf("AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
	printf("AT_UID=%lu\n", getauxval(AT_UID));
	printf("AT_EUID=%lu\n", getauxval(AT_EUID));
	printf("AT_GID=%lu\n", getauxval(AT_GID));
	printf("AT_EGID=%lu\n", getauxval(AT_EGID));
	printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));
	printf("AT_RANDOM=%s\n", getauxval(AT_RANDOM) ? "non-null" : "null");
	unsigned long execfn = getauxval(AT_EXECFN);
	printf("AT_EXECFN=%s\n", execfn ? "non-null" : "null");
	if (execfn)
		printf("AT_EXECFN string=%s\n", (const char *)execfn);
	return 0;
}
