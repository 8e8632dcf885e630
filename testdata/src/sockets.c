/* Sockets between the processes of one run: AF_UNIX (stream, datagram,
 * seqpacket; socketpair, path and abstract names, SCM_RIGHTS, SO_PEERCRED),
 * TCP and UDP on loopback (v4 and v6), non-blocking connect, refused
 * connections, EPIPE, poll and epoll readiness. Only the parent prints, so
 * the output is the same natively and under emuprof; port numbers and pids
 * are checked, not printed. Usage: sockets DIR (a writable directory). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static const char *dir;

static void check(int ok, const char *what)
{
	printf("%-44s %s\n", what, ok ? "ok" : "FAILED");
	if (!ok)
		printf("  errno %d (%s)\n", errno, strerror(errno));
}

static int reap(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static ssize_t readall(int fd, char *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = read(fd, buf + done, n - done);
		if (r <= 0)
			return r < 0 ? r : (ssize_t)done;
		done += r;
	}
	return done;
}

static void pairs(void)
{
	int sv[2];
	char buf[64];
	check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair stream");
	check(write(sv[0], "hello", 5) == 5 && write(sv[0], " world", 6) == 6, "two writes");
	check(read(sv[1], buf, sizeof buf) == 11 && memcmp(buf, "hello world", 11) == 0, "one read gets both");
	struct ucred cr;
	socklen_t len = sizeof cr;
	check(getsockopt(sv[1], SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && len == sizeof cr &&
	      cr.pid == getpid() && cr.uid == getuid() && cr.gid == getgid(), "SO_PEERCRED is ours");
	int type = 0;
	len = sizeof type;
	check(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM, "SO_TYPE");
	int n = -1;
	write(sv[0], "abc", 3);
	check(ioctl(sv[1], FIONREAD, &n) == 0 && n == 3, "FIONREAD");
	check(recv(sv[1], buf, 2, MSG_PEEK) == 2 && recv(sv[1], buf, sizeof buf, 0) == 3, "MSG_PEEK leaves the data");
	check(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT) == -1 && errno == EAGAIN, "MSG_DONTWAIT on empty: EAGAIN");
	struct sockaddr_un sun;
	len = sizeof sun;
	check(getsockname(sv[0], (struct sockaddr *)&sun, &len) == 0 && len == sizeof(sa_family_t), "unnamed getsockname");
	check(shutdown(sv[0], SHUT_WR) == 0 && read(sv[1], buf, 1) == 0, "shutdown SHUT_WR: EOF");
	struct pollfd p = {sv[1], POLLIN | POLLOUT | POLLRDHUP, 0};
	check(poll(&p, 1, 0) == 1, "poll after peer's shutdown");
	printf("  revents %#x\n", p.revents);
	close(sv[0]);
	p.revents = 0;
	poll(&p, 1, 0);
	printf("  revents after close %#x\n", p.revents);
	signal(SIGPIPE, SIG_IGN);
	check(write(sv[1], "x", 1) == -1 && errno == EPIPE, "write to closed peer: EPIPE");
	close(sv[1]);

	check(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair dgram");
	send(sv[0], "one", 3, 0);
	send(sv[0], "twotwo", 6, 0);
	check(recv(sv[1], buf, sizeof buf, 0) == 3, "dgram boundaries 1");
	check(recv(sv[1], buf, 3, MSG_TRUNC) == 6, "MSG_TRUNC gives the real length");
	close(sv[0]);
	close(sv[1]);

	check(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "socketpair seqpacket");
	send(sv[0], "abcdef", 6, 0);
	struct iovec iov = {buf, 4};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	check(recvmsg(sv[1], &mh, 0) == 4 && (mh.msg_flags & MSG_TRUNC), "seqpacket truncation flag");
	close(sv[0]);
	check(recv(sv[1], buf, sizeof buf, 0) == 0, "seqpacket EOF after close");
	close(sv[1]);
	check(socketpair(AF_INET, SOCK_STREAM, 0, sv) == -1 && errno == EOPNOTSUPP, "socketpair AF_INET: EOPNOTSUPP");
}

static void rights(void)
{
	int sv[2], pp[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(pp);
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {"F", 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pp[1], sizeof(int));
	check(sendmsg(sv[0], &mh, 0) == 1, "sendmsg SCM_RIGHTS");
	close(pp[1]);
	pid_t pid = fork();
	if (pid == 0) {
		char c, rbuf[CMSG_SPACE(sizeof(int))];
		struct iovec riov = {&c, 1};
		struct msghdr rm = {.msg_iov = &riov, .msg_iovlen = 1, .msg_control = rbuf, .msg_controllen = sizeof rbuf};
		if (recvmsg(sv[1], &rm, MSG_CMSG_CLOEXEC) != 1)
			_exit(1);
		struct cmsghdr *r = CMSG_FIRSTHDR(&rm);
		if (!r || r->cmsg_type != SCM_RIGHTS || r->cmsg_len != CMSG_LEN(sizeof(int)))
			_exit(2);
		int fd;
		memcpy(&fd, CMSG_DATA(r), sizeof fd);
		if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
			_exit(3);
		if (write(fd, "through the passed fd", 21) != 21)
			_exit(4);
		_exit(0);
	}
	close(sv[1]);
	char buf[64] = {0};
	ssize_t n = readall(pp[0], buf, sizeof buf - 1);
	check(n == 21 && reap(pid) == 0, "a child writes through a passed pipe");
	printf("  %s\n", buf);
	close(pp[0]);
	close(sv[0]);
}

static void unix_server(int abstract)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t alen;
	if (abstract) {
		memcpy(a.sun_path, "\0emuprof-test", 13);
		alen = offsetof(struct sockaddr_un, sun_path) + 13;
	} else {
		snprintf(a.sun_path, sizeof a.sun_path, "%s/srv.sock", dir);
		alen = sizeof a;
		unlink(a.sun_path);
	}
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check(bind(l, (struct sockaddr *)&a, alen) == 0, abstract ? "bind abstract" : "bind path");
	if (!abstract) {
		struct stat st;
		check(stat(a.sun_path, &st) == 0 && S_ISSOCK(st.st_mode), "the path is a socket node");
		int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
		check(bind(l2, (struct sockaddr *)&a, alen) == -1 && errno == EADDRINUSE, "bind again: EADDRINUSE");
		close(l2);
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		check(connect(c, (struct sockaddr *)&a, alen) == -1 && errno == ECONNREFUSED, "connect before listen: ECONNREFUSED");
		close(c);
	}
	check(listen(l, 4) == 0, "listen");
	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, alen) != 0)
			_exit(1);
		char big[100000];
		for (size_t i = 0; i < sizeof big; i++)
			big[i] = (char)(i * 7);
		if (write(c, big, sizeof big) != sizeof big)
			_exit(2);
		char r[16];
		if (readall(c, r, 5) != 5 || memcmp(r, "thank", 5) != 0)
			_exit(3);
		_exit(0);
	}
	struct sockaddr_un peer;
	socklen_t plen = sizeof peer;
	int s = accept(l, (struct sockaddr *)&peer, &plen);
	check(s >= 0 && plen == sizeof(sa_family_t), "accept an unnamed client");
	struct sockaddr_un me;
	socklen_t mlen = sizeof me;
	socklen_t want = abstract ? alen : offsetof(struct sockaddr_un, sun_path) + strlen(a.sun_path) + 1;
	check(getsockname(s, (struct sockaddr *)&me, &mlen) == 0 && mlen == want,
	      "accepted socket has the server's name");
	char big[100000];
	check(recv(s, big, sizeof big, MSG_WAITALL) == sizeof big, "MSG_WAITALL gets all 100000 bytes");
	int good = 1;
	for (size_t i = 0; i < sizeof big; i++)
		good &= big[i] == (char)(i * 7);
	check(good, "the bytes are the client's");
	write(s, "thanks", 6);
	check(reap(pid) == 0, "client exits 0");
	char c;
	check(read(s, &c, 1) == -1 && errno == ECONNRESET, "the client left data unread: ECONNRESET");
	check(read(s, &c, 1) == 0, "then EOF");
	close(s);
	close(l);
	if (!abstract) {
		int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
		check(connect(c2, (struct sockaddr *)&a, alen) == -1 && errno == ECONNREFUSED, "connect after close: ECONNREFUSED");
		unlink(a.sun_path);
		check(connect(c2, (struct sockaddr *)&a, alen) == -1 && errno == ENOENT, "connect after unlink: ENOENT");
		close(c2);
	}
}

static void unix_dgram(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX}, b = {.sun_family = AF_UNIX}, from;
	snprintf(a.sun_path, sizeof a.sun_path, "%s/a.sock", dir);
	snprintf(b.sun_path, sizeof b.sun_path, "%s/b.sock", dir);
	unlink(a.sun_path);
	unlink(b.sun_path);
	int x = socket(AF_UNIX, SOCK_DGRAM, 0), y = socket(AF_UNIX, SOCK_DGRAM, 0);
	bind(x, (struct sockaddr *)&a, sizeof a);
	bind(y, (struct sockaddr *)&b, sizeof b);
	check(sendto(x, "ping", 4, 0, (struct sockaddr *)&b, sizeof b) == 4, "dgram sendto a path");
	char buf[16];
	socklen_t flen = sizeof from;
	check(recvfrom(y, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen) == 4 &&
	      strcmp(from.sun_path, a.sun_path) == 0 && flen == offsetof(struct sockaddr_un, sun_path) + strlen(a.sun_path) + 1,
	      "recvfrom names the sender");
	int z = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int sent = 0;
	while (sendto(z, "q", 1, 0, (struct sockaddr *)&b, sizeof b) == 1)
		sent++;
	check(errno == EAGAIN, "a full datagram queue: EAGAIN");
	printf("  %d datagrams queued\n", sent);
	close(x);
	close(y);
	close(z);
	unlink(a.sun_path);
	unlink(b.sun_path);
}

static void tcp(int family)
{
	struct sockaddr_storage ss = {0};
	socklen_t alen;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		alen = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		alen = sizeof *in6;
	}
	const char *v = family == AF_INET ? "tcp4" : "tcp6";
	char what[64];
	int l = socket(family, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	snprintf(what, sizeof what, "%s bind port 0", v);
	check(bind(l, (struct sockaddr *)&ss, alen) == 0, what);
	socklen_t len = sizeof ss;
	getsockname(l, (struct sockaddr *)&ss, &len);
	unsigned port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	snprintf(what, sizeof what, "%s an ephemeral port", v);
	check(len == alen && port >= 32768 && port <= 60999, what);
	listen(l, 16);
	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(family, SOCK_STREAM, 0);
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (connect(c, (struct sockaddr *)&ss, alen) != 0)
			_exit(1);
		struct iovec iov[3] = {{"GET ", 4}, {"/index", 6}, {" HTTP/1.0\r\n\r\n", 13}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
		if (sendmsg(c, &mh, MSG_NOSIGNAL) != 23)
			_exit(2);
		shutdown(c, SHUT_WR);
		char r[256];
		ssize_t n = readall(c, r, sizeof r);
		if (n != 17 || memcmp(r, "HTTP/1.0 200 OK\r\n", 17) != 0)
			_exit(3);
		_exit(0);
	}
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(l, &rd);
	struct timeval tv = {5, 0};
	snprintf(what, sizeof what, "%s select: the listener is readable", v);
	check(select(l + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(l, &rd), what);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof peer;
	int s = accept4(l, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
	snprintf(what, sizeof what, "%s accept4: the client's address", v);
	check(s >= 0 && plen == alen && ((struct sockaddr_in *)&peer)->sin_port != htons(port), what);
	char req[64];
	ssize_t n = readall(s, req, sizeof req);
	snprintf(what, sizeof what, "%s request up to EOF", v);
	check(n == 23 && memcmp(req, "GET /index HTTP/1.0\r\n\r\n", 23) == 0, what);
	write(s, "HTTP/1.0 200 OK\r\n", 17);
	close(s);
	snprintf(what, sizeof what, "%s client exits 0", v);
	check(reap(pid) == 0, what);

	/* Non-blocking connect. */
	int c = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	snprintf(what, sizeof what, "%s non-blocking connect: EINPROGRESS", v);
	check(connect(c, (struct sockaddr *)&ss, alen) == -1 && errno == EINPROGRESS, what);
	struct pollfd p = {c, POLLOUT, 0};
	int err = -1;
	len = sizeof err;
	snprintf(what, sizeof what, "%s then writable, SO_ERROR 0", v);
	check(poll(&p, 1, 5000) == 1 && p.revents == POLLOUT && getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0, what);
	int a = accept(l, NULL, NULL);
	snprintf(what, sizeof what, "%s MSG_NOSIGNAL write after peer closed", v);
	close(a);
	usleep(1000);
	int e1 = send(c, "x", 1, MSG_NOSIGNAL);
	usleep(1000);
	int e2 = send(c, "x", 1, MSG_NOSIGNAL);
	check(e1 == 1 && e2 == -1 && errno == EPIPE, what);
	close(c);
	close(l);

	/* A closed port. */
	c = socket(family, SOCK_STREAM, 0);
	snprintf(what, sizeof what, "%s connect to a closed port: ECONNREFUSED", v);
	check(connect(c, (struct sockaddr *)&ss, alen) == -1 && errno == ECONNREFUSED, what);
	close(c);
	c = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	connect(c, (struct sockaddr *)&ss, alen);
	p.fd = c;
	p.events = POLLIN | POLLOUT;
	poll(&p, 1, 5000);
	len = sizeof err;
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len);
	snprintf(what, sizeof what, "%s non-blocking refused: SO_ERROR", v);
	check(err == ECONNREFUSED, what);
	printf("  revents %#x\n", p.revents);
	close(c);
}

