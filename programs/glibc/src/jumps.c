/* setjmp/longjmp out of nested calls, atexit handlers and errno. */
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>

static jmp_buf env;
static int depth_reached;

static int descend(int depth, int limit)
{
	volatile char pad[64];
	pad[depth % 64] = (char)depth;
	depth_reached = depth;
	if (depth >= limit)
		longjmp(env, depth * 3 + 1);
	if (depth > 1000)
		return -1;
	return descend(depth + 1, limit) + pad[depth % 64];
}

static void bye1(void) { printf("atexit 1\n"); }
static void bye2(void) { printf("atexit 2 (registered last, runs first)\n"); }

int main(void)
{
	atexit(bye1);
	atexit(bye2);
	int total = 0;
	for (int limit = 1; limit <= 40; limit += 3) {
		volatile int attempts = 0;
		int r = setjmp(env);
		if (r == 0) {
			attempts++;
			descend(0, limit);
			printf("not reached\n");
			return 99;
		}
		total += r;
		printf("limit %d: longjmp value %d after depth %d (attempts %d)\n", limit, r, depth_reached, attempts);
	}
	errno = 0;
	FILE *f = fopen("/nonexistent/file", "r");
	printf("fopen %s errno %s\n", f ? "opened" : "failed", errno ? "set" : "clear");
	printf("strerror(ERANGE) = %s\n", strerror(ERANGE));
	printf("total %d\n", total);
	exit(total % 100 + 1);
}
