// Two threads take two mutexes in opposite orders, a barrier making sure
// each holds its first before it asks for its second: they wait for each
// other for ever, and the main thread waits in pthread_join. (Not run
// under qemu-user, where it would hang; simrun ends it with the list of
// the waiting threads.)
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;

static void *first(void *arg) {
	pthread_mutex_t *m1 = arg, *m2 = m1 == &a ? &b : &a;
	pthread_mutex_lock(m1);
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(m2);
	pthread_mutex_unlock(m2);
	pthread_mutex_unlock(m1);
	return NULL;
}

int main(void) {
	pthread_t t1, t2;
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t1, NULL, first, &a);
	pthread_create(&t2, NULL, first, &b);
	puts("started");
	fflush(stdout);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	puts("not reached");
	return 0;
}
