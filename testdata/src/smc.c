/* smc.c - code that changes after it ran, by every route: stores into an
 * RWX page, W^X (mprotect RW, store, mprotect RX), read(2) into the page
 * (the kernel's write, not the program's), and mmap MAP_FIXED of a file
 * over it. Each time the new code must run, not an old translation.
 * Writes smc.bin in the current directory. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*fn)(void);

/* mov eax, imm32; ret */
static unsigned char code[] = {0xb8, 0, 0, 0, 0, 0xc3};

static int call(void *p) { return ((fn)p)(); }

int main(void)
{
	unsigned char *p = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *q = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("smc.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (p == MAP_FAILED || q == MAP_FAILED || fd < 0) {
		perror("smc");
		return 1;
	}
	long sum = 0;
	for (int i = 0; i < 5; i++) {
		code[1] = i * 3;
		memcpy(p, code, sizeof code);
		sum = sum * 100 + call(p);
	}
	printf("stores: %ld\n", sum);
	sum = 0;
	for (int i = 0; i < 4; i++) {
		mprotect(q, 4096, PROT_READ | PROT_WRITE);
		code[1] = 7 + i;
		memcpy(q, code, sizeof code);
		mprotect(q, 4096, PROT_READ | PROT_EXEC);
		sum = sum * 100 + call(q);
	}
	printf("w^x: %ld\n", sum);
	sum = 0;
	for (int i = 0; i < 4; i++) {
		code[1] = 20 + i;
		if (pwrite(fd, code, sizeof code, 0) != (ssize_t)sizeof code || pread(fd, p, sizeof code, 0) != (ssize_t)sizeof code) {
			perror("smc: pread");
			return 1;
		}
		sum = sum * 100 + call(p);
	}
	printf("read: %ld\n", sum);
	sum = 0;
	for (int i = 0; i < 4; i++) {
		code[1] = 40 + i;
		pwrite(fd, code, sizeof code, 0);
		unsigned char *r = mmap(p, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
		if (r != p) {
			perror("smc: mmap");
			return 1;
		}
		sum = sum * 100 + call(r);
	}
	printf("mmap: %ld\n", sum);
	return 0;
}
