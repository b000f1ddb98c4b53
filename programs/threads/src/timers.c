// Timers and signal waits: alarm with a SIGALRM handler and pause, a
// periodic ITIMER_REAL counted with sigsuspend, ITIMER_VIRTUAL while
// spinning, sigwait and sigtimedwait, a POSIX timer taken by sigwaitinfo,
// one aimed at a thread (SIGEV_THREAD_ID), one whose notification runs a
// function (SIGEV_THREAD), a sleep and a pipe read interrupted by a
// handler with and without SA_RESTART, and a poll that times out. What it
// prints does not depend on how long anything takes: under qemu-user a
// timer may expire before the call it should interrupt has started, so
// those timers are periodic (the next expiry interrupts it).
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms, vtalarms;
static int pipefd[2];

static void on_alarm(int sig) { alarms++; }
static void on_vtalarm(int sig) { vtalarms++; }
static void feed_pipe(int sig) {
	alarms++;
	if (write(pipefd[1], "x", 1) != 1)
		alarms += 100;
}

static void handle(int sig, void (*fn)(int), int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigaction(sig, &sa, 0);
}

static void oneshot_ms(int ms) {
	struct itimerval it = {{0, 0}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, 0);
}

static void every_ms(int ms) {
	struct itimerval it = {{0, ms * 1000}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, 0);
}

static sem_t fired;
static volatile int calls;
static void on_timer_thread(union sigval v) {
	calls += v.sival_int;
	sem_post(&fired);
}

static volatile pid_t waiter_tid;
static void *waiter(void *arg) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	waiter_tid = gettid();
	siginfo_t si;
	int sig = sigwaitinfo(&set, &si);
	printf("thread %s got %s, value %d, code %s\n", gettid() == waiter_tid ? "waiter" : "other",
	       sig == SIGRTMIN + 1 ? "SIGRTMIN+1" : "?", si.si_value.sival_int, si.si_code == SI_TIMER ? "SI_TIMER" : "?");
	return 0;
}

