/* wc: counts the lines, words and bytes of the file named in argv[1],
 * as `wc FILE` prints them, through stdio (fopen, getc). */
#include <ctype.h>
#include <stdio.h>

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: wc FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	long lines = 0, words = 0, bytes = 0;
	int c, in = 0;
	while ((c = getc(f)) != EOF) {
		bytes++;
		if (c == '\n')
			lines++;
		if (isspace(c))
			in = 0;
		else if (!in) {
			in = 1;
			words++;
		}
	}
	fclose(f);
	printf("%7ld %7ld %7ld %s\n", lines, words, bytes, argv[1]);
	return 0;
}
