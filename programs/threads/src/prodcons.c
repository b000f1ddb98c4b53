// Two producers and two consumers share a bounded buffer guarded by a
// mutex and two condition variables; the consumers' totals do not depend
// on the interleaving.
#include <pthread.h>
#include <stdio.h>

#define SLOTS 8
#define PER_PRODUCER 5000
#define PRODUCERS 2
#define CONSUMERS 2

static int buf[SLOTS];
static int head, count, done_producers;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;

struct result {
	long long sum;
	long items;
};

static void *producer(void *arg) {
	int base = (int)(long)arg * 100000;
	for (int i = 1; i <= PER_PRODUCER; i++) {
		pthread_mutex_lock(&mu);
		while (count == SLOTS)
			pthread_cond_wait(&not_full, &mu);
		buf[(head + count) % SLOTS] = base + i;
		count++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	done_producers++;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *consumer(void *arg) {
	struct result *r = arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (count == 0 && done_producers < PRODUCERS)
			pthread_cond_wait(&not_empty, &mu);
		if (count == 0) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		int v = buf[head];
		head = (head + 1) % SLOTS;
		count--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		r->sum += v;
		r->items++;
	}
}

int main(void) {
	pthread_t p[PRODUCERS], c[CONSUMERS];
	struct result res[CONSUMERS] = {0};
	for (long i = 0; i < CONSUMERS; i++)
		pthread_create(&c[i], NULL, consumer, &res[i]);
	for (long i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, (void *)(i + 1));
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	long long sum = 0;
	long items = 0;
	for (int i = 0; i < CONSUMERS; i++) {
		pthread_join(c[i], NULL);
		sum += res[i].sum;
		items += res[i].items;
	}
	printf("consumed %ld items, sum %lld\n", items, sum);
	return items == PRODUCERS * PER_PRODUCER ? 0 : 1;
}
