// vfork: the child runs in the parent's memory, the parent suspended,
// until it execs or exits: what it stores the parent sees. posix_spawn
// (CLONE_VM | CLONE_VFORK on its own stack) reports a failed exec
// through that shared memory.
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile int shared;

int main(void) {
	volatile int local = 1;
	void *before = sbrk(0);
	pid_t pid = vfork();
	if (pid == 0) {
		shared = 42;
		local = 2;
		_exit(3);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("after the child's _exit: shared %d, local %d, exit %d\n", shared, local, WEXITSTATUS(st));

	pid = vfork();
	if (pid == 0) {
		execl("/nonexistent/program", "x", (char *)0);
		shared = errno;
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("the child's failed exec: %s, exit %d\n", strerror(shared), WEXITSTATUS(st));
	printf("brk unchanged: %d\n", sbrk(0) == before);

	char *av[] = {"x", NULL};
	int err = posix_spawn(&pid, "/nonexistent/program", NULL, NULL, av, environ);
	printf("posix_spawn of a missing program: %s\n", strerror(err));
	return 0;
}
