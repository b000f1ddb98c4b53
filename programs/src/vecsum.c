/*
 * vecsum -- loops that gcc 12 auto-vectorizes at -O2 (aarch64 NEON; s390x
 * with -march=z13, the vector facility; the other configs run them as
 * scalar code).  Every loop runs over non-aliasing static arrays with a
 * fixed trip count that is a multiple of 16, the shape gcc's default
 * "very cheap" cost model accepts:
 *   sums and reductions (u8 -> u32 sum, s32 -> s64 sum, s32 min/max,
 *   u8 max, equal-count), a s16 dot product (widening multiply-
 *   accumulate), u8 x u8 -> u16 widening multiply, sum of absolute
 *   differences, saturating u8 add, s32 add and compare-select, s16
 *   scale-and-shift, int -> float conversion, and float/double
 *   multiply-add over exactly representable values (so the fused vector
 *   result equals the unfused scalar one).
 * Each kernel is checked against a scalar reference that visits the
 * elements in a permuted order (i*37 mod 192), which gcc does not
 * vectorize.
 */
#include "rt.h"

#define LEN 192
#define PERM(k) (((k) * 37) % LEN)

static uint8_t u8a[LEN] __attribute__((aligned(16)));
static uint8_t u8b[LEN] __attribute__((aligned(16)));
static uint8_t u8c[LEN] __attribute__((aligned(16)));
static uint16_t u16c[LEN] __attribute__((aligned(16)));
static int16_t s16a[LEN] __attribute__((aligned(16)));
static int16_t s16b[LEN] __attribute__((aligned(16)));
static int16_t s16c[LEN] __attribute__((aligned(16)));
static int32_t s32a[LEN] __attribute__((aligned(16)));
static int32_t s32b[LEN] __attribute__((aligned(16)));
static int32_t s32c[LEN] __attribute__((aligned(16)));
static float fa[LEN] __attribute__((aligned(16)));
static float fb[LEN] __attribute__((aligned(16)));
static float fc[LEN] __attribute__((aligned(16)));
static double da[LEN] __attribute__((aligned(16)));
static double db[LEN] __attribute__((aligned(16)));
static double dc[LEN] __attribute__((aligned(16)));

/* ---- vectorizable kernels ---- */

NOINLINE static uint32_t sum_u8(void)
{
	uint32_t s = 0;
	for (int i = 0; i < LEN; i++)
		s += u8a[i];
	return s;
}

NOINLINE static int64_t sum_s32_wide(void)
{
	int64_t s = 0;
	for (int i = 0; i < LEN; i++)
		s += s32a[i];
	return s;
}

NOINLINE static int32_t dot_s16(void)
{
	int32_t s = 0;
	for (int i = 0; i < LEN; i++)
		s += s16a[i] * s16b[i];
	return s;
}

NOINLINE static int32_t max_s32(void)
{
	int32_t m = INT32_MIN;
	for (int i = 0; i < LEN; i++)
		m = s32a[i] > m ? s32a[i] : m;
	return m;
}

NOINLINE static int32_t min_s32(void)
{
	int32_t m = INT32_MAX;
	for (int i = 0; i < LEN; i++)
		m = s32b[i] < m ? s32b[i] : m;
	return m;
}

NOINLINE static uint8_t max_u8(void)
{
	uint8_t m = 0;
	for (int i = 0; i < LEN; i++)
		m = u8b[i] > m ? u8b[i] : m;
	return m;
}

NOINLINE static uint32_t count_equal(void)
{
	uint32_t n = 0;
	for (int i = 0; i < LEN; i++)
		n += u8a[i] == u8b[i];
	return n;
}

NOINLINE static uint32_t sad_u8(void)
{
	uint32_t s = 0;
	for (int i = 0; i < LEN; i++) {
		int t = u8a[i] - u8b[i];
		s += (uint32_t)(t < 0 ? -t : t);
	}
	return s;
}

NOINLINE static void widen_mul_u8(void)
{
	for (int i = 0; i < LEN; i++)
		u16c[i] = (uint16_t)(u8a[i] * u8b[i]);
}

NOINLINE static void sat_add_u8(void)
{
	for (int i = 0; i < LEN; i++) {
		unsigned t = (unsigned)u8a[i] + u8b[i];
		u8c[i] = (uint8_t)(t > 255 ? 255 : t);
	}
}

NOINLINE static void add_s32(void)
{
	for (int i = 0; i < LEN; i++)
		s32c[i] = s32a[i] + s32b[i];
}

NOINLINE static void select_s32(void)
{
	for (int i = 0; i < LEN; i++)
		s32c[i] = s32a[i] > s32b[i] ? s32a[i] : -s32b[i];
}

NOINLINE static void scale_s16(void)
{
	for (int i = 0; i < LEN; i++)
		s16c[i] = (int16_t)((s16a[i] * 3) >> 2);
}

NOINLINE static void int_to_float(void)
{
	for (int i = 0; i < LEN; i++)
		fc[i] = (float)s32c[i];
}

NOINLINE static void madd_f32(void)
{
	for (int i = 0; i < LEN; i++)
		fc[i] = fa[i] * fb[i] + fc[i];
}

NOINLINE static void madd_f64(void)
{
	for (int i = 0; i < LEN; i++)
		dc[i] = da[i] * db[i] + dc[i];
}

