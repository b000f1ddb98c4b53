// A host program (the host's /bin/sh behind system(), with its sleep)
// runs on the host's clock: a sibling that sleeps 2 s is still asleep
// when a 0.3 s host sleep ends, as under qemu-user, where everything
// runs on that clock.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		struct timespec d = {2, 0};
		nanosleep(&d, 0);
		_exit(0);
	}
	int rc = system("sleep 0.3");
	int st;
	printf("system: %d\n", WEXITSTATUS(rc));
	printf("the sleeper still sleeps: %d\n", waitpid(child, &st, WNOHANG) == 0);
	kill(child, SIGTERM);
	waitpid(child, &st, 0);
	printf("then SIGTERM ends it: %d\n", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	return 0;
}
