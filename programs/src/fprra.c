/*
 * fprra -- an s390x leaf that keeps both the return address and the frame
 * pointer in floating-point registers, and a call to a noreturn function
 * at the very end of a function (for stack-tracer and unwinder work;
 * built and checked in every configuration like the other programs).
 *
 * fpr_leaf overwrites %r14 and %r11 in inline asm (on s390x -O0, where
 * %r11 is the frame pointer, only %r14), so gcc has to save them, and in
 * a leaf that uses no floating point it saves them in call-clobbered FPRs:
 * s390x-O2 and s390x-z13O2 "ldgr %f0,%r14; ldgr %f2,%r11" ... "lgdr
 * %r14,%f0; lgdr %r11,%f2; br %r14", CFI DW_CFA_register r14 -> f0 (DWARF
 * 16) and r11 -> f2 (17), SFrame flexible FDE rows "r17+0 r16+0".  While
 * the leaf runs, %r14 and %r11 hold -1: an unwinder that takes the return
 * address from %r14 (or the frame pointer from %r11) instead of the FPR
 * gets a wrong frame.  The rules that read FPRs hold in the topmost frame
 * only, which is where a leaf always is.
 *
 * finish ends in a call to sys_exit_group, which does not return, so
 * finish's last instruction is that call and the return address it leaves
 * is the first byte after finish: in the configurations where nothing pads
 * the functions apart, the start of after_finish.  (main calls finish
 * through a pointer, so its own call is not its last instruction.)  An unwinder that looks
 * the return address up as it is finds after_finish's entry row there
 * ("RA still in the link register"), which outer frames must not use; the
 * kernel's rules stop the walk at that frame, a ra-1 lookup finds finish's
 * own row, and an unwinder that ignores the topmost-only rule re-reads the
 * link register and repeats a frame.
 *
 * On aarch64 the clobber is x30 (x29 is kept: gcc reserves it), so the
 * leaf saves the link register on the stack instead.
 */
#include "rt.h"

#if defined(__s390x__) && defined(__OPTIMIZE__)
#define CLOBBER_RA_FP() __asm__ volatile("lghi %%r14,-1\n\tlghi %%r11,-1" ::: "r14", "r11")
#elif defined(__s390x__)
#define CLOBBER_RA_FP() __asm__ volatile("lghi %%r14,-1" ::: "r14")
#elif defined(__aarch64__)
#define CLOBBER_RA_FP() __asm__ volatile("mov x30, #-1" ::: "x30")
#else
#define CLOBBER_RA_FP() do { } while (0)
#endif

/* the leaf: RA and FP live in FPRs between the ldgr and the lgdr */
NOIPA static uint64_t fpr_leaf(uint64_t x)
{
	CLOBBER_RA_FP();
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	return x ^ (x >> 27);
}

NOIPA static uint64_t pair(uint64_t x)
{
	return fpr_leaf(x) ^ (fpr_leaf(x + 1) << 1);
}

NOIPA static uint64_t chain(uint64_t x, int n)
{
	if (n == 0)
		return pair(x);
	return chain(x * 3 + 1, n - 1) + pair(x);
}

/* ends with a call that never returns (rt_finish prints the digest) */
NOIPA __attribute__((noreturn, no_reorder)) static void finish(uint64_t d)
{
	sys_exit_group(rt_finish(d));
}

/* the function right after finish in the text */
NOIPA __attribute__((no_reorder)) static uint64_t after_finish(uint64_t x)
{
	return fpr_leaf(x) + 1;
}

int main(int argc, char **argv, char **envp)
{
	uint64_t d = 0;
	for (int i = 0; i < 40; i++)
		d = digest_add(d, chain((uint64_t)i, i % 7));
	say_x("chain(5, 6)", chain(5, 6));
	check_eq("after_finish(0)", after_finish(0), fpr_leaf(0) + 1);
	check_eq("fpr_leaf(0)", fpr_leaf(0), 0);
	/* through a pointer, so that main's call is not its last instruction */
	void (*volatile fin)(uint64_t) = finish;
	fin(d);
	return 0;
}
