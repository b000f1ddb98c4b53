// socketpair between processes and inside one: a stream larger than the
// 64 KiB buffer crosses to a forked child and back; EOF after the peer's
// close and shutdown(SHUT_WR); EPIPE with MSG_NOSIGNAL, SIGPIPE without;
// MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL, MSG_TRUNC; seqpacket and datagram
// boundaries; poll's view of each state; getsockopt, getsockname, fstat;
// the errors of socket calls on what is no socket.
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void show_poll(const char *what, int fd) {
	struct pollfd p = {fd, POLLIN | POLLOUT | POLLRDHUP, 0};
	int n = poll(&p, 1, 0);
	printf("poll %s: %d in=%d out=%d hup=%d rdhup=%d err=%d\n", what, n, !!(p.revents & POLLIN), !!(p.revents & POLLOUT),
	       !!(p.revents & POLLHUP), !!(p.revents & POLLRDHUP), !!(p.revents & POLLERR));
}

static void result(const char *what, long r) {
	printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
	errno = 0;
}

// A server bound to a path and one to an abstract name, their clients
// forked children; what each side sees of the other's address.
static void named(void) {
	char dir[] = "/tmp/socketsXXXXXX";
	if (!mkdtemp(dir)) return;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s/srv", dir);
	socklen_t alen = offsetof(struct sockaddr_un, sun_path) + strlen(a.sun_path) + 1;
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	result("connect to nothing", connect(l, (struct sockaddr *)&a, alen));
	result("listen unbound", listen(l, 1));
	result("bind path", bind(l, (struct sockaddr *)&a, alen));
	int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
	result("bind the same path again", bind(l2, (struct sockaddr *)&a, alen));
	int l3 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	result("connect to a path of another type", connect(l3, (struct sockaddr *)&a, alen));
	close(l3);
	result("connect to a bound socket not listening", connect(l2, (struct sockaddr *)&a, alen));
	struct stat st;
	stat(a.sun_path, &st);
	printf("node S_ISSOCK %d\n", S_ISSOCK(st.st_mode));
	result("listen", listen(l, 4));
	int nb = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	result("accept none waiting, nonblocking", accept4(nb, NULL, NULL, 0));
	close(nb);
	show_poll("listener, none waiting", l);
	fflush(stdout);
	if (fork() == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, alen) != 0) _exit(1);
		write(c, "client 0", 8);
		char r[32] = {0};
		read(c, r, sizeof r - 1);
		_exit(strcmp(r, "ok") == 0 ? 10 : 2);
	}
	struct sockaddr_un peer;
	socklen_t plen = sizeof peer;
	int c = accept(l, (struct sockaddr *)&peer, &plen);
	printf("accepted %d, peer address length %d\n", c >= 0, (int)plen);
	char b[64] = {0};
	result("read from the client", read(c, b, sizeof b - 1));
	printf("%s\n", b);
	struct sockaddr_un me;
	socklen_t mlen = sizeof me;
	getsockname(c, (struct sockaddr *)&me, &mlen);
	printf("accepted end's name is the path: %d\n", strcmp(me.sun_path, a.sun_path) == 0 && mlen == alen);
	write(c, "ok", 2);
	int st2;
	wait(&st2);
	printf("client status %d\n", WEXITSTATUS(st2));
	close(c);
	close(l);
	close(l2);
	result("connect after the listener closed", connect(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, alen));
	unlink(a.sun_path);
	rmdir(dir);

	struct sockaddr_un ab = {.sun_family = AF_UNIX};
	memcpy(ab.sun_path, "\0simrun-sockets", 15);
	socklen_t ablen = offsetof(struct sockaddr_un, sun_path) + 15;
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	result("bind abstract", bind(l, (struct sockaddr *)&ab, ablen));
	result("listen", listen(l, 4));
	int s1 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	result("connect abstract", connect(s1, (struct sockaddr *)&ab, ablen));
	int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
	result("connect with another type", connect(s2, (struct sockaddr *)&ab, ablen));
	result("connect again", connect(s1, (struct sockaddr *)&ab, ablen));
	show_poll("listener, one waiting", l);
	send(s1, "msg1", 4, 0);
	send(s1, "message2", 8, 0);
	c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	result("recv 4 of the first", recv(c, b, 64, 0));
	result("recv the second", recv(c, b, 64, 0));
	plen = sizeof peer;
	result("getpeername of the client", getpeername(s1, (struct sockaddr *)&peer, &plen));
	printf("length %d, abstract %d\n", (int)plen, peer.sun_path[0] == 0 && !memcmp(peer.sun_path, ab.sun_path, 15));
	plen = sizeof peer;
	result("getpeername unconnected", getpeername(s2, (struct sockaddr *)&peer, &plen));
	result("recv unconnected", recv(s2, b, 1, 0));
	result("send unconnected", send(s2, b, 1, MSG_NOSIGNAL));
	result("shutdown unconnected", shutdown(s2, SHUT_RD));
	show_poll("unconnected", s2);
	close(s1);
	result("recv after the client closed", recv(c, b, 64, 0));
	close(c);
	close(l);
	close(s2);
	result("socket family 200", socket(200, SOCK_STREAM, 0));
}

