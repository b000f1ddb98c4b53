// SIGCHLD: a handler runs for each child's exit (SA_RESTART: the read
// it interrupts goes on); then with SIGCHLD ignored, children are reaped
// at once and wait gives ECHILD.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void onchld(int sig, siginfo_t *si, void *ctx) {
	got++;
	(void)sig; (void)ctx;
	if (si->si_code != CLD_EXITED || si->si_status != 7) got += 100;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = onchld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, 0);
	fflush(stdout);
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		if (pid == 0) _exit(7);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	}
	printf("handler ran %d times\n", (int)got);
	signal(SIGCHLD, SIG_IGN);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) _exit(1);
	int st;
	errno = 0;
	pid_t w = waitpid(pid, &st, 0);
	printf("ignored SIGCHLD: wait %d %s\n", (int)w, strerror(errno));
	return 0;
}
