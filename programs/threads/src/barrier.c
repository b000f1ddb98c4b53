// Four threads advance a ring of values in lockstep: in each round every
// thread reads its right neighbour's value from the last round, and a
// pthread_barrier separates the reads from the writes.
#include <pthread.h>
#include <stdio.h>

#define N 4
#define ROUNDS 50

static unsigned vals[2][N];
static pthread_barrier_t bar;
static int serial_count;

static void *run(void *arg) {
	long id = (long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		unsigned *from = vals[r & 1], *to = vals[(r + 1) & 1];
		to[id] = from[(id + 1) % N] * 31 + (unsigned)id + (unsigned)r;
		if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_fetch_add(&serial_count, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void) {
	pthread_t th[N];
	for (int i = 0; i < N; i++)
		vals[0][i] = (unsigned)i + 1;
	pthread_barrier_init(&bar, NULL, N);
	for (long i = 0; i < N; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < N; i++)
		printf("vals[%d] = %u\n", i, vals[ROUNDS & 1][i]);
	printf("serial threads: %d\n", serial_count);
	return 0;
}
