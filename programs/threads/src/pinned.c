// CPUs and affinity: the main thread reports how many CPUs its mask
// holds; each of three threads pins itself to a CPU of its own
// (pthread_setaffinity_np) and reports where sched_getcpu says it runs;
// a mask naming only a CPU that does not exist is EINVAL. Under simrun
// the answers follow --cpus (sim/linux/cores.go); not compared with
// qemu-user, whose answers are the host's.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static int ncpus;
static int got[3];

static void *run(void *arg) {
	long i = (long)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)(i + 1) % ncpus, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
		return (void *)1;
	sched_yield(); // a scheduling point: the thread moves there
	got[i] = sched_getcpu();
	return NULL;
}

int main(void) {
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	ncpus = CPU_COUNT(&set);
	printf("%d CPUs\n", ncpus);
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(th[i], &r);
		if (r != NULL)
			return 2;
		printf("thread %d: asked for CPU %d, runs on CPU %d\n", i, (i + 1) % ncpus, got[i]);
	}
	CPU_ZERO(&set);
	CPU_SET(63, &set);
	int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	printf("CPU 63 only: %s\n", e == EINVAL ? "EINVAL" : e == 0 ? "accepted" : "other error");
	return 0;
}
