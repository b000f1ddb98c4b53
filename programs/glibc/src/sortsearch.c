/* qsort and bsearch on integers, strings and structures. Each array stays
   under 1 KiB: glibc's qsort then merges in a stack buffer; above that it
   asks sysinfo how much memory the machine has, which is the host's under
   qemu, so the lockstep comparison could not follow it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	char name[12];
	int key;
	double weight;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->key != y->key)
		return x->key - y->key;
	return strcmp(x->name, y->name);
}

int main(void)
{
	enum { N = 250, W = 120, R = 40 };
	static int v[N];
	unsigned s = 12345;
	int found = 0;
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < N; i++) {
			s = s * 1103515245 + 12345;
			v[i] = (int)(s >> 8) % 100000 - 50000;
		}
		qsort(v, N, sizeof v[0], cmp_int);
		for (int i = 1; i < N; i++)
			if (v[i - 1] > v[i])
				return 10;
		for (int k = -50000; k < 50000; k += 997)
			found += bsearch(&k, v, N, sizeof v[0], cmp_int) != NULL;
		found += bsearch(&v[round], v, N, sizeof v[0], cmp_int) != NULL;
	}

	static char words[W][8];
	static char *pw[W];
	for (int i = 0; i < W; i++) {
		s = s * 1103515245 + 12345;
		snprintf(words[i], sizeof words[i], "%c%c%c%03u", 'a' + (s >> 10) % 26, 'a' + (s >> 15) % 26,
		         'a' + (s >> 20) % 26, (s >> 4) % 1000);
		pw[i] = words[i];
	}
	qsort(pw, W, sizeof pw[0], cmp_str);
	char *key = pw[77];
	char **hit = bsearch(&key, pw, W, sizeof pw[0], cmp_str);

	static struct rec r[R];
	for (int i = 0; i < R; i++) {
		s = s * 1103515245 + 12345;
		snprintf(r[i].name, sizeof r[i].name, "n%u", s % 977);
		r[i].key = (int)(s >> 20) % 50;
		r[i].weight = (s % 1000) / 8.0;
	}
	qsort(r, R, sizeof r[0], cmp_rec);
	double w = 0;
	for (int i = 0; i < R; i++)
		w += r[i].weight * (i % 7);
	printf("min %d max %d median %d found %d\n", v[0], v[N - 1], v[N / 2], found);
	printf("first %s last %s hit %s\n", pw[0], pw[W - 1], hit ? *hit : "none");
	printf("rec first %s/%d last %s/%d weight %.3f\n", r[0].name, r[0].key, r[R - 1].name, r[R - 1].key, w);
	return (found + (int)w) % 101 + 1;
}
