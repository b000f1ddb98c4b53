// Descriptors of the event APIs across fork: the child's copy names the
// same open file description as the parent's (fork(2): "the child
// inherits copies of the parent's set of open file descriptors ... refer
// to the same open file descriptions"). A timerfd's expiries read in one
// process are gone for the other; a blocking read or poll in the child
// wakes at the expiry while the parent waits for it; an eventfd's counter
// is one; an inherited epoll instance reports the parent's write; a
// signalfd reads the reader's own signals.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void arm(int fd, long ms) {
	struct itimerspec its = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000}};
	if (timerfd_settime(fd, 0, &its, 0) != 0) perror("timerfd_settime");
}

static int waitexit(pid_t pid) {
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void) {
	uint64_t v;
	setvbuf(stdout, 0, _IONBF, 0);

	// timerfd: the child's blocking read takes the expiry; the parent
	// finds nothing left.
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	arm(tfd, 30);
	pid_t pid = fork();
	if (pid == 0) {
		ssize_t n = read(tfd, &v, 8);
		printf("child: timerfd read %zd, %llu expiry\n", n, (unsigned long long)v);
		_exit(0);
	}
	printf("parent: child exited %d\n", waitexit(pid));
	struct pollfd pf = {tfd, POLLIN, 0};
	printf("parent: timerfd ready after the child's read: %d\n", poll(&pf, 1, 0));

	// timerfd: the child polls until the expiry and leaves it unread;
	// the parent reads it.
	arm(tfd, 20);
	pid = fork();
	if (pid == 0) {
		struct pollfd cp = {tfd, POLLIN, 0};
		int r = poll(&cp, 1, -1);
		printf("child: poll %d revents %#x\n", r, cp.revents);
		_exit(0);
	}
	printf("parent: child exited %d\n", waitexit(pid));
	printf("parent: timerfd read %zd, %llu expiry\n", read(tfd, &v, 8), (unsigned long long)v);
	close(tfd);

	// eventfd: one counter for both.
	int efd = eventfd(0, 0);
	pid = fork();
	if (pid == 0) {
		v = 5;
		write(efd, &v, 8);
		_exit(0);
	}
	ssize_t n = read(efd, &v, 8);
	printf("parent: eventfd read %zd, value %llu\n", n, (unsigned long long)v);
	printf("parent: child exited %d\n", waitexit(pid));

	// epoll: the child waits on the inherited instance; the parent's
	// write to the watched eventfd wakes it.
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 42};
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	pid = fork();
	if (pid == 0) {
		struct epoll_event got;
		int r = epoll_wait(ep, &got, 1, -1);
		printf("child: epoll_wait %d data %llu\n", r, (unsigned long long)got.data.u64);
		read(efd, &v, 8);
		_exit(v == 3 ? 0 : 1);
	}
	v = 3;
	write(efd, &v, 8);
	printf("parent: child exited %d\n", waitexit(pid));
	fcntl(efd, F_SETFL, O_NONBLOCK);
	n = read(efd, &v, 8);
	printf("parent: eventfd read after the child's: %zd %s\n", n, n < 0 ? strerror(errno) : "");

	// signalfd: the child reads the signal its parent sent it.
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, 0);
	int sfd = signalfd(-1, &mask, 0);
	pid = fork();
	if (pid == 0) {
		struct signalfd_siginfo si;
		ssize_t r = read(sfd, &si, sizeof si);
		printf("child: signalfd read %zd, signal %u, from the parent: %d\n", r, si.ssi_signo,
		       si.ssi_pid == (uint32_t)getppid());
		_exit(0);
	}
	kill(pid, SIGUSR1);
	printf("parent: child exited %d\n", waitexit(pid));
	struct pollfd sp = {sfd, POLLIN, 0};
	printf("parent: signalfd ready: %d\n", poll(&sp, 1, 0));
	return 0;
}
