/*
 * memloops -- memory access of every width and pattern:
 *   - copy and fill loops over uint8/uint16/uint32/uint64 arrays, with the
 *     results summed through signed and unsigned loads of each width;
 *   - strided access (stride 3, 7, 16) and column sums of a 2-D array;
 *   - an array of structs with u8/s8/u16/s16/u32/s32/u64 fields
 *     (ldrb/ldrsb/ldrh/ldrsh/ldr w/ldrsw; llgc/lgb/llgh/lgh/llgf/lgf ...),
 *     updated in place and by struct assignment;
 *   - unaligned 16/32/64-bit loads and stores through memcpy;
 *   - memcpy, memset, memmove with overlapping source and destination in
 *     both directions, and memcmp, each checked against a byte loop;
 *   - initialised data (.data) and zero-initialised arrays (.bss).
 */
#include "rt.h"

#define N 512

static uint8_t b8[N], c8[N];
static uint16_t b16[N / 2], c16[N / 2];
static uint32_t b32[N / 4], c32[N / 4];
static uint64_t b64[N / 8], c64[N / 8];
static uint8_t grid[24][40];
static uint8_t zeroed[300];	/* .bss: must start out all zero */

/* .data: initialised at load time */
static int16_t table16[8] = { -32768, -1, 0, 1, 255, 256, 32767, -12345 };
static char greeting[] = "initialised data survives loading";

struct rec {
	uint8_t u8;
	int8_t s8;
	uint16_t u16;
	int16_t s16;
	uint32_t u32;
	int32_t s32;
	uint64_t u64;
};
static struct rec recs[40];

static uint64_t d;

static void widths(uint64_t *rng)
{
	for (int i = 0; i < N; i++)
		b8[i] = (uint8_t)rng_next(rng);
	for (int i = 0; i < N; i++)
		c8[i] = b8[N - 1 - i];
	uint64_t su = 0;
	int64_t ss = 0;
	for (int i = 0; i < N; i++) {
		su += c8[i];
		ss += (int8_t)c8[i];
	}
	say_u("u8 sum", su);
	say_i("s8 sum", ss);
	d = digest_add(digest_add(d, su), (uint64_t)ss);

	for (int i = 0; i < N / 2; i++)
		b16[i] = (uint16_t)(b8[2 * i] << 8 | b8[2 * i + 1]);
	for (int i = 0; i < N / 2; i++)
		c16[i] = (uint16_t)(b16[i] * 3 + 1);
	su = 0;
	ss = 0;
	for (int i = 0; i < N / 2; i++) {
		su += c16[i];
		ss += (int16_t)c16[i];
	}
	say_u("u16 sum", su);
	say_i("s16 sum", ss);
	d = digest_add(digest_add(d, su), (uint64_t)ss);

	for (int i = 0; i < N / 4; i++)
		b32[i] = (uint32_t)b16[2 * i] << 16 | b16[2 * i + 1];
	for (int i = 0; i < N / 4; i++)
		c32[i] = b32[i] ^ (b32[i] >> 5);
	su = 0;
	ss = 0;
	for (int i = 0; i < N / 4; i++) {
		su += c32[i];
		ss += (int32_t)c32[i];
	}
	say_u("u32 sum", su);
	say_i("s32 sum", ss);
	d = digest_add(digest_add(d, su), (uint64_t)ss);

	for (int i = 0; i < N / 8; i++)
		b64[i] = (uint64_t)b32[2 * i] << 32 | b32[2 * i + 1];
	for (int i = 0; i < N / 8; i++)
		c64[i] = b64[i] + 0x0101010101010101ull;
	uint64_t x = 0;
	for (int i = 0; i < N / 8; i++)
		x = x * 31 + c64[i];
	say_x("u64 hash", x);
	d = digest_add(d, x);

	/* the same bytes seen through the wider arrays must agree
	   (composed big-endian above, independent of the host order) */
	check_eq("u16 composition", b16[5], (uint16_t)(b8[10] << 8 | b8[11]));
	check_eq("u64 composition", b64[3] >> 56, b8[24]);

	/* fills */
	for (int i = 0; i < N; i++)
		c8[i] = 0xa5;
	for (int i = 0; i < N / 2; i++)
		c16[i] = 0xbeef;
	for (int i = 0; i < N / 4; i++)
		c32[i] = 0xdeadbeef;
	for (int i = 0; i < N / 8; i++)
		c64[i] = 0x0123456789abcdefull;
	check_eq("u8 fill", c8[N - 1] + c8[0], 0x14a);
	check_eq("u16 fill", c16[100], 0xbeef);
	check_eq("u32 fill", c32[127], 0xdeadbeef);
	check_eq("u64 fill", c64[63], 0x0123456789abcdefull);
}

static void strides(void)
{
	uint64_t s3 = 0, s7 = 0, s16 = 0;
	for (int i = 0; i < N; i += 3)
		s3 += b8[i];
	for (int i = 0; i < N / 2; i += 7)
		s7 += b16[i];
	for (int i = 0; i < N / 4; i += 16)
		s16 += b32[i];
	say_u("stride-3 u8 sum", s3);
	say_u("stride-7 u16 sum", s7);
	say_u("stride-16 u32 sum", s16);
	d = digest_add(d, s3 ^ s7 << 20 ^ s16 << 40);

	for (int r = 0; r < 24; r++)
		for (int c = 0; c < 40; c++)
			grid[r][c] = (uint8_t)(r * 40 + c);
	uint32_t col[40];
	for (int c = 0; c < 40; c++) {
		col[c] = 0;
		for (int r = 0; r < 24; r++)
			col[c] += grid[r][c];
	}
	uint64_t h = 0;
	for (int c = 0; c < 40; c++)
		h = h * 1000003 + col[c];
	say_x("column sums hash", h);
	/* column 0 holds (r * 40) mod 256 for r = 0..23 */
	check_eq("column 0 sum", col[0], 2848);
	d = digest_add(d, h);
}

