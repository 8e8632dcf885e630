/* exit3.c - prints one line and exits with status 3.
 * Exercises: exit status propagation (exit_group(3)), stdio flush at exit. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("exiting with status 3\n");
	exit(3);
}
