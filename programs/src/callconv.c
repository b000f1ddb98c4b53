/*
 * callconv -- the procedure-call standard.
 *   - 12 integer arguments of mixed width and signedness (past the
 *     argument registers: x0..x7 on aarch64, r2..r6 on s390x, the rest on
 *     the stack, with the callee or caller sign/zero extending);
 *   - 12 double/float arguments (d0..d7 / f0 f2 f4 f6, then the stack)
 *     and interleaved integer and floating arguments;
 *   - structs by value and as return values: 8 bytes (registers), a
 *     two-float struct (an HFA on aarch64), 40 bytes (copied, passed by
 *     reference; returned through x8 on aarch64 and a hidden pointer in
 *     r2 on s390x), and a 128-bit integer return (x0:x1; memory on s390x);
 *   - variadic functions (va_start/va_arg/va_copy over ints, longs and
 *     doubles: the aarch64 register save area and the s390x one);
 *   - calls through a table of function pointers (blr; basr);
 *   - recursion: mutual recursion 400 deep, a 1500-deep non-tail
 *     recursion, a tail-recursive loop (a sibling call at -O2), and a
 *     variable-length array on the stack.
 */
#include "rt.h"
#include <stdarg.h>

static uint64_t d;

NOIPA static int64_t many_ints(int8_t a, uint8_t b, int16_t c, uint16_t e, int32_t f,
			       uint32_t g, int64_t h, uint64_t i, int8_t j, uint16_t k,
			       int32_t l, uint64_t m)
{
	return a + b * 3 + c * 5 + e * 7 + (int64_t)f * 11 + (int64_t)g * 13 +
	       h * 17 + (int64_t)(i % 1000) * 19 + j * 23 + k * 29 + (int64_t)l * 31 +
	       (int64_t)(m >> 40) * 37;
}

NOIPA static double many_fps(double a, float b, double c, float e, double f, float g,
			     double h, float i, double j, float k, double l, float m)
{
	return a + 2 * b + 3 * c + 4 * e + 5 * f + 6 * g + 7 * h + 8 * i + 9 * j +
	       10 * k + 11 * l + 12 * m;
}

NOIPA static double interleaved(int a, double b, long c, float e, unsigned char f,
				double g, short h, double i, int j, double k, long l,
				double m, double n, int o)
{
	return a + b + (double)c + e + f + g + h + i + j + k + (double)l + m + n + o;
}

struct pair32 { int32_t lo, hi; };
struct vec2 { float x, y; };
struct big { int64_t v[5]; };

NOIPA static struct pair32 swap_pair(struct pair32 p)
{
	struct pair32 r = { p.hi * 2, p.lo - 1 };
	return r;
}

NOIPA static struct vec2 rotate90(struct vec2 v)
{
	struct vec2 r = { -v.y, v.x };
	return r;
}

NOIPA static struct big scale_big(struct big b, int64_t k)
{
	for (int i = 0; i < 5; i++)
		b.v[i] *= k;	/* modifies the callee's copy only */
	return b;
}

NOIPA static unsigned __int128 wide_mul(uint64_t a, uint64_t b)
{
	return (unsigned __int128)a * b;
}

NOIPA static int64_t sum_ints(int n, ...)
{
	va_list ap;
	va_start(ap, n);
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

/* fmt: 'i' int, 'l' long, 'd' double; sums twice via va_copy */
NOIPA static double sum_mixed(const char *fmt, ...)
{
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	double s = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p == 'i')
			s += va_arg(ap, int);
		else if (*p == 'l')
			s += (double)va_arg(ap, long);
		else
			s += va_arg(ap, double);
	}
	double t = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p == 'i')
			t += va_arg(again, int);
		else if (*p == 'l')
			t += (double)va_arg(again, long);
		else
			t += va_arg(again, double);
	}
	va_end(again);
	va_end(ap);
	return s == t ? s : -1;
}

NOIPA static int64_t op_add(int64_t a, int64_t b) { return a + b; }
NOIPA static int64_t op_sub(int64_t a, int64_t b) { return a - b; }
NOIPA static int64_t op_mul(int64_t a, int64_t b) { return a * b; }
NOIPA static int64_t op_max(int64_t a, int64_t b) { return a > b ? a : b; }
NOIPA static int64_t op_xor(int64_t a, int64_t b) { return a ^ b; }

static int64_t (*const ops[])(int64_t, int64_t) = { op_add, op_sub, op_mul, op_max, op_xor };

NOIPA static int64_t apply(int64_t (*f)(int64_t, int64_t), int64_t a, int64_t b)
{
	return f(a, b) + 1;
}

static int is_odd(unsigned n);
NOIPA static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
NOIPA static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

