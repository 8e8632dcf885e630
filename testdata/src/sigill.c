/* sigill: executes an invalid instruction (ud2) in `bad_insn`; natively the
 * process dies of SIGILL (exit status 132 from a shell). */
#include <stdio.h>

__attribute__((noinline)) void bad_insn(void)
{
	__builtin_trap();
}

int main(void)
{
	printf("about to execute ud2\n");
	fflush(stdout);
	bad_insn();
	return 0;
}