int main(void) {
	// alarm, a handler, pause.
	handle(SIGALRM, on_alarm, 0);
	printf("alarm(5) = %u, ", alarm(5));
	printf("alarm(0) = %u\n", alarm(0));
	every_ms(20);
	int r = pause();
	oneshot_ms(0);
	printf("pause = %d (%s), alarms %d\n", r, errno == EINTR ? "EINTR" : "?", alarms > 0);

	// A periodic ITIMER_REAL, taken by sigsuspend.
	sigset_t alrm, old;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, &old);
	struct itimerval it = {{0, 10000}, {0, 10000}}, cur;
	setitimer(ITIMER_REAL, &it, 0);
	getitimer(ITIMER_REAL, &cur);
	printf("interval %ld us, armed %d\n", (long)cur.it_interval.tv_usec, cur.it_value.tv_usec > 0);
	alarms = 0;
	int suspends = 0;
	while (alarms < 3) {
		sigsuspend(&old);
		suspends++;
	}
	int seen = alarms;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, 0);
	getitimer(ITIMER_REAL, &cur);
	sigset_t pend;
	sigpending(&pend);
	if (sigismember(&pend, SIGALRM)) { // one more may have come before the timer stopped
		int sig;
		sigwait(&alrm, &sig);
	}
	printf("itimer real: %d alarms in %d sigsuspends, now %ld us left\n", seen, suspends, (long)cur.it_value.tv_usec);
	sigprocmask(SIG_SETMASK, &old, 0);

	// ITIMER_VIRTUAL counts the CPU time the process uses.
	handle(SIGVTALRM, on_vtalarm, SA_RESTART);
	struct itimerval vt = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_VIRTUAL, &vt, 0);
	volatile unsigned long spin = 0;
	while (vtalarms < 3)
		spin++;
	setitimer(ITIMER_VIRTUAL, &off, 0);
	printf("itimer virtual: %d\n", vtalarms >= 3);

	// sigwait on a signal sent to itself; sigtimedwait that times out.
	sigset_t usr;
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr, 0);
	raise(SIGUSR1);
	int sig = 0;
	r = sigwait(&usr, &sig);
	printf("sigwait = %d, %s\n", r, sig == SIGUSR1 ? "SIGUSR1" : "?");
	struct timespec ten_ms = {0, 10000000};
	r = sigtimedwait(&usr, 0, &ten_ms);
	printf("sigtimedwait = %d (%s)\n", r, errno == EAGAIN ? "EAGAIN" : "?");

	// A POSIX timer with SIGEV_SIGNAL, taken by sigwaitinfo.
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigaddset(&rt, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &rt, 0);
	sigdelset(&rt, SIGRTMIN + 1);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN;
	sev.sigev_value.sival_int = 42;
	timer_t t1;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t1) != 0)
		perror("timer_create");
	struct itimerspec ts = {{0, 0}, {0, 5000000}}, tcur;
	timer_settime(t1, 0, &ts, 0);
	timer_gettime(t1, &tcur);
	printf("timer armed %d\n", tcur.it_value.tv_nsec > 0 || tcur.it_value.tv_sec > 0);
	siginfo_t si;
	sig = sigwaitinfo(&rt, &si);
	timer_gettime(t1, &tcur);
	printf("sigwaitinfo = %s, value %d, code %s, overrun %d, then %ld ns left\n", sig == SIGRTMIN ? "SIGRTMIN" : "?",
	       si.si_value.sival_int, si.si_code == SI_TIMER ? "SI_TIMER" : "?", timer_getoverrun(t1), tcur.it_value.tv_nsec);
	// An absolute expiry in the past fires at once.
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct itimerspec past = {{0, 0}, {now.tv_sec, now.tv_nsec}};
	timer_settime(t1, TIMER_ABSTIME, &past, 0);
	sig = sigwaitinfo(&rt, &si);
	printf("absolute: %s\n", sig == SIGRTMIN ? "SIGRTMIN" : "?");
	timer_delete(t1);

	// SIGEV_THREAD_ID: the timer's signal goes to the waiting thread.
	pthread_t th;
	pthread_create(&th, 0, waiter, 0);
	while (waiter_tid == 0)
		sched_yield();
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN + 1;
	sev.sigev_value.sival_int = 7;
	sev._sigev_un._tid = waiter_tid;
	timer_t t2;
	if (timer_create(CLOCK_REALTIME, &sev, &t2) != 0)
		perror("timer_create thread_id");
	ts.it_value.tv_nsec = 3000000;
	timer_settime(t2, 0, &ts, 0);
	pthread_join(th, 0);
	timer_delete(t2);

	// SIGEV_THREAD: glibc runs the function on a thread of its own.
	sem_init(&fired, 0, 0);
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = on_timer_thread;
	sev.sigev_value.sival_int = 1;
	timer_t t3;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t3) != 0)
		perror("timer_create thread");
	for (int i = 0; i < 3; i++) {
		ts.it_value.tv_nsec = 2000000;
		timer_settime(t3, 0, &ts, 0);
		while (sem_wait(&fired) != 0)
			;
	}
	timer_delete(t3);
	printf("SIGEV_THREAD calls: %d\n", calls);

	// A sleep a handler interrupts: EINTR and time left.
	handle(SIGALRM, on_alarm, 0);
	every_ms(10);
	struct timespec req = {5, 0}, rem = {0, 0};
	r = nanosleep(&req, &rem);
	oneshot_ms(0);
	printf("nanosleep = %d (%s), %s left\n", r, errno == EINTR ? "EINTR" : "?",
	       rem.tv_sec > 0 && rem.tv_sec < 5 ? "some" : "?");

	// A pipe read a handler interrupts: EINTR without SA_RESTART; with
	// it the read runs again and gets what the handler wrote.
	if (pipe(pipefd) != 0)
		return 1;
	handle(SIGALRM, on_alarm, 0);
	every_ms(10);
	char c = 0;
	r = read(pipefd[0], &c, 1);
	oneshot_ms(0);
	printf("read without SA_RESTART = %d (%s)\n", (int)r, errno == EINTR ? "EINTR" : "?");
	handle(SIGALRM, feed_pipe, SA_RESTART);
	oneshot_ms(10);
	r = read(pipefd[0], &c, 1);
	printf("read with SA_RESTART = %d '%c'\n", (int)r, c);

	// pselect's mask: SIGALRM blocked but for the call, which it ends.
	handle(SIGALRM, on_alarm, SA_RESTART);
	sigprocmask(SIG_BLOCK, &alrm, &old);
	sigset_t during = old;
	sigdelset(&during, SIGALRM);
	alarms = 0;
	every_ms(10);
	r = pselect(0, 0, 0, 0, 0, &during);
	oneshot_ms(0);
	seen = alarms;
	sigpending(&pend);
	if (sigismember(&pend, SIGALRM))
		sigwait(&alrm, &sig);
	sigprocmask(SIG_SETMASK, &old, 0);
	printf("pselect = %d (%s), alarms %d\n", r, errno == EINTR ? "EINTR" : "?", seen);

	// A poll that times out, and an absolute sleep.
	if (pipe(pipefd) != 0)
		return 1;
	struct pollfd pfd = {pipefd[0], POLLIN, 0};
	r = poll(&pfd, 1, 15);
	printf("poll = %d\n", r);
	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_nsec += 5000000;
	if (now.tv_nsec >= 1000000000) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000;
	}
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &now, 0);
	struct timespec after;
	clock_gettime(CLOCK_MONOTONIC, &after);
	printf("clock_nanosleep = %d, on time %d\n", r,
	       after.tv_sec > now.tv_sec || (after.tv_sec == now.tv_sec && after.tv_nsec >= now.tv_nsec));
	return 0;
}
