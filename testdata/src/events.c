/* events: eventfd, epoll and timerfd as Linux has them. Prints only what
 * does not depend on timing (a timer's tick count is printed as a lower
 * bound), so the output equals the native one. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e) {
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ELOOP: return "ELOOP";
	}
	return "E?";
}

static void show(const char *what, long r) {
	if (r < 0)
		printf("%s = -1 %s\n", what, ename(errno));
	else
		printf("%s = %ld\n", what, r);
}

static int wait_events(int ep, int max, int timeout) {
	struct epoll_event ev[16];
	int n = epoll_wait(ep, ev, max, timeout);
	printf("epoll_wait(max %d, %d ms) = %d:", max, timeout, n);
	for (int i = 0; i < n; i++)
		printf(" %llu/%#x", (unsigned long long)ev[i].data.u64, ev[i].events);
	printf("\n");
	return n;
}

static void add(int ep, int fd, uint32_t events, uint64_t data) {
	struct epoll_event ev = {.events = events, .data.u64 = data};
	char what[64];
	snprintf(what, sizeof what, "epoll_ctl(ADD, data %llu)", (unsigned long long)data);
	show(what, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
}

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void) {
	uint64_t v;
	/* eventfd */
	int efd = eventfd(3, EFD_NONBLOCK);
	show("eventfd", efd >= 0);
	show("read(efd, 4 bytes)", read(efd, &v, 4));
	show("read(efd)", read(efd, &v, 8));
	printf("value %llu\n", (unsigned long long)v);
	show("read(efd) empty", read(efd, &v, 8));
	v = UINT64_MAX;
	show("write(efd, UINT64_MAX)", write(efd, &v, 8));
	v = UINT64_MAX - 1;
	show("write(efd, max)", write(efd, &v, 8));
	v = 1;
	show("write(efd, 1) full", write(efd, &v, 8));
	show("fcntl(efd, F_GETFL)", fcntl(efd, F_GETFL));
	int sem = eventfd(2, EFD_SEMAPHORE);
	show("read(sem)", read(sem, &v, 8));
	printf("value %llu\n", (unsigned long long)v);
	show("eventfd(bad flags)", eventfd(0, 0x10));

	/* epoll */
	show("epoll_create(0)", epoll_create(0));
	show("epoll_create1(1)", epoll_create1(1));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int p1[2], p2[2];
	if (pipe(p1) || pipe(p2))
		return 1;
	int file = open("/proc/self/exe", O_RDONLY);
	int dn = open("/dev/null", O_WRONLY);
	int e2 = eventfd(0, 0);
	struct epoll_event ev = {.events = EPOLLIN};
	show("epoll_ctl(ADD, regular file)", epoll_ctl(ep, EPOLL_CTL_ADD, file, &ev));
	show("epoll_ctl(ADD, /dev/null)", epoll_ctl(ep, EPOLL_CTL_ADD, dn, &ev));
	show("epoll_ctl(ADD, self)", epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev));
	show("epoll_ctl(ADD, bad fd)", epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev));
	show("epoll_ctl(ADD, not epoll)", epoll_ctl(p1[0], EPOLL_CTL_ADD, p2[0], &ev));
	show("epoll_ctl(MOD, absent)", epoll_ctl(ep, EPOLL_CTL_MOD, p1[0], &ev));
	show("epoll_ctl(DEL, absent)", epoll_ctl(ep, EPOLL_CTL_DEL, p1[0], NULL));
	show("epoll_ctl(op 7)", epoll_ctl(ep, 7, p1[0], &ev));
	add(ep, p1[0], EPOLLIN, 1);
	add(ep, p2[0], EPOLLIN, 2);
	add(ep, e2, EPOLLIN | EPOLLET, 3);
	add(ep, p1[1], EPOLLOUT | EPOLLONESHOT, 4);
	show("epoll_ctl(ADD twice)", epoll_ctl(ep, EPOLL_CTL_ADD, p1[0], &ev));
	wait_events(ep, 16, 0);
	write(p2[1], "a", 1);
	write(p1[1], "b", 1);
	v = 1;
	write(e2, &v, 8);
	wait_events(ep, 16, 0);
	wait_events(ep, 1, 0);
	wait_events(ep, 1, 0);
	wait_events(ep, 1, 0);
	write(e2, &v, 8);
	wait_events(ep, 16, 0);
	ev.events = EPOLLOUT;
	ev.data.u64 = 5;
	show("epoll_ctl(MOD one-shot)", epoll_ctl(ep, EPOLL_CTL_MOD, p1[1], &ev));
	close(p2[1]);
	wait_events(ep, 16, 0);
	int d = dup(p1[0]);
	close(p1[0]);
	close(p2[0]);
	wait_events(ep, 16, 0);
	close(d);
	wait_events(ep, 16, 0);
	show("epoll_wait(maxevents 0)", epoll_wait(ep, &ev, 0, 0));
	show("epoll_wait(not epoll)", epoll_wait(e2, &ev, 1, 0));
	struct epoll_event *volatile null_events = NULL;
	show("epoll_wait(NULL)", epoll_wait(ep, null_events, 1, 0));
	show("epoll_ctl(DEL)", epoll_ctl(ep, EPOLL_CTL_DEL, p1[1], NULL));
	int64_t t0 = now_ns();
	int n = wait_events(ep, 16, 20);
	printf("waited 20 ms: %s\n", n == 0 && now_ns() - t0 >= 20000000 ? "yes" : "no");

	/* timerfd */
	show("timerfd_create(bad clock)", timerfd_create(99, 0));
	show("timerfd_create(bad flags)", timerfd_create(CLOCK_MONOTONIC, 1));
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {.it_value = {0, 30000000}}, old;
	show("timerfd_settime(bad flags)", timerfd_settime(tfd, 8, &its, NULL));
	show("timerfd_settime(not a timer)", timerfd_settime(e2, 0, &its, NULL));
	show("timerfd_settime(30 ms)", timerfd_settime(tfd, 0, &its, &old));
	printf("old value %ld.%09ld\n", (long)old.it_value.tv_sec, old.it_value.tv_nsec);
	timerfd_gettime(tfd, &old);
	printf("remaining in (0, 30 ms]: %s\n",
	       old.it_value.tv_sec == 0 && old.it_value.tv_nsec > 0 && old.it_value.tv_nsec <= 30000000 ? "yes" : "no");
	t0 = now_ns();
	show("read(tfd) blocks", read(tfd, &v, 8));
	printf("ticks %llu, waited 30 ms: %s\n", (unsigned long long)v, now_ns() - t0 >= 29000000 ? "yes" : "no");
	int tep = epoll_create1(0);
	add(tep, tfd, EPOLLIN, 7);
	its.it_interval.tv_nsec = 1000000;
	its.it_value.tv_nsec = 1000000;
	timerfd_settime(tfd, 0, &its, NULL);
	wait_events(tep, 4, -1);
	struct timespec ten = {0, 10000000};
	nanosleep(&ten, NULL);
	read(tfd, &v, 8);
	printf("periodic ticks after 11 ms >= 10: %s\n", v >= 10 ? "yes" : "no");
	its.it_value.tv_nsec = 0;
	timerfd_settime(tfd, 0, &its, NULL);
	wait_events(tep, 4, 5);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	int rtfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	struct itimerspec abs = {.it_value = {rt.tv_sec + 1, rt.tv_nsec}};
	show("timerfd_settime(realtime, abstime)", timerfd_settime(rtfd, TFD_TIMER_ABSTIME, &abs, NULL));
	show("read(rtfd) before", read(rtfd, &v, 8));
	add(tep, rtfd, EPOLLIN, 8);
	wait_events(tep, 4, -1);
	show("read(rtfd) after", read(rtfd, &v, 8));
	printf("ticks %llu\n", (unsigned long long)v);

	/* poll wakes up when a timerfd it polls expires */
	its.it_interval.tv_nsec = 0;
	its.it_value.tv_nsec = 15000000;
	timerfd_settime(tfd, 0, &its, NULL);
	struct pollfd pfd = {.fd = tfd, .events = POLLIN};
	t0 = now_ns();
	show("poll(tfd, -1)", poll(&pfd, 1, -1));
	printf("revents %#x, waited 15 ms: %s\n", pfd.revents, now_ns() - t0 >= 14000000 ? "yes" : "no");
	read(tfd, &v, 8);
	t0 = now_ns();
	show("poll(tfd disarmed, 25 ms)", poll(&pfd, 1, 25));
	printf("waited 25 ms: %s\n", now_ns() - t0 >= 24000000 ? "yes" : "no");
	return 0;
}
