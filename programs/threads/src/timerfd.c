// timerfd and CPU-clock sleeps: timerfd_create's checks, settime and
// gettime, the expiry count read returns (EAGAIN under TFD_NONBLOCK, a
// blocking read in the main thread and in another one), a periodic
// timer's count, TFD_TIMER_ABSTIME on CLOCK_REALTIME in the past, poll
// readiness; clock_nanosleep (the raw syscall) on CPU clocks: EOPNOTSUPP
// for CLOCK_THREAD_CPUTIME_ID, EINVAL for the caller's own thread clock,
// and a sleep on the process's CPU clock while another thread spins.
// What it prints does not depend on how long anything takes (a periodic
// count is checked against a range).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int failed;

static const char *err(long r) {
	if (r >= 0)
		return "ok";
	switch (errno) {
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case EFAULT: return "EFAULT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	return "other";
}

static void check(int ok, const char *what) {
	if (!ok) {
		printf("FAIL %s\n", what);
		failed = 1;
	}
}

static struct itimerspec spec(long isec, long insec, long sec, long nsec) {
	struct itimerspec s = {{isec, insec}, {sec, nsec}};
	return s;
}

static void *reader(void *arg) {
	int fd = *(int *)arg;
	uint64_t n = 0;
	if (read(fd, &n, 8) != 8)
		n = 99;
	return (void *)(uintptr_t)n;
}

static volatile int stop;

static void *spinner(void *arg) {
	while (!stop)
		;
	return 0;
}

static long nsleep(clockid_t clk, int flags, long sec, long nsec) {
	struct timespec ts = {sec, nsec};
	return syscall(SYS_clock_nanosleep, clk, flags, &ts, NULL) ? -1 : 0;
}

int main(void) {
	printf("create CPU clock: %s\n", err(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0)));
	printf("create bad flags: %s\n", err(timerfd_create(CLOCK_MONOTONIC, 1)));
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	check(fd >= 0, "timerfd_create");
	printf("cloexec: %d nonblock: %d\n", !!(fcntl(fd, F_GETFD) & FD_CLOEXEC), !!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	uint64_t n = 0;
	printf("read unarmed: %s\n", err(read(fd, &n, 8)));
	printf("read short: %s\n", err(read(fd, &n, 4)));
	printf("write: %s\n", err(write(fd, &n, 8)));
	struct itimerspec s = spec(0, 0, 0, 20000000), cur;
	printf("settime bad flags: %s\n", err(timerfd_settime(fd, 4, &s, NULL)));
	struct itimerspec bad = spec(0, 0, 0, 1000000000);
	printf("settime bad nsec: %s\n", err(timerfd_settime(fd, 0, &bad, NULL)));
	printf("settime stdin: %s\n", err(timerfd_settime(0, 0, &s, NULL)));
	printf("settime fd 99: %s\n", err(timerfd_settime(99, 0, &s, NULL)));
	check(timerfd_gettime(fd, &cur) == 0, "gettime");
	printf("disarmed: %ld %ld\n", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);

	// One-shot, 20 ms: not ready at once, then a blocking read counts 1.
	check(timerfd_settime(fd, 0, &s, NULL) == 0, "settime");
	check(timerfd_gettime(fd, &cur) == 0, "gettime");
	printf("armed: %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 20000000);
	struct pollfd pfd = {fd, POLLIN, 0};
	printf("poll before: %d\n", poll(&pfd, 1, 0));
	printf("read before: %s\n", err(read(fd, &n, 8)));
	fcntl(fd, F_SETFL, 0);
	check(read(fd, &n, 8) == 8, "blocking read");
	printf("one-shot count: %llu\n", (unsigned long long)n);
	check(timerfd_gettime(fd, &cur) == 0, "gettime");
	printf("expired: %ld %ld\n", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);

	// Periodic, 2 ms, for at least 21 ms: at least ten expiries.
	s = spec(0, 2000000, 0, 2000000);
	check(timerfd_settime(fd, 0, &s, NULL) == 0, "settime periodic");
	struct timespec nap = {0, 21000000};
	nanosleep(&nap, NULL);
	pfd.revents = 0;
	printf("poll after: %d revents %#x\n", poll(&pfd, 1, -1), pfd.revents);
	check(read(fd, &n, 8) == 8, "periodic read");
	printf("periodic count at least 10: %d\n", n >= 10);
	struct itimerspec old;
	s = spec(0, 0, 0, 0);
	check(timerfd_settime(fd, 0, &s, &old) == 0, "disarm");
	printf("old interval: %ld\n", old.it_interval.tv_nsec);

	// Absolute, on CLOCK_REALTIME, long past: expired at once.
	int rfd = timerfd_create(CLOCK_REALTIME, 0);
	s = spec(0, 0, 1, 0);
	check(timerfd_settime(rfd, TFD_TIMER_ABSTIME, &s, NULL) == 0, "settime abstime");
	check(read(rfd, &n, 8) == 8, "abstime read");
	printf("abstime past count: %llu\n", (unsigned long long)n);

	// Another thread blocks in read until a 5 ms timer expires.
	s = spec(0, 0, 0, 5000000);
	check(timerfd_settime(rfd, 0, &s, NULL) == 0, "settime relative");
	pthread_t th;
	void *got;
	pthread_create(&th, NULL, reader, &rfd);
	pthread_join(th, &got);
	printf("thread read count: %lu\n", (unsigned long)(uintptr_t)got);
	close(rfd);
	close(fd);

	// clock_nanosleep on CPU clocks, as the kernel answers the raw call.
	clockid_t self, proc;
	pthread_getcpuclockid(pthread_self(), &self);
	clock_getcpuclockid(0, &proc);
	printf("sleep thread clock: %s\n", err(nsleep(CLOCK_THREAD_CPUTIME_ID, 0, 0, 1000)));
	printf("sleep own thread clock id: %s\n", err(nsleep(self, 0, 0, 1000)));
	printf("sleep process clock, past: %s\n", err(nsleep(CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, 0, 1)));
	pthread_create(&th, NULL, spinner, NULL);
	printf("sleep process clock 1 ms while a thread spins: %s\n", err(nsleep(proc, 0, 0, 1000000)));
	stop = 1;
	pthread_join(th, NULL);
	printf("%s\n", failed ? "FAILED" : "done");
	return failed;
}
