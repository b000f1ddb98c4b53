// A process that ends with a zombie child and a live one: the zombie is
// reaped with it, the live one runs on as an orphan and its output still
// comes.
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms) {
	struct timespec d = {ms / 1000, ms % 1000 * 1000000};
	nanosleep(&d, 0);
}

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	pid_t child = fork();
	if (child == 0) {
		if (fork() == 0) _exit(0); // a zombie: never waited for
		if (fork() == 0) {
			nap(300);
			printf("the orphan runs on after its parent ended\n");
			_exit(0);
		}
		nap(100);
		_exit(5);
	}
	int st;
	waitpid(child, &st, 0);
	printf("the child ended with status %d, leaving a zombie and an orphan\n", WEXITSTATUS(st));
	nap(600);
	printf("the parent ends\n");
	return 0;
}
