// system() and popen() run /bin/sh, which the cross sysroot lacks: the
// host's shell runs on the host, as under qemu-user (hostproc.go). Its
// exit status, a death by signal, and the bytes both ways through popen's
// pipes reach the guest.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int main(void) {
	printf("before\n");
	fflush(stdout);
	int st = system("echo hello from sh; exit 3");
	printf("system: exited %d, status %d\n", WIFEXITED(st), WEXITSTATUS(st));
	FILE *f = popen("echo popen line 1; echo popen line 2", "r");
	char buf[100];
	while (fgets(buf, sizeof buf, f)) printf("read: %s", buf);
	printf("pclose r: %d\n", WEXITSTATUS(pclose(f)));
	// more than a pipe holds (64 KiB), so both sides wait for each other
	f = popen("seq 100000", "r");
	long sum = 0, n = 0;
	while (fgets(buf, sizeof buf, f)) sum += atol(buf), n++;
	printf("seq: %ld lines, sum %ld, pclose %d\n", n, sum, pclose(f));
	fflush(stdout);
	f = popen("tr a-z A-Z", "w");
	for (int i = 0; i < 3000; i++) fputs("through the pipe to the host\n", f);
	printf("pclose w: %d\n", pclose(f));
	fflush(stdout);
	st = system("kill -TERM $$");
	printf("system: signaled %d, signal %d\n", WIFSIGNALED(st), WTERMSIG(st));
	return 0;
}
