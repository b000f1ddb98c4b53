// signalfd: blocked signals read from a descriptor (kill, sigqueue, a
// child's SIGCHLD through epoll, a blocking read another thread's kill
// ends, alarm), and the calls' errors.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/signalfd.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>
static void *kicker(void *a) {
	(void)a; usleep(2000); kill(getpid(), SIGUSR2); return 0; }
int main(void) {
	sigset_t m; sigemptyset(&m); sigaddset(&m, SIGUSR1); sigaddset(&m, SIGUSR2); sigaddset(&m, SIGCHLD); sigaddset(&m, SIGALRM);
	sigprocmask(SIG_BLOCK, &m, 0);
	int fd = signalfd(-1, &m, SFD_NONBLOCK);
	struct signalfd_siginfo si;
	printf("empty: %zd %s\n", read(fd, &si, sizeof si), strerror(errno));
	printf("short: %zd %s\n", read(fd, &si, 10), strerror(errno));
	kill(getpid(), SIGUSR1);
	union sigval v = {.sival_int = 42}; sigqueue(getpid(), SIGUSR2, v);
	struct signalfd_siginfo two[2];
	ssize_t n = read(fd, two, sizeof two);
	// ssi_ptr, not ssi_int: qemu-user builds the record with the host's
	// signalfd and takes a big-endian guest's int from the wrong half of
	// the sigval (s390x Linux puts it in the first four bytes).
	printf("read %zd: %u code %d pid-ok %d; %u code %d ptr %llx\n", n, two[0].ssi_signo, two[0].ssi_code,
	       two[0].ssi_pid == (unsigned)getpid(), two[1].ssi_signo, two[1].ssi_code, (unsigned long long)two[1].ssi_ptr);
	if (fork() == 0) _exit(7);
	int ep = epoll_create1(0); struct epoll_event e = {.events = EPOLLIN}; epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	printf("epoll: %d\n", epoll_wait(ep, &e, 1, 5000));
	n = read(fd, &si, sizeof si);
	printf("chld: %zd %u status %d code %d\n", n, si.ssi_signo, si.ssi_status, si.ssi_code);
	wait(0);
	int bfd = signalfd(-1, &m, 0);
	pthread_t t; pthread_create(&t, 0, kicker, 0);
	n = read(bfd, &si, sizeof si);
	printf("blocking: %zd %u\n", n, si.ssi_signo);
	pthread_join(t, 0);
	alarm(1);
	n = read(bfd, &si, sizeof si);
	printf("alarm: %zd %u\n", n, si.ssi_signo);
	sigset_t m2; sigemptyset(&m2); sigaddset(&m2, SIGUSR1);
	printf("update: %d\n", signalfd(fd, &m2, 0) == fd);
	printf("not a signalfd: %d %s\n", signalfd(ep, &m2, 0), strerror(errno));
	return 0;
}
