/* Robust mutexes: a thread takes a robust mutex and exits holding it; the
 * kernel's robust-list walk marks the lock word FUTEX_OWNER_DIED, so the
 * next pthread_mutex_lock returns EOWNERDEAD and the mutex can be made
 * consistent. Also a waiter that sleeps on the mutex while its owner dies
 * must be woken. Under qemu-user 7.2 set_robust_list fails, glibc keeps
 * no list and the second lock waits for ever (simrun's default reproduces
 * that; --robust-futexes gives Linux's behaviour). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t m;
static pthread_mutex_t ready = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int taken;

static void *owner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_lock(&ready);
	taken = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&ready);
	for (volatile int i = 0; i < 200000; i++) /* the waiter blocks meanwhile */
		;
	return NULL; /* dies holding m */
}

static const char *name(int r)
{
	switch (r) {
	case 0: return "0";
	case EOWNERDEAD: return "EOWNERDEAD";
	case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
	default: return strerror(r);
	}
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	for (int round = 0; round < 2; round++) {
		pthread_mutex_init(&m, &a);
		taken = 0;
		pthread_t t;
		pthread_create(&t, NULL, owner, NULL);
		pthread_mutex_lock(&ready);
		while (!taken)
			pthread_cond_wait(&cv, &ready);
		pthread_mutex_unlock(&ready);
		if (round == 1) /* let the owner die first */
			pthread_join(t, NULL);
		int r = pthread_mutex_lock(&m); /* round 0: waits while the owner lives */
		printf("round %d: lock after the owner died: %s\n", round, name(r));
		if (r == EOWNERDEAD)
			printf("round %d: consistent: %s\n", round, name(pthread_mutex_consistent(&m)));
		printf("round %d: unlock: %s\n", round, name(pthread_mutex_unlock(&m)));
		printf("round %d: lock again: %s\n", round, name(pthread_mutex_lock(&m)));
		pthread_mutex_unlock(&m);
		if (round == 0)
			pthread_join(t, NULL);
		pthread_mutex_destroy(&m);
	}
	return 0;
}
