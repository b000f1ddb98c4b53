/*
 * bits -- bit manipulation, each builtin checked against a plain loop:
 *   popcount (__builtin_popcount/ll: aarch64 cnt+addv, s390x popcnt),
 *   count leading/trailing zeros (clz/rbit+clz; flogr), clrsb, ffs,
 *   byte swaps (__builtin_bswap16/32/64: rev16/rev/rev; lrvr/lrvgr),
 *   bit reversal by masks vs. by loop (aarch64 may use rbit),
 *   rotates left/right of 32 and 64 bits (ror/rorv; rll/rllg),
 *   parity, single-bit set/clear/test, and signed/unsigned bitfield
 *   structs (ubfx/sbfx/bfi; risbg) compared with manual shift-and-mask.
 * Operands come from a PRNG plus a table of edge values.
 */
#include "rt.h"

static const uint64_t edge[] = {
	1, 2, 3, 0x80, 0xff, 0x100, 0x8000, 0xffff, 0x80000000u, 0xffffffffu,
	0x100000000ull, 0x8000000000000000ull, 0xffffffffffffffffull,
	0x0123456789abcdefull, 0xf0f0f0f0f0f0f0f0ull, 0x5555555555555555ull,
};

static int pop_loop(uint64_t x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static int clz_loop(uint64_t x)	/* x != 0 */
{
	int n = 0;
	while (!(x & 0x8000000000000000ull)) {
		x <<= 1;
		n++;
	}
	return n;
}

static int ctz_loop(uint64_t x)	/* x != 0 */
{
	int n = 0;
	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
}

static uint64_t bswap_loop(uint64_t x, int bytes)
{
	uint64_t r = 0;
	for (int i = 0; i < bytes; i++) {
		r = r << 8 | (x & 0xff);
		x >>= 8;
	}
	return r;
}

static uint64_t rev_masks(uint64_t x)
{
	x = (x >> 1 & 0x5555555555555555ull) | (x & 0x5555555555555555ull) << 1;
	x = (x >> 2 & 0x3333333333333333ull) | (x & 0x3333333333333333ull) << 2;
	x = (x >> 4 & 0x0f0f0f0f0f0f0f0full) | (x & 0x0f0f0f0f0f0f0f0full) << 4;
	return __builtin_bswap64(x);
}

static uint64_t rev_loop(uint64_t x)
{
	uint64_t r = 0;
	for (int i = 0; i < 64; i++) {
		r = r << 1 | (x & 1);
		x >>= 1;
	}
	return r;
}

static uint64_t rotl64(uint64_t x, unsigned r) { return x << (r & 63) | x >> (-r & 63); }
static uint64_t rotr64(uint64_t x, unsigned r) { return x >> (r & 63) | x << (-r & 63); }
static uint32_t rotl32(uint32_t x, unsigned r) { return x << (r & 31) | x >> (-r & 31); }

struct packed {
	unsigned lo : 3;
	signed sv : 5;
	unsigned mid : 12;
	signed wide : 12;
	unsigned flag : 1;
	unsigned long long big : 31;
};

static uint64_t d;

static int one(uint64_t x, unsigned r)
{
	int bad = 0;
	uint32_t x32 = (uint32_t)x;

	bad += __builtin_popcountll(x) != pop_loop(x);
	bad += __builtin_popcount(x32) != pop_loop(x32);
	bad += __builtin_parityll(x) != (pop_loop(x) & 1);
	if (x) {
		bad += __builtin_clzll(x) != clz_loop(x);
		bad += __builtin_ctzll(x) != ctz_loop(x);
		bad += __builtin_ffsll((long long)x) != ctz_loop(x) + 1;
	}
	if (x32) {
		bad += __builtin_clz(x32) != clz_loop(x32) - 32;
		bad += __builtin_ctz(x32) != ctz_loop(x32);
	}
	/* leading redundant sign bits */
	int64_t sx = (int64_t)x;
	uint64_t lead = (uint64_t)(sx ^ (sx >> 63));
	int want_clrsb = lead ? clz_loop(lead) - 1 : 63;
	bad += __builtin_clrsbll(sx) != want_clrsb;

	bad += __builtin_bswap64(x) != bswap_loop(x, 8);
	bad += __builtin_bswap32(x32) != bswap_loop(x32, 4);
	bad += __builtin_bswap16((uint16_t)x) != bswap_loop((uint16_t)x, 2);
	uint64_t rv = rev_masks(x);
	bad += rv != rev_loop(x);

	uint64_t rl = rotl64(x, r), rr = rotr64(x, r);
	bad += rotr64(rl, r) != x || rotl64(rr, r) != x;
	bad += rl != rotr64(x, 64 - (r & 63));
	bad += rotl32(rotl32(x32, r), 32 - (r & 31)) != x32;

	/* single bits */
	unsigned b = r & 63;
	uint64_t set = x | 1ull << b, clr = x & ~(1ull << b), flip = x ^ 1ull << b;
	bad += !((set >> b) & 1) || ((clr >> b) & 1);
	bad += (flip ^ x) != 1ull << b;

	/* bitfields vs. manual extraction */
	struct packed p;
	memset(&p, 0, sizeof p);
	p.lo = x & 7;
	p.sv = (int)(x >> 3 & 31) - 16;			/* -16..15 */
	p.mid = x >> 8 & 0xfff;
	p.wide = (int)(x >> 20 & 0xfff) - 2048;		/* -2048..2047 */
	p.flag = x >> 63;
	p.big = x >> 33;
	bad += p.lo != (x & 7);
	bad += p.sv != (int)(x >> 3 & 31) - 16;
	bad += p.mid != (x >> 8 & 0xfff);
	bad += p.wide != (int)(x >> 20 & 0xfff) - 2048;
	bad += p.flag != x >> 63;
	bad += p.big != (x >> 33 & 0x7fffffff);
	p.sv += 3;	/* wraps within 5 bits */
	p.wide ^= 0x5a5;
	int64_t folded = p.lo + p.sv * 7 + p.mid - p.wide + p.flag + (int64_t)p.big;

	d = digest_add(d, x);
	d = digest_add(d, rl ^ rv);
	d = digest_add(d, (uint64_t)folded);
	d = digest_add(d, (uint64_t)__builtin_popcountll(x) << 8 | (unsigned)__builtin_clrsbll(sx));
	return bad;
}

int main(int argc, char **argv, char **envp)
{
	int bad = 0;
	unsigned r = 0;
	for (unsigned i = 0; i < ARRAY_LEN(edge); i++) {
		bad += one(edge[i], r);
		bad += one(~edge[i], r + 31);
		r += 5;
	}
	uint64_t rng = 0xb17b17;
	for (int i = 0; i < 90; i++) {
		uint64_t x = rng_next(&rng);
		if (i & 1)
			x >>= (x & 63);	/* vary the leading zero count */
		bad += one(x, (unsigned)(x >> 40));
	}
	check_eq("bit operation mismatches", (uint64_t)bad, 0);

	say_u("popcount(0x0123456789abcdef)", (uint64_t)__builtin_popcountll(0x0123456789abcdefull));
	say_x("bswap64(0x0123456789abcdef)", __builtin_bswap64(0x0123456789abcdefull));
	say_x("bitrev(0x0123456789abcdef)", rev_masks(0x0123456789abcdefull));
	check_eq("bswap64 known", __builtin_bswap64(0x0123456789abcdefull), 0xefcdab8967452301ull);
	check_eq("bitrev known", rev_masks(0x0123456789abcdefull), 0xf7b3d591e6a2c480ull);
	check_eq("popcount known", (uint64_t)__builtin_popcountll(0x0123456789abcdefull), 32);
	check_eq("clz(1)", (uint64_t)clz_loop(1), 63);
	check_eq("rotl64 known", rotl64(0x8000000000000001ull, 4), 0x18);
	return rt_finish(d);
}
