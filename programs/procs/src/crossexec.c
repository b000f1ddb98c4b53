// fork-exec of the other architecture's build: the aarch64 build runs
// the s390x build of spawn as a filter on a pipe, and the s390x build the
// aarch64 one (both from bin/, found beside argv[0]). "crossexec exec
// PROG ARGS..." execs PROG with argv ARGS... itself, in the first
// process (cmd/simrun's --stats and fault tests).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *builds[2] = {"aarch64-proc-O2", "s390x-proc-O2"};

int main(int argc, char **argv) {
	if (argc > 2 && strcmp(argv[1], "exec") == 0) {
		execv(argv[2], argv + 3);
		perror("execv");
		return 127;
	}
	char other[4096];
	snprintf(other, sizeof other, "%s", argv[0]);
	char *dir = strstr(other, builds[0]);
	const char *to = builds[1];
	if (!dir) {
		dir = strstr(other, builds[1]);
		to = builds[0];
	}
	if (!dir) {
		fprintf(stderr, "%s: not in programs/procs/bin\n", argv[0]);
		return 2;
	}
	// bin/FROM/crossexec -> bin/TO/spawn
	snprintf(dir, sizeof other - (dir - other), "%s/spawn", to);
	int fd[2];
	pipe(fd);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[0], 0);
		close(fd[0]);
		close(fd[1]);
		execl(other, other, "upper", (char *)0);
		_exit(127);
	}
	close(fd[0]);
	write(fd[1], "hello from the other architecture\n", 34);
	close(fd[1]);
	int st;
	waitpid(pid, &st, 0);
	printf("the other architecture's filter: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