static void udp(void)
{
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, sb = sa, from;
	bind(a, (struct sockaddr *)&sa, sizeof sa);
	bind(b, (struct sockaddr *)&sb, sizeof sb);
	socklen_t len = sizeof sa;
	getsockname(a, (struct sockaddr *)&sa, &len);
	getsockname(b, (struct sockaddr *)&sb, &len);
	check(sendto(a, "datagram", 8, 0, (struct sockaddr *)&sb, sizeof sb) == 8, "udp sendto");
	char buf[32];
	len = sizeof from;
	check(recvfrom(b, buf, sizeof buf, 0, (struct sockaddr *)&from, &len) == 8 && from.sin_port == sa.sin_port &&
	      from.sin_addr.s_addr == htonl(INADDR_LOOPBACK), "udp recvfrom: the sender's address");
	connect(a, (struct sockaddr *)&sb, sizeof sb);
	close(b);
	send(a, "lost", 4, 0);
	usleep(1000);
	check(recv(a, buf, sizeof buf, MSG_DONTWAIT) == -1 && errno == ECONNREFUSED, "udp to a closed port: ECONNREFUSED");
	close(a);
}

/* sendmmsg and recvmmsg (a blocking socket waits for every message,
 * MSG_WAITFORONE for the first only, the timeout is checked after each
 * message and what is left of it stored back) on UDP and AF_UNIX dgram. */
