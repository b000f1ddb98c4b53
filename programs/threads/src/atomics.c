// Four threads update shared counters with atomic read-modify-writes (an
// add, a compare-and-swap loop, an exchange-based spin lock around a
// plain counter). Built for Armv8.0 the compiler uses exclusive pairs
// (ldxr/stxr), for Armv8.1 the LSE instructions (ldadd, cas, swp).
#include <pthread.h>
#include <stdio.h>

#define N 4
#define ITERS 20000

static long added;
static long casmax;
static int lock;
static long plain;

static void *run(void *arg) {
	long id = (long)arg;
	for (long i = 0; i < ITERS; i++) {
		__atomic_fetch_add(&added, id + 1, __ATOMIC_SEQ_CST);
		long want = i * N + id, cur = __atomic_load_n(&casmax, __ATOMIC_RELAXED);
		while (cur < want && !__atomic_compare_exchange_n(&casmax, &cur, want, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			;
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			;
		plain++;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void) {
	pthread_t th[N];
	for (long i = 0; i < N; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	printf("added %ld (want %ld)\n", added, (long)ITERS * N * (N + 1) / 2);
	printf("casmax %ld (want %ld)\n", casmax, (long)(ITERS - 1) * N + N - 1);
	printf("plain %ld (want %ld)\n", plain, (long)ITERS * N);
	return added == (long)ITERS * N * (N + 1) / 2 && plain == (long)ITERS * N ? 0 : 1;
}
