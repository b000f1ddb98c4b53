/*
 * fpmath -- scalar floating point in double and single precision.
 *
 *   - Newton square roots (double and float), exp by its Taylor series,
 *     sin by Taylor series and by a Horner polynomial (which gcc -O2
 *     contracts into fused multiply-adds: fmadd / madbr);
 *   - explicit fma / fmaf, and a*b+c, a*b-c, c-a*b, -(a*b)-c on values
 *     whose products are exact, so fused and unfused evaluation agree;
 *   - conversions both ways between double/float and signed/unsigned
 *     32/64-bit integers (scvtf/ucvtf/fcvtzs/fcvtzu; cdgbr/cdlgbr/cgdbr/
 *     clgdbr/...), float <-> double, with rounding-sensitive values;
 *   - comparisons including NaN, infinities and signed zeros, fabs,
 *     copysign, min/max selects, division.
 * Results are printed as IEEE bit patterns where the computation is
 * exactly reproducible and as rounded scaled integers where an FMA
 * contraction may change the last bit.  All operands pass through noipa
 * functions or arrays so the arithmetic really runs.
 */
#include "rt.h"

static uint64_t d;

static uint64_t bits64(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static uint32_t bits32(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

/* round x * scale to the nearest integer, ties away from zero */
static int64_t scaled(double x, double scale)
{
	double y = x * scale;
	return (int64_t)(y < 0 ? y - 0.5 : y + 0.5);
}

static void show_d(const char *what, double x)
{
	say_x(what, bits64(x));
	d = digest_add(d, bits64(x));
}

static void show_f(const char *what, float x)
{
	say_x32(what, bits32(x));
	d = digest_add(d, bits32(x));
}

static void show_scaled(const char *what, double x)
{
	int64_t v = scaled(x, 1e9);
	say_i(what, v);
	d = digest_add(d, (uint64_t)v);
}

static double next_up(double x)		/* x > 0, finite */
{
	uint64_t u = bits64(x) + 1;
	double r;
	memcpy(&r, &u, sizeof r);
	return r;
}

static float next_upf(float x)
{
	uint32_t u = bits32(x) + 1;
	float r;
	memcpy(&r, &u, sizeof r);
	return r;
}

/*
 * Newton's iteration from above (it decreases monotonically until rounding
 * stops it), then a final correction: rounding can
 * leave the iterate one ulp below the correctly rounded root, so compare
 * the exact residuals x*x - a (one fma each) of x and its successor.
 */
NOIPA static double newton_sqrt(double a)
{
	if (a <= 0)
		return 0;
	/* halving the exponent gives a first guess within a few percent; one
	   Newton step from any guess lands above the root (AM-GM) */
	uint64_t g = (bits64(a) >> 1) + 0x1ff8000000000000ull;
	double x0;
	memcpy(&x0, &g, sizeof x0);
	double x = 0.5 * (x0 + a / x0);
	for (int i = 0; i < 100; i++) {
		double next = 0.5 * (x + a / x);
		if (next >= x)
			break;
		x = next;
	}
	double up = next_up(x);
	double r0 = __builtin_fma(x, x, -a), r1 = __builtin_fma(up, up, -a);
	if (__builtin_fabs(r1) < __builtin_fabs(r0))
		x = up;
	return x;
}

NOIPA static float newton_sqrtf(float a)
{
	if (a <= 0)
		return 0;
	uint32_t g = (bits32(a) >> 1) + 0x1fc00000u;
	float x0;
	memcpy(&x0, &g, sizeof x0);
	float x = 0.5f * (x0 + a / x0);
	for (int i = 0; i < 100; i++) {
		float next = 0.5f * (x + a / x);
		if (next >= x)
			break;
		x = next;
	}
	float up = next_upf(x);
	float r0 = __builtin_fmaf(x, x, -a), r1 = __builtin_fmaf(up, up, -a);
	if (__builtin_fabsf(r1) < __builtin_fabsf(r0))
		x = up;
	return x;
}

NOIPA static double exp_series(double x)
{
	double sum = 1, term = 1;
	for (int k = 1; k < 40; k++) {
		term = term * x / k;
		sum += term;
	}
	return sum;
}

NOIPA static double sin_series(double x)
{
	double term = x, sum = x;
	for (int k = 1; k < 15; k++) {
		term = -term * x * x / ((2 * k) * (2 * k + 1));
		sum += term;
	}
	return sum;
}

/* x - x^3/3! + ... - x^15/15!, Horner form in x^2 (fma-friendly) */
NOIPA static double sin_horner(double x)
{
	static const double c[] = {
		-1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0,
		1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0,
	};
	double x2 = x * x, p = c[0];
	for (unsigned i = 1; i < ARRAY_LEN(c); i++)
		p = p * x2 + c[i];
	return p * x;
}

NOIPA static double fused(double a, double b, double c) { return __builtin_fma(a, b, c); }
NOIPA static float fusedf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

/* contraction candidates with exact products */
NOIPA static double madd(double a, double b, double c) { return a * b + c; }
NOIPA static double msub(double a, double b, double c) { return a * b - c; }
NOIPA static double nmsub(double a, double b, double c) { return c - a * b; }
NOIPA static double nmadd(double a, double b, double c) { return -(a * b) - c; }
NOIPA static float maddf(float a, float b, float c) { return a * b + c; }

NOIPA static double dmax(double a, double b) { return a > b ? a : b; }
NOIPA static double dmin(double a, double b) { return a < b ? a : b; }
NOIPA static float fmaxsel(float a, float b) { return a >= b ? a : b; }

/* comparison predicates packed into a bit mask */
NOIPA static unsigned compare(double a, double b)
{
	return (unsigned)(a < b) | (unsigned)(a <= b) << 1 | (unsigned)(a == b) << 2 |
	       (unsigned)(a != b) << 3 | (unsigned)(a > b) << 4 | (unsigned)(a >= b) << 5 |
	       (unsigned)__builtin_isunordered(a, b) << 6 |
	       (unsigned)__builtin_isless(a, b) << 7;
}

NOIPA static unsigned comparef(float a, float b)
{
	return (unsigned)(a < b) | (unsigned)(a == b) << 1 | (unsigned)(a > b) << 2 |
	       (unsigned)__builtin_isunordered(a, b) << 3;
}

NOIPA static double divide(double a, double b) { return a / b; }

/* conversions */
NOIPA static double i64_to_d(int64_t v) { return (double)v; }
NOIPA static double u64_to_d(uint64_t v) { return (double)v; }
NOIPA static float i64_to_f(int64_t v) { return (float)v; }
NOIPA static float u64_to_f(uint64_t v) { return (float)v; }
NOIPA static double i32_to_d(int32_t v) { return (double)v; }
NOIPA static double u32_to_d(uint32_t v) { return (double)v; }
NOIPA static float i32_to_f(int32_t v) { return (float)v; }
NOIPA static float u32_to_f(uint32_t v) { return (float)v; }
NOIPA static int64_t d_to_i64(double v) { return (int64_t)v; }
NOIPA static uint64_t d_to_u64(double v) { return (uint64_t)v; }
NOIPA static int32_t d_to_i32(double v) { return (int32_t)v; }
NOIPA static uint32_t d_to_u32(double v) { return (uint32_t)v; }
NOIPA static int32_t f_to_i32(float v) { return (int32_t)v; }
NOIPA static uint32_t f_to_u32(float v) { return (uint32_t)v; }
NOIPA static int64_t f_to_i64(float v) { return (int64_t)v; }
NOIPA static double f_to_d(float v) { return (double)v; }
NOIPA static float d_to_f(double v) { return (float)v; }

static double make_nan(void)
{
	volatile double z = 0;
	return z / z;
}

static void roots(void)
{
	double r2 = newton_sqrt(2);
	show_d("sqrt(2)", r2);
	check_eq("sqrt(2) correctly rounded", bits64(r2), 0x3ff6a09e667f3bcdull);
	static const double args[] = { 0.25, 3, 10, 1e-6, 12345.678, 1e300 };
	for (unsigned i = 0; i < ARRAY_LEN(args); i++) {
		double a = args[i], r = newton_sqrt(a);
		/* correctly rounded: |r*r - a| <= 2^-52 a (approximately) */
		double err = __builtin_fma(r, r, -a) / a;
		check("newton_sqrt accuracy", err < 2.5e-16 && err > -2.5e-16);
		d = digest_add(d, bits64(r));
	}
	show_d("sqrt(1e300)", newton_sqrt(1e300));
	float f2 = newton_sqrtf(2);
	show_f("sqrtf(2)", f2);
	check_eq("sqrtf(2) correctly rounded", bits32(f2), 0x3fb504f3u);
	show_f("sqrtf(1000)", newton_sqrtf(1000));
}

static void series(void)
{
	show_scaled("exp(1) * 1e9", exp_series(1));
	show_scaled("exp(-2.5) * 1e9", exp_series(-2.5));
	show_scaled("exp(5) * 1e9", exp_series(5));
	check("exp(1) ~ e", scaled(exp_series(1), 1e12) == 2718281828459ll);
	/* |x| <= 1.5 keeps the polynomial's truncation error below 1e-11 */
	static const double xs[] = { 0.5, 1, -1.25, 0.75, 1.5, -0.001 };
	for (unsigned i = 0; i < ARRAY_LEN(xs); i++) {
		double a = sin_series(xs[i]), b = sin_horner(xs[i]);
		double diff = a - b;
		check("sin series == horner", diff < 1e-11 && diff > -1e-11);
		d = digest_add(d, (uint64_t)scaled(a, 1e9));
	}
	show_scaled("sin(1) * 1e9", sin_horner(1));
	show_scaled("sin(-1.25) * 1e9", sin_series(-1.25));
	check("sin(1)", scaled(sin_horner(1), 1e9) == 841470985);
}

static void fma_patterns(void)
{
	/* exact products: fused and unfused results are identical */
	check_eq("3*5+7", bits64(madd(3, 5, 7)), bits64(22));
	check_eq("1.5*-4-0.25", bits64(msub(1.5, -4, 0.25)), bits64(-6.25));
	check_eq("10-2.5*3", bits64(nmsub(2.5, 3, 10)), bits64(2.5));
	check_eq("-(6*7)-8", bits64(nmadd(6, 7, 8)), bits64(-50));
	check_eq("0.5f*6+1", bits32(maddf(0.5f, 6, 1)), bits32(4.0f));
	/* single rounding: fma(1+2^-30, 1+2^-30, -1) keeps the 2^-60 term */
	double e = 1.0 + 1.0 / 1073741824.0;
	double f = fused(e, e, -1);
	show_d("fma(1+2^-30, 1+2^-30, -1)", f);
	check_eq("fma single rounding", bits64(f), bits64(2.0 / 1073741824.0 + 1.0 / 1152921504606846976.0));
	show_d("fma(0.1, 10, -1)", fused(0.1, 10, -1));
	show_f("fmaf(0.1f, 10, -1)", fusedf(0.1f, 10, -1));
}

static void conversions(void)
{
	static const int64_t iv[] = {
		0, -1, 7, -123456789, 9007199254740993ll /* 2^53+1 */,
		-9007199254740995ll, 0x7fffffffffffffffll, (int64_t)0x8000000000000000ull,
	};
	for (unsigned i = 0; i < ARRAY_LEN(iv); i++) {
		d = digest_add(d, bits64(i64_to_d(iv[i])));
		d = digest_add(d, bits32(i64_to_f(iv[i])));
	}
	show_d("(double)(2^53+1)", i64_to_d(9007199254740993ll));
	show_d("(double)INT64_MIN", i64_to_d(INT64_MIN));
	show_f("(float)-123456789", i64_to_f(-123456789));

	static const uint64_t uv[] = {
		0, 1, 0xffffffffull, 0x8000000000000000ull, 0x8000000000000401ull,
		0xfffffffffffff800ull, 0xffffffffffffffffull,
	};
	for (unsigned i = 0; i < ARRAY_LEN(uv); i++) {
		d = digest_add(d, bits64(u64_to_d(uv[i])));
		d = digest_add(d, bits32(u64_to_f(uv[i])));
	}
	show_d("(double)0x8000000000000401", u64_to_d(0x8000000000000401ull));
	show_d("(double)UINT64_MAX", u64_to_d(UINT64_MAX));
	show_f("(float)UINT64_MAX", u64_to_f(UINT64_MAX));
	check_eq("(double)2^63 exact", bits64(u64_to_d(0x8000000000000000ull)), 0x43e0000000000000ull);

	show_d("(double)INT32_MIN", i32_to_d(INT32_MIN));
	show_d("(double)0xfffffffe", u32_to_d(0xfffffffeu));
	show_f("(float)16777217", i32_to_f(16777217));
	show_f("(float)0xffffff81u", u32_to_f(0xffffff81u));

	/* back to integers: truncation toward zero */
	check_eq("(int64)-2.9", (uint64_t)d_to_i64(-2.9), (uint64_t)-2);
	check_eq("(int32)-2.9", (uint64_t)(int64_t)d_to_i32(-2.9), (uint64_t)-2);
	check_eq("(uint64)1.8e19", d_to_u64(1.8e19), 18000000000000000000ull);
	check_eq("(uint64)2^63", d_to_u64(9223372036854775808.0), 0x8000000000000000ull);
	check_eq("(uint32)4294967295.9", d_to_u32(4294967295.9), 0xffffffffu);
	check_eq("(int32)-2147483648.5", (uint64_t)(int64_t)d_to_i32(-2147483648.5),
		 (uint64_t)(int64_t)INT32_MIN);
	check_eq("(int32)1.5e9f", (uint64_t)f_to_i32(1.5e9f), 1500000000);
	check_eq("(uint32)3999999999.0f", f_to_u32(3999999999.0f), 4000000000u);
	check_eq("(int64)-1e18f", (uint64_t)f_to_i64(-1e18f), (uint64_t)-999999984306749440ll);
	say_i("(int64)-123456.789e6", d_to_i64(-123456.789e6));
	d = digest_add(d, (uint64_t)d_to_i64(-123456.789e6));

	/* float <-> double */
	float third = d_to_f(divide(1, 3));
	show_f("(float)(1.0/3)", third);
	show_d("(double)(float)(1.0/3)", f_to_d(third));
	show_d("1.0/3", divide(1, 3));
	show_d("0.1+0.2", divide(1, 10) + divide(2, 10));
	check_eq("1.0/3 bits", bits64(divide(1, 3)), 0x3fd5555555555555ull);
	show_f("(float)1e40 = inf", d_to_f(1e40));
	show_f("(float)1e-50 = 0", d_to_f(1e-50));
	show_f("(float)(1+2^-24) ties to even", d_to_f(1.0 + 1.0 / 16777216.0));
}

static void compares(void)
{
	double nan = make_nan(), inf = divide(1, 0), nz = divide(-0.0, 1);
	unsigned m = 0;
	m = m * 3 + compare(1, 2);
	m = m * 3 + compare(2, 2);
	m = m * 3 + compare(-0.0, 0.0);
	m = m * 3 + compare(nan, 1);
	m = m * 3 + compare(nan, nan);
	m = m * 3 + compare(inf, 1e308);
	m = m * 3 + compare(-inf, -1e308);
	m = m * 3 + comparef(1.5f, -2.5f);
	m = m * 3 + comparef((float)nan, 0);
	say_x32("comparison masks", m);
	d = digest_add(d, m);
	check_eq("1 < 2", compare(1, 2), 0x8b);
	check_eq("NaN vs 1", compare(nan, 1), 0x48);
	check_eq("-0 == 0", compare(-0.0, 0.0), 0x26);
	check("NaN != NaN", nan != nan);
	check_eq("-0 sign", bits64(nz), 0x8000000000000000ull);
	check_eq("fabs(-0)", bits64(__builtin_fabs(nz)), 0);
	check_eq("copysign(3, -0)", bits64(__builtin_copysign(3, nz)), bits64(-3.0));
	show_d("max(-1.5, 2.25)", dmax(-1.5, 2.25));
	show_d("min(-1.5, 2.25)", dmin(-1.5, 2.25));
	show_f("fmaxsel(7, -7)", fmaxsel(7, -7));
	show_d("-inf", -inf);
	show_d("1/3 * 3", divide(1, 3) * 3);
}

static void float_sums(void)
{
	float h = 0;
	double hd = 0;
	for (int k = 1; k <= 200; k++) {
		h += 1.0f / (float)k;
		hd += 1.0 / k;
	}
	show_f("harmonic(200) float", h);
	show_d("harmonic(200) double", hd);
	float prod = 1;
	for (int k = 1; k <= 30; k++)
		prod *= 1.0f + (float)k / 64.0f;
	show_f("product float", prod);
	check("float vs double harmonic", (double)h - hd < 1e-5 && hd - (double)h < 1e-5);
}

int main(int argc, char **argv, char **envp)
{
	roots();
	series();
	fma_patterns();
	conversions();
	compares();
	float_sums();
	return rt_finish(d);
}
