// What execve keeps of a process's timers, as Linux does (execve(2)):
// the interval timers of setitimer and alarm are kept (a CPU-time one
// with what it had left), POSIX timers (timer_create) are deleted, and a
// timerfd is a descriptor like any other. The program re-executes itself
// through three stages.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile int alarms;
static void on_alrm(int sig) { alarms++; }

static void reexec(char *self, char *stage, char *arg) {
	char *av[] = {self, stage, arg, NULL};
	fflush(stdout);
	execve(self, av, environ);
	perror("execve");
	exit(1);
}

int main(int argc, char **argv) {
	char buf[64];
	if (argc == 1) {
		alarm(100);
		struct itimerval v = {.it_value = {.tv_sec = 50}};
		setitimer(ITIMER_VIRTUAL, &v, 0);
		timer_t id;
		struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
		timer_create(CLOCK_MONOTONIC, &ev, &id);
		struct itimerspec ts = {.it_value = {.tv_sec = 30}};
		timer_settime(id, 0, &ts, 0);
		int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec tv = {.it_value = {.tv_nsec = 1000000}};
		timerfd_settime(tfd, 0, &tv, 0);
		printf("before execve: alarm, ITIMER_VIRTUAL, a POSIX timer and timerfd %d armed\n", tfd);
		snprintf(buf, sizeof buf, "%ld:%d", (long)(intptr_t)id, tfd);
		reexec(argv[0], "kept", buf);
	}
	if (strcmp(argv[1], "kept") == 0) {
		long id;
		int tfd;
		sscanf(argv[2], "%ld:%d", &id, &tfd);
		printf("alarm left: %u\n", alarm(0));
		struct itimerval v;
		getitimer(ITIMER_VIRTUAL, &v);
		printf("ITIMER_VIRTUAL kept: %d\n", v.it_value.tv_sec > 0 && v.it_value.tv_sec <= 50);
		struct itimerspec ts;
		int r = timer_gettime((timer_t)(intptr_t)id, &ts);
		printf("POSIX timer after execve: %s\n", r < 0 ? strerror(errno) : "still there");
		unsigned long long n = 0;
		r = read(tfd, &n, sizeof n);
		printf("timerfd read: %d, expiries %llu\n", r, n);
		struct itimerval real = {.it_value = {.tv_sec = 1}};
		setitimer(ITIMER_REAL, &real, 0);
		reexec(argv[0], "fires", "");
	}
	// The signal action is reset by execve, the timer is not: a handler
	// installed now takes its SIGALRM.
	signal(SIGALRM, on_alrm);
	pause();
	printf("SIGALRM from the timer set before execve: %d\n", alarms);
	return 0;
}
