/*
 * divide -- integer division and remainder.
 *
 *   - every pair of 20 interesting 64-bit values (0, +-1, +-7, INT32/INT64
 *     limits, large odd numbers ...) through signed and unsigned 64-bit and
 *     32-bit division behind noipa functions, so the hardware divide
 *     instructions run (sdiv/udiv + msub; dsgr/dlgr/dsgfr/dlr/dr);
 *     results are checked against the C identity a == q*b + r with
 *     |r| < |b| and sign(r) == sign(a), and the unsigned ones against a
 *     shift-and-subtract software division;
 *   - division and remainder by constants (gcc turns these into multiply-
 *     high "magic number" sequences: umulh/smulh, mlgr/...) compared with
 *     the hardware division of the same operands;
 *   - 8- and 16-bit operands (C promotes them to int), and known answers
 *     for the sign rules (-7/2 == -3, -7%2 == -1, ...).
 * INT64_MIN / -1 and INT32_MIN / -1 overflow (and trap on s390x), so those
 * pairs are skipped or computed in a wider type.
 */
#include "rt.h"
#include <limits.h>

static const int64_t vals[] = {
	0, 1, -1, 2, -3, 7, -7, 10, -100, 12345, -987654321,
	INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, 0x123456789abcdefll,
	-0x3c3c3c3c3c3c3c3ll, INT64_MAX, INT64_MIN, INT64_MIN + 1,
	(int64_t)0xfffffffffffffff9ull,
};
#define NV ((int)ARRAY_LEN(vals))

NOIPA static int64_t sdiv64(int64_t a, int64_t b) { return a / b; }
NOIPA static int64_t smod64(int64_t a, int64_t b) { return a % b; }
NOIPA static uint64_t udiv64(uint64_t a, uint64_t b) { return a / b; }
NOIPA static uint64_t umod64(uint64_t a, uint64_t b) { return a % b; }
NOIPA static int32_t sdiv32(int32_t a, int32_t b) { return a / b; }
NOIPA static int32_t smod32(int32_t a, int32_t b) { return a % b; }
NOIPA static uint32_t udiv32(uint32_t a, uint32_t b) { return a / b; }
NOIPA static uint32_t umod32(uint32_t a, uint32_t b) { return a % b; }

