/* pathfreq: routines with known acyclic path frequencies, for path profiling
 * (emuprof paths). Each routine's branches hold asm statements that differ
 * between the arms, so that no build turns them into branch-free code; the
 * program counts, from the inputs, how often each path must execute and
 * prints the counts:
 *
 *   diamonds  three independent if/else diamonds: 8 paths, counts 5, 12, ..., 54
 *   loop      a counted loop (the loop test calls more(), so no build moves
 *             it): every call ends one path more than it iterates; the
 *             6 path kinds: entered from the routine's entry or from the loop
 *             header, through the odd arm, the even arm, or out of the loop
 *   rec       recursion: leaf (n == 0), n % 3 == 0 arm, other arm
 *   sw        a switch over 0..7 plus default (a jump table)
 */
#include <stdio.h>

#define ARM_A __asm__ volatile("nop" ::: "memory")
#define ARM_B __asm__ volatile("nop; nop" ::: "memory")

volatile int sink;

__attribute__((noipa)) int diamonds(unsigned x) {
	int r = 0;
	if (x & 1) { ARM_A; r += 3; } else { ARM_B; r -= 1; }
	if (x & 2) { ARM_A; r ^= 5; } else { ARM_B; r += 7; }
	if (x & 4) { ARM_A; r *= 3; } else { ARM_B; r -= 2; }
	return r;
}

__attribute__((noipa)) int more(int i, int n) { return i < n; }

__attribute__((noipa)) void loop(const int *a, int n) {
	int i = 0;
	while (more(i, n)) {
		if (a[i] & 1) { ARM_A; sink += 1; } else { ARM_B; sink += 2; }
		i++;
	}
}

__attribute__((noipa)) int rec(int n) {
	if (n == 0) { ARM_A; return 0; }
	if (n % 3 == 0) { ARM_A; sink += 3; } else { ARM_B; sink += 1; }
	int r = rec(n - 1);
	sink ^= r;
	return r + 1;
}

__attribute__((noipa)) int sw(int x) {
	switch (x) {
	case 0: __asm__ volatile("nop" ::: "memory"); return 10;
	case 1: __asm__ volatile("nop; nop" ::: "memory"); return 21;
	case 2: __asm__ volatile("nop; nop; nop" ::: "memory"); return 32;
	case 3: __asm__ volatile("nop; nop; nop; nop" ::: "memory"); return 43;
	case 4: __asm__ volatile("pause" ::: "memory"); return 54;
	case 5: __asm__ volatile("pause; nop" ::: "memory"); return 65;
	case 6: __asm__ volatile("pause; nop; nop" ::: "memory"); return 76;
	case 7: __asm__ volatile("pause; nop; nop; nop" ::: "memory"); return 87;
	default: __asm__ volatile("pause; pause" ::: "memory"); return -1;
	}
}

static unsigned lcg = 12345;
static unsigned next(void) { lcg = lcg * 1103515245u + 12345u; return lcg >> 16; }

int main(void) {
	/* diamonds: combination c = x & 7 (bit k set: the first arm of diamond
	 * k) runs 7c + 5 times, in a scrambled order. */
	unsigned want[8], done[8] = {0};
	unsigned total = 0;
	for (int c = 0; c < 8; c++) total += want[c] = 7 * c + 5;
	for (unsigned k = 0; k < total;) {
		unsigned c = next() % 8;
		if (done[c] == want[c]) continue;
		done[c]++, k++;
		sink += diamonds(c | (next() << 3));
	}
	for (int c = 0; c < 8; c++)
		printf("diamonds %c%c%c %u\n", c & 1 ? 'T' : 'F', c & 2 ? 'T' : 'F', c & 4 ? 'T' : 'F', done[c]);

	/* loop: n = 0..19 over values from the LCG. */
	int a[32];
	unsigned calls = 0, iters = 0, entry[3] = {0}, head[3] = {0}; /* odd, even, out */
	for (int n = 0; n < 20; n++) {
		for (int i = 0; i < n; i++) a[i] = (int)next();
		loop(a, n);
		calls++;
		iters += n;
		for (int i = 0; i <= n; i++) {
			unsigned *kind = i == 0 ? entry : head;
			kind[i == n ? 2 : (a[i] & 1 ? 0 : 1)]++;
		}
	}
	printf("loop calls %u iterations %u\n", calls, iters);
	printf("loop entry-odd %u entry-even %u entry-out %u head-odd %u head-even %u head-out %u\n",
	       entry[0], entry[1], entry[2], head[0], head[1], head[2]);

	/* rec: rec(n) for n = 0, 4, ..., 28, counting the arms. */
	unsigned leaf = 0, mult3 = 0, other = 0, rcalls = 0;
	for (int n = 0; n <= 30; n += 4) {
		sink += rec(n);
		for (int m = n; m > 0; m--) m % 3 == 0 ? mult3++ : other++;
		leaf++;
		rcalls += n + 1;
	}
	printf("rec calls %u leaf %u mult3 %u other %u\n", rcalls, leaf, mult3, other);

	/* sw: case k (0..7) 3k + 2 times, default (8) 30 times. */
	unsigned cases[9] = {0};
	for (int k = 0; k < 9; k++) {
		unsigned times = k == 8 ? 30 : 3 * k + 2;
		for (unsigned t = 0; t < times; t++) {
			sink += sw(k == 8 ? 100 + (int)t : k);
			cases[k]++;
		}
	}
	printf("sw");
	for (int k = 0; k < 9; k++) printf(" %u", cases[k]);
	printf("\n");
	return 0;
}
