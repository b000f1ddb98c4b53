// fork + wait: exit statuses, a signal death, ECHILD, WNOHANG, getppid,
// a pipe between parent and child with EOF once every write end closes.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	int fd[2];
	if (pipe(fd)) return 1;
	pid_t me = getpid();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) { perror("fork"); return 1; }
	if (pid == 0) {
		close(fd[0]);
		char buf[64];
		int n = snprintf(buf, sizeof buf, "child: parent is me %d, pid differs %d\n", getppid() == me, getpid() != me);
		if (write(fd[1], buf, n) != n) _exit(99);
		_exit(42);
	}
	close(fd[1]);
	char buf[128];
	int n, tot = 0;
	while ((n = read(fd[0], buf + tot, sizeof buf - tot)) > 0) tot += n;
	fwrite(buf, 1, tot, stdout);
	int st;
	printf("waitpid is the child: %d\n", waitpid(pid, &st, 0) == pid);
	printf("exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));
	errno = 0;
	printf("wait again: %d %s\n", (int)waitpid(-1, &st, 0), strerror(errno));
	errno = 0;
	printf("wait on a non-child: %d %s\n", (int)waitpid(1, &st, 0), strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	printf("WNOHANG while it runs: %d\n", (int)waitpid(pid, &st, WNOHANG));
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	printf("signaled %d by %d\n", WIFSIGNALED(st), WTERMSIG(st));
	return 3;
}
