// Signals with data between processes: sigqueue's value reaches a child
// waiting in sigwaitinfo, tgkill reaches a child's thread by its ids, a
// forged kernel si_code to another process is EPERM (before the pid is
// looked up), and a pid no process has is ESRCH.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, 0);
	int go[2];
	pipe(go);
	pid_t p = fork();
	if (p == 0) {
		// Both wait pending when the child looks: its thread's own
		// (tgkill's) comes first, then the process's (sigqueue's).
		char c;
		read(go[0], &c, 1);
		for (int i = 0; i < 2; i++) {
			siginfo_t si;
			int r = sigwaitinfo(&m, &si);
			printf("child: signal %d code %s value %d from the parent %d\n", r,
			       si.si_code == SI_QUEUE ? "SI_QUEUE" : si.si_code == SI_TKILL ? "SI_TKILL" : "other",
			       si.si_code == SI_QUEUE ? si.si_value.sival_int : 0, si.si_pid == getppid());
		}
		_exit(0);
	}
	union sigval v = {.sival_int = 42};
	int q = sigqueue(p, SIGUSR1, v);
	int t = tgkill(p, p, SIGUSR2);
	write(go[1], "x", 1);
	int st;
	waitpid(p, &st, 0);
	printf("sigqueue: %d, tgkill: %d\n", q, t);
	siginfo_t forged;
	memset(&forged, 0, sizeof forged);
	forged.si_signo = SIGUSR1;
	forged.si_code = SI_USER;
	errno = 0;
	long r = syscall(SYS_rt_sigqueueinfo, p, SIGUSR1, &forged);
	printf("forged SI_USER to a reaped child: %ld %s\n", r, strerror(errno));
	forged.si_code = SI_QUEUE;
	errno = 0;
	r = syscall(SYS_rt_sigqueueinfo, p, SIGUSR1, &forged);
	printf("SI_QUEUE to a reaped child: %ld %s\n", r, strerror(errno));
	forged.si_code = SI_USER;
	p = fork();
	if (p == 0) {
		pause();
		_exit(0);
	}
	errno = 0;
	r = syscall(SYS_rt_sigqueueinfo, p, SIGUSR1, &forged);
	printf("forged SI_USER to another process: %ld %s\n", r, strerror(errno));
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return 0;
}