static void mmsg(int family)
{
	int a, b;
	if (family == AF_UNIX) {
		int sv[2];
		socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
		a = sv[0], b = sv[1];
	} else {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, sb = sa;
		a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
		bind(a, (struct sockaddr *)&sa, sizeof sa);
		bind(b, (struct sockaddr *)&sb, sizeof sb);
		socklen_t len = sizeof sa;
		getsockname(a, (struct sockaddr *)&sa, &len);
		getsockname(b, (struct sockaddr *)&sb, &len);
		connect(a, (struct sockaddr *)&sb, sizeof sb);
		connect(b, (struct sockaddr *)&sa, sizeof sa);
	}
	const char *name = family == AF_UNIX ? "unix" : "udp";
	char what[64], bufs[8][16];
	struct iovec iov[8];
	struct mmsghdr m[8];
	const char *words[3] = {"one", "three", "fifteen"};
	memset(m, 0, sizeof m);
	for (int i = 0; i < 3; i++) {
		iov[i] = (struct iovec){(void *)words[i], strlen(words[i])};
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	snprintf(what, sizeof what, "%s sendmmsg: 3 messages", name);
	check(sendmmsg(a, m, 3, 0) == 3 && m[0].msg_len == 3 && m[1].msg_len == 5 && m[2].msg_len == 7, what);
#define RESET()                                                              \
	do {                                                                 \
		memset(m, 0, sizeof m);                                      \
		for (int i = 0; i < 8; i++) {                                \
			iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};    \
			m[i].msg_hdr.msg_iov = &iov[i];                      \
			m[i].msg_hdr.msg_iovlen = 1;                         \
			m[i].msg_len = 99;                                   \
		}                                                            \
	} while (0)
	RESET();
	struct timespec zero = {0, 0};
	snprintf(what, sizeof what, "%s recvmmsg, zero timeout: one message", name);
	int n = recvmmsg(b, m, 8, 0, &zero);
	check(n == 1 && m[0].msg_len == 3 && m[1].msg_len == 99 && zero.tv_sec == 0 && zero.tv_nsec == 0, what);
	RESET();
	struct timespec ten = {10, 0};
	snprintf(what, sizeof what, "%s recvmmsg DONTWAIT: what is queued", name);
	n = recvmmsg(b, m, 8, MSG_DONTWAIT, &ten);
	check(n == 2 && m[0].msg_len == 5 && m[1].msg_len == 7 && memcmp(bufs[1], "fifteen", 7) == 0 &&
	      m[2].msg_len == 99 && (ten.tv_sec < 10 || ten.tv_nsec == 0) && ten.tv_sec >= 0 &&
	      ten.tv_sec * 1000000000LL + ten.tv_nsec > 0, what);
	snprintf(what, sizeof what, "%s recvmmsg, nothing queued: EAGAIN", name);
	check(recvmmsg(b, m, 8, MSG_DONTWAIT, NULL) == -1 && errno == EAGAIN, what);
	struct timespec bad = {0, 1000000000};
	snprintf(what, sizeof what, "%s recvmmsg, invalid timeout: EINVAL", name);
	check(recvmmsg(b, m, 8, MSG_DONTWAIT, &bad) == -1 && errno == EINVAL, what);
	bad.tv_sec = -1, bad.tv_nsec = 0;
	check(recvmmsg(b, m, 8, MSG_DONTWAIT, &bad) == -1 && errno == EINVAL, "  a negative one too");
	snprintf(what, sizeof what, "%s recvmmsg, unreadable timeout: EFAULT", name);
	check(recvmmsg(b, m, 8, MSG_DONTWAIT, (struct timespec *)8) == -1 && errno == EFAULT, what);

	/* A child sends 3, one at a time; a blocking recvmmsg waits for all. */
	int go[2];
	pipe(go);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++) {
			usleep(2000);
			send(a, words[i], strlen(words[i]), 0);
		}
		char c;
		read(go[0], &c, 1); /* the parent took the 3 */
		send(a, "x", 1, 0);
		read(go[0], &c, 1); /* the parent is in its WAITFORONE call or will be */
		usleep(2000);
		send(a, "y", 1, 0);
		send(a, "zz", 2, 0);
		_exit(0);
	}
	RESET();
	snprintf(what, sizeof what, "%s recvmmsg blocks for every message", name);
	n = recvmmsg(b, m, 3, 0, NULL);
	check(n == 3 && m[0].msg_len == 3 && m[1].msg_len == 5 && m[2].msg_len == 7, what);
	write(go[1], "g", 1);
	RESET();
	snprintf(what, sizeof what, "%s recvmmsg WAITFORONE: the first only", name);
	n = recvmmsg(b, m, 8, MSG_WAITFORONE, NULL);
	check(n == 1 && m[0].msg_len == 1 && bufs[0][0] == 'x', what);
	write(go[1], "g", 1);
	RESET();
	struct timespec big = {100, 0};
	snprintf(what, sizeof what, "%s recvmmsg with a timeout waits too", name);
	n = recvmmsg(b, m, 2, 0, &big);
	check(n == 2 && m[0].msg_len == 1 && m[1].msg_len == 2 && big.tv_sec < 100 && big.tv_sec >= 90, what);
	snprintf(what, sizeof what, "%s child", name);
	check(reap(pid) == 0, what);
	close(go[0]);
	close(go[1]);
	close(a);
	close(b);
}

