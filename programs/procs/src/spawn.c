// popen, system() and a pipeline built by hand with pipe, dup2 and
// execve (the program re-executes itself as the filter), posix_spawn,
// and execve's errors.
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "upper") == 0) {
		int c;
		while ((c = getchar()) != EOF) putchar(c >= 'a' && c <= 'z' ? c - 32 : c);
		return 5;
	}
	if (argc > 1 && strcmp(argv[1], "fdcheck") == 0) {
		// descriptor 7 was close-on-exec, 8 was not
		printf("after exec: fd 7 %s, fd 8 %s\n", fcntl(7, F_GETFD) < 0 ? "closed" : "open",
		       fcntl(8, F_GETFD) < 0 ? "closed" : "open");
		return 0;
	}
	int fd[2];
	pipe(fd);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[0], 0);
		close(fd[0]);
		close(fd[1]);
		char *av[] = {argv[0], "upper", NULL};
		execve(argv[0], av, environ);
		_exit(127);
	}
	close(fd[0]);
	for (int i = 0; i < 3; i++) write(fd[1], "hello pipeline\n", 15);
	close(fd[1]);
	int st;
	waitpid(pid, &st, 0);
	printf("filter exit %d\n", WEXITSTATUS(st));
	fflush(stdout);

	pid = fork();
	if (pid == 0) {
		int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/null", O_RDONLY);
		dup2(a, 7);
		fcntl(7, F_SETFD, FD_CLOEXEC);
		dup2(b, 8);
		char *av[] = {argv[0], "fdcheck", NULL};
		execve(argv[0], av, environ);
		_exit(127);
	}
	waitpid(pid, &st, 0);

	char *sv[] = {argv[0], "upper", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, sv, environ) == 0) {
		waitpid(pid, &st, 0);
		printf("posix_spawn child exit %d\n", WEXITSTATUS(st));
	}

	char *dav[] = {"x", NULL};
	errno = 0;
	execve("/", dav, environ);
	printf("exec a directory: %s\n", strerror(errno));
	errno = 0;
	execve("/nonexistent/program", dav, environ);
	printf("exec a missing file: %s\n", strerror(errno));
	char tmp[] = "/tmp/simrun-procs-XXXXXX";
	int t = mkstemp(tmp);
	write(t, "\177ELF garbage", 12);
	fchmod(t, 0755);
	close(t);
	errno = 0;
	execve(tmp, dav, environ);
	printf("exec a corrupt ELF: %s\n", strerror(errno));
	unlink(tmp);
	return 0;
}
