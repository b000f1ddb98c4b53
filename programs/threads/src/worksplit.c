// Four threads each sum a quarter of 1..N into their own counter; the
// main thread joins them and prints the sums and their total.
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 4
#define N 200000

static unsigned long long sums[NTHREADS];

static void *work(void *arg) {
	long id = (long)arg;
	unsigned long long s = 0;
	for (long i = id * (N / NTHREADS) + 1; i <= (id + 1) * (N / NTHREADS); i++)
		s += (unsigned long long)i * i % 1000003;
	sums[id] = s;
	return (void *)(id * 10);
}

int main(void) {
	pthread_t th[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, work, (void *)i) != 0) {
			printf("pthread_create failed\n");
			return 1;
		}
	unsigned long long total = 0;
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		printf("thread %d: sum %llu, returned %ld\n", i, sums[i], (long)ret);
		total += sums[i];
	}
	printf("total %llu\n", total);
	return 0;
}
