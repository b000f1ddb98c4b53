// A fork bomb meets --max-procs: fork gives EAGAIN; every child waits on
// a pipe that the first process closes, then all are reaped.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	int fd[2];
	pipe(fd);
	int made = 0, err = 0;
	fflush(stdout);
	for (int i = 0; i < 100000; i++) {
		pid_t pid = fork();
		if (pid < 0) { err = errno; break; }
		if (pid == 0) {
			char c;
			close(fd[1]);
			read(fd[0], &c, 1);
			_exit(0);
		}
		made++;
	}
	close(fd[1]);
	int reaped = 0;
	while (wait(0) > 0) reaped++;
	printf("made %d children, then %s; reaped %d\n", made, strerror(err), reaped);
	// Many short-lived children in a row: nothing accumulates.
	for (int i = 0; i < 2000; i++) {
		pid_t pid = fork();
		if (pid == 0) _exit(i & 1);
		waitpid(pid, 0, 0);
	}
	printf("2000 more done\n");
	return 0;
}