int main(void) {
	int sv[2];
	result("socketpair stream", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) { // echo everything back, doubled in length, then close
		close(sv[0]);
		static char buf[300000];
		long total = 0;
		ssize_t n;
		while ((n = read(sv[1], buf + total, sizeof buf - total)) > 0) total += n;
		memcpy(buf + total, buf, total);
		ssize_t w = send(sv[1], buf, 2 * total, 0);
		_exit(w == 2 * total ? 0 : 1);
	}
	close(sv[1]);
	static char big[100000];
	for (int i = 0; i < (int)sizeof big; i++) big[i] = (char)(i * 7);
	result("send 100000 to the child", send(sv[0], big, sizeof big, 0));
	result("shutdown SHUT_WR", shutdown(sv[0], SHUT_WR));
	static char back[300000];
	long total = 0;
	ssize_t n;
	while ((n = recv(sv[0], back + total, sizeof back - total, 0)) > 0) total += n;
	int st;
	waitpid(pid, &st, 0);
	printf("received %ld, same twice %d, child status %d\n", total,
	       total == 200000 && !memcmp(back, big, 100000) && !memcmp(back + 100000, big, 100000), WEXITSTATUS(st));
	show_poll("after the peer's close", sv[0]);
	signal(SIGPIPE, SIG_IGN);
	result("send after the peer's close, MSG_NOSIGNAL", send(sv[0], "x", 1, MSG_NOSIGNAL));
	result("write after the peer's close", write(sv[0], "x", 1));
	close(sv[0]);
	signal(SIGPIPE, SIG_DFL);

	result("socketpair stream nonblock", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
	char b[64];
	result("recv empty nonblocking", recv(sv[0], b, sizeof b, 0));
	show_poll("empty", sv[0]);
	result("send hello", send(sv[1], "hello", 5, 0));
	show_poll("with data", sv[0]);
	result("peek 3", recv(sv[0], b, 3, MSG_PEEK));
	printf("peeked %.3s\n", b);
	result("recv 64", recv(sv[0], b, sizeof b, MSG_DONTWAIT));
	printf("got %.5s\n", b);
	send(sv[1], "abcdef", 6, 0);
	result("recv MSG_TRUNC 4 (stream: dropped)", recv(sv[0], b, 4, MSG_TRUNC));
	result("recv the rest", recv(sv[0], b, sizeof b, 0));
	printf("rest %.2s\n", b);
	long filled = 0;
	while ((n = send(sv[1], big, sizeof big, MSG_DONTWAIT)) > 0) filled += n;
	printf("filled until EAGAIN: %d, more than 0: %d\n", errno == EAGAIN, filled > 0);
	errno = 0;
	show_poll("writer of a full pair", sv[1]);
	result("shutdown SHUT_RD", shutdown(sv[0], SHUT_RD));
	show_poll("reader after SHUT_RD", sv[0]);
	result("send to a peer that shut reading", send(sv[1], "x", 1, MSG_NOSIGNAL));
	result("shutdown 3", shutdown(sv[0], 3));
	close(sv[0]);
	close(sv[1]);

	result("socketpair seqpacket", socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	send(sv[0], "one", 3, 0);
	send(sv[0], "twotwo", 6, 0);
	struct iovec iov[2] = {{b, 2}, {b + 2, 2}};
	struct msghdr mh = {0};
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	result("recvmsg of 6 into 4", recvmsg(sv[0 + 1], &mh, 0));
	printf("msg_flags trunc %d, got %.4s\n", !!(mh.msg_flags & MSG_TRUNC), b);
	result("recv one (the next message)", recv(sv[1], b, sizeof b, 0));
	send(sv[0], "three", 5, 0);
	result("recv MSG_TRUNC 1 (seqpacket: whole length)", recv(sv[1], b, 1, MSG_TRUNC));
	close(sv[0]);
	result("recv after the peer's close", recv(sv[1], b, sizeof b, 0));
	close(sv[1]);

	result("socketpair dgram", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct iovec wv[3] = {{"ab", 2}, {"cd", 2}, {"e", 1}};
	result("writev 3 pieces", writev(sv[0], wv, 3));
	result("send empty datagram", send(sv[0], "", 0, 0));
	result("recv 10", recv(sv[1], b, 10, 0));
	printf("datagram %.5s\n", b);
	result("recv the empty one", recv(sv[1], b, 10, 0));
	int type = 0;
	socklen_t len = sizeof type;
	result("getsockopt SO_TYPE", getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len));
	printf("type %d len %d\n", type, (int)len);
	len = sizeof type;
	getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &type, &len);
	printf("domain %d\n", type);
	result("getsockopt level 6", getsockopt(sv[0], 6, 1, &type, &len));
	struct sockaddr_un sun;
	len = sizeof sun;
	result("getsockname", getsockname(sv[0], (struct sockaddr *)&sun, &len));
	printf("family %d len %d\n", sun.sun_family, (int)len);
	len = sizeof sun;
	result("getpeername", getpeername(sv[0], (struct sockaddr *)&sun, &len));
	struct stat s;
	fstat(sv[0], &s);
	printf("S_ISSOCK %d\n", S_ISSOCK(s.st_mode));
	close(sv[1]);
	result("send to a closed datagram peer", send(sv[0], "x", 1, 0));
	result("lseek", lseek(sv[0], 0, SEEK_SET));
	close(sv[0]);

	int pfd[2];
	pipe(pfd);
	result("send on a pipe", send(pfd[1], "x", 1, 0));
	result("shutdown on a pipe", shutdown(pfd[0], SHUT_RD));
	result("getsockname on a closed descriptor", getsockname(77, (struct sockaddr *)&sun, &len));
	result("socketpair AF_INET", socketpair(AF_INET, SOCK_STREAM, 0, sv));
	result("socketpair type 9", socketpair(AF_UNIX, 9, 0, sv));
	result("socketpair protocol 7", socketpair(AF_UNIX, SOCK_STREAM, 7, sv));
	named();
	return 0;
}