/* restoring division: shift the divisor up, then subtract back down */
static uint64_t soft_udiv(uint64_t n, uint64_t d, uint64_t *rem)
{
	uint64_t q = 0;
	int shift = 0;
	while (!(d >> 63) && (d << 1) <= n) {
		d <<= 1;
		shift++;
	}
	for (; shift >= 0; shift--) {
		q <<= 1;
		if (n >= d) {
			n -= d;
			q |= 1;
		}
		d >>= 1;
	}
	*rem = n;
	return q;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

static int sign_ok(int64_t r, int64_t a)
{
	return r == 0 || (r < 0) == (a < 0);
}

static uint64_t d;	/* result digest */
static int bad_s64, bad_u64, bad_s32, bad_u32;

static void pair(int64_t a, int64_t b)
{
	if (b == 0)
		return;

	/* signed 64 */
	if (!(a == INT64_MIN && b == -1)) {
		int64_t q = sdiv64(a, b), r = smod64(a, b);
		if ((uint64_t)q * (uint64_t)b + (uint64_t)r != (uint64_t)a ||
		    mag(r) >= mag(b) || !sign_ok(r, a))
			bad_s64++;
		d = digest_add(d, (uint64_t)q ^ (uint64_t)r << 1);
	}

	/* unsigned 64, against the software division */
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b, srem;
	uint64_t uq = udiv64(ua, ub), ur = umod64(ua, ub);
	if (uq != soft_udiv(ua, ub, &srem) || ur != srem)
		bad_u64++;
	d = digest_add(d, uq + ur);

	/* 32-bit: the low halves */
	int32_t a32 = (int32_t)a, b32 = (int32_t)b;
	if (b32 != 0) {
		if (a32 == INT32_MIN && b32 == -1) {
			/* overflows in 32 bits; fine in 64 */
			if (sdiv64(a32, b32) != 2147483648ll || smod64(a32, b32) != 0)
				bad_s32++;
		} else {
			int32_t q = sdiv32(a32, b32), r = smod32(a32, b32);
			if ((int64_t)q * b32 + r != a32 || mag(r) >= mag(b32) ||
			    !sign_ok(r, a32))
				bad_s32++;
			d = digest_add(d, (uint64_t)(uint32_t)q << 32 | (uint32_t)r);
		}
		uint32_t uq32 = udiv32((uint32_t)a32, (uint32_t)b32);
		uint32_t ur32 = umod32((uint32_t)a32, (uint32_t)b32);
		if (uq32 != soft_udiv((uint32_t)a32, (uint32_t)b32, &srem) || ur32 != srem)
			bad_u32++;
		d = digest_add(d, (uint64_t)uq32 * 3 + ur32);
	}
}

/* x op constant, compared with the hardware division by the same value */
static int by_constants(int64_t x)
{
	int bad = 0;
	uint64_t u = (uint64_t)x;
	int32_t x32 = (int32_t)x;
	uint32_t u32 = (uint32_t)x;

	bad += x / 7 != sdiv64(x, 7);
	bad += x % 7 != smod64(x, 7);
	bad += x / 10 != sdiv64(x, 10);
	bad += x % 10 != smod64(x, 10);
	bad += x / -3 != sdiv64(x, -3);
	bad += x / 1000 != sdiv64(x, 1000);
	bad += x / 16 != sdiv64(x, 16);		/* shift with rounding fix-up */
	bad += x % 16 != smod64(x, 16);
	bad += x / -16 != sdiv64(x, -16);
	bad += u / 3 != udiv64(u, 3);
	bad += u % 3 != umod64(u, 3);
	bad += u / 10 != udiv64(u, 10);
	bad += u / 1000000007 != udiv64(u, 1000000007);
	bad += u % 1000000007 != umod64(u, 1000000007);
	bad += u / 16 != udiv64(u, 16);
	bad += x32 / 5 != sdiv32(x32, 5);
	bad += x32 % 9 != smod32(x32, 9);
	bad += x32 / -7 != sdiv32(x32, -7);
	bad += u32 / 10 != udiv32(u32, 10);
	bad += u32 % 7 != umod32(u32, 7);
	bad += u32 / 641 != udiv32(u32, 641);

	d = digest_add(d, (uint64_t)(x / 7) ^ u / 10 ^ (uint64_t)(x32 % 9) ^ u32 / 641);
	return bad;
}

/* 8- and 16-bit operands */
static int small_types(void)
{
	static const int8_t s8[] = { -128, -77, -5, -1, 1, 3, 9, 100, 127 };
	static const uint16_t u16[] = { 1, 2, 255, 256, 1000, 40000, 65535 };
	int bad = 0;
	for (unsigned i = 0; i < ARRAY_LEN(s8); i++) {
		for (unsigned j = 0; j < ARRAY_LEN(s8); j++) {
			int q = s8[i] / s8[j], r = s8[i] % s8[j];
			bad += q != sdiv32(s8[i], s8[j]) || r != smod32(s8[i], s8[j]);
			int8_t t = (int8_t)q;	/* -128 / -1 = 128 wraps to -128 */
			d = digest_add(d, (uint64_t)(int64_t)t);
		}
	}
	for (unsigned i = 0; i < ARRAY_LEN(u16); i++) {
		for (unsigned j = 0; j < ARRAY_LEN(u16); j++) {
			uint16_t q = (uint16_t)(u16[i] / u16[j]);
			uint16_t r = (uint16_t)(u16[i] % u16[j]);
			bad += q != udiv32(u16[i], u16[j]) || r != umod32(u16[i], u16[j]);
			d = digest_add(d, (uint64_t)q << 16 | r);
		}
	}
	return bad;
}

int main(int argc, char **argv, char **envp)
{
	for (int i = 0; i < NV; i++)
		for (int j = 0; j < NV; j++)
			pair(vals[i], vals[j]);
	check_eq("signed 64-bit division identity failures", (uint64_t)bad_s64, 0);
	check_eq("unsigned 64-bit division mismatches", (uint64_t)bad_u64, 0);
	check_eq("signed 32-bit division identity failures", (uint64_t)bad_s32, 0);
	check_eq("unsigned 32-bit division mismatches", (uint64_t)bad_u32, 0);

	int bad = 0;
	for (int i = 0; i < NV; i++)
		bad += by_constants(vals[i]);
	check_eq("division by constants mismatches", (uint64_t)bad, 0);
	check_eq("8/16-bit division mismatches", (uint64_t)small_types(), 0);

	/* known answers: C99 division truncates toward zero */
	check_eq("-7 / 2", (uint64_t)sdiv64(-7, 2), (uint64_t)-3);
	check_eq("-7 % 2", (uint64_t)smod64(-7, 2), (uint64_t)-1);
	check_eq("7 / -2", (uint64_t)sdiv64(7, -2), (uint64_t)-3);
	check_eq("7 % -2", (uint64_t)smod64(7, -2), 1);
	check_eq("-7 / -2", (uint64_t)sdiv64(-7, -2), 3);
	check_eq("-7 % -2", (uint64_t)smod64(-7, -2), (uint64_t)-1);
	check_eq("UINT64_MAX / 3", udiv64(UINT64_MAX, 3), 0x5555555555555555ull);
	check_eq("INT64_MIN / 7", (uint64_t)sdiv64(INT64_MIN, 7),
		 (uint64_t)-1317624576693539401ll);
	check_eq("INT64_MIN % 7", (uint64_t)smod64(INT64_MIN, 7), (uint64_t)-1);
	check_eq("INT32_MIN / 10", (uint64_t)(int64_t)sdiv32(INT32_MIN, 10),
		 (uint64_t)-214748364ll);
	check_eq("UINT32_MAX % 10", umod32(UINT32_MAX, 10), 5);
	check_eq("10^18 / 10^9+7", udiv64(1000000000000000000ull, 1000000007),
		 999999993);

	say_i("-987654321 / 12345", sdiv64(-987654321, 12345));
	say_i("-987654321 % 12345", smod64(-987654321, 12345));
	say_u("UINT64_MAX % 1000000007", umod64(UINT64_MAX, 1000000007));
	say_i("INT64_MAX / -10", sdiv64(INT64_MAX, -10));
	say_i("INT32_MIN / 3 (32-bit)", sdiv32(INT32_MIN, 3));
	say_u("0xfffffff9 / 641 (32-bit)", udiv32(0xfffffff9u, 641));
	return rt_finish(d);
}
