// Pipes between processes: a writer filling more than the 64 KiB
// capacity blocks until the reader drains it; EPIPE with SIGPIPE ignored
// once the reader is gone; SIGPIPE's default action kills a writer.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	int fd[2];
	pipe(fd);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		static char buf[200000];
		memset(buf, 'x', sizeof buf);
		ssize_t n = write(fd[1], buf, sizeof buf);
		_exit(n == sizeof buf ? 0 : 1);
	}
	close(fd[1]);
	long total = 0;
	char b[4096];
	ssize_t n;
	while ((n = read(fd[0], b, sizeof b)) > 0) total += n;
	int st;
	waitpid(pid, &st, 0);
	printf("read %ld bytes, writer status %d\n", total, WEXITSTATUS(st));
	close(fd[0]);

	pipe(fd);
	close(fd[0]);
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	printf("write without reader: %d %s\n", (int)write(fd[1], "x", 1), strerror(errno));
	signal(SIGPIPE, SIG_DFL);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		write(fd[1], "x", 1);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("child writing without reader: signaled %d by %d\n", WIFSIGNALED(st), WTERMSIG(st));
	return 0;
}