static void structs(uint64_t *rng)
{
	for (unsigned i = 0; i < ARRAY_LEN(recs); i++) {
		uint64_t r = rng_next(rng);
		recs[i].u8 = (uint8_t)r;
		recs[i].s8 = (int8_t)(r >> 8);
		recs[i].u16 = (uint16_t)(r >> 16);
		recs[i].s16 = (int16_t)(r >> 24);
		recs[i].u32 = (uint32_t)(r >> 32);
		recs[i].s32 = (int32_t)(r >> 20);
		recs[i].u64 = r;
	}
	int64_t acc = 0;
	for (unsigned i = 0; i < ARRAY_LEN(recs); i++) {
		struct rec *p = &recs[i];
		acc += p->u8 + p->s8 + p->u16 + p->s16;
		acc += (int64_t)p->u32 + p->s32;
		acc ^= (int64_t)(p->u64 >> 7);
		p->s8 = (int8_t)(p->s8 - 100);
		p->s16 = (int16_t)(p->s16 * 3);
		p->u32 += p->u8;
	}
	/* struct assignment (a memcpy-sized copy) and swap */
	struct rec t = recs[0];
	recs[0] = recs[39];
	recs[39] = t;
	int64_t acc2 = 0;
	for (unsigned i = 0; i < ARRAY_LEN(recs); i++)
		acc2 += recs[i].s8 * 1000 + recs[i].s16 + (int64_t)recs[i].u32;
	say_i("struct field sum", acc);
	say_i("struct field sum after update", acc2);
	check_eq("sizeof(struct rec)", sizeof(struct rec), 24);
	d = digest_add(digest_add(d, (uint64_t)acc), (uint64_t)acc2);
}

static void unaligned(void)
{
	uint8_t buf[64];
	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	uint64_t h = 0;
	for (int off = 1; off < 40; off += 3) {
		uint16_t v16;
		uint32_t v32;
		uint64_t v64;
		memcpy(&v16, buf + off, 2);
		memcpy(&v32, buf + off + 1, 4);
		memcpy(&v64, buf + off + 2, 8);
		/* byte-order independent: fold the bytes back out */
		h = h * 17 + (v16 & 0xff) + (v16 >> 8);
		h = h * 17 + __builtin_popcount(v32) + (v32 % 255);
		h = h * 17 + __builtin_popcountll(v64) + (v64 % 255);
		v64 ^= 0x5a5a5a5a5a5a5a5aull;	/* per byte: order independent */
		memcpy(buf + off + 2, &v64, 8);
		v32 = ~v32;
		memcpy(buf + off + 1, &v32, 4);
	}
	say_x("unaligned hash", h);
	d = digest_add(d, h);
	d = digest_add(d, buf[50]);
}

static void library(void)
{
	uint8_t a[100], b[100], ref[100];
	for (int i = 0; i < 100; i++)
		a[i] = ref[i] = (uint8_t)i;

	/* forward overlap: dst below src */
	memmove(a, a + 10, 50);
	for (int i = 0; i < 50; i++)
		ref[i] = ref[i + 10];
	check("memmove down", memcmp(a, ref, 100) == 0);

	/* backward overlap: dst above src */
	memmove(a + 20, a, 60);
	for (int i = 59; i >= 0; i--)
		ref[i + 20] = ref[i];
	check("memmove up", memcmp(a, ref, 100) == 0);

	memcpy(b, a, 100);
	check("memcpy", memcmp(a, b, 100) == 0);
	memset(b + 33, 0x7f, 17);
	int diff = 0;
	for (int i = 0; i < 100; i++)
		diff += b[i] != (i >= 33 && i < 50 ? 0x7f : a[i]);
	check_eq("memset", (uint64_t)diff, 0);

	b[70] = (uint8_t)(a[70] + 1);
	check("memcmp less", memcmp(a, b, 100) < 0);
	check("memcmp greater", memcmp(b, a, 100) > 0);
	check("memcmp prefix", memcmp(a, b, 33) == 0);
	uint8_t hi = 0xf0, lo = 0x10;
	check("memcmp is unsigned", memcmp(&hi, &lo, 1) > 0);

	uint64_t h = 0;
	for (int i = 0; i < 100; i++)
		h = h * 257 + a[i];
	say_x("memmove result hash", h);
	d = digest_add(d, h);
}

static void data_sections(void)
{
	int nonzero = 0;
	for (unsigned i = 0; i < sizeof zeroed; i++)
		nonzero += zeroed[i] != 0;
	check_eq(".bss is zero", (uint64_t)nonzero, 0);
	int64_t s = 0;
	for (int i = 0; i < 8; i++)
		s = s * 3 + table16[i];
	check_eq(".data int16 table", (uint64_t)s, (uint64_t)(int64_t)-71569119);
	check_eq(".data string", strlen(greeting), 33);
	say_i("table16 fold", s);
	out_str(greeting);
	out_nl();
	d = digest_add(d, (uint64_t)s);
}

int main(int argc, char **argv, char **envp)
{
	uint64_t rng = 0x3e3;
	data_sections();
	widths(&rng);
	strides();
	structs(&rng);
	unaligned();
	library();
	return rt_finish(d);
}
