// Each thread has its own __thread counter (initialised from .tdata) and
// its own __thread buffer (.tbss); the main thread's stay its own.
#include <pthread.h>
#include <stdio.h>

#define N 3

static __thread long counter = 100;
static __thread char name[16];

struct out {
	long counter;
	char name[16];
	int own; // the thread's counter is not the main thread's
};

static struct out outs[N];
static long *main_counter;

static void *run(void *arg) {
	long id = (long)arg;
	for (long i = 0; i <= id * 1000; i++)
		counter += i;
	snprintf(name, sizeof name, "thread-%ld", id);
	struct out *o = &outs[id];
	o->counter = counter;
	snprintf(o->name, sizeof o->name, "%s", name);
	o->own = &counter != main_counter;
	return NULL;
}

int main(void) {
	main_counter = &counter;
	counter = 7;
	snprintf(name, sizeof name, "main");
	pthread_t th[N];
	for (long i = 0; i < N; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N; i++)
		printf("%s: counter %ld, own %d\n", outs[i].name, outs[i].counter, outs[i].own);
	printf("%s: counter %ld\n", name, counter);
	return 0;
}