NOIPA static uint64_t deep(unsigned n)
{
	if (n == 0)
		return 0;
	return deep(n - 1) * 3 + n;	/* not a tail call */
}

NOIPA static uint64_t tail_loop(uint64_t n, uint64_t acc)
{
	if (n == 0)
		return acc;
	return tail_loop(n - 1, acc * 31 + n);
}

NOIPA static uint32_t vla_sum(unsigned n)
{
	uint32_t buf[n];	/* dynamic stack allocation */
	for (unsigned i = 0; i < n; i++)
		buf[i] = i * i;
	uint32_t s = 0;
	for (unsigned i = 0; i < n; i++)
		s += buf[n - 1 - i] ^ i;
	return s;
}

int main(int argc, char **argv, char **envp)
{
	int64_t r = many_ints(-5, 200, -30000, 60000, -2000000000, 4000000000u,
			      -9000000000000ll, 123456789012ull, -128, 65535, 7,
			      0xfedcba9876543210ull);
	say_i("many_ints", r);
	check_eq("many_ints", (uint64_t)r,
		 (uint64_t)(-5 + 200 * 3 - 30000 * 5 + 60000 * 7 - 2000000000ll * 11 +
			    4000000000ll * 13 - 9000000000000ll * 17 + 12 * 19 - 128 * 23 +
			    65535 * 29 + 7 * 31 + 0xfedcbaull * 37));
	d = digest_add(d, (uint64_t)r);

	double fr = many_fps(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.5f);
	check("many_fps", fr == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81 + 100 + 121 + 150);
	say_i("many_fps", (int64_t)fr);
	double ir = interleaved(1, 2.5, 3, 4.5f, 250, 6.25, -7, 8, 9, 10, 11, 12, 13.75, 14);
	check("interleaved", ir == 1 + 2.5 + 3 + 4.5 + 250 + 6.25 - 7 + 8 + 9 + 10 + 11 + 12 + 13.75 + 14);
	say_i("interleaved x4", (int64_t)(ir * 4));
	d = digest_add(digest_add(d, (uint64_t)(int64_t)fr), (uint64_t)(int64_t)(ir * 4));

	struct pair32 p = swap_pair((struct pair32){ -7, 100 });
	check("swap_pair", p.lo == 200 && p.hi == -8);
	struct vec2 v = rotate90((struct vec2){ 1.5f, -2.0f });
	check("rotate90", v.x == 2.0f && v.y == 1.5f);
	struct big b = { { 1, -2, 3, -4, 5 } };
	struct big s = scale_big(b, -3);
	check("scale_big copy", b.v[0] == 1 && b.v[4] == 5);
	check("scale_big result", s.v[0] == -3 && s.v[1] == 6 && s.v[4] == -15);
	d = digest_add(d, (uint64_t)(p.lo + p.hi) ^ (uint64_t)s.v[3]);

	unsigned __int128 w = wide_mul(0xfedcba9876543210ull, 0x123456789abcdefull);
	say_x("wide_mul hi", (uint64_t)(w >> 64));
	say_x("wide_mul lo", (uint64_t)w);
	check_eq("wide_mul hi", (uint64_t)(w >> 64), 0x121fa00ad77d742ull);
	check_eq("wide_mul lo", (uint64_t)w, 0x2236d88fe5618cf0ull);
	d = digest_add(digest_add(d, (uint64_t)(w >> 64)), (uint64_t)w);

	check_eq("sum_ints", (uint64_t)sum_ints(10, 1, -2, 3, -4, 5, -6, 7, -8, 9, 1000), 1005);
	double m = sum_mixed("ildidldd", 1, 2L, 3.5, -4, 5.25, 6000000000L, 0.125, -1.0);
	check("sum_mixed", m == 1 + 2 + 3.5 - 4 + 5.25 + 6000000000.0 + 0.125 - 1.0);
	say_i("sum_mixed x8", (int64_t)(m * 8));
	d = digest_add(d, (uint64_t)(int64_t)(m * 8));

	int64_t acc = 0;
	for (int i = 0; i < 200; i++)
		acc = apply(ops[i % 5], acc, i * 7 - 300) & 0xffffffffff;
	say_i("function table", acc);
	d = digest_add(d, (uint64_t)acc);

	check("is_even(400)", is_even(400));
	check("is_odd(399)", is_odd(399));
	check("!is_odd(398)", !is_odd(398));
	uint64_t dp = deep(1500);
	say_x("deep(1500)", dp);
	uint64_t tl = tail_loop(1000, 7);
	say_x("tail_loop(1000)", tl);
	d = digest_add(digest_add(d, dp), tl);
	uint32_t vs = vla_sum(300);
	say_u("vla_sum(300)", vs);
	d = digest_add(d, vs);
	return rt_finish(d);
}
