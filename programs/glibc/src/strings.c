/* String handling through glibc's (IFUNC-selected) string functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>

int main(void)
{
	char text[] = "The quick brown fox jumps over the lazy dog; "
	              "pack my box with five dozen liquor jugs, 0x7fff 12345 -987 3.5e2";
	unsigned h = 0;
	size_t n = strlen(text);
	printf("len %zu\n", n);
	char copy[256];
	memcpy(copy, text, n + 1);
	for (char *t = strtok(copy, " ;,"); t; t = strtok(NULL, " ;,")) {
		char up[64];
		size_t k = 0;
		for (; t[k] && k < sizeof up - 1; k++)
			up[k] = (char)toupper((unsigned char)t[k]);
		up[k] = 0;
		h = h * 33 + (unsigned)strlen(t);
		printf("[%s:%s]", t, up);
	}
	printf("\n");
	const char *needles[] = {"fox", "lazy", "jugs", "cat", "0x7f", ""};
	for (int i = 0; i < 6; i++) {
		const char *p = strstr(text, needles[i]);
		printf("strstr %s -> %ld\n", needles[i], p ? (long)(p - text) : -1L);
		h = h * 7 + (p ? (unsigned)(p - text) : 99u);
	}
	printf("strchr %ld strrchr %ld memchr %ld\n", (long)(strchr(text, 'q') - text),
	       (long)(strrchr(text, 'o') - text), (long)((char *)memchr(text, 'z', n) - text));
	printf("strcmp %d %d %d strncmp %d\n", strcmp("abc", "abd") < 0, strcmp("b", "a") > 0,
	       strcmp("same", "same"), strncmp("prefix-a", "prefix-b", 6));
	printf("strspn %zu strcspn %zu\n", strspn("aaabbbccc", "ab"), strcspn("hello world", " "));
	char *end;
	errno = 0;
	long a = strtol("0x7fff", &end, 0), b = strtol("  -987xyz", &end, 10);
	unsigned long c = strtoul("777", NULL, 8);
	double d = strtod("3.5e2", NULL);
	printf("strtol %ld %ld(%s) strtoul %lu strtod %.1f\n", a, b, end, c, d);
	long big = strtol("99999999999999999999", NULL, 10);
	printf("overflow %ld errno %d\n", big, errno == ERANGE);
	char dst[64] = "join";
	strcat(dst, "-");
	strncat(dst, "ed-strings", 32);
	printf("%s %zu\n", dst, strlen(dst));
	char big1[1000], big2[1000];
	memset(big1, 'x', sizeof big1);
	memmove(big1 + 10, big1, 500);
	memcpy(big2, big1, sizeof big2);
	big2[999] = 0;
	printf("memcmp %d strlen %zu\n", memcmp(big1, big2, 999), strlen(big2));
	for (size_t i = 0; i < n; i++)
		h = h * 131 + (unsigned char)text[i];
	printf("hash %08x\n", h);
	return (int)(h % 89) + 1;
}
