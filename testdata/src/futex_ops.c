/* futex_ops: exercises the futex operations glibc and musl rarely use in
 * common paths, through the raw syscall, with deterministic output:
 * EAGAIN on a value mismatch, FUTEX_WAIT with a relative timeout
 * (ETIMEDOUT), FUTEX_WAIT_BITSET with an absolute CLOCK_MONOTONIC and an
 * absolute CLOCK_REALTIME timeout, FUTEX_WAKE_BITSET bit matching,
 * FUTEX_CMP_REQUEUE from one word to another, FUTEX_WAKE_OP, and
 * FUTEX_REQUEUE. Waiters are threads; the main thread checks how many each
 * operation woke. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Linux ABI values (musl ships no <linux/futex.h>). */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_REQUEUE_PRIVATE 131
#define FUTEX_CMP_REQUEUE_PRIVATE 132
#define FUTEX_WAKE_OP_PRIVATE 133
#define FUTEX_WAIT_BITSET_PRIVATE 137
#define FUTEX_WAKE_BITSET_PRIVATE 138
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#define FUTEX_OP_ADD 1
#define FUTEX_OP_CMP_EQ 0
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) | (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))

static long futex(atomic_int *uaddr, int op, int val, const struct timespec *ts, atomic_int *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static atomic_int word, word2, started, done;

static void *waiter(void *arg)
{
	int bitset = (int)(intptr_t)arg;
	atomic_fetch_add(&started, 1);
	while (atomic_load(&word) == 0) {
		if (bitset)
			futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, bitset);
		else
			futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	atomic_fetch_add(&done, 1);
	return NULL;
}

/* Waits until n waiters are blocked in the kernel on uaddr: a requeue or
 * wake with no waiter would return 0. */
static void settle(void)
{
	for (int i = 0; i < 50; i++)
		sched_yield();
	usleep(1000);
}

static void start(pthread_t *t, int n, int bitset)
{
	atomic_store(&word, 0);
	atomic_store(&started, 0);
	atomic_store(&done, 0);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)bitset);
	while (atomic_load(&started) < n)
		sched_yield();
	settle();
}

static void finish(pthread_t *t, int n)
{
	atomic_store(&word, 1);
	futex(&word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
	futex(&word2, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	pthread_t t[4];
	struct timespec ts = {0, 2000000};

	atomic_store(&word, 5);
	long r = futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0);
	printf("wait on mismatch: %ld %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");

	r = futex(&word, FUTEX_WAIT_PRIVATE, 5, &ts, NULL, 0);
	printf("relative timeout: %ld %s\n", r, r < 0 && errno == ETIMEDOUT ? "ETIMEDOUT" : "?");

	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_nsec += 3000000;
	if (now.tv_nsec >= 1000000000) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000;
	}
	r = futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 5, &now, NULL, FUTEX_BITSET_MATCH_ANY);
	struct timespec after;
	clock_gettime(CLOCK_MONOTONIC, &after);
	int late = after.tv_sec > now.tv_sec || (after.tv_sec == now.tv_sec && after.tv_nsec >= now.tv_nsec);
	printf("absolute monotonic timeout: %ld %s, woke after deadline: %s\n", r,
	       r < 0 && errno == ETIMEDOUT ? "ETIMEDOUT" : "?", late ? "yes" : "no");

	clock_gettime(CLOCK_REALTIME, &now);
	now.tv_nsec += 1000000;
	if (now.tv_nsec >= 1000000000) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000;
	}
	r = futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &now, NULL, FUTEX_BITSET_MATCH_ANY);
	printf("absolute realtime timeout: %ld %s\n", r, r < 0 && errno == ETIMEDOUT ? "ETIMEDOUT" : "?");

	/* Two waiters with bitset 1: a wake with bitset 2 wakes none, bitset 1 both. */
	start(t, 2, 1);
	printf("wake bitset 2: %ld\n", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 2));
	finish(t, 2);
	printf("bitset waiters done: %d\n", atomic_load(&done));

	/* Three waiters on word: CMP_REQUEUE wakes 1 and moves up to 10 to word2. */
	start(t, 3, 0);
	r = futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)10, &word2, 1);
	printf("cmp_requeue mismatch: %ld %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
	r = futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)10, &word2, 0);
	printf("cmp_requeue: %ld (1 woken + 2 requeued)\n", r);
	atomic_store(&word, 1);
	printf("wake on word2: %ld\n", futex(&word2, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	/* the woken waiter may be waiting on word again (it rechecks in a loop) */
	futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("requeued waiters done: %d\n", atomic_load(&done));

	/* WAKE_OP: word2 += 1 (old 0), wake 1 on word, and 1 on word2 if old == 0. */
	atomic_store(&word2, 0);
	start(t, 2, 0);
	int op = FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0);
	r = futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &word2, op);
	printf("wake_op: %ld, word2 now %d\n", r, atomic_load(&word2));
	finish(t, 2);

	/* Plain REQUEUE: wake 0, move 2. */
	start(t, 2, 0);
	r = futex(&word, FUTEX_REQUEUE_PRIVATE, 0, (void *)2, &word2, 0);
	printf("requeue: %ld\n", r);
	atomic_store(&word, 1);
	printf("wake on word2: %ld\n", futex(&word2, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("all done\n");
	return 0;
}
