/* malloc, calloc, realloc and free churn: many live blocks of varied
   sizes, filled and checked, so glibc's bins, tcache and brk growth work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static uint64_t state = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

#define SLOTS 512

int main(void)
{
	unsigned char *p[SLOTS] = {0};
	size_t len[SLOTS] = {0};
	uint64_t check = 0;
	long allocs = 0, frees = 0, reallocs = 0;
	for (int round = 0; round < 20000; round++) {
		int i = next() % SLOTS;
		size_t n = next() % 3 == 0 ? next() % 4096 : next() % 96;
		if (p[i]) {
			for (size_t k = 0; k < len[i]; k++)
				if (p[i][k] != (unsigned char)(i + k)) {
					printf("corrupt block %d at %zu\n", i, k);
					return 1;
				}
			if (next() % 4 == 0) {
				unsigned char *q = realloc(p[i], n + 1);
				if (!q)
					return 2;
				size_t keep = len[i] < n + 1 ? len[i] : n + 1;
				for (size_t k = keep; k < n + 1; k++)
					q[k] = (unsigned char)(i + k);
				p[i] = q;
				len[i] = n + 1;
				reallocs++;
				continue;
			}
			free(p[i]);
			p[i] = NULL;
			frees++;
			continue;
		}
		p[i] = next() % 5 == 0 ? calloc(n + 1, 1) : malloc(n + 1);
		if (!p[i])
			return 3;
		len[i] = n + 1;
		for (size_t k = 0; k < len[i]; k++)
			p[i][k] = (unsigned char)(i + k);
		check = check * 1000003 + len[i];
		allocs++;
	}
	size_t live = 0;
	for (int i = 0; i < SLOTS; i++) {
		live += len[i] * (p[i] != NULL);
		free(p[i]);
	}
	printf("allocs %ld frees %ld reallocs %ld live bytes %zu check %016llx\n",
	       allocs, frees, reallocs, live, (unsigned long long)check);
	return (int)(check % 113) + 1;
}
