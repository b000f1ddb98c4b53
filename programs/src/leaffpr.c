/*
 * leaffpr -- leaf functions whose register saves go to floating-point
 * registers on s390x (for stack-tracer / unwinder work; built and checked
 * in every configuration like the other programs).
 *
 * In a leaf function that uses no floating point, s390x gcc (z10 and
 * later, so also the default z196) saves the call-saved GPRs it needs
 * into free call-clobbered FPRs %f0..%f7 instead of storing them with
 * stmg: "ldgr %fN,%rM" in the prologue, "lgdr %rM,%fN" before "br %r14",
 * and no stack frame.  The CFI then says the register lives in an FPR
 * (DW_CFA_register; DWARF numbers 16..23 are %f0 %f2 %f4 %f6 %f1 %f3 %f5
 * %f7).  It only does this if *all* saved GPRs fit into free FPRs.
 * What to look for (s390x-linux-gnu-objdump -d bin/CONFIG/leaffpr):
 *
 *   many_live, s390x-O2 and s390x-z13O2: all of r6..r13 go to FPRs,
 *       ldgr %f7,%r6 ... ldgr %f4,%r11 ... ldgr %f0,%r13 (the order and the
 *       FPR assignment differ between z196 and z13), restored by eight lgdr.
 *   ra_in_fpr, s390x-O2 and s390x-z13O2: the empty asm clobbers %r14, so
 *       the return address itself is parked:  ldgr %f0,%r14 ...
 *       lgdr %r14,%f0 ; br %r14.  At -O0: ldgr %f2,%r14 (plus r11/r15).
 *   every leaf at -O0 (also in rt.c): the frame pointer and the stack
 *       pointer, ldgr %f2,%r11 ; ldgr %f0,%r15 ; lay %r15,-N(%r15) ...
 *       lgdr %r15,%f0 ; lgdr %r11,%f2 -- %r15 is restored from %f0, not
 *       by adding N back.
 *
 * On aarch64 the clobber names x30 instead, so gcc saves the link
 * register on the stack (stp x29, x30 / ldp) in an otherwise frameless
 * leaf.  See README.md.
 */
#include "rt.h"

#if defined(__s390x__)
#define CLOBBER_RETURN_ADDRESS() __asm__ volatile("" ::: "r14")
#elif defined(__aarch64__)
#define CLOBBER_RETURN_ADDRESS() __asm__ volatile("" ::: "x30")
#else
#define CLOBBER_RETURN_ADDRESS() do { } while (0)
#endif

/*
 * Ten 64-bit state values plus the loop counter live across the loop, all
 * integer, no calls: enough to need most of r6..r13, few enough that
 * nothing spills (with a twelfth value gcc runs out of free FPRs and
 * falls back to stmg/lmg for all of them).
 */
NOIPA static uint64_t many_live(uint64_t a, uint64_t b, uint64_t c, uint64_t n)
{
	uint64_t v0 = a, v1 = b, v2 = c, v3 = a ^ b, v4 = b + c, v5 = a - c;
	uint64_t v6 = a << 3, v7 = b >> 5, v8 = c | 1, v9 = ~a;
	while (n--) {
		v0 += v1 ^ v9;
		v1 = (v1 << 7 | v1 >> 57) + v2;
		v2 ^= v3;
		v3 -= v4 >> 3;
		v4 += v5 * 3;
		v5 ^= v6;
		v6 = v6 * 5 + v7;
		v7 ^= v8 << 1;
		v8 += v0;
		v9 ^= v8 >> 2;
	}
	return v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + v8 + v9;
}

/* the return-address register is clobbered: it must be saved somewhere */
NOIPA static uint64_t ra_in_fpr(uint64_t x)
{
	CLOBBER_RETURN_ADDRESS();
	return x * 0x9e3779b97f4a7c15ull + (x >> 29);
}

/* a plain small leaf (at -O0 it still saves %r11 into an FPR on s390x) */
NOIPA static uint64_t small_leaf(uint64_t x, uint64_t y)
{
	return (x ^ y) + (x >> 3);
}

int main(int argc, char **argv, char **envp)
{
	uint64_t d = 0, x = 1;
	for (int i = 0; i < 300; i++) {
		uint64_t r = many_live(x, (uint64_t)i, d, 8);
		x = ra_in_fpr(r);
		d = digest_add(d, small_leaf(x, r));
	}
	say_x("many_live(1, 2, 3, 0)", many_live(1, 2, 3, 0));
	say_x("ra_in_fpr(12345)", ra_in_fpr(12345));
	say_x("chain", x);
	check_eq("many_live(1, 2, 3, 0)", many_live(1, 2, 3, 0),
		 1 + 2 + 3 + (1 ^ 2) + (2 + 3) + (1 - 3) + (1 << 3) + (2 >> 5) + (3 | 1) + ~1ull);
	check_eq("ra_in_fpr(12345)", ra_in_fpr(12345),
		 12345 * 0x9e3779b97f4a7c15ull + (12345 >> 29));
	return rt_finish(d);
}
