// Sleeps in several processes share one clock: a child that sleeps
// 0.2 s wakes before its elder sibling that sleeps 2 s, each no sooner
// than its own sleep, and a parent's sleep lets its child run meanwhile.
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static pid_t sleeper(long ms, int status) {
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {ms / 1000, ms % 1000 * 1000000};
		nanosleep(&d, 0);
		_exit(status);
	}
	return pid;
}

int main(void) {
	double t0 = now();
	pid_t a = sleeper(2000, 1);
	pid_t b = sleeper(200, 2);
	for (int i = 0; i < 2; i++) {
		int st;
		pid_t w = wait(&st);
		double dt = now() - t0;
		printf("%s the %s sleeper, status %d, after its sleep: %d\n", i ? "then" : "first", w == a ? "2 s" : w == b ? "0.2 s" : "?",
		       WEXITSTATUS(st), dt >= (w == a ? 2.0 : 0.2));
	}
	// The parent sleeps; its child, which does not, ends meanwhile.
	pid_t c = sleeper(0, 3);
	sleep(1);
	int st;
	printf("the child ended during the parent's sleep: %d\n", waitpid(c, &st, WNOHANG) == c);
	return 0;
}
