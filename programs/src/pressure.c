/*
 * pressure -- leaf functions with high register pressure.
 *
 * mix64 keeps 16 64-bit values live across rounds of multiplies, adds,
 * xors and shifts: on aarch64 this needs the callee-saved x19..x28 (stp /
 * ldp pairs in the prologue/epilogue); on s390x with its 16 GPRs it spills
 * to the stack and saves registers with stmg/lmg.  mix32 does the same
 * with 32-bit arithmetic (w registers; s390x 32-bit ops such as msr/sr).
 * Both are called in a loop from main; the results are compared with
 * recorded values.
 */
#include "rt.h"

NOINLINE static uint64_t mix64(uint64_t x, uint64_t y, uint64_t z)
{
	uint64_t a = x * 3 + 1, b = y ^ (x << 7), c = z + (y >> 3);
	uint64_t e = x ^ z, f = y * 5, g = z - x, h = x + y + z;
	uint64_t i = ~x, j = y | 0x8000000000000001ull, k = z & 0xfffffffffff0ull;
	uint64_t l = x ^ 0x5555555555555555ull, m = y + 0x1234567;
	uint64_t n = z * 0x9e3779b97f4a7c15ull, o = x - y, p = y - z;

	for (int round = 0; round < 4; round++) {
		a += b * c;
		b ^= c + e;
		c = (c << 13 | c >> 51) + f;
		e -= f * g;
		f ^= g >> 9;
		g += h * i;
		h = (h ^ i) * 0xff51afd7ed558ccdull;
		i += j >> 17;
		j ^= k * l;
		k += l ^ m;
		l = (l << 31 | l >> 33) ^ m;
		m -= n;
		n *= o | 1;
		o += p ^ a;
		p ^= a >> 23;
	}
	return a ^ b ^ c ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ n ^ o ^ p;
}

NOINLINE static uint32_t mix32(uint32_t x, uint32_t y)
{
	uint32_t a = x, b = y, c = x ^ y, e = x * 3, f = y * 7, g = x + y;
	uint32_t h = x - y, i = ~x, j = y >> 3, k = x << 5, l = x | y;
	uint32_t m = x & y;
	int32_t sa = (int32_t)x, sb = (int32_t)y;

	for (int round = 0; round < 3; round++) {
		a += b * c;
		b ^= e + f;
		c -= g * h;
		e = (e << 7 | e >> 25) ^ i;
		f += j * k;
		g ^= l - m;
		h = h * 0x85ebca6bu + a;
		i ^= h >> 13;
		j += (uint32_t)(sa >> 5);
		k -= (uint32_t)(sb / 3);
		l = l * 0xc2b2ae35u ^ b;
		m += c >> 16;
		sa = (int32_t)((uint32_t)sa * 31u - a);
		sb ^= (int32_t)g >> 2;
	}
	return a ^ b ^ c ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ (uint32_t)sa ^ (uint32_t)sb;
}

int main(int argc, char **argv, char **envp)
{
	uint64_t acc = 0;
	uint32_t acc32 = 0;
	uint64_t x = 1, y = 2, z = 3;
	for (int it = 0; it < 400; it++) {
		uint64_t r = mix64(x, y, z);
		acc = digest_add(acc, r);
		x = y;
		y = z;
		z = r;
		acc32 = acc32 * 33 + mix32((uint32_t)r, (uint32_t)(r >> 32) ^ acc32);
	}
	say_x("mix64 digest", acc);
	say_x32("mix32 chain", acc32);
	/* recorded from native x86-64 and qemu runs of every configuration */
	check_eq("mix64 digest", acc, 0x3fef4038ffba207cull);
	check_eq("mix32 chain", acc32, 0xa07f0856u);
	return rt_finish(digest_add(acc, acc32));
}
