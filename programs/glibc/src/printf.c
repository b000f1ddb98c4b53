/* printf-heavy output: integer, floating-point and string conversions with
   flags, widths and precisions, through stdio's buffering. */
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <stddef.h>

int main(void)
{
	unsigned sum = 0;
	char buf[256];
	for (int i = -20; i <= 20; i++) {
		double x = i * 3.25 - 0.125;
		int n = snprintf(buf, sizeof buf, "%5d|%-5d|%05d|%+d|%x|%#o|%8.3f|%-10.2e|%g|%G|%a",
		                 i, i, i, i, (unsigned)i * 2654435761u, (unsigned)(i + 40), x, x * 1e5, x / 7, x * 1e-9, x);
		sum = sum * 31 + (unsigned)n;
		for (int k = 0; k < n; k++)
			sum = sum * 131 + (unsigned char)buf[k];
		puts(buf);
	}
	printf("%s|%10s|%-10s|%.3s|%c%c\n", "abc", "right", "left", "truncate", 'o', 'k');
	printf("%" PRId64 " %" PRIu64 " %" PRIx64 "\n", INT64_MIN, UINT64_MAX, (uint64_t)0xdeadbeefcafe);
	printf("%.20f %.0f %.15g %e\n", 1.0 / 3, 2.5, 0.1 + 0.2, 6.02214076e23);
	printf("%zu %td %hhd %hd %ld\n", sizeof(long double), (ptrdiff_t)-5, (signed char)300, (short)70000, -1L);
	int w = 12, p = 4;
	printf("[%*.*f] [%-*d] [%%]\n", w, p, 3.14159265358979, w, 42);
	fprintf(stderr, "to stderr %d\n", 7);
	printf("checksum %08x\n", sum);
	return (int)(sum % 97) + 1;
}
