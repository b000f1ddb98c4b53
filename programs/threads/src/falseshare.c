// False sharing, the teaching pair's first half: four threads each add
// to a counter of their own, but the four counters sit in one 64-byte
// cache line, so with several cores (simrun run --cpus 2 or more) every
// store takes the line away from the other cores and their next load
// fetches it back from a peer core. padded.c is the same program with
// each counter on a line of its own: the same work, far fewer cycles
// (cmd/simrun's TestFalseSharing compares them).
#include <pthread.h>
#include <stdio.h>

#define N 4
#define ITERS 50000

#ifdef PADDED
struct counter {
	volatile long n;
	char pad[64 - sizeof(long)];
};
#else
struct counter {
	volatile long n;
};
#endif

static struct counter counters[N] __attribute__((aligned(64)));

static void *run(void *arg) {
	struct counter *c = arg;
	for (long i = 0; i < ITERS; i++)
		c->n++;
	return NULL;
}

int main(void) {
	pthread_t th[N];
	for (int i = 0; i < N; i++)
		pthread_create(&th[i], NULL, run, &counters[i]);
	long total = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		total += counters[i].n;
	}
	printf("%d threads, counters %zu bytes apart: total %ld\n", N, sizeof(struct counter), total);
	return total != (long)N * ITERS;
}