static void on_alarm(int sig) { (void)sig; }

/* A signal interrupts a blocking stream send after part was queued, and a
 * blocking recvmmsg after one message: each returns what it did. */
static void interrupted(void)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	sigaction(SIGALRM, &sa, &old); /* no SA_RESTART */
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	size_t total = 4 << 20;
	char *big = calloc(1, total);
	struct itimerval it = {.it_value = {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t n = send(sv[0], big, total, 0);
	check(n > 0 && (size_t)n < total, "a signal in a stream send: what was queued");
	close(sv[0]);
	close(sv[1]);
	free(big);
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	send(sv[0], "first", 5, 0);
	char bufs[2][8];
	struct iovec iov[2] = {{bufs[0], 8}, {bufs[1], 8}};
	struct mmsghdr m[2] = {{.msg_hdr = {.msg_iov = &iov[0], .msg_iovlen = 1}}, {.msg_hdr = {.msg_iov = &iov[1], .msg_iovlen = 1}}};
	setitimer(ITIMER_REAL, &it, NULL);
	int k = recvmmsg(sv[1], m, 2, 0, NULL);
	check(k == 1 && m[0].msg_len == 5, "a signal in recvmmsg after one message: 1");
	errno = 0;
	k = recvmmsg(sv[1], m, 2, MSG_DONTWAIT, NULL);
	printf("  the next call: %d, %s\n", k, strerror(errno));
	close(sv[0]);
	close(sv[1]);
	sigaction(SIGALRM, &old, NULL);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A full accept queue (more than the backlog waiting): a TCP SYN is
 * dropped and sent again a second later, so the connection is made then;
 * an AF_UNIX connect gets EAGAIN, or waits for an accept when it blocks. */
static void backlog(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(l, (struct sockaddr *)&sa, sizeof sa);
	socklen_t len = sizeof sa;
	getsockname(l, (struct sockaddr *)&sa, &len);
	listen(l, 1);
	int c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(c[i], (struct sockaddr *)&sa, sizeof sa);
	}
	usleep(50000);
	struct pollfd p[3];
	for (int i = 0; i < 3; i++)
		p[i] = (struct pollfd){.fd = c[i], .events = POLLOUT};
	check(poll(p, 3, 0) == 2 && p[0].revents == POLLOUT && p[1].revents == POLLOUT && p[2].revents == 0,
	      "tcp backlog 1: two connect, the third waits");
	check(connect(c[2], (struct sockaddr *)&sa, sizeof sa) == -1 && errno == EALREADY, "  connecting again: EALREADY");
	double t0 = now_s();
	close(accept(l, NULL, NULL));
	check(poll(&p[2], 1, 5000) == 1 && p[2].revents == POLLOUT, "tcp: the SYN sent again finds room");
	double dt = now_s() - t0;
	check(dt >= 0.9 && dt < 2.9, "  a second later");
	int err = -1;
	len = sizeof err;
	check(getsockopt(c[2], SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0, "  SO_ERROR 0");
	for (int i = 0; i < 2; i++)
		close(accept(l, NULL, NULL));
	/* A blocking connect to a full queue returns when a SYN finds room. */
	int d[2];
	for (int i = 0; i < 2; i++) {
		d[i] = socket(AF_INET, SOCK_STREAM, 0);
		connect(d[i], (struct sockaddr *)&sa, sizeof sa);
	}
	pid_t pid = fork();
	if (pid == 0) {
		int x = socket(AF_INET, SOCK_STREAM, 0);
		double t = now_s();
		int r = connect(x, (struct sockaddr *)&sa, sizeof sa);
		t = now_s() - t;
		_exit(r == 0 && t >= 0.9 && t < 2.9 ? 0 : 1);
	}
	usleep(100000);
	close(accept(l, NULL, NULL));
	check(reap(pid) == 0, "tcp: a blocking connect waits for the SYN's retry");
	for (int i = 0; i < 2; i++)
		close(d[i]);
	for (int i = 0; i < 3; i++)
		close(c[i]);
	close(l);

	struct sockaddr_un u = {.sun_family = AF_UNIX};
	snprintf(u.sun_path, sizeof u.sun_path, "%s/backlog.sock", dir);
	unlink(u.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(l, (struct sockaddr *)&u, sizeof u);
	listen(l, 1);
	int ok = 1;
	for (int i = 0; i < 3; i++) {
		c[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		int r = connect(c[i], (struct sockaddr *)&u, sizeof u);
		ok = ok && (i < 2 ? r == 0 : r == -1 && errno == EAGAIN);
	}
	check(ok, "unix backlog 1: two connect, the third EAGAIN");
	pid = fork();
	if (pid == 0) {
		int x = socket(AF_UNIX, SOCK_STREAM, 0);
		_exit(connect(x, (struct sockaddr *)&u, sizeof u) == 0 ? 0 : 1);
	}
	usleep(100000);
	close(accept(l, NULL, NULL));
	check(reap(pid) == 0, "unix: a blocking connect waits for an accept");
	for (int i = 0; i < 3; i++)
		close(c[i]);
	close(l);
	unlink(u.sun_path);
}

static void epoll_socks(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	int et = epoll_create1(0), lt = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = 1};
	epoll_ctl(et, EPOLL_CTL_ADD, sv[1], &ev);
	ev.events = EPOLLIN;
	epoll_ctl(lt, EPOLL_CTL_ADD, sv[1], &ev);
	struct epoll_event out[4];
	check(epoll_wait(et, out, 4, 0) == 0 && epoll_wait(lt, out, 4, 0) == 0, "epoll: nothing yet");
	int one = 1, zero = 0;
	check(ioctl(sv[0], FIOASYNC, &one) == 0 && (fcntl(sv[0], F_GETFL) & O_ASYNC) && ioctl(sv[0], FIOASYNC, &zero) == 0 &&
	      !(fcntl(sv[0], F_GETFL) & O_ASYNC), "FIOASYNC sets and clears O_ASYNC");
	write(sv[0], "0123456789", 10);
	check(epoll_wait(et, out, 4, 0) == 1 && out[0].events == EPOLLIN, "epoll ET: readable");
	check(epoll_wait(et, out, 4, 0) == 0, "epoll ET: reported once");
	check(epoll_wait(lt, out, 4, 0) == 1 && epoll_wait(lt, out, 4, 0) == 1, "epoll LT: until read");
	char buf[16];
	read(sv[1], buf, sizeof buf);
	check(epoll_wait(lt, out, 4, 0) == 0, "epoll LT: drained");
	write(sv[0], "a", 1);
	check(epoll_wait(et, out, 4, 0) == 1, "epoll ET: new data, a new edge");
	close(sv[0]);
	ev.events = EPOLLIN | EPOLLRDHUP;
	epoll_ctl(lt, EPOLL_CTL_MOD, sv[1], &ev);
	check(epoll_wait(lt, out, 4, 0) == 1, "epoll: peer closed");
	printf("  events %#x\n", out[0].events);
	close(sv[1]);
	close(et);
	close(lt);
}

int main(int argc, char **argv)
{
	dir = argc > 1 ? argv[1] : "/tmp";
	setvbuf(stdout, NULL, _IOLBF, 0);
	pairs();
	rights();
	unix_server(0);
	unix_server(1);
	unix_dgram();
	tcp(AF_INET);
	tcp(AF_INET6);
	udp();
	mmsg(AF_INET);
	mmsg(AF_UNIX);
	interrupted();
	backlog();
	epoll_socks();
	return 0;
}
