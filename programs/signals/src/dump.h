/* Helpers shared by the signal programs: hex dumps of guest memory whose
 * contents are the same under every faithful implementation. */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* dump prints n bytes at p in 4-byte groups; a group holding the process
 * id (the host's under qemu, saved registers hold it after raise) prints
 * as "<pid>---". */
static void dump(const char *what, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = p;
	unsigned pid = (unsigned)getpid();
	char line[128];
	printf("%s (%zu bytes):\n", what, n);
	for (size_t i = 0; i < n; i += 32) {
		char *o = line;
		*o++ = ' ';
		*o++ = ' ';
		for (int s = 12; s >= 0; s -= 4)
			*o++ = hex[(i >> s) & 15];
		*o++ = ':';
		for (size_t k = i; k < i + 32 && k < n; k += 4) {
			unsigned w;
			*o++ = ' ';
			if (n - k >= 4 && (memcpy(&w, b + k, 4), w == pid)) {
				memcpy(o, "<pid>---", 8);
				o += 8;
				continue;
			}
			for (size_t j = k; j < k + 4 && j < n; j++) {
				*o++ = hex[b[j] >> 4];
				*o++ = hex[b[j] & 15];
			}
		}
		*o++ = '\n';
		*o = 0;
		fputs(line, stdout);
	}
}
