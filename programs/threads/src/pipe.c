// A writer thread sends numbered lines through a pipe, in bursts larger
// than the pipe holds; the main thread reads until end of file and
// checks every line arrived in order. Each side waits for the other:
// the reader on an empty pipe, the writer on a full one.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINES 20000

static int fds[2];

static void *writer(void *arg) {
	(void)arg;
	char line[64];
	for (int i = 0; i < LINES; i++) {
		int n = snprintf(line, sizeof line, "line %d of %d\n", i, LINES);
		for (int off = 0; off < n;) {
			ssize_t w = write(fds[1], line + off, (size_t)(n - off));
			if (w <= 0)
				return (void *)1;
			off += (int)w;
		}
	}
	close(fds[1]);
	return NULL;
}

int main(void) {
	if (pipe(fds) != 0)
		return 2;
	pthread_t th;
	pthread_create(&th, NULL, writer, NULL);
	FILE *in = fdopen(fds[0], "r");
	char line[64], want[64];
	int count = 0, bad = 0;
	while (fgets(line, sizeof line, in)) {
		snprintf(want, sizeof want, "line %d of %d\n", count, LINES);
		if (strcmp(line, want) != 0)
			bad++;
		count++;
	}
	void *ret;
	pthread_join(th, &ret);
	printf("%d lines, %d out of order, writer returned %ld\n", count, bad, (long)ret);
	return bad != 0 || count != LINES;
}
