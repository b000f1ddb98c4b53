// epoll and eventfd: a thread writes to an eventfd and a pipe while the
// main thread waits in epoll_wait; the calls' errors and the eventfd's
// semaphore mode and limits.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <fcntl.h>

static int efd, ackfd, pfd[2];

// ack waits until the main thread took the last event, so that the
// output does not depend on how the threads interleave.
static void ack(void) {
	uint64_t v;
	read(ackfd, &v, 8);
}

static void *worker(void *arg) {
	for (int i = 1; i <= 3; i++) {
		uint64_t v = i;
		write(efd, &v, 8);
		ack();
		char c = 'a' + i;
		write(pfd[1], &c, 1);
		ack();
	}
	close(pfd[1]);
	return 0;
}

int main(int argc, char **argv) {
	efd = eventfd(5, EFD_NONBLOCK);
	ackfd = eventfd(0, 0);
	uint64_t v = 0;
	printf("read %zd value %llu\n", read(efd, &v, 8), (unsigned long long)v);
	printf("read again: %zd errno %s\n", read(efd, &v, 8), strerror(errno));
	printf("short read: %zd errno %s\n", read(efd, &v, 4), strerror(errno));
	pipe(pfd);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN, .data.u64 = 111};
	printf("ctl add efd %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e));
	e.data.u64 = 222; e.events = EPOLLIN | EPOLLRDHUP;
	printf("ctl add pipe %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &e));
	printf("ctl add again %d %s\n", epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &e), strerror(errno));
	int f = open(argv[0], O_RDONLY); // a regular file
	printf("ctl regular file %d %s\n", epoll_ctl(ep, EPOLL_CTL_ADD, f, &e), strerror(errno));
	printf("ctl self %d %s\n", epoll_ctl(ep, EPOLL_CTL_ADD, ep, &e), strerror(errno));
	printf("ctl del missing %d %s\n", epoll_ctl(ep, EPOLL_CTL_DEL, f, NULL), strerror(errno));
	printf("wait timeout 0: %d\n", epoll_wait(ep, &e, 1, 0));
	(void)argc;
	pthread_t t;
	pthread_create(&t, 0, worker, 0);
	int done = 0;
	while (!done) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, 1000);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == 111) { read(efd, &v, 8); printf("eventfd %llu\n", (unsigned long long)v); }
			else { char c; int r = read(pfd[0], &c, 1); if (r == 1) printf("pipe %c ev %x\n", c, evs[i].events); else { printf("pipe eof ev %x\n", evs[i].events); done = 1; } }
			uint64_t one = 1;
			if (!done) write(ackfd, &one, 8);
		}
		if (n == 0) { printf("timeout\n"); break; }
	}
	pthread_join(t, 0);
	printf("wait bad max %d %s\n", epoll_wait(ep, &e, 0, 0), strerror(errno));
	int ef2 = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK); v = 3; write(ef2, &v, 8);
	for (int i = 0; i < 4; i++) { int r = read(ef2, &v, 8); printf("sem read %d %llu\n", r, r > 0 ? (unsigned long long)v : 0ull); }
	v = 0xffffffffffffffffull; printf("write max %zd %s\n", write(ef2, &v, 8), strerror(errno));
	v = 0xfffffffffffffffeull; printf("write big %zd\n", write(ef2, &v, 8));
	v = 1; printf("write overflow %zd %s\n", write(ef2, &v, 8), strerror(errno));
	return 0;
}
