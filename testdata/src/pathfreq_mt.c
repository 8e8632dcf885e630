/* pathfreq_mt: path frequencies under threads (emuprof paths). Four threads
 * run the same routine, two independent if/else diamonds, interleaved by
 * the scheduler at any point of a path: each activation keeps its own path
 * register. The combination c (bit k: the first arm of diamond k) runs
 * 3·(c+1)·(t+1) times in thread t, 30·(c+1) times in all, which the
 * program prints.
 */
#include <pthread.h>
#include <stdio.h>

#define ARM_A __asm__ volatile("nop" ::: "memory")
#define ARM_B __asm__ volatile("nop; nop" ::: "memory")

volatile int sink;

__attribute__((noipa)) int diamonds2(unsigned x) {
	int r = 0;
	if (x & 1) { ARM_A; r += 3; } else { ARM_B; r -= 1; }
	if (x & 2) { ARM_A; r ^= 5; } else { ARM_B; r += 7; }
	return r;
}

static unsigned done[4][4];

static void *worker(void *arg) {
	int t = (int)(long)arg;
	unsigned lcg = 777u * (t + 1), want[4], total = 0;
	for (int c = 0; c < 4; c++) total += want[c] = 3 * (c + 1) * (t + 1);
	for (unsigned k = 0; k < total;) {
		lcg = lcg * 1103515245u + 12345u;
		unsigned c = (lcg >> 16) % 4;
		if (done[t][c] == want[c]) continue;
		done[t][c]++, k++;
		sink += diamonds2(c | (lcg & ~3u));
	}
	return 0;
}

int main(void) {
	pthread_t th[4];
	for (long t = 0; t < 4; t++) pthread_create(&th[t], 0, worker, (void *)t);
	for (int t = 0; t < 4; t++) pthread_join(th[t], 0);
	for (int c = 0; c < 4; c++) {
		unsigned n = 0;
		for (int t = 0; t < 4; t++) n += done[t][c];
		printf("diamonds2 %c%c %u\n", c & 1 ? 'T' : 'F', c & 2 ? 'T' : 'F', n);
	}
	return 0;
}
