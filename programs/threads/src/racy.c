// Deliberately racy: four threads start in turn and each records, with a
// plain (non-atomic) counter, when it began its work; the order printed
// depends on the interleaving. simrun's round-robin scheduler prints one
// order every run; --sched random prints one per seed. (Not compared
// with qemu-user, whose host threads may print any order.)
#include <pthread.h>
#include <stdio.h>

#define N 4

static volatile int next;
static int order[N];
static volatile unsigned long sink;

static void *run(void *arg) {
	long id = (long)arg;
	for (unsigned long i = 0; i < 1000 * (unsigned long)(N - id); i++)
		sink += i;
	order[next++] = (int)id;
	return NULL;
}

int main(void) {
	pthread_t th[N];
	for (long i = 0; i < N; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	printf("finished in order:");
	for (int i = 0; i < N; i++)
		printf(" %d", order[i]);
	printf("\n");
	return 0;
}
