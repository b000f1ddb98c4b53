// Processes sharing memory: a fork from a second thread leaves the
// child one thread; a process-shared semaphore and a process-shared
// mutex in a MAP_SHARED page work between parent and child (their futex
// wakes cross the processes, as Linux keys a shared futex by the page).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <semaphore.h>
static void *thr(void *a) {
	pid_t p = fork();
	if (p == 0) { printf("child of a thread: threads gone, pid differs %d\n", getpid() != *(pid_t *)a); fflush(stdout); _exit(4); }
	int st; waitpid(p, &st, 0);
	return (void *)(long)WEXITSTATUS(st);
}
int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	pid_t me = getpid();
	pthread_t t; void *r;
	pthread_create(&t, 0, thr, &me);
	pthread_join(t, &r);
	printf("thread's child exited %ld\n", (long)r);
	// shared anonymous mapping + process-shared semaphore
	sem_t *s = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sem_init(s, 1, 0);
	int *cnt = (int *)(s + 1);
	pid_t c = fork();
	if (c == 0) { for (int i = 0; i < 3; i++) { __atomic_add_fetch(cnt, 1, __ATOMIC_SEQ_CST); sem_post(s); } _exit(0); }
	for (int i = 0; i < 3; i++) sem_wait(s);
	printf("sem: counted %d\n", *cnt);
	waitpid(c, 0, 0);
	// pthread mutex process-shared
	pthread_mutexattr_t ma; pthread_mutexattr_init(&ma); pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_t *m = (pthread_mutex_t *)(cnt + 16);
	pthread_mutex_init(m, &ma);
	pthread_mutex_lock(m);
	c = fork();
	if (c == 0) { pthread_mutex_lock(m); printf("child got the shared mutex\n"); pthread_mutex_unlock(m); _exit(0); }
	usleep(100000);
	printf("parent unlocks\n");
	pthread_mutex_unlock(m);
	waitpid(c, 0, 0);
	return 0;
}
