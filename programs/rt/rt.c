/*
 * rt.c -- the simrun guest runtime (see rt.h).
 *
 * Build with -fno-tree-loop-distribute-patterns: otherwise gcc recognises
 * the byte loops in memset/memcpy below and compiles them into calls to
 * memset/memcpy, i.e. into infinite recursion.
 */
#include "rt.h"

/* ------------------------------------------------------------------ */
/* syscalls                                                            */

#if defined(__aarch64__)

/* aarch64 Linux: "svc #0", syscall number in x8, arguments in x0..x5,
   result (or -errno) in x0. */
enum { NR_WRITE = 64, NR_EXIT_GROUP = 94 };

static inline long raw_syscall3(long nr, long a0, long a1, long a2)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2)
			 : "memory");
	return x0;
}
#define SYSCALL3(nr, a0, a1, a2) raw_syscall3((nr), (a0), (a1), (a2))

#elif defined(__s390x__)

/* s390x Linux: a syscall number below 256 is the immediate of "svc";
   arguments in r2..r7, result (or -errno) in r2.  The immediate must be a
   compile-time constant, hence a macro instead of a function. */
#define NR_WRITE 4
#define NR_EXIT_GROUP 248
#define SYSCALL3(nr, a0, a1, a2) __extension__({				\
	register long r2_ __asm__("r2") = (long)(a0);				\
	register long r3_ __asm__("r3") = (long)(a1);				\
	register long r4_ __asm__("r4") = (long)(a2);				\
	__asm__ volatile("svc %[num]"						\
			 : "+d"(r2_)						\
			 : [num] "i"(nr), "d"(r3_), "d"(r4_)			\
			 : "memory");						\
	r2_; })

#elif defined(__x86_64__)

/* Host reference build only (make host-check): "syscall", number in rax,
   arguments rdi, rsi, rdx; rcx and r11 are clobbered. */
enum { NR_WRITE = 1, NR_EXIT_GROUP = 231 };

static inline long raw_syscall3(long nr, long a0, long a1, long a2)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}
#define SYSCALL3(nr, a0, a1, a2) raw_syscall3((nr), (a0), (a1), (a2))

#else
#error "rt.c: unsupported architecture"
#endif

long sys_write(int fd, const void *buf, size_t len)
{
	return SYSCALL3(NR_WRITE, fd, (long)buf, (long)len);
}

void sys_exit_group(int status)
{
	for (;;)
		SYSCALL3(NR_EXIT_GROUP, status, 0, 0);
}

/* ------------------------------------------------------------------ */
/* mem / str                                                           */

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d == s || n == 0)
		return dst;
	if ((uintptr_t)d < (uintptr_t)s) {
		while (n--)
			*d++ = *s++;
	} else {
		d += n;
		s += n;
		while (n--)
			*--d = *--s;
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p < *q ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return (size_t)(p - s);
}

int strcmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;
	while (*p && *p == *q) {
		p++;
		q++;
	}
	return (int)*p - (int)*q;
}

/* ------------------------------------------------------------------ */
/* output                                                              */

static char obuf[256];
static size_t olen;

void out_flush(void)
{
	size_t done = 0;
	while (done < olen) {
		long n = sys_write(1, obuf + done, olen - done);
		if (n <= 0)
			break;		/* nowhere to report it; drop the rest */
		done += (size_t)n;
	}
	olen = 0;
}

void out_char(int c)
{
	obuf[olen++] = (char)c;
	if (c == '\n' || olen == sizeof obuf)
		out_flush();
}

void out_str(const char *s)
{
	while (*s)
		out_char(*s++);
}

void out_nl(void)
{
	out_char('\n');
}

void out_u64(uint64_t v)
{
	char digits[20];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out_char(digits[--n]);
}

void out_i64(int64_t v)
{
	if (v < 0) {
		out_char('-');
		/* negate in unsigned arithmetic: fine for INT64_MIN too */
		out_u64(0 - (uint64_t)v);
	} else {
		out_u64((uint64_t)v);
	}
}

void out_hex(uint64_t v, int digits)
{
	static const char hexdig[16] = "0123456789abcdef";
	if (digits < 1)
		digits = 1;
	if (digits > 16)
		digits = 16;
	out_char('0');
	out_char('x');
	for (int i = digits - 1; i >= 0; i--)
		out_char(hexdig[(v >> (4 * i)) & 15]);
}

static void label(const char *s)
{
	out_str(s);
	out_char(' ');
}

void say_u(const char *s, uint64_t v)
{
	label(s);
	out_u64(v);
	out_nl();
}

void say_i(const char *s, int64_t v)
{
	label(s);
	out_i64(v);
	out_nl();
}

void say_x(const char *s, uint64_t v)
{
	label(s);
	out_hex(v, 16);
	out_nl();
}

void say_x32(const char *s, uint32_t v)
{
	label(s);
	out_hex(v, 8);
	out_nl();
}

/* ------------------------------------------------------------------ */
/* checks, digest, exit status                                         */

int rt_failures;

int check_eq(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return 1;
	rt_failures++;
	out_str("FAIL ");
	out_str(what);
	out_str(": got ");
	out_hex(got, 16);
	out_str(" want ");
	out_hex(want, 16);
	out_nl();
	return 0;
}

int check(const char *what, int ok)
{
	if (ok)
		return 1;
	rt_failures++;
	out_str("FAIL ");
	out_str(what);
	out_nl();
	return 0;
}

uint64_t digest_add(uint64_t d, uint64_t v)
{
	/* multiply-xorshift mixing: every input bit reaches every output bit */
	d = (d ^ v) * 0x9fb21c651e98df25ull;
	return d ^ (d >> 29);
}

int rt_finish(uint64_t digest)
{
	uint64_t f = digest ^ (digest >> 32);
	f ^= f >> 16;
	f ^= f >> 8;
	int status = (int)(f & 0x7f);
	say_x("digest", digest);
	if (rt_failures) {
		say_u("FAILED checks", (uint64_t)rt_failures);
		status |= 0x80;
	} else {
		out_str("all checks passed\n");
	}
	say_u("status", (uint64_t)status);
	out_flush();
	return status;
}

/* ------------------------------------------------------------------ */
/* arguments, PRNG                                                     */

uint64_t arg_u64(int argc, char **argv, int idx, uint64_t dflt)
{
	if (idx >= argc || argv[idx] == NULL || argv[idx][0] == '\0')
		return dflt;
	uint64_t v = 0;
	for (const char *p = argv[idx]; *p; p++) {
		if (*p < '0' || *p > '9')
			return dflt;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return v;
}

uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t rng_below(uint64_t *state, uint64_t bound)
{
	return rng_next(state) % bound;
}
