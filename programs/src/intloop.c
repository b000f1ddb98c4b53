/*
 * intloop -- a register-only integer loop: the ALU-throughput benchmark.
 *
 *   intloop [ITERATIONS]     (default 2000)
 *
 * At -O2 the loop body keeps all its state in registers (no loads or
 * stores): xorshift steps, add/sub, 32-bit arithmetic with zero- and
 * sign-extension, a rotate, a multiply, and a conditional select.  At -O0
 * the same locals live on the stack, of course.  The result for the
 * default count is compared with a recorded value; the exit status is
 * derived from the result for any count.
 */
#include "rt.h"

NOINLINE static uint64_t spin(uint64_t iters)
{
	uint64_t x = 0x243f6a8885a308d3ull;	/* xorshift state */
	uint64_t acc = 0x13198a2e03707344ull;
	uint64_t rot = 1;
	uint32_t w = 0xa4093822u;
	int32_t s = -7;

	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		acc += x ^ (acc >> 3);
		rot = ((rot << 9) | (rot >> 55)) + (x & 0xff);
		w = w * 2654435761u + (uint32_t)(x >> 32);
		s = (s ^ (int32_t)w) >> 3;		/* arithmetic shift */
		acc -= (int64_t)s;			/* sign extend */
		acc += (uint64_t)w;			/* zero extend */
		acc = (x < acc) ? acc + rot : acc ^ rot; /* select */
	}
	return x ^ acc ^ rot ^ ((uint64_t)w << 32) ^ (uint64_t)(uint32_t)s;
}

int main(int argc, char **argv, char **envp)
{
	uint64_t iters = arg_u64(argc, argv, 1, 2000);
	uint64_t r = spin(iters);
	say_u("iterations", iters);
	say_x("result", r);
	/* recorded from native x86-64 and qemu runs of every configuration */
	if (iters == 2000)
		check_eq("result for 2000 iterations", r, 0xb1ce983a6f9136e4ull);
	check_eq("zero iterations", spin(0),
		 0x243f6a8885a308d3ull ^ 0x13198a2e03707344ull ^ 1 ^
		 (0xa4093822ull << 32) ^ (uint32_t)-7);
	return rt_finish(digest_add(iters, r));
}