/* ---- scalar references (permuted order) ---- */

static int bad;
static uint64_t d;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	bad += !check_eq(what, got, want);
	d = digest_add(d, got);
}

static void fill(uint64_t *rng, int round)
{
	for (int i = 0; i < LEN; i++) {
		uint64_t r = rng_next(rng);
		u8a[i] = (uint8_t)r;
		u8b[i] = (uint8_t)(i % 5 == 0 ? r : r >> 8);	/* some equal */
		/* ranges keep every int sum and product below overflow */
		s16a[i] = (int16_t)((int16_t)(r >> 16) >> 4);
		s16b[i] = (int16_t)((int16_t)(r >> 32) >> 4);
		s32a[i] = (int32_t)(r >> 20) >> (2 + round);
		s32b[i] = (int32_t)(r >> 28) >> 2;
		/* small multiples of 1/4 and 1/8: all products and sums exact */
		fa[i] = (float)((int)(r >> 40 & 63) - 32) * 0.25f;
		fb[i] = (float)((int)(r >> 48 & 31) - 16) * 0.125f;
		da[i] = (double)((int)(r >> 52 & 255) - 128) * 0.5;
		db[i] = (double)((int)(r >> 44 & 127) - 64) * 0.25;
		dc[i] = (double)i;
	}
}

static void run_round(uint64_t *rng, int round)
{
	fill(rng, round);

	uint64_t s = 0;
	for (int k = 0; k < LEN; k++)
		s += u8a[PERM(k)];
	expect("sum_u8", sum_u8(), s);

	int64_t s64 = 0;
	for (int k = 0; k < LEN; k++)
		s64 += s32a[PERM(k)];
	expect("sum_s32_wide", (uint64_t)sum_s32_wide(), (uint64_t)s64);

	int64_t dot = 0;
	for (int k = 0; k < LEN; k++)
		dot += s16a[PERM(k)] * s16b[PERM(k)];
	expect("dot_s16", (uint64_t)(int64_t)dot_s16(), (uint64_t)dot);

	int32_t mx = INT32_MIN, mn = INT32_MAX;
	uint8_t mu = 0;
	uint32_t eq = 0, sad = 0;
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		if (s32a[i] > mx)
			mx = s32a[i];
		if (s32b[i] < mn)
			mn = s32b[i];
		if (u8b[i] > mu)
			mu = u8b[i];
		eq += u8a[i] == u8b[i];
		sad += (uint32_t)(u8a[i] > u8b[i] ? u8a[i] - u8b[i] : u8b[i] - u8a[i]);
	}
	expect("max_s32", (uint64_t)(int64_t)max_s32(), (uint64_t)(int64_t)mx);
	expect("min_s32", (uint64_t)(int64_t)min_s32(), (uint64_t)(int64_t)mn);
	expect("max_u8", max_u8(), mu);
	expect("count_equal", count_equal(), eq);
	expect("sad_u8", sad_u8(), sad);

	widen_mul_u8();
	sat_add_u8();
	scale_s16();
	int wrong = 0;
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		unsigned t = (unsigned)u8a[i] + u8b[i];
		wrong += u16c[i] != (unsigned)u8a[i] * u8b[i];
		wrong += u8c[i] != (t > 255 ? 255 : t);
		wrong += s16c[i] != (int16_t)((s16a[i] * 3) >> 2);
	}
	expect("elementwise u8/s16 errors", (uint64_t)wrong, 0);

	add_s32();
	wrong = 0;
	uint64_t h = 0;
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		wrong += s32c[i] != s32a[i] + s32b[i];
		h += (uint64_t)(int64_t)s32c[i] * (uint64_t)(i + 1);
	}
	select_s32();
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		wrong += s32c[i] != (s32a[i] > s32b[i] ? s32a[i] : -s32b[i]);
	}
	int_to_float();
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		wrong += fc[i] != (float)s32c[i];
	}
	for (int i = 0; i < LEN; i++)
		fc[i] = (float)(i & 15);
	madd_f32();
	madd_f64();
	double fsum = 0, dsum = 0;
	for (int k = 0; k < LEN; k++) {
		int i = PERM(k);
		wrong += fc[i] != fa[i] * fb[i] + (float)(i & 15);
		wrong += dc[i] != da[i] * db[i] + (double)i;
		fsum += fc[i];
		dsum += dc[i];
	}
	expect("elementwise s32/float errors", (uint64_t)wrong, 0);
	/* fc values are multiples of 1/32, dc values of 1/8: exact sums */
	int64_t f32 = (int64_t)(fsum * 32), d8 = (int64_t)(dsum * 8);
	d = digest_add(digest_add(digest_add(d, h), (uint64_t)f32), (uint64_t)d8);

	say_u("sum_u8", sum_u8());
	say_i("dot_s16", dot_s16());
	say_i("max_s32", max_s32());
	say_i("min_s32", min_s32());
	say_u("sad_u8", sad_u8());
	say_x("s32 sum weighted hash", h);
	say_i("float madd sum x32", f32);
	say_i("double madd sum x8", d8);
}

int main(int argc, char **argv, char **envp)
{
	uint64_t rng = 0x7ec5;
	for (int round = 0; round < 2; round++)
		run_round(&rng, round);
	check_eq("kernel mismatches", (uint64_t)bad, 0);
	return rt_finish(d);
}
