// A process that ends with a zombie child and a live one: the zombie is
// reaped with it, the live one runs on as an orphan and its output still
// comes. Pipes order the output (no sleeps: the same under any load).
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	int go[2], done[2];
	pipe(go);
	pipe(done);
	pid_t child = fork();
	if (child == 0) {
		pid_t zombie = fork();
		if (zombie == 0) _exit(0);
		if (fork() == 0) {
			char c;
			read(go[0], &c, 1); // after the child ended
			printf("the orphan runs on after its parent ended\n");
			write(done[1], "x", 1);
			_exit(0);
		}
		// The zombie has ended: wait for that without reaping it.
		siginfo_t si;
		waitid(P_PID, zombie, &si, WEXITED | WNOWAIT);
		_exit(5);
	}
	int st;
	waitpid(child, &st, 0);
	printf("the child ended with status %d, leaving a zombie and an orphan\n", WEXITSTATUS(st));
	write(go[1], "x", 1);
	char c;
	read(done[0], &c, 1);
	printf("the parent ends\n");
	return 0;
}
