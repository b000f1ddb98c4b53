// fork under --max-memory (run with a 128 MiB bound): a small process
// forks; one grown until mmap gives ENOMEM cannot fork (its copy's page
// tables would pass the bound: ENOMEM, and nothing is lost); once it has
// given half back it forks again.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEP (64 << 10)
#define MAXSTEPS 4096

static char *steps[MAXSTEPS];

static void say(const char *what, pid_t pid, int err) {
	char buf[160];
	int n = snprintf(buf, sizeof buf, "%s: %s\n", what, pid < 0 ? strerror(err) : "ok");
	write(1, buf, n);
}

static pid_t try_fork(const char *what) {
	pid_t pid = fork();
	if (pid == 0) _exit(7);
	int err = errno;
	say(what, pid, err);
	if (pid > 0) {
		int st;
		waitpid(pid, &st, 0);
		char buf[64];
		int n = snprintf(buf, sizeof buf, "child exit %d\n", WEXITSTATUS(st));
		write(1, buf, n);
	}
	return pid;
}

int main(void) {
	try_fork("small fork");
	int n = 0;
	while (n < MAXSTEPS) {
		char *p = mmap(0, STEP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) break;
		memset(p, 1, STEP);
		steps[n++] = p;
	}
	// leave room for the stack and code not run yet (512 KiB), not for a
	// copy of the page tables (about 1 MiB)
	for (int i = 0; i < 8; i++) munmap(steps[--n], STEP);
	char buf[64];
	int k = snprintf(buf, sizeof buf, "grown: %s\n", n > 100 && n < MAXSTEPS - 1 ? "near the bound" : "no bound?");
	write(1, buf, k);
	pid_t pid = try_fork("fork near the bound");
	for (int i = n / 2; i < n; i++) munmap(steps[i], STEP);
	try_fork("fork after giving half back");
	return pid < 0 ? 0 : 1;
}
